"""The archive (docs/decisions.md#d2): above the stored-active limit the weakest long-unrendered
memories move out, leaving a marker; an active memory that duplicates a marker brings the archived
one back. Markers are indexed by their key hashes (in the caller's cache, docs/decisions.md#d14), and
the index of a markers tuple made by archiving or reviving is derived from the one it was made from
(docs/performance.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from msgspec.structs import replace

from domain import evidence
from domain.caches import Caches, MarkerIndex
from domain.consolidation.cleaning import backfill_retention_clock, redacted_entry, truncated
from domain.enums import MemoryStatus
from domain.keys import entry_key_hashes, exact_key, identity_key, key_hash
from domain.limits import DAY_MS, LongTermLimits
from domain.model import ArchiveMarker, EvidenceInput, MemoryEntry, WorkspaceStore
from domain.ranking import sort_by_retention
from domain.retention import Tuning, dormancy_at, retention_start_ms

_ARCHIVE_AFTER_MS: Final = LongTermLimits.ARCHIVE_UNRENDERED_DAYS * DAY_MS


def same_entries(a: Sequence[MemoryEntry], b: Sequence[MemoryEntry]) -> bool:
    """Equal up to order (ids are unique after dedupe; a repeated id compares as different)."""
    if len(a) != len(b):
        return False
    by_id = {e.id: e for e in b}
    return len(by_id) == len(b) and all((x := by_id.get(e.id)) is e or x == e for e in a)


# The key hashes of a store's archive markers, by the markers tuple, filed in the caller's cache
# (docs/performance.md, docs/decisions.md#d14). The tuple is carried unchanged from one operation to
# the next until something is archived or revived, and it grows with the archive, so looking at
# every marker at every normalisation would make a long life cost more per operation. A tuple made
# by archiving or reviving gets its index from the one it was made from.
def _add_markers(
    exact: dict[str, tuple[ArchiveMarker, ...]],
    identity: dict[str, tuple[ArchiveMarker, ...]],
    markers: Iterable[ArchiveMarker],
) -> None:
    for marker in markers:
        exact[marker.key_hash] = (*exact.get(marker.key_hash, ()), marker)
        identity[marker.identity_key_hash] = (*identity.get(marker.identity_key_hash, ()), marker)


def marker_index_of(markers: tuple[ArchiveMarker, ...], caches: Caches) -> MarkerIndex:
    """The exact and identity hashes of ``markers`` (filed in ``caches``)."""
    hit = caches.markers.get(markers)
    if hit is not None:
        return hit
    exact: dict[str, tuple[ArchiveMarker, ...]] = {}
    identity: dict[str, tuple[ArchiveMarker, ...]] = {}
    _add_markers(exact, identity, markers)
    return caches.markers.put(markers, MarkerIndex(markers, exact, identity))


def _derive_markers(
    before: tuple[ArchiveMarker, ...],
    after: tuple[ArchiveMarker, ...],
    gone: Sequence[ArchiveMarker],
    caches: Caches,
) -> None:
    """Record the index of ``after``, which this module made from ``before`` by dropping the markers
    ``gone`` and appending new ones, when ``before`` has an index: made from it."""
    hit = caches.markers.get(before)
    if hit is None or after is before:
        return
    exact, identity = dict(hit.exact), dict(hit.identity)
    for marker in gone:
        for table, key in ((exact, marker.key_hash), (identity, marker.identity_key_hash)):
            kept = tuple(m for m in table[key] if m is not marker)
            if kept:
                table[key] = kept
            else:
                del table[key]
    _add_markers(exact, identity, after[len(before) - len(gone) :])
    caches.markers.put(after, MarkerIndex(after, exact, identity))


def revive(
    active: list[MemoryEntry],
    store: WorkspaceStore,
    archive: Mapping[str, MemoryEntry],
    now_ms: int,
    now_iso: str,
    caches: Caches,
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[EvidenceInput]]:
    """Archived memories duplicated by an active entry come back (docs/decisions.md#d2). Returns the
    revived entries, the markers that remain and the events."""
    if not store.archived or not archive:
        return [], store.archived, []
    hashes = [entry_key_hashes(entry, caches) for entry in active]
    index = marker_index_of(store.archived, caches)
    marked_exact, marked_identity = index.exact, index.identity
    if not any(exact in marked_exact or identity in marked_identity for exact, identity in hashes):
        return [], store.archived, []  # no active entry duplicates an archived one
    # the first active entry with each hash
    exact_hashes: dict[str, MemoryEntry] = {}
    identity_hashes: dict[str, MemoryEntry] = {}
    for (exact, identity), entry in zip(hashes, active, strict=True):
        exact_hashes.setdefault(exact, entry)
        identity_hashes.setdefault(identity, entry)
    return revive_markers(
        store.archived,
        range(len(store.archived)),
        exact_hashes,
        identity_hashes,
        archive,
        now_ms,
        now_iso,
        caches,
    )


def revive_markers(
    markers: tuple[ArchiveMarker, ...],
    positions: Iterable[int],
    exact_hashes: Mapping[str, MemoryEntry],
    identity_hashes: Mapping[str, MemoryEntry],
    archive: Mapping[str, MemoryEntry],
    now_ms: int,
    now_iso: str,
    caches: Caches,
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[EvidenceInput]]:
    """Bring back the archived memory of each marker at ``positions`` (ascending) that an active entry
    duplicates: ``exact_hashes`` / ``identity_hashes`` map a key hash to the first active entry with
    it. Markers elsewhere are not looked at; they remain, as do markers whose memory is not in
    ``archive``."""
    revived: list[MemoryEntry] = []
    gone: set[int] = set()
    events: list[EvidenceInput] = []
    for position in positions:
        marker = markers[position]
        archived = archive.get(marker.key_hash)
        trigger = exact_hashes.get(marker.key_hash) or identity_hashes.get(marker.identity_key_hash)
        if archived is None or trigger is None:
            continue
        cleaned, redaction = redacted_entry(archived, now_iso)
        if redaction is not None:
            events.append(redaction)
        entry = truncated(backfill_retention_clock(cleaned, now_ms))
        if entry.status is MemoryStatus.SUPERSEDED:
            entry = replace(entry, status=MemoryStatus.ACTIVE)
        revived.append(entry)
        gone.add(position)
        reason = "revived_exact" if marker.key_hash == key_hash(exact_key(trigger)) else "revived_identity"
        events.append(evidence.revived(entry, trigger, reason, marker.archived_at))
    if not gone:
        return revived, markers, events
    cuts = sorted(gone)
    remaining = markers[: cuts[0]]
    for here, after in zip(cuts, [*cuts[1:], len(markers)], strict=True):
        remaining += markers[here + 1 : after]
    _derive_markers(markers, remaining, [markers[i] for i in cuts], caches)
    return revived, remaining, events


def _archive_eligible(entry: MemoryEntry, now_ms: int) -> bool:
    """Not shown for 30 days: ``lastRenderedAt`` or, never rendered, the retention start."""
    rendered = entry.last_rendered_at
    if isinstance(rendered, int | float) and not isinstance(rendered, bool) and math.isfinite(rendered):
        return now_ms - rendered > _ARCHIVE_AFTER_MS
    return now_ms - retention_start_ms(entry, now_ms) > _ARCHIVE_AFTER_MS


def _archive_overflow(
    ordered: list[MemoryEntry],
    markers: tuple[ArchiveMarker, ...],
    now_ms: int,
    now_iso: str,
    limit: int,
    caches: Caches,
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[MemoryEntry], list[EvidenceInput]]:
    """While more than 500 entries are active, move the weakest eligible one out (docs/decisions.md#d2).
    ``ordered`` is strongest first. ``limit`` is the tuning's ``max_stored_active``."""
    if len(ordered) <= limit:
        return ordered, markers, [], []
    excess = len(ordered) - limit
    moved: list[MemoryEntry] = []
    for entry in reversed(ordered):
        if len(moved) == excess:
            break
        if _archive_eligible(entry, now_ms):
            moved.append(entry)
    if not moved:
        return ordered, markers, [], []
    moved_ids = {id(entry) for entry in moved}
    kept = [entry for entry in ordered if id(entry) not in moved_ids]
    new_markers: list[ArchiveMarker] = []
    events: list[EvidenceInput] = []
    for entry in moved:
        new_markers.append(
            ArchiveMarker(
                memory_id=entry.id,
                key_hash=key_hash(exact_key(entry, caches)),
                identity_key_hash=key_hash(identity_key(entry, caches)),
                archived_at=now_iso,
            )
        )
        events.append(evidence.archived(entry, limit, len(ordered)))
    replaced = {marker.key_hash for marker in new_markers}
    index = marker_index_of(markers, caches)
    gone = [m for key in replaced for m in index.exact.get(key, ())]
    kept_markers = tuple(m for m in markers if m.key_hash not in replaced) if gone else markers
    kept_markers += tuple(new_markers)
    _derive_markers(markers, kept_markers, gone, caches)
    return kept, kept_markers, moved, events


def rank_and_archive(
    kept_active: list[MemoryEntry],
    superseded: list[MemoryEntry],
    store: WorkspaceStore,
    markers: tuple[ArchiveMarker, ...],
    now_ms: int,
    now_iso: str,
    tuning: Tuning,
    events: list[EvidenceInput],
    caches: Caches,
) -> tuple[tuple[MemoryEntry, ...], tuple[ArchiveMarker, ...], list[MemoryEntry]]:
    """The active entries strongest first, the weakest moved out above the stored-active limit (its
    events go to ``events``), then the superseded ones: the new entries, markers and archived
    entries. When only the order moved, the stored entries are kept as they are."""
    ordered = sort_by_retention(kept_active, now_ms, dormancy_at(store, now_ms, tuning), tuning, caches)
    ordered, markers, archived, archive_events = _archive_overflow(
        ordered, markers, now_ms, now_iso, tuning.max_stored_active, caches
    )
    events.extend(archive_events)
    new_entries = (*ordered, *superseded)
    if same_entries(new_entries, store.entries):
        new_entries = store.entries  # only the retention order moved: nothing to write
    return new_entries, markers, archived
