"""Restoring memories from a set-aside file, the pure part (docs/decisions.md#last-good-generation)."""

from __future__ import annotations

from msgspec.structs import replace

from domain.enums import EventType, MemorySource, MemoryStatus
from domain.keys import exact_key, key_hash
from domain.model import ArchiveMarker, Tombstone
from domain.operations.values import CommandOutcome, OpResult, Snapshot
from domain.recovery import Held, missing_from, restore_held, stored_ids
from domain.workspace_merge import MergeWorkspace, merged
from tests.support.builders import NOW, NOW_ISO, journal, memory, store

A = memory("always run the linter before pushing", id="mem_a", type="feedback", source=MemorySource.MANUAL)
B = memory("prefer small focused commits always", id="mem_b", type="feedback", source=MemorySource.MANUAL)
C = memory("never force push the main branch", id="mem_c", type="feedback", source=MemorySource.MANUAL)
D = memory(
    "write the changelog entry with the change", id="mem_d", type="feedback", source=MemorySource.EXPLICIT
)


def test_stored_ids_count_entries_absorbed_and_archived() -> None:
    kept = replace(A, absorbed_ids=("mem_x",))
    marker = ArchiveMarker(memory_id="mem_y", key_hash="k", identity_key_hash="i", archived_at=NOW_ISO)
    assert stored_ids(store(kept, archived=(marker,))) == {"mem_a", "mem_x", "mem_y"}


def test_missing_skips_what_the_workspace_holds_by_id_key_or_tombstone_once_each() -> None:
    forgotten = Tombstone(
        key_hash=key_hash(exact_key(C)), memory_id="mem_c", reason="forgotten", created_at=NOW_ISO
    )
    renamed = replace(A, id="mem_other")  # the same memory under another id
    current = store(A, tombstones=(forgotten,))
    held = Held(entries=(renamed, B, B, C), pending=False)
    assert missing_from(current, journal(), held) == (B,)
    waiting = replace(B, id="mem_pending", pending_owner_session_id="s1")
    assert missing_from(current, journal(waiting), Held(entries=(B,), pending=True)) == ()
    assert missing_from(current, journal(waiting), held) == (B,)  # stored memories ignore the journal


def test_stored_memories_come_back_as_they_were_with_one_event_each() -> None:
    snap = Snapshot(store=store(A), journal=journal())
    result = restore_held(snap, Held(entries=(A, B, C), pending=False), "x.corrupt-1", NOW)
    assert result.outcome is CommandOutcome.RESTORED
    assert {e.id for e in result.store.entries} == {"mem_a", "mem_b", "mem_c"}
    restored = [e for e in result.events if e.type == "memory_restored"]
    assert [e.memory.memory_id for e in restored if e.memory] == ["mem_b", "mem_c"]
    assert {e.details["file"] for e in restored} == {"x.corrupt-1"}


def test_pending_memories_are_promoted_without_their_owner() -> None:
    pending = replace(B, source=MemorySource.EXPLICIT, pending_owner_session_id="gone")
    snap = Snapshot(store=store(A), journal=journal())
    result = restore_held(snap, Held(entries=(pending,), pending=True), "j.corrupt-1", NOW)
    [promoted] = [e for e in result.store.entries if e.id == "mem_b"]
    assert promoted.pending_owner_session_id is None
    assert result.journal.entries == ()


def test_nothing_missing_changes_nothing() -> None:
    snap = Snapshot(store=store(A, B), journal=journal())
    result = restore_held(snap, Held(entries=(B,), pending=False), "x.prev", NOW)
    assert result.outcome is CommandOutcome.UNCHANGED and result.store is snap.store and not result.events


def _about(result: OpResult, type_: EventType) -> list[tuple[str | None, tuple[str, ...]]]:
    """The memory and the reasons of each event of ``type_``."""
    return [
        (e.memory.memory_id if e.memory else None, e.reason_codes) for e in result.events if e.type == type_
    ]


