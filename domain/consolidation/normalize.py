"""The full normalisation of a workspace store (:mod:`domain.consolidation`)."""

from __future__ import annotations

from collections.abc import Mapping

from msgspec.structs import replace

from domain.caches import Caches
from domain.consolidation.archive import rank_and_archive, revive, same_entries
from domain.consolidation.cleaning import cleaned_entry, redacted_entry
from domain.consolidation.dedupe import dedupe
from domain.consolidation.delta import normalize_delta
from domain.consolidation.migrations import p0_cleanup, quality_cleanup_pass
from domain.consolidation.results import (
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    NormalizeResult,
)
from domain.consolidation.settled import is_settled, remember_settled, settle_result
from domain.emitted import Emitted, MigrationAudit
from domain.enums import MemoryStatus
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore
from domain.retention import DEFAULT_TUNING, Tuning
from domain.timeutil import iso_from_ms


def normalize_store(
    store: WorkspaceStore,
    now_ms: int,
    *,
    archive: Mapping[str, MemoryEntry] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    base: WorkspaceStore | None = None,
    caches: Caches | None = None,
) -> NormalizeResult:
    """The whole normalisation of a workspace store (module docstring), as one pure step.

    ``archive`` maps an archive marker's ``key_hash`` to the archived entry; it is only needed when
    the store has markers. The store's ``lastActivityAt`` and dormant spans are never touched, and
    ``updatedAt`` becomes ``now`` only when something changed. ``base`` (optional) is a store that
    ``store`` was made from by replacing or appending entries: when it is settled, only those
    entries are looked at; the result is the same either way. ``caches`` holds what earlier steps
    derived from the same objects (docs/decisions.md#d14; a fresh one when none is given); the result
    does not depend on it."""
    if caches is None:
        caches = Caches()
    if is_settled(store, tuning, caches):
        return NormalizeResult(store=store)
    if base is not None:
        quick = normalize_delta(store, base, now_ms, archive or {}, tuning, caches)
        if quick is not None:
            return quick
    now_iso = iso_from_ms(now_ms)
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []

    entries: list[MemoryEntry] = []
    clean = caches.clean.table  # a bulk lookup (domain/caches.py, IdentityMemo)
    for entry in store.entries:
        if (hit := clean.get(id(entry))) is not None and hit[0] is entry:
            entries.append(entry)  # redaction, backfill and truncation would leave it as it is
            continue
        cleaned, event = redacted_entry(entry, now_iso)
        entries.append(cleaned)
        if event is not None:
            events.append(event)

    migrations = list(store.migrations)
    if QUALITY_CLEANUP_MIGRATION_ID not in migrations:
        entries, found, records = quality_cleanup_pass(entries, store, now_iso)
        events.extend(found)
        audit.extend(records)
        migrations.append(QUALITY_CLEANUP_MIGRATION_ID)
    if P0_CLEANUP_MIGRATION_ID not in migrations:
        entries, found, records = p0_cleanup(entries, store, now_iso)
        events.extend(found)
        audit.extend(records)
        migrations.append(P0_CLEANUP_MIGRATION_ID)
    entries = [
        entry
        if (hit := clean.get(id(entry))) is not None and hit[0] is entry
        else cleaned_entry(entry, now_ms, caches)
        for entry in entries
    ]
    if RETENTION_CLOCK_BACKFILL_MIGRATION_ID not in migrations:
        migrations.append(RETENTION_CLOCK_BACKFILL_MIGRATION_ID)

    active = [e for e in entries if e.status is not MemoryStatus.SUPERSEDED]
    superseded = [e for e in entries if e.status is MemoryStatus.SUPERSEDED]
    revived, markers, revival_events = revive(active, store, archive or {}, now_ms, now_iso, caches)
    events.extend(revival_events)

    deduped = dedupe([*active, *revived, *superseded], now_ms, tuning, caches)
    events.extend(deduped.events)
    kept_active = [e for e in deduped.kept if e.status is not MemoryStatus.SUPERSEDED]

    new_entries: tuple[MemoryEntry, ...]
    archived: list[MemoryEntry] = []
    if len(kept_active) <= tuning.max_stored_active and same_entries(deduped.kept, store.entries):
        # Nothing to archive and the same entries as stored: only the retention order could move,
        # and the stored order is kept then, so the sort is skipped.
        new_entries = store.entries
    else:
        new_entries, markers, archived = rank_and_archive(
            kept_active, superseded, store, markers, now_ms, now_iso, tuning, events, caches
        )
    new_migrations = tuple(migrations)
    changed = new_entries != store.entries or new_migrations != store.migrations or markers != store.archived
    if (
        not changed
        and not events
        and not audit
        and not revived
        and not archived
        and not deduped.absorptions
        and (archive or not store.archived)
        and len(kept_active) <= tuning.max_stored_active
    ):
        remember_settled(store, len(kept_active), caches)
    result = replace(
        store,
        entries=new_entries,
        migrations=new_migrations,
        archived=markers,
        updated_at=now_iso if changed else store.updated_at,
    )
    if changed:
        settle_result(result, revived, archive, tuning, caches)
    return NormalizeResult(
        store=result,
        absorptions=deduped.absorptions,
        revived=tuple(revived),
        emitted=Emitted(events=tuple(events), audit=tuple(audit), archived=tuple(archived)),
    )
