"""Full-text search over the memories of a store (docs/decisions.md#d16): BM25 × strength × validity.

The reference implementation: it scans the entries it is given. The shell's index
(``adapters/search_index.py``) only narrows them to the ones holding a query term and hands over the
corpus statistics it keeps; the ranking, the filters and the verdict are always computed here, so an
answer with the index equals the answer without it.

- Terms (:mod:`domain.search.tokens`): every term in a hit (``all``); when no visible memory holds
  every term, any term counts (``any``) and the answer says so.
- Score: ``bm25 × (0.5 + 0.5·min(strength, 1)) × validity`` (an active memory 1, a stale-marked
  one 0.8, a superseded or forgotten one, shown only with ``all``, 0.5).
- Threshold: in ``any`` mode a hit must carry at least :data:`MIN_COVERAGE` of the query's term
  weight (idf); memories that hold only common or few terms are counted as ``below_threshold``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from domain.enums import MemoryStatus, MemoryType
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


def visible(entry: MemoryEntry) -> bool:
    return entry.status is MemoryStatus.ACTIVE


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


def _matches(
    entries: Sequence[MemoryEntry], wanted: Sequence[str]
) -> tuple[list[tuple[MemoryEntry, dict[str, int], int]], dict[str, int], Corpus]:
    """The entries holding a query term, each with how often each query term occurs among its terms
    (by :func:`prefix_matches`) and its number of terms; in how many of them each query term occurs;
    and the statistics of all ``entries``. One pass, the hot loop of a search over many candidates
    (docs/performance.md, "Search")."""
    docs: list[tuple[MemoryEntry, dict[str, int], int]] = []
    df: dict[str, int] = {}
    seen: dict[str, tuple[str, ...]] = {}
    total = 0
    for entry in entries:
        found = term_tuple(entry.text if not entry.rationale else f"{entry.text}\n{entry.rationale}")
        total += len(found)
        held: dict[str, int] | None = None
        for term in found:
            answers = seen.get(term)
            if answers is None:
                answers = seen[term] = tuple(t for t in wanted if prefix_matches(t, term))
            if answers:
                if held is None:
                    held = {}
                for t in answers:
                    held[t] = held.get(t, 0) + 1
        if held is not None:
            docs.append((entry, held, len(found)))
            for t in held:
                df[t] = df.get(t, 0) + 1
    return docs, df, Corpus(len(entries), total)


def _idf(documents: int, df: int) -> float:
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


class _Scored(NamedTuple):
    score: float
    entry: MemoryEntry
    matched: tuple[str, ...]
    coverage: float


def search(
    entries: Sequence[MemoryEntry],
    query: str,
    now_ms: int,
    numbers: Mapping[str, int],
    strengths: Mapping[str, float],
    *,
    type_: MemoryType | None = None,
    limit: int = DEFAULT_LIMIT,
    include_all: bool = False,
    corpus: Corpus | None = None,
    indexed: bool = False,
    min_coverage: float = MIN_COVERAGE,
) -> SearchAnswer:
    """Answer ``query`` from ``entries`` (every entry of the store, or, with ``corpus``, at least every
    entry holding a query term). ``numbers``: short numbers by id; ``strengths``: current strength by
    id. Total: any text is a valid query."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    wanted = query_terms(query)
    qhash = query_hash(query)
    if not wanted:
        return SearchAnswer(
            verdict=Verdict.NO_MATCH, mode=MatchMode.NONE, terms=(), hits=(), limit=limit, matched=0,
            hidden=0, below_threshold=0, searched=corpus.documents if corpus else len(entries),
            query_hash=qhash, indexed=indexed,
        )  # fmt: skip
    docs, df, scanned = _matches(entries, wanted)
    stats = corpus if corpus is not None else scanned
    n = max(stats.documents, 1)
    avgdl = stats.total_terms / n if stats.total_terms else 1.0
    idf = {t: _idf(n, df.get(t, 0)) for t in wanted}
    weight = sum(idf.values()) or 1.0
    kept = docs if type_ is None else [d for d in docs if d[0].type is type_]
    every = [d for d in kept if len(d[1]) == len(wanted)]  # a memory's counts name query terms only
    mode = MatchMode.ALL if any(visible(d[0]) for d in every) or len(wanted) == 1 else MatchMode.ANY
    pool = every if mode is MatchMode.ALL else kept
    # hidden and below-threshold matches are only counted: a score is worked out for what may be shown
    above: list[_Scored] = []
    hidden = below = 0
    for entry, tf, length in pool:
        shown = visible(entry)
        if not shown and not include_all:
            hidden += 1
            continue
        matched = tuple(t for t in wanted if t in tf)
        coverage = sum(idf[t] for t in matched) / weight
        if mode is MatchMode.ANY and coverage < min_coverage:
            below += 1
            continue
        bm25 = 0.0
        for t in matched:
            f = tf[t]
            bm25 += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avgdl))
        strength = strengths.get(entry.id, 0.0)
        validity = 1.0 if shown else 0.5
        if shown and is_stale_marked(entry, now_ms):
            validity = 0.8
        score = bm25 * (0.5 + 0.5 * min(strength, 1.0)) * validity
        above.append(_Scored(score, entry, matched, coverage))
    above.sort(key=lambda s: (-s.score, -numbers.get(s.entry.id, 0), s.entry.id))
    hits = tuple(_hit(s, now_ms, numbers, strengths) for s in above[:limit])
    verdict = Verdict.MATCH if hits else Verdict.BELOW_THRESHOLD if below else Verdict.NO_MATCH
    return SearchAnswer(
        verdict=verdict, mode=mode, terms=wanted, hits=hits, limit=limit, matched=len(above),
        hidden=hidden, below_threshold=below, searched=stats.documents, query_hash=qhash,
        indexed=indexed,
    )  # fmt: skip


def _hit(s: _Scored, now_ms: int, numbers: Mapping[str, int], strengths: Mapping[str, float]) -> Hit:
    entry = s.entry
    number = numbers.get(entry.id)
    return Hit(
        id=entry.id,
        short_id=label(number) if number is not None else "",
        type=entry.type.value,
        status=entry.status.value,
        score=round(s.score, 4),
        strength=round(strengths.get(entry.id, 0.0), 4),
        age_days=age_days(entry, now_ms),
        snippet=snippet(entry.text, s.matched),
        matched=s.matched,
        cites=cites(entry.text),
        coverage=round(s.coverage, 4),
    )
