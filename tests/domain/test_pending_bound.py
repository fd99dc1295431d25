"""The pending journal's bound never loses a request a person made (docs/decisions.md#pending-journal-bound,
docs/decisions.md#d7): requests pushed over the 50-entry bound are promoted early, a session's copy of
a request leaves its pending list only once the request was promoted, and the diagnostics show both.

Driven through the core operations in memory (:class:`tests.support.world.World`); the same losses
through the command line and the Claude Code hooks are in ``tests/reliability/test_losses.py``.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.diagnostics import (
    DiagInput,
    PendingBound,
    disappearance_rows,
    format_health,
    health_json,
    health_report,
    inspect,
)
from domain.emitted import NOTHING
from domain.enums import EventType, MemoryStatus
from domain.evidence_records import build_record
from domain.keys import exact_key
from domain.limits import DAY_MS, HOUR_MS, PendingJournalLimits
from domain.model import EvidenceEvent, EvidenceInput, MemoryEntry
from domain.pending import (
    normalize_journal,
    over_bound,
    promoted_for,
    rebuild_from_sessions,
    record_promoted_for_owners,
    without_records_of,
)
from domain.promotion import promote_over_bound
from domain.timeutil import iso_from_ms
from tests.support import builders
from tests.support.builders import KEY, NOW, ROOT
from tests.support.world import Compact, End, Forget, Open, Say, Tool, World

BOUND = PendingJournalLimits.MAX_ENTRIES
EARLY = "journal_cap_early_promotion"
PNPM = "always use pnpm for package installs"


def rule(i: int) -> str:
    return f"remember this: rule number {i} is to keep module {i} tidy"


def rule_text(i: int) -> str:
    return f"rule number {i} is to keep module {i} tidy"


def active_texts(world: World) -> set[str]:
    return {e.text for e in world.store.entries if e.status is MemoryStatus.ACTIVE}


def of_type(events: list[EvidenceInput], type_: EventType) -> list[EvidenceInput]:
    return [e for e in events if e.type is type_]


def records(world: World) -> tuple[EvidenceEvent, ...]:
    return tuple(
        build_record(
            e,
            event_id=f"evt_{i:06d}",
            created_at=iso_from_ms(world.now),
            workspace_key=KEY,
            workspace_root_hash=KEY,
        )
        for i, e in enumerate(world.events)
    )


def diag(world: World) -> DiagInput:
    return DiagInput(root=ROOT, key=KEY, store=world.store, journal=world.journal, events=records(world))


def others_fill_the_journal(world: World, count: int = 60) -> None:
    for i in range(count):
        world.apply(Say(sid=f"other-{i}", text=rule(i)))


# ---------------------------------------------------------------------------------------------
# The loss, reproduced
# ---------------------------------------------------------------------------------------------


def test_a_request_pushed_over_the_bound_by_other_sessions_is_stored_at_once() -> None:
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    others_fill_the_journal(world)
    assert PNPM in active_texts(world)  # promoted early, not cleared
    assert len(world.journal.entries) == BOUND
    cap_cleared = [
        e for e in of_type(world.events, EventType.PENDING_MEMORY_CLEARED) if "journal_cap" in e.reason_codes
    ]
    assert cap_cleared == []
    (promoted,) = [
        e
        for e in of_type(world.events, EventType.PROMOTION_PROMOTED)
        if e.memory is not None and e.memory.memory_key_hash == exact_key(world.store.entries[0])
    ]
    assert EARLY in promoted.reason_codes
    # then S goes on and ends: the memory stays stored, once
    world.apply(Say(sid="S", text="hello again"))
    world.apply(Open(sid="S"))
    world.apply(End(sid="S"))
    assert [e.text for e in world.store.entries].count(PNPM) == 1
    assert PNPM in active_texts(world)


def test_sixty_requests_from_one_session_are_all_stored() -> None:
    world = World(NOW)
    for i in range(60):
        world.apply(Say(sid="S", text=rule(i)))
    assert len(world.journal.entries) == BOUND
    assert len(world.sessions["S"].pending_memories) <= 12
    world.apply(Say(sid="S", text="thanks"))
    world.apply(End(sid="S"))
    assert active_texts(world) == {rule_text(i) for i in range(60)}


def test_a_thirteenth_request_does_not_lose_the_first() -> None:
    """The session's pending list is a view of its newest 12; the journal holds every request."""
    world = World(NOW)
    for i in range(13):
        world.apply(Say(sid="S", text=rule(i)))
    assert rule_text(0) not in {m.text for m in world.sessions["S"].pending_memories}
    world.apply(Compact(sid="S", summary="## Goal\nGo on.\n"))
    assert active_texts(world) == {rule_text(i) for i in range(13)}


