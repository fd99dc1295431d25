"""The one-time store migrations: quality cleanup and P0 cleanup supersede stored compaction memories
that the gate would reject today, each with an event and an audit record
(docs/decisions.md#normalisation-and-migrations)."""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from domain import evidence, safety
from domain.consolidation.results import P0_CLEANUP_MIGRATION_ID, QUALITY_CLEANUP_MIGRATION_ID
from domain.emitted import MigrationAudit
from domain.enums import MemorySource, MemoryStatus, MemoryType
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore


def _merge_tags(tags: tuple[str, ...] | None, extra: Iterable[str]) -> tuple[str, ...]:
    merged: list[str] = []
    for tag in (*(tags or ()), *extra):
        if tag not in merged:
            merged.append(tag)
    return tuple(merged)


def _supersede_for_migration(
    entry: MemoryEntry,
    migration_id: str,
    reasons: tuple[str, ...],
    hard: tuple[str, ...],
    store: WorkspaceStore,
    now_iso: str,
    tags: tuple[str, ...] | None,
) -> tuple[MemoryEntry, EvidenceInput, MigrationAudit]:
    updated = replace(entry, status=MemoryStatus.SUPERSEDED, updated_at=now_iso, tags=tags)
    event = evidence.migrated_out(updated, migration_id, hard, entry.text)
    audit = MigrationAudit(
        migration_id=migration_id,
        timestamp=now_iso,
        workspace_key=store.workspace.key,
        entry_id=entry.id,
        type=entry.type.value,
        source=entry.source.value,
        text=entry.text,
        reasons=reasons,
        hard_reasons=hard,
        before_status=MemoryStatus.ACTIVE.value,
        after_status=MemoryStatus.SUPERSEDED.value,
    )
    return updated, event, audit


def quality_cleanup_pass(
    entries: list[MemoryEntry], store: WorkspaceStore, now_iso: str
) -> tuple[list[MemoryEntry], list[EvidenceInput], list[MigrationAudit]]:
    """The quality-cleanup migration (docs/decisions.md#normalisation-and-migrations): active
    compaction entries with a hard quality reason become superseded, tagged ``quality_cleanup`` and
    ``quality:<reason>``. Soft reasons never act; explicit/manual entries are never touched."""
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []
    for entry in entries:
        if entry.source is not MemorySource.COMPACTION or entry.status is MemoryStatus.SUPERSEDED:
            out.append(entry)
            continue
        quality = safety.assess_memory_quality(entry.type.value, entry.text)
        hard = tuple(r for r in quality.reasons if safety.is_hard_quality_reason(r))
        if quality.accepted or not hard:
            out.append(entry)
            continue
        tags = _merge_tags(entry.tags, ("quality_cleanup", *(f"quality:{r}" for r in hard)))
        updated, event, record = _supersede_for_migration(
            entry, QUALITY_CLEANUP_MIGRATION_ID, quality.reasons, hard, store, now_iso, tags
        )
        out.append(updated)
        events.append(event)
        audit.append(record)
    return out, events, audit


def p0_cleanup(
    entries: list[MemoryEntry], store: WorkspaceStore, now_iso: str
) -> tuple[list[MemoryEntry], list[EvidenceInput], list[MigrationAudit]]:
    """The P0-cleanup migration (docs/decisions.md#normalisation-and-migrations): active compaction
    project entries that are progress snapshots become superseded. Unlike the reference, already
    superseded entries are left alone (docs/decisions.md#s16)."""
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []
    reason = ("progress_snapshot",)
    for entry in entries:
        if (
            entry.source is MemorySource.COMPACTION
            and entry.type is MemoryType.PROJECT
            and entry.status is not MemoryStatus.SUPERSEDED
            and safety.is_progress_snapshot_violation(entry.text)
        ):
            updated, event, record = _supersede_for_migration(
                entry, P0_CLEANUP_MIGRATION_ID, reason, reason, store, now_iso, entry.tags
            )
            out.append(updated)
            events.append(event)
            audit.append(record)
        else:
            out.append(entry)
    return out, events, audit
