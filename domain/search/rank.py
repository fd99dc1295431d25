"""Full-text search over the memories of a store (docs/decisions.md#d16): BM25 × strength × validity.

The reference implementation: without an index it reads every memory (:func:`holders`). The shell's
index (``adapters/search_index.py``) keeps the same facts — which memories hold each term, how often,
their lengths, the store's statistics — and hands them over instead; the ranking, the filters and the
verdict are always computed here, so an answer with the index equals the answer without it.

- Terms (:mod:`domain.search.tokens`): every term in a hit (``all``); when no visible memory holds
  every term, any term counts (``any``) and the answer says so.
- Score: ``bm25 × (0.5 + 0.5·min(strength, 1)) × validity`` (an active memory 1, a stale one —
  marked so by the reference's ``staleAfterDays`` or of the ``stale`` grade, docs/decisions.md#d18 —
  0.8, a superseded, forgotten or expired one, shown only with ``all``, 0.5).
- Threshold: in ``any`` mode a hit must carry at least :data:`MIN_COVERAGE` of the query's term
  weight (idf); memories that hold only common or few terms are counted as ``below_threshold``.
"""

from __future__ import annotations

import math
import re
from bisect import insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from heapq import heapify, heappop
from typing import Final, NamedTuple

from domain.enums import MemoryStatus, MemoryType
from domain.freshness import grade, is_expired, rank_factor
from domain.ids import hash16
from domain.model import MemoryEntry
from domain.render import age_days, is_stale_marked
from domain.search.shortids import label
from domain.search.tokens import query_terms, term_tuple, words
from domain.search.values import Hit, MatchMode, SearchAnswer, Verdict
from domain.text import single_line

K1: Final = 1.2
B: Final = 0.75
#: the share of the query's idf weight a hit of an ``any`` query must hold
MIN_COVERAGE: Final = 0.5
SNIPPET_CHARS: Final = 160
#: a query term this long or longer also finds the longer terms it begins
PREFIX_MIN: Final = 3
DEFAULT_LIMIT: Final = 5
MAX_LIMIT: Final = 100

