"""The pending journal (docs/decisions.md#pending-journal), with the reference's acceptance tests and the
fixes docs/decisions.md#b25, docs/decisions.md#b26, docs/decisions.md#b28 and docs/decisions.md#b29."""

from __future__ import annotations

from functools import partial

from msgspec.structs import replace

from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.limits import DAY_MS
from domain.model import EvidenceInput, MemoryEntry
from domain.pending import (
    append_pending,
    clear_pending,
    empty_journal,
    journal_key,
    normalize_journal,
)
from domain.text import memory_key
from domain.timeutil import iso_from_ms
from tests.support import builders
from tests.support.builders import NOW, memory

journal = partial(builders.journal, root="/home/dev/ws")


def key(entry: MemoryEntry) -> str:
    return memory_key(entry.type.value, entry.text)


def cleared(events: tuple[EvidenceInput, ...]) -> list[tuple[str | None, str]]:
    """(memory id, first reason) of every pending_memory_cleared event."""
    return [
        (e.memory.memory_id if e.memory else None, e.reason_codes[0])
        for e in events
        if e.type is EventType.PENDING_MEMORY_CLEARED
    ]


# ---------------------------------------------------------------------------------------------
# Keys and the empty journal
# ---------------------------------------------------------------------------------------------


def test_journal_key_is_memory_key_nul_owner() -> None:
    entry = memory("Use  PNPM!", id="a", owner="s1")
    assert journal_key(entry) == "decision:use pnpm\x00s1"
    assert journal_key(replace(entry, pending_owner_session_id=None)) == "decision:use pnpm\x00"
    # an empty owner is no owner (JavaScript truthiness)
    assert journal_key(replace(entry, pending_owner_session_id="")) == "decision:use pnpm\x00"


def test_empty_journal_shape() -> None:
    j = empty_journal("/r", "k", NOW)
    assert j.version == 1 and j.workspace.root == "/r" and j.workspace.key == "k"
    assert j.entries == () and j.updated_at == "2026-06-01T12:00:00.000Z"


# ---------------------------------------------------------------------------------------------
# The reference's acceptance tests (save/load become normalize_journal)
# ---------------------------------------------------------------------------------------------


def test_1_compaction_entries_older_than_30_days_are_pruned() -> None:
    stale = memory("stale entry from 31 days ago", id="stale", at=NOW - 31 * DAY_MS)
    fresh = memory("fresh entry from yesterday", id="fresh", at=NOW - 1 * DAY_MS)
    out, events = normalize_journal(journal(stale, fresh), NOW)
    assert [e.text for e in out.entries] == ["fresh entry from yesterday"]
    assert cleared(events) == [("stale", "journal_ttl")]


def test_2_cap_keeps_the_50_newest() -> None:
    entries = [memory(f"Entry {i}", id=f"e{i}", type="project", at=NOW + i * 1000) for i in range(55)]
    out, _ = normalize_journal(journal(*entries), NOW)
    texts = [e.text for e in out.entries]
    assert len(texts) == 50
    assert "Entry 0" not in texts and "Entry 4" not in texts
    assert "Entry 50" in texts and "Entry 54" in texts
    assert texts == [f"Entry {i}" for i in range(5, 55)]  # stored oldest first


def test_3_dedupe_happens_before_the_cap() -> None:
    entries: list[MemoryEntry] = []
    for i in range(25):
        at = NOW + i * 1000
        entries.append(memory(f"Entry {i}", id=f"c{i}", type="project", at=at))
        entries.append(memory(f"Entry {i}", id=f"x{i}", type="project", source="explicit", at=at))
    out, _ = normalize_journal(journal(*entries), NOW)
    assert len(out.entries) == 25


def test_4_append_applies_retention() -> None:
    initial = [memory(f"Initial {i}", id=f"i{i}", type="project", at=NOW + i * 1000) for i in range(30)]
    start, _ = normalize_journal(journal(*initial), NOW)
    additional = [
        memory(f"Additional {i}", id=f"a{i}", source="explicit", at=NOW + (i + 30) * 1000) for i in range(30)
    ]
    out, events = append_pending(start, additional, NOW)
    assert len(out.entries) == 50
    assert [e.type for e in events[:30]] == [EventType.PENDING_MEMORY_APPENDED] * 30
    # the ten entries pushed out by the cap are not dropped silently (docs/decisions.md#d7)
    assert cleared(events) == [(f"i{i}", "journal_cap") for i in range(9, -1, -1)]


