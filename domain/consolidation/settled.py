"""Settled stores: outputs that a second normalisation would leave as they are, remembered by their
entries tuple so that the next step need not look at every entry again (docs/performance.md,
"Simulation")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from domain.consolidation.cleaning import _CLEAN, _CLEAN_LIMIT, _cleaned
from domain.consolidation.results import (
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
)
from domain.key_index import carry_index
from domain.keys import carry_keys
from domain.model import ArchiveMarker, MemoryEntry, MemoryStatus, WorkspaceStore
from domain.retention import Tuning

# Stores that normalisation leaves exactly as they are at any instant, by their entries tuple
# (docs/performance.md, "Simulation"). A store is recorded when a normalisation found nothing to do
# with it: every entry clean, every migration recorded, no entry duplicating another or an archived
# one, and no more active entries than the stored-active limit. Each of those facts depends only on
# the entries and the archive markers (the instant only orders the entries, and the stored order
# is kept when nothing else changes), so normalising the same entries and markers again, under a
# limit they still meet, gives back the same store and no events. Keyed by ``id`` with the tuples
# kept in the value, so a hit is only a hit for the very same tuples; bounded and invisible.
_SETTLED_LIMIT: Final = 64
_SETTLED: Final[dict[int, tuple[tuple[MemoryEntry, ...], tuple[ArchiveMarker, ...], int]]] = {}
_ALL_MIGRATIONS: Final = frozenset(
    {QUALITY_CLEANUP_MIGRATION_ID, P0_CLEANUP_MIGRATION_ID, RETENTION_CLOCK_BACKFILL_MIGRATION_ID}
)


def _remember_settled(store: WorkspaceStore, active: int, *, ids_checked: bool = False) -> None:
    """Record ``store`` as settled (the caller checked the rest); ``ids_checked``: its entries are
    known to hold distinct ids."""
    if not ids_checked and len({entry.id for entry in store.entries}) != len(store.entries):
        return  # entries sharing an id (superseded ones may) are re-sorted at each pass
    if len(_SETTLED) >= _SETTLED_LIMIT:
        _SETTLED.clear()
    _SETTLED[id(store.entries)] = (store.entries, store.archived, active)


def _is_settled(store: WorkspaceStore, tuning: Tuning) -> bool:
    hit = _SETTLED.get(id(store.entries))
    return (
        hit is not None
        and hit[0] is store.entries
        and hit[1] is store.archived
        and hit[2] <= tuning.max_stored_active
        and _ALL_MIGRATIONS.issubset(store.migrations)
    )


def _settle_result(
    result: WorkspaceStore,
    revived: Sequence[MemoryEntry],
    archive: Mapping[str, MemoryEntry] | None,
    tuning: Tuning,
    now_ms: int,
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
    A property test normalises recorded outputs again without the memo and compares."""
    if revived or (result.archived and not archive):
        return
    active = 0
    for entry in result.entries:
        if entry.status is not MemoryStatus.SUPERSEDED:
            active += 1
        if _CLEAN.get(id(entry)) is not entry:
            _cleaned(entry, now_ms)
            if _CLEAN.get(id(entry)) is not entry:
                return
    if active <= tuning.max_stored_active:
        _remember_settled(result, active)


def restamped(store: WorkspaceStore, stamped: WorkspaceStore, positions: Iterable[int]) -> WorkspaceStore:
    """``stamped`` is ``store`` with new ``lastRenderedAt`` stamps on the entries at ``positions`` and
    nothing else changed. Normalisation never reads that stamp except to pick which entries to
    archive, and a settled store archives nothing; so when ``store`` is settled, ``stamped`` is
    recorded settled too, and each restamped entry is clean when the entry it replaces was
    (docs/performance.md)."""
    hit = _SETTLED.get(id(store.entries))
    if hit is None or hit[0] is not store.entries or hit[1] is not store.archived:
        carry_index(store.entries, stamped.entries)
        return stamped
    for position in positions:
        before, after = store.entries[position], stamped.entries[position]
        if after is not before and _CLEAN.get(id(before)) is before:
            if len(_CLEAN) >= _CLEAN_LIMIT:
                _CLEAN.clear()
            _CLEAN[id(after)] = after
            carry_keys(before, after)
    _remember_settled(stamped, hit[2], ids_checked=True)  # the ids of a settled store
    carry_index(store.entries, stamped.entries)
    return stamped
