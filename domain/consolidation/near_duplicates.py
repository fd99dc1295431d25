"""Safe near-duplicate folding (docs/decisions.md#d22): a memory that says nothing a stronger memory
of the same kind does not already say is folded into it in the block, so that "Never deploy on
Fridays" beside "we deploy with blue-green, never on Fridays" renders once.

The rule is deliberately conservative. A *weaker* entry folds into a *stronger* one only when

* both have the same type and the same scope;
* the weaker has at least two content words, each of them in the stronger, in the same order, and
  the stronger has more content words;
* the two hold exactly the same negation and contrast words (``not``, ``never``, ``don't``,
  ``but``, ``instead``, ``unless``, ... and their Chinese, Japanese and Korean equivalents), so
  "use pnpm" never folds into "never use pnpm" nor "use npm, not pnpm".

The fold is made where the duplicate shows, in the block: both memories stay stored and active (so
``list``, a search, and a later forget or supersede of the stronger one lose nothing, and a wrong fold
would cost a line of the block, never data). A rendered weaker memory whose stronger partner is
rendered too is left out (the block is rendered again without it, so its place goes to the next
memory), with a ``render_omitted`` event whose reason is ``near_duplicate`` and whose details name
the memory it folded into.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from msgspec.structs import replace

from domain import evidence
from domain.model import EvidenceInput, MemoryEntry
from domain.text import lazy_compile

#: The reason code of the ``render_omitted`` event of a fold.
NEAR_DUPLICATE: Final = "near_duplicate"

_TOKEN: Final = lazy_compile(r"[\w'’]+")


def _words(*lines: str) -> frozenset[str]:
    return frozenset(word for line in lines for word in line.split())


#: Words that carry no content of their own (articles, pronouns, prepositions, forms of "be").
_FILLER: Final = _words(
    """a an the we i you they it this that these those our us my your their its is are was were be
    been being am to of on in at by for with from into as and or so than then there here which who
    what when where"""
)

#: English negation and contrast words: a pair that differs in any of them never folds.
_MARKERS_EN: Final = _words(
    """not no never none nothing nobody nowhere neither nor without cannot dont doesnt didnt isnt
    arent wasnt werent wont wouldnt shouldnt cant couldnt mustnt neednt avoid avoids avoiding stop
    forbid forbidden prohibit prohibited disallow disallowed disable disabled skip ban banned but
    however although though whereas instead rather except unless only yet otherwise anymore
    longer"""
)

#: Chinese, Japanese and Korean negation and contrast markers (found inside words: these scripts do
#: not separate words with spaces); the ones the explicit-request extraction knows, and more.
_MARKERS_CJK: Final = (
    "不",
    "没",
    "沒",
    "别",
    "別",
    "勿",
    "禁止",
    "但",
    "而是",
    "除了",
    "除非",
    "否则",
    "否則",
    "ない",
    "ないで",
    "ません",
    "しかし",
    "でも",
    "ただし",
    "以外",
    "안",
    "않",
    "말",
    "마세요",
    "못",
    "없",
    "금지",
    "하지만",
    "그러나",
    "제외",
)


def _tokens(text: str) -> list[str]:
    return [t.replace("’", "'").strip("'") for t in _TOKEN.findall(text.lower())]


def _is_marker(token: str) -> bool:
    return token in _MARKERS_EN or token.endswith("n't") or token.replace("'", "") in _MARKERS_EN


class Shape:
    """What the rule compares of one text: its content words in order, and its markers."""

    __slots__ = ("content", "markers", "words")

    def __init__(self, text: str) -> None:
        tokens = [t for t in _tokens(text) if t]
        self.markers: frozenset[str] = frozenset(t.replace("'", "") for t in tokens if _is_marker(t)) | {
            m for m in _MARKERS_CJK if m in text
        }
        self.content: tuple[str, ...] = tuple(t for t in tokens if not _is_marker(t) and t not in _FILLER)
        self.words: frozenset[str] = frozenset(self.content)


def _in_order(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    found = iter(haystack)
    return all(word in found for word in needle)


def folds_into(weaker: MemoryEntry, stronger: MemoryEntry) -> bool:
    """Whether ``weaker`` may fold into ``stronger`` (module docstring)."""
    if weaker.id == stronger.id or weaker.type is not stronger.type or weaker.scope != stronger.scope:
        return False
    return _shapes_fold(Shape(weaker.text), Shape(stronger.text))


def _shapes_fold(weak: Shape, strong: Shape) -> bool:
    return (
        len(weak.words) >= 2
        and len(strong.words) > len(weak.words)
        and weak.markers == strong.markers
        and weak.words <= strong.words
        and _in_order(weak.content, strong.content)
    )


def fold_rendered(rendered: Sequence[MemoryEntry]) -> dict[str, MemoryEntry]:
    """Among the entries a block shows, each weaker one (by id) and the strongest partner it folds
    into (module docstring); a chain (a in b in c) folds both a and b into c."""
    if len(rendered) < 2:
        return {}
    shapes = {e.id: Shape(e.text) for e in rendered}
    by_size = sorted(rendered, key=lambda e: (-len(shapes[e.id].words), e.id))
    folded: dict[str, MemoryEntry] = {}
    for weak in rendered:
        for strong in by_size:
            if (
                strong.id != weak.id
                and strong.type is weak.type
                and strong.scope == weak.scope
                and _shapes_fold(shapes[weak.id], shapes[strong.id])
            ):
                folded[weak.id] = strong
                break
    for weak_id, strong in list(folded.items()):
        while strong.id in folded:
            strong = folded[strong.id]
        folded[weak_id] = strong
    return folded


def folded_event(weak: MemoryEntry, strong: MemoryEntry) -> EvidenceInput:
    """``render_omitted`` for ``weak``, folded into ``strong`` in the block."""
    found = evidence.omitted(weak, NEAR_DUPLICATE)
    return replace(found, details={**(found.details or {}), "foldedInto": strong.id})
