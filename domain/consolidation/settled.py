"""Settled stores: outputs that a second normalisation would leave as they are, filed by their entries
tuple in the caller's :class:`~domain.caches.Caches` so that the next step need not look at every
entry again (docs/performance.md, "Simulation"; docs/decisions.md#d14).

A store is recorded settled when a normalisation found nothing to do with it: every entry clean,
every migration recorded, no entry duplicating another or an archived one, and no more active
entries than the stored-active limit. Each of those facts depends only on the entries and the
archive markers (the instant only orders the entries, and the stored order is kept when nothing else
changes), so normalising the same entries and markers again, under a limit they still meet, gives
back the same store and no events.

Those facts read of an entry only its id, status, type and text (the keys, the active count) and
whether it is clean. So a store whose entries differ from the last settled store's only at positions
holding an entry with the same id, status, type and text, each clean — what re-stamping
``lastRenderedAt`` after a render or reinforcing in place makes — is settled too: :func:`is_settled`
derives that itself from the two stores, and no step has to say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from domain.caches import Caches, Settled
from domain.consolidation.cleaning import is_clean, is_clean_as
from domain.consolidation.results import (
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
)
from domain.enums import MemoryStatus
from domain.model import MemoryEntry, WorkspaceStore
from domain.retention import Tuning

_ALL_MIGRATIONS: Final = frozenset(
    {QUALITY_CLEANUP_MIGRATION_ID, P0_CLEANUP_MIGRATION_ID, RETENTION_CLOCK_BACKFILL_MIGRATION_ID}
)


def remember_settled(
    store: WorkspaceStore, active: int, caches: Caches, *, ids_checked: bool = False
) -> None:
    """Record ``store`` as settled (the caller checked the rest); ``ids_checked``: its entries are
    known to hold distinct ids."""
    if not ids_checked and len({entry.id for entry in store.entries}) != len(store.entries):
        return  # entries sharing an id (superseded ones may) are re-sorted at each pass
    caches.last_settled = caches.settled.put(store.entries, Settled(store.entries, store.archived, active))


def _derived(store: WorkspaceStore, caches: Caches) -> Settled | None:
    """``store`` is settled when it is the last settled store with, at some positions, an entry of the
    same id, status, type and text that is clean (module docstring)."""
    last = caches.last_settled
    entries = store.entries
    if last is None or last.archived is not store.archived or len(last.entries) != len(entries):
        return None
    for before, after in zip(last.entries, entries, strict=True):
        if after is not before and not (
            after.id == before.id
            and after.status is before.status
            and after.type is before.type
            and after.text == before.text
            and is_clean_as(after, before, caches)  # every entry of a settled store is clean
        ):
            return None
    return caches.settled.put(entries, Settled(entries, store.archived, last.active))


def is_settled(store: WorkspaceStore, tuning: Tuning, caches: Caches) -> bool:
    if not _ALL_MIGRATIONS.issubset(store.migrations):
        return False
    hit = caches.settled.get(store.entries) or _derived(store, caches)
    if hit is None or hit.archived is not store.archived or hit.active > tuning.max_stored_active:
        return False
    caches.last_settled = hit
    return True


def settle_result(
    result: WorkspaceStore,
    revived: Sequence[MemoryEntry],
    archive: Mapping[str, MemoryEntry] | None,
    tuning: Tuning,
    caches: Caches,
) -> None:
    """Record the output of a normalisation that changed something as settled when normalising it
    again would find nothing to do (docs/performance.md, "Simulation"), so the next step does not
    look at every entry again. That holds when:

    - every entry is clean (checked here for the entries this pass made; the others are recorded
      clean already) and every migration is recorded (a pass records them all);
    - no two active entries share an exact or an identity key: dedupe merged them, a survivor keeps
      its winner's text and type, and renaming an id changes no key;
    - no active entry duplicates an archive marker: none did before dedupe when nothing was revived,
      the survivors' keys are among those, and each new marker carries the keys of an entry that
      left, which no kept entry shares. A pass that revived something is not recorded: a revived
      entry is not checked against the other markers;
    - the stored-active limit is met (then the stored order is kept) and revival had the archive
      to look in.
    A property test normalises recorded outputs again with a fresh cache and compares."""
    if revived or (result.archived and not archive):
        return
    active = 0
    clean = caches.clean.table  # a bulk lookup (domain/caches.py, IdentityMemo)
    for entry in result.entries:
        if entry.status is not MemoryStatus.SUPERSEDED:
            active += 1
        if ((hit := clean.get(id(entry))) is None or hit[0] is not entry) and not is_clean(entry, caches):
            return
    if active <= tuning.max_stored_active:
        remember_settled(result, active, caches)