def test_the_next_context_of_the_session_keeps_its_request_until_it_is_stored() -> None:
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    for i in range(30):
        world.apply(Say(sid=f"other-{i}", text=rule(i)))
    world.apply(Open(sid="S"))
    world.apply(Tool(sid="S"))
    assert PNPM in {m.text for m in world.sessions["S"].pending_memories}
    for i in range(30, 60):
        world.apply(Say(sid=f"other-{i}", text=rule(i)))
    world.apply(Tool(sid="S"))  # promoted early meanwhile: no longer pending
    assert PNPM not in {m.text for m in world.sessions["S"].pending_memories}
    assert PNPM in active_texts(world)


def test_compaction_candidates_over_the_bound_are_still_cleared_by_the_cap() -> None:
    """Only what no person asked for may leave the journal for its bound."""
    world = World(NOW)
    backlog = tuple(
        builders.memory(f"Backlog candidate number {i}", id=f"backlog-{i}", at=NOW - HOUR_MS + i)
        for i in range(3)
    )
    world.journal = replace(world.journal, entries=backlog)
    others_fill_the_journal(world, BOUND)
    cleared = [
        e for e in of_type(world.events, EventType.PENDING_MEMORY_CLEARED) if "journal_cap" in e.reason_codes
    ]
    assert [e.memory.memory_id for e in cleared if e.memory is not None] == [f"backlog-{i}" for i in range(3)]
    assert all(e.memory is not None and e.memory.source == "compaction" for e in cleared)
    assert len(world.journal.entries) == BOUND
    assert of_type(world.events, EventType.PROMOTION_PROMOTED) == []


# ---------------------------------------------------------------------------------------------
# The session's copy leaves its pending list only once the request was promoted
# ---------------------------------------------------------------------------------------------


def test_a_copy_whose_journal_entry_vanished_unpromoted_is_kept_and_stored_at_the_end() -> None:
    """A journal entry that left without being promoted (here: the journal file was lost) is not a
    reason to drop the session's copy: the copy is kept and its end promotes it."""
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    world.journal = replace(world.journal, entries=())
    world.apply(Say(sid="S", text="go on"))
    assert PNPM in {m.text for m in world.sessions["S"].pending_memories}
    world.apply(End(sid="S"))
    assert PNPM in active_texts(world)


def test_an_adopted_request_still_leaves_the_idle_sessions_pending_list() -> None:
    world = World(NOW)
    world.apply(Say(sid="A", text=f"remember this: {PNPM}"))
    world.now += DAY_MS + 1
    world.apply(Open(sid="B"))
    assert PNPM in active_texts(world)
    world.apply(Tool(sid="A"))
    assert world.sessions["A"].pending_memories == ()


# ---------------------------------------------------------------------------------------------
# Visible: health and disappearances
# ---------------------------------------------------------------------------------------------


def test_health_reports_the_bound_and_the_early_promotions() -> None:
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    others_fill_the_journal(world)
    report = health_report(diag(world), world.now)
    assert report.pending_total == BOUND
    assert report.pending == PendingBound(bound=BOUND, owned=BOUND, over_bound=0, early_promotions=11)
    summary = health_json(diag(world), world.now)["summary"]
    assert {k: summary[k] for k in ("pending", "pendingBound", "pendingOwned", "earlyPromotions")} == {
        "pending": BOUND,
        "pendingBound": BOUND,
        "pendingOwned": BOUND,
        "earlyPromotions": 11,
    }
    assert (summary["pendingOverBound"], summary["pendingClearedByBound"]) == (0, 0)
    text = format_health(report)
    assert "  bound: 50 entries; requests over it: 0 (promoted early)\n" in text
    assert "  early promotions (journal bound): 11\n" in text


def test_disappearances_never_report_an_early_promotion_or_a_pending_request_as_lost() -> None:
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    world.apply(Say(sid="T", text=f"remember this: {PNPM}"))  # the same request twice: one absorbed
    others_fill_the_journal(world)
    rows = disappearance_rows(inspect(diag(world), world.now))
    assert [r for r in rows if r.classification == "historical_absent_unknown_reason"] == []
    (absorbed,) = rows
    assert absorbed.terminal_type == EventType.PROMOTION_ABSORBED_EXACT
    assert EARLY in absorbed.reason_codes


# ---------------------------------------------------------------------------------------------
# The pure pieces: retention, early promotion, the records
# ---------------------------------------------------------------------------------------------


def _explicit(i: int, owner: str | None = "S", at: int = NOW) -> MemoryEntry:
    return builders.memory(f"Explicit rule {i}", id=f"x{i:02d}", source="explicit", owner=owner, at=at + i)


