"""Near-duplicate folding never folds a pair whose negation or contrast words differ
(docs/decisions.md#d22). The pairs are built, not filtered: a weaker text of content words, a stronger
one that holds them all in order with more words, and a negation or contrast word put into exactly one
of the two (English, Chinese, Japanese, Korean)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from domain.consolidation.near_duplicates import fold_rendered, folds_into
from domain.enums import MemoryType
from tests.support.builders import memory

CONTENT = [
    "deploy",
    "pnpm",
    "fridays",
    "staging",
    "tests",
    "lint",
    "main",
    "branch",
    "docker",
    "cache",
    "review",
    "release",
    "migrations",
    "python",
    "rust",
    "schema",
    "backups",
    "tokens",
    "logs",
    "metrics",
    "dashboards",
    "vendor",
    "builds",
    "nightly",
    "hotfix",
]
NEGATIONS = (
    "not",
    "never",
    "don't",
    "do not",
    "no",
    "without",
    "but",
    "instead",
    "unless",
    "except",
    "avoid",
    "cannot",
    "shouldn’t",
    "不要",
    "别",
    "不",
    "ない",
    "しないで",
    "안",
    "않는다",
    "금지",
)


@st.composite
def _pair(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A weaker word list and a stronger one that holds it in order, with more words."""
    size = draw(st.integers(min_value=3, max_value=9))
    pool = list(CONTENT)
    words = [pool.pop(draw(st.integers(min_value=0, max_value=len(pool) - 1))) for _ in range(size)]
    cut = draw(st.integers(min_value=2, max_value=len(words) - 1))
    weak_words, extra = words[:cut], words[cut:]
    strong_words = list(weak_words)
    for word in extra:
        strong_words.insert(draw(st.integers(min_value=0, max_value=len(strong_words))), word)
    return weak_words, strong_words


def _insert(draw: st.DrawFn, words: list[str], marker: str) -> list[str]:
    at = draw(st.integers(min_value=0, max_value=len(words)))
    return [*words[:at], marker, *words[at:]]


@st.composite
def negated_pairs(draw: st.DrawFn) -> tuple[str, str]:
    weak, strong = draw(_pair())
    marker = draw(st.sampled_from(NEGATIONS))
    if draw(st.booleans()):
        weak = _insert(draw, weak, marker)
    else:
        strong = _insert(draw, strong, marker)
    return " ".join(weak), " ".join(strong)


@given(negated_pairs(), st.sampled_from(list(MemoryType)))
def test_a_pair_whose_negation_differs_never_folds(pair: tuple[str, str], type_: MemoryType) -> None:
    weak_text, strong_text = pair
    weak = memory(weak_text, id="w", type=type_)
    strong = memory(strong_text, id="s", type=type_)
    assert not folds_into(weak, strong) and not folds_into(strong, weak)
    assert fold_rendered((weak, strong)) == {} and fold_rendered((strong, weak)) == {}


@given(_pair(), st.sampled_from(NEGATIONS), st.booleans())
def test_the_same_pair_without_a_differing_negation_folds(
    pair: tuple[list[str], list[str]], marker: str, both: bool
) -> None:
    """The other side of the rule (so the property above cannot hold by never folding): the same
    pairs fold when both or neither hold the marker."""
    weak_words, strong_words = pair
    if both:
        weak_words, strong_words = [marker, *weak_words], [marker, *strong_words]
    weak = memory(" ".join(weak_words), id="w")
    strong = memory(" ".join(strong_words), id="s")
    assert folds_into(weak, strong)
    assert {k: v.id for k, v in fold_rendered((strong, weak)).items()} == {"w": "s"}
