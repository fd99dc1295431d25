"""Search and freshness (docs/decisions.md#d16, #d18): a memory past its ``valid_until`` is hidden
unless ``all`` and counted as hidden; a stale one is shown with its grade and scores 0.8 of a fresh
one; a hit says its grade."""

from __future__ import annotations

from domain.limits import DAY_MS
from domain.model import MemoryEntry
from domain.search.rank import search
from tests.support.builders import NOW, memory

TEXT = "The importer reads CSV files from the inbox folder"


def _full(entry: MemoryEntry) -> float:
    return 1.0


def _numbers(*entries: MemoryEntry) -> dict[str, int]:
    return {e.id: n for n, e in enumerate(entries, 1)}


def test_an_expired_memory_is_hidden_unless_all() -> None:
    kept = memory(TEXT, id="kept")
    expired = memory(TEXT + " until Friday", id="gone", valid_until=NOW - DAY_MS)
    entries = (kept, expired)
    answer = search(entries, "importer inbox", NOW, _numbers(*entries), _full)
    assert [h.id for h in answer.hits] == ["kept"] and answer.hidden == 1
    everything = search(entries, "importer inbox", NOW, _numbers(*entries), _full, include_all=True)
    assert {h.id: h.grade for h in everything.hits} == {"kept": "fresh", "gone": "expired"}
    assert everything.hidden == 0


def test_an_expired_memory_alone_does_not_make_an_all_terms_answer() -> None:
    expired = memory("importer inbox", id="gone", valid_until=NOW - DAY_MS)
    partial = memory("The importer is written in Go", id="part")
    entries = (expired, partial)
    answer = search(entries, "importer inbox", NOW, _numbers(*entries), _full)
    assert answer.mode.value == "any"


def test_a_stale_memory_scores_lower_and_says_so() -> None:
    fresh = memory(TEXT, id="fresh")
    stale = memory(TEXT, id="stale", stale_reason="code changed since verified: src/importer.py")
    entries = (fresh, stale)
    answer = search(entries, "importer", NOW, _numbers(*entries), _full)
    by_id = {h.id: h for h in answer.hits}
    assert [h.id for h in answer.hits] == ["fresh", "stale"]
    assert by_id["stale"].grade == "stale" and by_id["fresh"].grade == "fresh"
    assert abs(by_id["stale"].score - by_id["fresh"].score * 0.8) < 1e-3  # (scores are rounded)


def test_a_stale_memory_is_looked_at_even_when_the_top_is_full() -> None:
    """Staleness is worked out only for what may reach the top: a stale memory that would win the tie
    (the newer short number) loses to the fresh one."""
    stale = memory("importer importer importer", id="stale", stale_reason="cited code gone")
    fresh = memory("importer importer importer", id="fresh")
    entries = (fresh, stale)
    answer = search(entries, "importer", NOW, _numbers(*entries), _full, limit=1)
    assert [h.id for h in answer.hits] == ["fresh"] and answer.matched == 2