def test_5_explicit_and_manual_entries_never_age_out() -> None:
    old = NOW - 35 * DAY_MS
    entries = (
        memory("Old explicit preference", id="explicit_old", type="feedback", source="explicit", at=old),
        memory("Old manual reference", id="manual_old", type="reference", source="manual", at=old),
        memory("Old compaction reference", id="compaction_old", type="reference", at=old),
    )
    out, _ = normalize_journal(journal(*entries), NOW)
    assert [e.id for e in out.entries] == ["explicit_old", "manual_old"]


def test_6_clear_with_owner_removes_only_that_owners_entries() -> None:
    a = memory("Session A preference", id="a", type="feedback", source="explicit", owner="session-a")
    b = memory("Session B preference", id="b", type="feedback", source="explicit", owner="session-b")
    start, _ = append_pending(journal(), [a, b], NOW)
    out, events = clear_pending(
        start,
        {"feedback:session a preference", "feedback:session b preference"},
        NOW,
        owner="session-a",
        clear_unowned=False,
        reason="promoted",
    )
    assert [e.pending_owner_session_id for e in out.entries] == ["session-b"]
    assert cleared(events) == [("a", "promoted")]


def test_7_unowned_clear_keeps_owned_entries_with_the_same_key() -> None:
    unowned = memory("Prefer scoped cleanup.", id="clear-unowned", type="feedback", source="explicit")
    owned = replace(unowned, id="clear-owned", pending_owner_session_id="session-owned")
    start, _ = append_pending(journal(), [unowned, owned], NOW)
    out, _ = clear_pending(start, {key(unowned)}, NOW, owner=None, clear_unowned=True, reason="promoted")
    assert [e.id for e in out.entries] == ["clear-owned"]
    assert out.entries[0].pending_owner_session_id == "session-owned"


def test_8_same_key_owned_by_two_sessions_is_two_entries() -> None:
    a = memory(
        "Prefer owner-scoped promotion.", id="same-a", type="feedback", source="explicit", owner="session-a"
    )
    b = replace(a, id="same-b", pending_owner_session_id="session-b")
    out, events = append_pending(journal(), [a, b], NOW)
    assert sorted(e.pending_owner_session_id or "" for e in out.entries) == ["session-a", "session-b"]
    assert cleared(events) == []


def test_11_entries_with_two_invalid_timestamps_are_dropped_for_every_source() -> None:
    entries = (
        memory(
            "Bad explicit timestamp",
            id="bad_explicit",
            type="feedback",
            source="explicit",
            created_at="not-a-date",
            updated_at="also-bad",
        ),
        memory(
            "Bad manual timestamp",
            id="bad_manual",
            type="reference",
            source="manual",
            created_at="",
            updated_at="",
        ),
        memory(
            "Bad compaction timestamp",
            id="bad_compaction",
            type="reference",
            created_at="bad",
            updated_at="bad",
        ),
    )
    out, events = normalize_journal(journal(*entries), NOW)
    assert out.entries == ()
    assert cleared(events) == [
        ("bad_explicit", "invalid_timestamp"),
        ("bad_manual", "invalid_timestamp"),
        ("bad_compaction", "invalid_timestamp"),
    ]


def test_12_updated_at_is_used_when_created_at_is_invalid() -> None:
    fresh = memory(
        "Entry with missing createdAt but fresh updatedAt",
        id="f",
        created_at="",
        updated_at=iso_from_ms(NOW - 1 * DAY_MS),
    )
    stale = memory(
        "Entry with missing createdAt and stale updatedAt",
        id="s",
        created_at="",
        updated_at=iso_from_ms(NOW - 35 * DAY_MS),
    )
    out, _ = normalize_journal(journal(fresh, stale), NOW)
    assert [e.text for e in out.entries] == ["Entry with missing createdAt but fresh updatedAt"]


# ---------------------------------------------------------------------------------------------
# Ordering and retention details
# ---------------------------------------------------------------------------------------------


def test_created_at_is_the_fallback_when_updated_at_is_invalid() -> None:
    entry = memory(
        "Compaction entry", id="e", created_at=iso_from_ms(NOW - 31 * DAY_MS), updated_at="garbage"
    )
    out, events = normalize_journal(journal(entry), NOW)
    assert out.entries == ()
    assert cleared(events) == [("e", "journal_ttl")]


