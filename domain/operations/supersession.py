"""Supersession (docs/decisions.md#d10): retiring a memory with a tombstone, linking it to the memory
that replaces it, and the ``(supersedes Mn)`` requests of a compaction summary."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from domain import evidence
from domain.enums import MemoryStatus
from domain.keys import exact_key, key_hash
from domain.model import EvidenceInput, MemoryEntry, SessionState, Tombstone, WorkspaceStore
from domain.timeutil import iso_from_ms


def resolve_survivor(store: WorkspaceStore, entry: MemoryEntry) -> MemoryEntry | None:
    """The active store entry that now carries ``entry`` (itself, or the survivor that absorbed it)."""
    key = exact_key(entry)
    for candidate in store.entries:
        if candidate.status is MemoryStatus.SUPERSEDED:
            continue
        if candidate.id == entry.id or exact_key(candidate) == key:
            return candidate
        if candidate.absorbed_ids and entry.id in candidate.absorbed_ids:
            return candidate
    return None


def retire_memory(
    store: WorkspaceStore, old_id: str, now_ms: int, reason: str
) -> tuple[WorkspaceStore, MemoryEntry | None]:
    """Mark the active entry ``old_id`` superseded and tombstone its key, so that dedupe ignores it
    and extraction cannot bring it back (docs/decisions.md#d10). Returns the new store and the entry
    as it was (``None`` when there is no such active entry)."""
    old = next((e for e in store.entries if e.id == old_id), None)
    if old is None or old.status is MemoryStatus.SUPERSEDED:
        return store, None
    retired = replace(old, status=MemoryStatus.SUPERSEDED, updated_at=iso_from_ms(now_ms))
    tombstone = Tombstone(
        key_hash=key_hash(exact_key(old)),
        memory_id=old.id,
        reason=reason,
        created_at=iso_from_ms(now_ms),
    )
    tombstones = (*(t for t in store.tombstones if t.key_hash != tombstone.key_hash), tombstone)
    entries = tuple(retired if e.id == old_id else e for e in store.entries)
    return replace(store, entries=entries, tombstones=tombstones, updated_at=iso_from_ms(now_ms)), old


def _unretire(store: WorkspaceStore, old: MemoryEntry) -> WorkspaceStore:
    """Undo :func:`retire_memory` (the replacement did not make it into the store)."""
    entries = tuple(old if e.id == old.id else e for e in store.entries)
    gone = key_hash(exact_key(old))
    tombstones = tuple(t for t in store.tombstones if not (t.key_hash == gone and t.memory_id == old.id))
    return replace(store, entries=entries, tombstones=tombstones)


def link_replacement(store: WorkspaceStore, old_id: str, new_id: str) -> WorkspaceStore:
    """Point ``old_id`` at its replacement ``new_id``; the old memory's pin is the replacement's now
    (the caller pins it), so it is dropped here and a later ``restore`` cannot bring back a second
    pin (docs/decisions.md#d20)."""
    entries = tuple(
        replace(e, superseded_by=new_id, pinned=False) if e.id == old_id else e for e in store.entries
    )
    return replace(store, entries=entries)


def superseded_event(store: WorkspaceStore, old_id: str, new_id: str, reason: str) -> EvidenceInput:
    old = next(e for e in store.entries if e.id == old_id)
    new = next((e for e in store.entries if e.id == new_id), None)
    return evidence.superseded(old, new, reason)


def supersede_entry(
    store: WorkspaceStore, old_id: str, new_id: str | None, now_ms: int, reason: str
) -> tuple[WorkspaceStore, tuple[EvidenceInput, ...]]:
    """Mark ``old_id`` superseded by ``new_id`` (already in the store), or forgotten when ``None``;
    its key is tombstoned and the event recorded (docs/decisions.md#d10)."""
    store, old = retire_memory(store, old_id, now_ms, reason)
    if old is None:
        return store, ()
    if new_id is not None:
        store = link_replacement(store, old_id, new_id)
        return store, (superseded_event(store, old_id, new_id, reason),)
    forgotten = next(e for e in store.entries if e.id == old_id)
    return store, (evidence.forgotten(forgotten, reason, old.text),)


class _Retirement(msgspec.Struct, frozen=True):
    replacement: MemoryEntry  # the new candidate, as parsed
    label: str
    old: MemoryEntry  # the superseded entry as it was


def retire_for_requests(
    store: WorkspaceStore,
    session: SessionState,
    requests: Sequence[tuple[MemoryEntry, str]],
    now_ms: int,
) -> tuple[WorkspaceStore, list[_Retirement], list[EvidenceInput]]:
    """Before promotion: retire every memory a ``(supersedes Mn)`` line names in the block this
    session was shown, so that its replacement is stored as a new memory, not merged into it."""
    retired: list[_Retirement] = []
    events: list[EvidenceInput] = []
    for new_entry, label in requests:
        index = int(label[1:]) - 1 if label[1:].isdigit() else -1
        old_id = session.block_ids[index] if 0 <= index < len(session.block_ids) else None
        if old_id is None:
            events.append(evidence.supersede_refused(new_entry, label, "unknown_block_label"))
            continue
        store, old = retire_memory(store, old_id, now_ms, "superseded_by_compaction")
        if old is None:
            events.append(evidence.supersede_refused(new_entry, label, "not_active"))
            continue
        retired.append(_Retirement(replacement=new_entry, label=label, old=old))
    return store, retired, events


def link_retirements(
    store: WorkspaceStore, retired: Sequence[_Retirement]
) -> tuple[WorkspaceStore, list[EvidenceInput]]:
    """After promotion: point each retired memory at the entry that now carries its replacement,
    or bring it back when the replacement was not stored. A pin goes to the replacement
    (docs/decisions.md#d20)."""
    events: list[EvidenceInput] = []
    for item in retired:
        survivor = resolve_survivor(store, item.replacement)
        if survivor is None or survivor.id == item.old.id:
            store = _unretire(store, item.old)
            events.append(evidence.supersede_refused(item.replacement, item.label, "replacement_not_stored"))
            continue
        if item.old.pinned and not survivor.pinned:
            pinned = replace(survivor, pinned=True)
            store = replace(store, entries=tuple(pinned if e is survivor else e for e in store.entries))
        store = link_replacement(store, item.old.id, survivor.id)
        events.append(superseded_event(store, item.old.id, survivor.id, "superseded_by_compaction"))
    return store, events
