"""Properties of search (docs/decisions.md#d16): any text is a valid query; a hidden memory never
appears without ``all``; the index kept through writes equals the index built from scratch; an
answer with the index equals the answer without it (deleting the index changes no answer)."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import msgspec
from hypothesis import given, strategies as st
from msgspec.structs import replace

from adapters.search_index import has_fts5, postings, rebuild, update
from domain.enums import MemoryStatus
from domain.model import MemoryEntry, WorkspaceStore
from domain.search.rank import search
from domain.search.tokens import query_terms
from domain.search.values import SearchAnswer, Verdict
from property_tests.store_strategies import NOW_MS, entries, stores

WORDS = [
    "deploy",
    "deploys",
    "deployed",
    "importer",
    "imports",
    "ownership",
    "owner",
    "database",
    "data",
    "grafana",
    "runbook",
    "staging",
    "café",
    "naïve",
    "中文测试",
    "src/app/main.py",
    "parse_rows()",
    "Friday",
    "fridays",
    "migrate",
    "migrations",
    "the",
    "a",
    "of",
]

phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
queries = st.one_of(phrases, st.text(max_size=200), st.text(alphabet=st.characters(), max_size=50))
worded = st.lists(entries(text=phrases), min_size=0, max_size=16).map(
    lambda es: tuple({e.id: e for e in es}.values())
)


def _half(entry: MemoryEntry) -> float:
    return 0.5


def _varied(entry: MemoryEntry) -> float:
    """A strength that differs between memories (and exceeds 1 for some), so the ranking weighs it."""
    return (sum(map(ord, entry.id)) % 7) / 5


def _answer(entries_: tuple[MemoryEntry, ...], query: str, include_all: bool = False) -> SearchAnswer:
    numbers = {e.id: n for n, e in enumerate(entries_, 1)}
    return search(entries_, query, NOW_MS, numbers, _half, include_all=include_all, limit=10)


@given(worded, queries)
def test_any_text_is_a_valid_query(found: tuple[MemoryEntry, ...], query: str) -> None:
    answer = _answer(found, query)
    assert answer.verdict in set(Verdict)
    assert answer.matched >= len(answer.hits) and (answer.verdict is Verdict.MATCH) == bool(answer.hits)


@given(worded, phrases)
def test_a_hidden_memory_never_appears_without_all(found: tuple[MemoryEntry, ...], query: str) -> None:
    numbers = {e.id: n for n, e in enumerate(found, 1)}
    answer = search(found, query, NOW_MS, numbers, _half, limit=100)
    by_id = {e.id: e for e in found}
    assert all(by_id[h.id].status is MemoryStatus.ACTIVE for h in answer.hits)
    everything = search(found, query, NOW_MS, numbers, _half, limit=100, include_all=True)
    assert len(everything.hits) >= len(answer.hits)


@given(worded, phrases, st.integers(min_value=1, max_value=4), st.booleans())
def test_the_top_few_are_the_first_of_all_the_matches(
    found: tuple[MemoryEntry, ...], query: str, limit: int, include_all: bool
) -> None:
    """Strengths are worked out only for matches that may still reach the top (domain/search/rank.py
    ``_top``): the best ``limit`` are still the first ``limit`` of the whole ranking."""
    numbers = {e.id: n for n, e in enumerate(found, 1)}
    few = search(found, query, NOW_MS, numbers, _varied, limit=limit, include_all=include_all)
    every = search(found, query, NOW_MS, numbers, _varied, limit=100, include_all=include_all)
    assert few.hits == every.hits[:limit]
    assert (few.matched, few.hidden, few.below_threshold) == (
        every.matched,
        every.hidden,
        every.below_threshold,
    )


def _store(found: tuple[MemoryEntry, ...], base: WorkspaceStore, revision: int) -> WorkspaceStore:
    return msgspec.structs.replace(base, entries=found, revision=revision)


def _content(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[str, str]]]:
    """The indexed memories, and what the index says about itself (revision, counts)."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT docs.id, docs.length, fts.terms FROM docs JOIN fts ON fts.rowid = docs.n")
        posts = db.execute("SELECT term, id, tf, length FROM post ORDER BY term, id")
        meta = db.execute("SELECT key, value FROM meta ORDER BY key")
        return sorted(rows.fetchall()) + posts.fetchall(), meta.fetchall()


@given(stores(), worded, worded, st.lists(phrases, min_size=1, max_size=4))
def test_the_kept_index_equals_the_rebuilt_one_and_answers_alike(
    base: WorkspaceStore, first: tuple[MemoryEntry, ...], second: tuple[MemoryEntry, ...], asked: list[str]
) -> None:
    if not has_fts5():
        return
    later = tuple({e.id: e for e in (*first[: len(first) // 2], *second)}.values())
    before, after = _store(first, base, 3), _store(later, base, 3)
    with tempfile.TemporaryDirectory() as where:
        kept, fresh = Path(where) / "kept.sqlite3", Path(where) / "fresh.sqlite3"
        rebuild(kept, before, 3)
        assert update(kept, before, after, 4)
        rebuild(fresh, after, 4)
        assert _content(kept) == _content(fresh)
        for query in asked:
            found = postings(kept, query_terms(query))
            assert found is not None and found[1] == 4
            numbers = {e.id: n for n, e in enumerate(later, 1)}
            with_index = search(later, query, NOW_MS, numbers, _varied, found=found[0], limit=3)
            without = search(later, query, NOW_MS, numbers, _varied, limit=3)
            assert with_index == without
        # an edit in place (every other memory the same object in the same place)
        edited = tuple(replace(e, text=f"{e.text} edited") if n % 2 else e for n, e in enumerate(later))
        assert update(kept, _store(later, base, 4), _store(edited, base, 4), 5)
        rebuild(fresh, _store(edited, base, 4), 5)
        assert _content(kept) == _content(fresh)