def _absorbed(result: OpResult) -> list[tuple[str | None, tuple[str, ...]]]:
    return _about(result, EventType.MEMORY_ABSORBED)


def test_a_duplicate_under_another_id_is_absorbed_by_the_memory_that_takes_it() -> None:
    renamed = replace(A, id="mem_other", absorbed_ids=("mem_older",))  # the store's A, another id
    twin = replace(B, id="mem_twin")  # B twice in the file
    held = Held(entries=(renamed, B, twin), pending=False)
    result = restore_held(Snapshot(store=store(A), journal=journal()), held, "x.prev", NOW)
    kept = {e.id: e for e in result.store.entries}
    assert set(kept) == {"mem_a", "mem_b"}
    assert kept["mem_a"].absorbed_ids == ("mem_other", "mem_older")
    assert kept["mem_b"].absorbed_ids == ("mem_twin",)
    assert _absorbed(result) == [("mem_other", ("absorbed_exact",)), ("mem_twin", ("absorbed_exact",))]
    assert missing_from(result.store, journal(), held) == ()  # recorded once: nothing is lacking now
    again = restore_held(Snapshot(store=result.store, journal=journal()), held, "x.prev", NOW)
    assert again.outcome is CommandOutcome.UNCHANGED and again.store is result.store


def test_a_file_that_holds_only_duplicates_records_them_and_brings_nothing_back() -> None:
    snap = Snapshot(store=store(A), journal=journal())
    result = restore_held(snap, Held(entries=(replace(A, id="mem_other"),), pending=False), "x.prev", NOW)
    assert result.outcome is CommandOutcome.UNCHANGED
    assert [e.absorbed_ids for e in result.store.entries] == [("mem_other",)]
    assert _absorbed(result) == [("mem_other", ("absorbed_exact",))]


def test_a_merged_sub_directory_store_records_its_duplicates_too() -> None:
    command = MergeWorkspace(
        stored=Held(entries=(replace(A, id="mem_sub"), C), pending=False),
        pending=Held(entries=(), pending=True),
        source="src",
    )
    result = merged(Snapshot(store=store(A), journal=journal()), command, NOW)
    kept = {e.id: e for e in result.store.entries}
    assert set(kept) == {"mem_a", "mem_c"} and kept["mem_a"].absorbed_ids == ("mem_sub",)
    assert _absorbed(result) == [("mem_sub", ("absorbed_exact",))]


def _kept_out(result: OpResult) -> list[tuple[str | None, tuple[str, ...]]]:
    return _about(result, EventType.MEMORY_NOT_RESTORED)


def test_a_memory_kept_out_says_why() -> None:
    """A forgotten text stays forgotten, a superseded one stays superseded, a pending one waits once:
    each held memory kept out leaves a ``memory_not_restored`` event with the reason, so ``explain``
    can tell what became of it."""
    forgotten = Tombstone(
        key_hash=key_hash(exact_key(C)), memory_id="mem_c", reason="forgotten", created_at=NOW_ISO
    )
    superseded = replace(B, status=MemoryStatus.SUPERSEDED, superseded_by="mem_a")
    current = store(A, superseded, tombstones=(forgotten,))
    held = Held(entries=(replace(B, id="mem_b2"), replace(C, id="mem_c2")), pending=False)
    result = restore_held(Snapshot(store=current, journal=journal()), held, "x.prev", NOW)
    assert result.outcome is CommandOutcome.UNCHANGED and result.store is current
    assert _kept_out(result) == [("mem_b2", ("key_stored_inactive",)), ("mem_c2", ("key_forgotten",))]
    assert all(e.details == {"file": "x.prev"} for e in result.events)
    waiting = replace(A, id="mem_wait", pending_owner_session_id="s1")
    again = Held(entries=(replace(A, id="mem_held"), D), pending=True)
    pending = restore_held(Snapshot(store=store(), journal=journal(waiting)), again, "j.prev", NOW)
    assert _kept_out(pending) == [("mem_held", ("key_pending",))]
    assert [e.id for e in pending.store.entries] == ["mem_d"]  # the rest still comes back