_PATH: Final = re.compile(
    r"(?<![\w/.])(?:[\w.-]+/)+[\w.-]+|(?<![\w/])[\w-]+\.(?:py|ts|tsx|js|jsx|json|toml|md|yaml|yml|sql|sh|go|rs|java|rb|c|h|cpp|css|html)\b"
)
_SYMBOL: Final = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\(\)|`([^`\s]{2,80})`")


def document(entry: MemoryEntry) -> str:
    """What is searched of a memory: its text and its rationale."""
    return entry.text if not entry.rationale else f"{entry.text}\n{entry.rationale}"


class Corpus(NamedTuple):
    """BM25's statistics over every entry of the store: how many, and their total length in terms."""

    documents: int
    total_terms: int


def query_hash(query: str) -> str:
    return hash16(query)


def visible(entry: MemoryEntry, now_ms: float) -> bool:
    """Whether a match is shown without ``all``: an active memory not past its ``valid_until``."""
    return entry.status is MemoryStatus.ACTIVE and (
        entry.valid_until is None or not is_expired(entry, now_ms)
    )


def _validity(entry: MemoryEntry, now_ms: float) -> float:
    if not visible(entry, now_ms):
        return 0.5
    stale = (entry.stale_after_days and is_stale_marked(entry, now_ms)) or rank_factor(entry, now_ms) < 1.0
    return 0.8 if stale else 1.0


def cites(text: str) -> tuple[str, ...]:
    """File paths and code symbols a memory's text names, in order, without repeats."""
    found: dict[str, None] = {}
    for match in _PATH.finditer(text):
        if not match.group().startswith(("http", "www.")) and "//" not in match.group():
            found.setdefault(match.group().rstrip("."), None)
    for match in _SYMBOL.finditer(text):
        found.setdefault(match.group(1) or match.group(), None)
    return tuple(found)[:8]


def snippet(text: str, matched: Iterable[str]) -> str:
    """At most :data:`SNIPPET_CHARS` of ``text`` around its first matched word, matched words in ``**``."""
    from domain.search.tokens import stem

    line = single_line(text)
    wanted = set(matched)
    spans = [
        (m.start(), m.end())
        for m in re.finditer(r"[^\W_]+", line)
        if any(prefix_matches(t, stem(w)) for w in words(m.group()) for t in wanted)
    ]
    start = 0
    if spans and spans[0][0] > SNIPPET_CHARS // 3:
        start = max(0, line.rfind(" ", 0, spans[0][0] - SNIPPET_CHARS // 4) + 1)
    end = min(len(line), start + SNIPPET_CHARS)
    if end < len(line):
        cut = line.rfind(" ", start, end)
        end = cut if cut > start else end
    out = []
    at = start
    for s, e in spans:
        if s < start or e > end:
            continue
        out.append(line[at:s] + "**" + line[s:e] + "**")
        at = e
    out.append(line[at:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(line) else "")


def prefix_matches(term: str, found: str) -> bool:
    """Whether a memory's term ``found`` answers the query term ``term``: the same term, or, for a
    query term of :data:`PREFIX_MIN` letters or more, a longer term it begins (``own`` finds
    ``ownership``, ``deploy`` finds ``deployment``)."""
    return found == term or (len(term) >= PREFIX_MIN and found.startswith(term))


class Holders(NamedTuple):
    """What a search needs to know of the memories holding its terms: for each query term, the
    memories holding it (id → how often, by :func:`prefix_matches`), the number of terms of each of
    them, and the statistics of the whole store. :func:`holders` works it out by reading every
    memory; the shell's index keeps it (``adapters/search_index.py``), and the two must agree."""

    counts: Mapping[str, Mapping[str, int]]
    lengths: Mapping[str, int]
    corpus: Corpus


def holders(entries: Iterable[MemoryEntry], wanted: Sequence[str]) -> Holders:
    """:class:`Holders` of ``wanted`` read from ``entries`` (an id held twice counts once, as its
    first entry). One pass, the hot loop of a search without an index (docs/performance.md,
    "Search")."""
    counts: dict[str, dict[str, int]] = {t: {} for t in wanted}
    lengths: dict[str, int] = {}
    seen: dict[str, tuple[dict[str, int], ...]] = {}
    ids: set[str] = set()
    total = 0
    for entry in entries:
        if entry.id in ids:
            continue
        ids.add(entry.id)
        found = term_tuple(entry.text if not entry.rationale else f"{entry.text}\n{entry.rationale}")
        total += len(found)
        held = False
        for term in found:
            answers = seen.get(term)
            if answers is None:
                answers = seen[term] = tuple(counts[t] for t in wanted if prefix_matches(t, term))
            for table in answers:
                table[entry.id] = table.get(entry.id, 0) + 1
                held = True
        if held:
            lengths[entry.id] = len(found)
    return Holders(counts, lengths, Corpus(len(ids), total))


def _idf(documents: int, df: int) -> float:
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


class _Scored(NamedTuple):
    score: float
    entry: MemoryEntry
    matched: tuple[str, ...]
    coverage: float


#: a match that may be shown, before its strength and its staleness are looked at: (minus its bound,
#: order, BM25, entry, matched terms, coverage), where the bound, BM25 × (1 when it is visible, else
#: 0.5), is never below its score (the strength factor and a visible memory's validity are at most 1)
_Above = tuple[float, int, float, MemoryEntry, tuple[str, ...], float]


def search(
    entries: Sequence[MemoryEntry],
    query: str,
    now_ms: int,
    numbers: Mapping[str, int],
    strength: Callable[[MemoryEntry], float],
    *,
    type_: MemoryType | None = None,
    limit: int = DEFAULT_LIMIT,
    include_all: bool = False,
    found: Holders | None = None,
    indexed: bool = False,
    min_coverage: float = MIN_COVERAGE,
) -> SearchAnswer:
    """Answer ``query`` from ``entries``: every entry of the store, or, with ``found`` (what the
    index keeps of the store), at least every entry holding a query term. ``numbers``: short numbers
    by id; ``strength``: a memory's current strength, asked only for the matches that may be shown.
    Total: any text is a valid query."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    wanted = query_terms(query)
    qhash = query_hash(query)
    if not wanted:
        return SearchAnswer(
            verdict=Verdict.NO_MATCH, mode=MatchMode.NONE, terms=(), hits=(), limit=limit, matched=0,
            hidden=0, below_threshold=0, searched=found.corpus.documents if found else len(entries),
            query_hash=qhash, indexed=indexed,
        )  # fmt: skip
    if found is None:
        found = holders(entries, wanted)
    tables = [found.counts.get(t, {}) for t in wanted]
    n = max(found.corpus.documents, 1)
    avgdl = found.corpus.total_terms / n if found.corpus.total_terms else 1.0
    idf = [_idf(n, len(table)) for table in tables]
    weight = sum(idf) or 1.0
    union: set[str] = set().union(*tables)
    by_id = {e.id: e for e in reversed(entries) if e.id in union}  # the first entry of an id
    if type_ is not None:
        union = {i for i, e in by_id.items() if e.type is type_}
    every = union.intersection(*tables)
    all_ = len(wanted) == 1 or any(i in by_id and visible(by_id[i], now_ms) for i in every)
    mode = MatchMode.ALL if all_ else MatchMode.ANY
    # hidden and below-threshold matches are only counted; a strength is looked up only for the
    # matches that may still reach the top ``limit`` (:func:`_top`)
    above: list[_Above] = []
    hidden = below = 0
    for held, ids in [(tuple(range(len(wanted))), every)] if all_ else _groups(union, tables):
        matched = tuple(wanted[k] for k in held)
        coverage = sum(idf[k] for k in held) / weight
        weighed = [(idf[k], tables[k]) for k in held]
        for memory_id in ids:
            entry = by_id.get(memory_id)
            if entry is None:
                continue
            shown = entry.status is MemoryStatus.ACTIVE and (  # visible(), inlined in the hot loop
                entry.valid_until is None or not is_expired(entry, now_ms)
            )
            if not shown and not include_all:
                hidden += 1
                continue
            if coverage < min_coverage and not all_:
                below += 1
                continue
            norm = K1 * (1 - B + B * found.lengths[memory_id] / avgdl)
            bm25 = 0.0
            for w, table in weighed:
                f = table[memory_id]
                bm25 += w * f * (K1 + 1) / (f + norm)
            above.append((-bm25 if shown else -bm25 * 0.5, len(above), bm25, entry, matched, coverage))
    matched_count = len(above)
    chosen = _top(above, limit, now_ms, numbers, strength)  # (takes ``above`` apart)
    hits = tuple(_hit(s, now_ms, numbers, strength) for s in chosen)
    verdict = Verdict.MATCH if hits else Verdict.BELOW_THRESHOLD if below else Verdict.NO_MATCH
    return SearchAnswer(
        verdict=verdict, mode=mode, terms=wanted, hits=hits, limit=limit, matched=matched_count,
        hidden=hidden, below_threshold=below, searched=found.corpus.documents, query_hash=qhash,
        indexed=indexed,
    )  # fmt: skip


def _groups(union: set[str], tables: Sequence[Mapping[str, int]]) -> list[tuple[tuple[int, ...], list[str]]]:
    """The memories of ``union`` grouped by which query terms they hold (positions in ``tables``),
    so that what depends only on those terms is worked out once per group."""
    held = dict.fromkeys(union, 0)
    for k, table in enumerate(tables):
        bit = 1 << k
        for memory_id in table:
            if memory_id in held:
                held[memory_id] |= bit
    groups: dict[int, list[str]] = {}
    for memory_id, mask in held.items():
        groups.setdefault(mask, []).append(memory_id)
    return [(tuple(k for k in range(len(tables)) if mask >> k & 1), ids) for mask, ids in groups.items()]


def _top(
    above: list[_Above],
    limit: int,
    now_ms: int,
    numbers: Mapping[str, int],
    strength: Callable[[MemoryEntry], float],
) -> list[_Scored]:
    """The best ``limit`` of ``above`` by score (then the newer short number, then the id). They are
    looked at by their bound, highest first: once a bound is below the last chosen score, no later
    match can be chosen, and its strength is never worked out."""

    def order(s: _Scored) -> tuple[float, int, str]:
        return (-s.score, -numbers.get(s.entry.id, 0), s.entry.id)

    chosen: list[_Scored] = []
    heapify(above)
    while above:
        negative_bound, _, bm25, entry, matched, coverage = heappop(above)
        if len(chosen) >= limit and -negative_bound < chosen[-1].score:
            break
        score = bm25 * (0.5 + 0.5 * min(strength(entry), 1.0)) * _validity(entry, now_ms)
        insort(chosen, _Scored(score, entry, matched, coverage), key=order)
        del chosen[limit:]
    return chosen


def _hit(
    s: _Scored, now_ms: int, numbers: Mapping[str, int], strength: Callable[[MemoryEntry], float]
) -> Hit:
    entry = s.entry
    number = numbers.get(entry.id)
    return Hit(
        id=entry.id,
        short_id=label(number) if number is not None else "",
        type=entry.type.value,
        status=entry.status.value,
        score=round(s.score, 4),
        strength=round(strength(entry), 4),
        age_days=age_days(entry, now_ms),
        snippet=snippet(entry.text, s.matched),
        matched=s.matched,
        grade=grade(entry, now_ms).value,
        cites=cites(entry.text),
        coverage=round(s.coverage, 4),
    )
