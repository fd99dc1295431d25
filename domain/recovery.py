"""Restoring memories from a file that was set aside: a damaged copy (``<name>.corrupt-<ms>``) or a
last good generation (``<name>.prev``) of the store, the pending journal or a session
(docs/decisions.md#last-good-generation).

:func:`missing_from` says which of the memories such a file holds the workspace lacks, and
:func:`restore_held` is the operation that brings them back: stored memories are merged into the
store as they were (then the store is normalised like after any write: redaction, dedupe, the archive
rule), pending ones go through promotion like any pending memory. Pure.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec.structs import replace

from domain.consolidation import normalize_store
from domain.emitted import events
from domain.enums import EventType, Outcome, Phase
from domain.evidence.build import event
from domain.keys import exact_key, key_hash
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, WorkspaceStore
from domain.operations.values import CommandOutcome, OpResult, Snapshot, operation, unchanged
from domain.promotion import promote
from domain.timeutil import iso_from_ms

#: Reason code of a memory brought back from a set-aside file.
REASON_RESTORED: Final = "restored_from_set_aside_file"


class Held(msgspec.Struct, frozen=True, kw_only=True):
    """The memories one set-aside file holds: stored ones (a store file) or pending ones (a journal
    or a session file)."""

    entries: tuple[MemoryEntry, ...]
    pending: bool


def stored_ids(store: WorkspaceStore) -> frozenset[str]:
    """Every memory id the store accounts for: its entries, the ids they absorbed, the archived."""
    ids = {entry.id for entry in store.entries}
    for entry in store.entries:
        ids.update(entry.absorbed_ids or ())
    ids.update(marker.memory_id for marker in store.archived)
    return frozenset(ids)


def missing_from(store: WorkspaceStore, journal: PendingJournal, held: Held) -> tuple[MemoryEntry, ...]:
    """The held memories the workspace lacks, in the file's order: no stored (or absorbed, or
    archived) memory has the id, none has the same exact key whatever its status, and no tombstone
    holds the key (a forgotten memory stays forgotten); for pending memories, none waits in the
    journal with that key either.
    Each memory once, however often the file holds it."""
    known_ids = set(stored_ids(store))
    known_keys = {exact_key(entry) for entry in store.entries}
    if held.pending:
        known_keys.update(exact_key(entry) for entry in journal.entries)
    tombstoned = {tombstone.key_hash for tombstone in store.tombstones}
    out: list[MemoryEntry] = []
    for entry in held.entries:
        key = exact_key(entry)
        if entry.id in known_ids or key in known_keys or key_hash(key) in tombstoned:
            continue
        known_ids.add(entry.id)
        known_keys.add(key)
        out.append(entry)
    return tuple(out)


def _restored_event(entry: MemoryEntry, source: str) -> EvidenceInput:
    return event(
        EventType.MEMORY_RESTORED,
        Phase.LIFECYCLE,
        Outcome.RESTORED,
        (REASON_RESTORED,),
        memory=entry,
        details={"file": source},
        text=entry.text,
    )


@operation
def restore_held(snap: Snapshot, held: Held, source: str, now_ms: int) -> OpResult:
    """Bring back the memories of ``held`` (read from the set-aside file named ``source``) that the
    workspace lacks (:func:`missing_from`). Stored memories are appended to the store as they were,
    each with a ``memory_restored`` event, and the store is normalised; pending memories are promoted
    as unowned ones (their sessions may be long gone). Outcome ``restored``, or ``unchanged`` when
    the workspace lacked none."""
    missing = missing_from(snap.store, snap.journal, held)
    if not missing:
        return replace(unchanged(snap), outcome=CommandOutcome.UNCHANGED)
    if held.pending:
        unowned = tuple(replace(e, pending_owner_session_id=None, pending_message_id=None) for e in missing)
        promoted = promote(
            snap.store,
            snap.journal,
            unowned,
            now_ms,
            session_id=None,
            include_owned=False,
            include_unowned=False,
            archive=snap.archive,
            tuning=snap.tuning,
            caches=snap.caches,
        )
        return OpResult(
            store=promoted.store,
            journal=promoted.journal,
            session=snap.session,
            emitted=promoted.emitted,
            outcome=CommandOutcome.RESTORED,
        )
    store = replace(snap.store, entries=(*snap.store.entries, *missing), updated_at=iso_from_ms(now_ms))
    normalized = normalize_store(store, now_ms, archive=snap.archive, tuning=snap.tuning, caches=snap.caches)
    restored = events(_restored_event(entry, source) for entry in missing)
    return OpResult(
        store=normalized.store,
        journal=snap.journal,
        session=snap.session,
        emitted=restored + normalized.emitted,
        outcome=CommandOutcome.RESTORED,
    )
