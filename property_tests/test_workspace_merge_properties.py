"""Merging a store of an old sub-directory (docs/decisions.md#d15) never loses a memory: afterwards
the repository's store accounts for every memory the old store held (by id, by exact key, absorbed,
archived or tombstoned), and merging again changes nothing.

Both stores are built as they are on disk: every write normalises its store (redaction, cleaning,
dedupe), so an old store never holds a credential or two copies of one text."""

from __future__ import annotations

from hypothesis import given

from domain.commands import handle
from domain.consolidation import normalize_store
from domain.model import MemoryEntry, WorkspaceStore
from domain.operations.values import Snapshot
from domain.recovery import Held, missing_from
from domain.workspace_merge import MergeWorkspace
from property_tests.store_strategies import NOW_MS, entry_lists, stores
from tests.support.builders import journal, store


@given(stores(), entry_lists(duplicate_ids=False))
def test_a_merge_loses_nothing_and_a_second_merge_changes_nothing(
    current: WorkspaceStore, old: list[MemoryEntry]
) -> None:
    on_disk = normalize_store(current, NOW_MS).store
    held = normalize_store(store(*old, root="/home/user/project/src"), NOW_MS).store.entries
    command = MergeWorkspace(
        stored=Held(entries=held, pending=False), pending=Held(entries=(), pending=True), source="src"
    )
    merged = handle(Snapshot(store=on_disk, journal=journal()), command, NOW_MS)
    assert missing_from(merged.store, merged.journal, command.stored) == ()
    again = handle(Snapshot(store=merged.store, journal=merged.journal), command, NOW_MS)
    assert again.store.entries == merged.store.entries