def test_exactly_thirty_days_is_not_stale() -> None:
    entry = memory("Compaction entry", id="e", at=NOW - 30 * DAY_MS)
    out, _ = normalize_journal(journal(entry), NOW)
    assert [e.id for e in out.entries] == ["e"]


def test_stored_oldest_first_ties_broken_by_id() -> None:
    entries = (
        memory("Two", id="b", at=NOW),
        memory("Three", id="c", at=NOW - 5),
        memory("One", id="a", at=NOW),
    )
    out, _ = normalize_journal(journal(*entries), NOW)
    assert [e.id for e in out.entries] == ["c", "a", "b"]


def test_cap_ties_keep_the_smaller_ids() -> None:
    entries = [memory(f"Same time {i}", id=f"id{i:02d}", at=NOW) for i in range(52)]
    out, events = normalize_journal(journal(*reversed(entries)), NOW)
    assert [e.id for e in out.entries] == [f"id{i:02d}" for i in range(50)]
    assert cleared(events) == [("id50", "journal_cap"), ("id51", "journal_cap")]


def test_normalize_is_idempotent_and_stamps_updated_at() -> None:
    entries = [memory(f"Entry {i}", id=f"e{i}", at=NOW - i * DAY_MS) for i in range(40)]
    once, _ = normalize_journal(journal(*entries), NOW)
    twice, events = normalize_journal(once, NOW)
    assert twice.entries == once.entries and events == ()
    later, _ = normalize_journal(once, NOW + 1)
    assert later.updated_at == iso_from_ms(NOW + 1)


def test_normalize_does_not_mutate_its_input() -> None:
    entries = (memory("B", id="b", at=NOW), memory("A", id="a", at=NOW - 1), memory("a", id="dup", at=NOW))
    j = journal(*entries)
    normalize_journal(j, NOW)
    assert j.entries == entries


def test_append_nothing_is_a_no_op() -> None:
    j = journal(memory("A", id="a"))
    assert append_pending(j, [], NOW + 5) == (j, ())


def test_appended_event_shape() -> None:
    entry = memory("Use pnpm", id="m1", source="explicit", owner="s1")
    _, events = append_pending(journal(), [entry], NOW, session_id="s1")
    [appended] = events
    assert appended.type is EventType.PENDING_MEMORY_APPENDED
    assert appended.phase is Phase.PENDING_JOURNAL and appended.outcome is Outcome.ACCEPTED
    assert appended.reason_codes == ("pending_journal_append",)
    assert appended.session_id == "s1"
    assert appended.memory is not None and appended.memory.memory_id == "m1"
    assert appended.memory.memory_key_hash == "decision:use pnpm"
    assert [r.role for r in appended.relations] == [RelationRole.PENDING]
    assert appended.text_preview == "Use pnpm"


def test_append_of_a_duplicate_reports_it_as_cleared_with_the_survivor() -> None:
    first = memory("Use pnpm", id="first", source="explicit", owner="s1", at=NOW - 10)
    again = memory("use PNPM.", id="again", source="explicit", owner="s1", at=NOW)
    j, _ = append_pending(journal(), [first], NOW - 10)
    out, events = append_pending(j, [again], NOW)
    assert [e.id for e in out.entries] == ["first"]
    assert [e.type for e in events] == [EventType.PENDING_MEMORY_APPENDED, EventType.PENDING_MEMORY_CLEARED]
    dup = events[1]
    assert dup.reason_codes == ("duplicate",)
    assert [(r.role, r.memory.memory_id if r.memory else None) for r in dup.relations] == [
        (RelationRole.PENDING, "again"),
        (RelationRole.RETAINED, "first"),
    ]


def test_cleared_event_never_carries_the_raw_owner() -> None:
    entry = memory("Secret owner", id="a", source="explicit", owner="raw-session-id-123")
    _, events = clear_pending(journal(entry), {key(entry)}, NOW, owner=None, clear_unowned=False, reason="x")
    [ev] = events
    assert ev.outcome is Outcome.CLEARED and ev.phase is Phase.PENDING_JOURNAL
    assert ev.details == {"source": "explicit", "owned": True}
    assert "raw-session-id-123" not in repr(ev)


# ---------------------------------------------------------------------------------------------
# Fixed reference bugs
# ---------------------------------------------------------------------------------------------


