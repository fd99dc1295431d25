"""Merging a store of an old sub-directory (docs/decisions.md#d15) never loses a memory: afterwards
the repository's store accounts for every memory the old store held (by id, by exact key, absorbed,
archived or tombstoned; an old memory whose exact twin in the old store is kept counts as kept), and
merging again changes nothing."""

from __future__ import annotations

from hypothesis import given

from domain.commands import handle
from domain.keys import exact_key
from domain.model import MemoryEntry, WorkspaceStore
from domain.operations.values import Snapshot
from domain.recovery import Held, missing_from, stored_ids
from domain.workspace_merge import MergeWorkspace
from property_tests.store_strategies import NOW_MS, entry_lists, stores
from tests.support.builders import journal


@given(stores(), entry_lists(duplicate_ids=False))
def test_a_merge_loses_nothing_and_a_second_merge_changes_nothing(
    current: WorkspaceStore, old: list[MemoryEntry]
) -> None:
    command = MergeWorkspace(
        stored=Held(entries=tuple(old), pending=False), pending=Held(entries=(), pending=True), source="src"
    )
    snap = Snapshot(store=current, journal=journal())
    merged = handle(snap, command, NOW_MS)
    kept = stored_ids(merged.store)
    for lost in missing_from(merged.store, merged.journal, command.stored):
        # only a copy of another old memory with the same text may go: that memory is kept
        twins = [o for o in old if o.id != lost.id and exact_key(o) == exact_key(lost)]
        assert any(o.id in kept for o in twins), lost
    again = handle(Snapshot(store=merged.store, journal=merged.journal), command, NOW_MS)
    assert again.store.entries == merged.store.entries
