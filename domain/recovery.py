"""Restoring memories from a file that was set aside: a damaged copy (``<name>.corrupt-<ms>``) or a
last good generation (``<name>.prev``) of the store, the pending journal or a session
(docs/decisions.md#last-good-generation).

:func:`missing_from` says which of the memories such a file holds the workspace lacks, and
:func:`restore_held` is the operation that brings them back: stored memories are merged into the
store as they were (then the store is normalised like after any write: redaction, dedupe, the archive
rule), pending ones go through promotion like any pending memory. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

import msgspec
from msgspec.structs import replace

from domain import evidence
from domain.consolidation import normalize_store
from domain.consolidation.results import ABSORBED_EXACT
from domain.emitted import events
from domain.enums import EventType, MemoryStatus, Outcome, Phase
from domain.evidence.build import event
from domain.keys import exact_key, key_hash
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, WorkspaceStore
from domain.operations.values import CommandOutcome, OpResult, Snapshot, operation, unchanged
from domain.promotion import promote
from domain.timeutil import iso_from_ms

#: Reason code of a memory brought back from a set-aside file.
REASON_RESTORED: Final = "restored_from_set_aside_file"
#: Reason codes of a held memory that is not brought back (``memory_not_restored``): its text was
#: forgotten (a tombstone holds its key), a superseded or forgotten stored memory has its text, or a
#: pending memory with its text waits in the journal.
KEPT_OUT_FORGOTTEN: Final = "key_forgotten"
KEPT_OUT_STORED: Final = "key_stored_inactive"
KEPT_OUT_PENDING: Final = "key_pending"


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
    return _sorted_out(store, journal, held).missing


def duplicates_in(
    store: WorkspaceStore, journal: PendingJournal, held: Held
) -> tuple[tuple[MemoryEntry, str], ...]:
    """The held memories :func:`missing_from` leaves out as exact duplicates under another id: the
    exact key of an active stored memory, or of a memory held earlier that comes back; each with the
    id of the memory that takes it in (docs/decisions.md#d2: its id joins that memory's
    ``absorbed_ids``)."""
    return _sorted_out(store, journal, held).duplicates


class _Sorted(NamedTuple):
    """What becomes of each held memory the workspace does not hold by id: brought back, absorbed by
    a memory (with its id), or kept out (with the reason code)."""

    missing: tuple[MemoryEntry, ...]
    duplicates: tuple[tuple[MemoryEntry, str], ...]
    kept_out: tuple[tuple[MemoryEntry, str], ...]


def _sorted_out(store: WorkspaceStore, journal: PendingJournal, held: Held) -> _Sorted:
    known_ids = set(stored_ids(store))
    stored_keys = {exact_key(entry) for entry in store.entries}
    pending_keys = {exact_key(entry) for entry in journal.entries} if held.pending else set()
    takers = {exact_key(e): e.id for e in store.entries if e.status is MemoryStatus.ACTIVE}
    tombstoned = {tombstone.key_hash for tombstone in store.tombstones}
    out: list[MemoryEntry] = []
    duplicates: list[tuple[MemoryEntry, str]] = []
    kept_out: list[tuple[MemoryEntry, str]] = []
    for entry in held.entries:
        key = exact_key(entry)
        if entry.id in known_ids:
            continue
        known_ids.add(entry.id)
        taker = takers.get(key)
        if taker is not None:
            duplicates.append((entry, taker))
        elif key_hash(key) in tombstoned:
            kept_out.append((entry, KEPT_OUT_FORGOTTEN))
        elif key in stored_keys:
            kept_out.append((entry, KEPT_OUT_STORED))
        elif key in pending_keys:
            kept_out.append((entry, KEPT_OUT_PENDING))
        else:
            takers[key] = entry.id
            out.append(entry)
    return _Sorted(tuple(out), tuple(duplicates), tuple(kept_out))


def absorb_duplicates(
    store: WorkspaceStore, duplicates: Sequence[tuple[MemoryEntry, str]]
) -> tuple[WorkspaceStore, tuple[EvidenceInput, ...]]:
    """Each duplicate's id (and the ids it absorbed) joins the ``absorbed_ids`` of the stored memory
    that takes it, with a ``memory_absorbed`` event, as dedupe records a duplicate
    (docs/decisions.md#d2), so ``explain`` says where it went. A taker not in ``store`` (a pending
    memory) records nothing."""
    found: list[EvidenceInput] = []
    entries = {e.id: e for e in store.entries}
    for duplicate, taker_id in duplicates:
        taker = entries.get(taker_id)
        if taker is None:
            continue
        ids = dict.fromkeys((*(taker.absorbed_ids or ()), duplicate.id, *(duplicate.absorbed_ids or ())))
        ids.pop(taker.id, None)
        entries[taker_id] = taker = replace(taker, absorbed_ids=tuple(ids))
        found.append(evidence.absorbed(duplicate, taker, ABSORBED_EXACT))
    if not found:
        return store, ()
    return replace(store, entries=tuple(entries[e.id] for e in store.entries)), tuple(found)


def _restored_event(entry: MemoryEntry, source: str, reason: str, *, kept_out: bool = False) -> EvidenceInput:
    """A held memory brought back from the file ``source`` (``memory_restored``), or kept out
    (``memory_not_restored``), with the reason."""
    type_, outcome = (
        (EventType.MEMORY_NOT_RESTORED, Outcome.KEPT_OUT)
        if kept_out
        else (EventType.MEMORY_RESTORED, Outcome.RESTORED)
    )
    return event(
        type_, Phase.LIFECYCLE, outcome, (reason,), memory=entry, details={"file": source}, text=entry.text
    )


@operation
def restore_held(
    snap: Snapshot, held: Held, source: str, now_ms: int, *, reason: str = REASON_RESTORED
) -> OpResult:
    """Bring back the memories of ``held`` (read from the set-aside file named ``source``) that the
    workspace lacks (:func:`missing_from`). Stored memories are appended to the store as they were,
    each with a ``memory_restored`` event, and the store is normalised; pending memories are promoted
    as unowned ones (their sessions may be long gone). A held memory that duplicates one the store
    keeps (or one the file brings back) under another id is absorbed by it
    (:func:`absorb_duplicates`). Outcome ``restored``, or ``unchanged`` when the workspace lacked
    none. ``reason``: the reason code of each stored memory's event. A held memory that is kept out
    (a forgotten text stays forgotten, :func:`missing_from`) leaves a ``memory_not_restored`` event
    that says why."""
    missing, duplicates, kept_out = _sorted_out(snap.store, snap.journal, held)
    skipped = events(_restored_event(entry, source, why, kept_out=True) for entry, why in kept_out)
    if missing and not held.pending:
        return _stored_back(snap, missing, duplicates, now_ms, source, reason).emitting(skipped)
    taken, absorbed = absorb_duplicates(snap.store, duplicates)
    if not missing:
        if not absorbed:
            return replace(unchanged(snap), emitted=skipped, outcome=CommandOutcome.UNCHANGED)
        kept = replace(taken, updated_at=iso_from_ms(now_ms))
        return replace(
            unchanged(snap),
            store=kept,
            emitted=events(absorbed) + skipped,
            outcome=CommandOutcome.UNCHANGED,
        )
    unowned = tuple(replace(e, pending_owner_session_id=None, pending_message_id=None) for e in missing)
    promoted = promote(
        taken,
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
        emitted=events(absorbed) + promoted.emitted + skipped,
        outcome=CommandOutcome.RESTORED,
    )


def _stored_back(
    snap: Snapshot,
    missing: tuple[MemoryEntry, ...],
    duplicates: tuple[tuple[MemoryEntry, str], ...],
    now_ms: int,
    source: str,
    reason: str,
) -> OpResult:
    """Stored memories appended as they were, their duplicates absorbed, the store normalised."""
    store = replace(snap.store, entries=(*snap.store.entries, *missing), updated_at=iso_from_ms(now_ms))
    store, absorbed = absorb_duplicates(store, duplicates)
    normalized = normalize_store(store, now_ms, archive=snap.archive, tuning=snap.tuning, caches=snap.caches)
    restored = events(_restored_event(entry, source, reason) for entry in missing)
    return OpResult(
        store=normalized.store,
        journal=snap.journal,
        session=snap.session,
        emitted=restored + events(absorbed) + normalized.emitted,
        outcome=CommandOutcome.RESTORED,
    )