def test_b29_explicit_copy_beats_an_earlier_compaction_copy() -> None:
    """docs/decisions.md#b29: the reference kept the first duplicate, so a compaction copy could evict
    the explicit copy of the same text and owner and with it the explicit entry's immunity to the 30-day
    TTL."""
    compaction = memory("Use pnpm", id="c", at=NOW - 40 * DAY_MS)
    explicit = memory("use pnpm", id="x", source="explicit", at=NOW - 40 * DAY_MS)
    out, events = normalize_journal(journal(compaction, explicit), NOW)
    assert [e.id for e in out.entries] == ["x"]
    assert cleared(events) == [("c", "duplicate")]


def test_b29_priority_order_is_explicit_then_manual_then_compaction() -> None:
    entries = (
        memory("T", id="c"),
        memory("T", id="m", source="manual"),
        memory("T", id="c2"),
        memory("T", id="x", source="explicit"),
    )
    out, events = normalize_journal(journal(*entries), NOW)
    assert [e.id for e in out.entries] == ["x"]
    assert sorted(cleared(events)) == [("c", "duplicate"), ("c2", "duplicate"), ("m", "duplicate")]


def test_b29_same_priority_keeps_the_first_occurrence() -> None:
    out, _ = normalize_journal(journal(memory("T", id="one", at=NOW - 5), memory("T", id="two", at=NOW)), NOW)
    assert [e.id for e in out.entries] == ["one"]


def test_b29_does_not_merge_across_owners() -> None:
    out, _ = normalize_journal(
        journal(memory("T", id="c"), memory("T", id="x", source="explicit", owner="s")), NOW
    )
    assert sorted(e.id for e in out.entries) == ["c", "x"]


def test_an_invalid_explicit_copy_does_not_take_a_valid_compaction_copy_down_with_it() -> None:
    compaction = memory("Use pnpm", id="c")
    broken = memory("Use pnpm", id="x", source="explicit", created_at="bad", updated_at="bad")
    out, _ = normalize_journal(journal(compaction, broken), NOW)
    assert [e.id for e in out.entries] == ["c"]


def test_b28_clear_with_no_keys_clears_nothing() -> None:
    """docs/decisions.md#b28: clearPendingMemories with an empty key set wiped the whole journal."""
    entries = (memory("A", id="a", owner="s"), memory("B", id="b"))
    j, _ = normalize_journal(journal(*entries), NOW)
    for owner, unowned in ((None, False), (None, True), ("s", False), ("s", True)):
        out, events = clear_pending(j, set(), NOW, owner=owner, clear_unowned=unowned, reason="promoted")
        assert out.entries == j.entries and events == ()


def test_clear_without_owner_or_unowned_flag_clears_every_owner() -> None:
    entries = (
        memory("T", id="a", owner="s1"),
        memory("T", id="b", owner="s2"),
        memory("T", id="c"),
        memory("Other", id="d"),
    )
    out, events = clear_pending(
        journal(*entries), {"decision:t"}, NOW, owner=None, clear_unowned=False, reason="promoted"
    )
    assert [e.id for e in out.entries] == ["d"]
    assert sorted(cleared(events)) == [("a", "promoted"), ("b", "promoted"), ("c", "promoted")]


def test_clear_with_owner_and_unowned_flag() -> None:
    entries = (memory("T", id="a", owner="s1"), memory("T", id="b", owner="s2"), memory("T", id="c"))
    out, _ = clear_pending(
        journal(*entries), {"decision:t"}, NOW, owner="s1", clear_unowned=True, reason="promoted"
    )
    assert [e.id for e in out.entries] == ["b"]


def test_b26_every_removal_emits_pending_memory_cleared() -> None:
    """docs/decisions.md#b26: pending_memory_cleared was declared but never emitted; TTL, cap, clear and
    retry-exhaustion removals left no evidence."""
    entries = [
        memory("Old compaction", id="ttl", at=NOW - 31 * DAY_MS),
        memory("Broken", id="bad", created_at="x", updated_at="y"),
        memory("Dup", id="d1", at=NOW - 5000),
        memory("dup!", id="d2", at=NOW - 5000),
        *(memory(f"Newer {i}", id=f"n{i:02d}", at=NOW - 1000 + i) for i in range(50)),
    ]
    out, events = normalize_journal(journal(*entries), NOW)
    before = {e.id for e in entries}
    after = {e.id for e in out.entries}
    assert {mid for mid, _ in cleared(events)} == before - after
    assert dict(cleared(events)) == {
        "bad": "invalid_timestamp",
        "d2": "duplicate",
        "ttl": "journal_ttl",
        "d1": "journal_cap",
    }
    assert all(e.outcome is Outcome.CLEARED for e in events)