def test_retention_keeps_requests_over_the_bound_and_clears_only_candidates() -> None:
    requests = [_explicit(i, at=NOW - DAY_MS) for i in range(5)]
    candidates = [builders.memory(f"Candidate {i}", id=f"c{i}", at=NOW - DAY_MS + 100 + i) for i in range(5)]
    newer = [_explicit(i, owner="T") for i in range(10, 10 + BOUND)]
    out, events = normalize_journal(builders.journal(*requests, *candidates, *newer), NOW)
    assert [e.id for e in out.entries] == [e.id for e in (*requests, *newer)]
    assert [(e.memory.memory_id if e.memory else None, e.reason_codes) for e in events] == [
        (f"c{i}", ("journal_cap",)) for i in range(4, -1, -1)
    ]
    assert [e.id for e in over_bound(out)] == [e.id for e in requests]
    assert over_bound(builders.journal(*newer)) == ()


def test_early_promotion_stores_what_is_over_the_bound_and_records_other_owners() -> None:
    mine, theirs = _explicit(0, owner="S", at=NOW - DAY_MS), _explicit(1, owner="T", at=NOW - DAY_MS)
    newer = [_explicit(i, owner="U") for i in range(10, 10 + BOUND)]
    journal, _ = normalize_journal(builders.journal(mine, theirs, *newer), NOW)
    result = promote_over_bound(builders.store(at=NOW), journal, NOW, session_id="S")
    assert [e.text for e in result.store.entries] == ["Explicit rule 0", "Explicit rule 1"]
    assert len(result.journal.entries) == BOUND and over_bound(result.journal) == ()
    assert result.cleared_keys == {exact_key(mine)}  # the session's own copy goes at once
    assert [(r.memory_id, r.owner_session_id, r.reason) for r in result.journal.promoted_for_owners] == [
        ("x01", "T", EARLY)
    ]
    outcomes = of_type(list(result.events), EventType.PROMOTION_PROMOTED)
    assert [e.reason_codes for e in outcomes] == [("new_workspace_entry", EARLY)] * 2
    cleared = of_type(list(result.events), EventType.PENDING_MEMORY_CLEARED)
    assert [e.reason_codes for e in cleared] == [("promoted", EARLY)] * 2


def test_early_promotion_of_a_journal_within_its_bound_changes_nothing() -> None:
    store = builders.store(at=NOW)
    journal = builders.journal(_explicit(0))
    result = promote_over_bound(store, journal, NOW, session_id="S")
    assert (result.store, result.journal, result.emitted) == (store, journal, NOTHING)
    assert result.cleared_keys == frozenset()


def test_a_request_promoted_early_lifts_the_tombstone_of_its_key() -> None:
    """As any request does (docs/decisions.md#d10): the user asked for the memory again."""
    world = World(NOW)
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    world.apply(End(sid="S"))
    (stored,) = world.store.entries
    world.apply(Forget(memory_id=stored.id))
    world.apply(Say(sid="S", text=f"remember this: {PNPM}"))
    others_fill_the_journal(world)
    assert PNPM in active_texts(world) and world.store.tombstones == ()


def test_the_records_age_out_and_a_rebuild_skips_what_they_name() -> None:
    journal = record_promoted_for_owners(builders.journal(), [_explicit(0)], EARLY, NOW)
    assert promoted_for(journal, "S") == {"x00"} and promoted_for(journal, "T") == set()
    assert without_records_of(journal, "S").promoted_for_owners == ()
    week = PendingJournalLimits.PROMOTED_RECORD_TTL_MS
    assert normalize_journal(journal, NOW + week)[0].promoted_for_owners == journal.promoted_for_owners
    assert normalize_journal(journal, NOW + week + 1)[0].promoted_for_owners == ()
    holder = builders.session("S", pending_memories=(_explicit(0), _explicit(1)))
    rebuilt, _ = rebuild_from_sessions(journal, [holder], NOW)
    assert [e.id for e in rebuilt.entries] == ["x01"]


def test_a_journal_found_over_its_bound_is_brought_back_by_the_next_message_or_open() -> None:
    """A journal rebuilt from the sessions' pending lists (docs/decisions.md#pending-journal-bound)
    may hold more requests than the bound: the next message, even one without a request, or the next
    session start promotes the oldest early."""
    for op in (Say(sid="S", text="hello"), Open(sid="S")):
        world = World(NOW)
        world.journal = builders.journal(*(_explicit(i, owner=f"o{i % 5}") for i in range(60)))
        world.apply(op)
        assert len(world.journal.entries) == BOUND
        assert active_texts(world) == {f"Explicit rule {i}" for i in range(10)}
