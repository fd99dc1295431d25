"""What normalisation and dedupe return, and the ids of the one-time store migrations
(docs/decisions.md#normalisation-and-migrations)."""

from __future__ import annotations

from typing import Final

import msgspec

from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore

QUALITY_CLEANUP_MIGRATION_ID: Final = "2026-04-28-quality-cleanup"
P0_CLEANUP_MIGRATION_ID: Final = "2026-04-26-p0-cleanup"
RETENTION_CLOCK_BACKFILL_MIGRATION_ID: Final = "2026-05-01-retention-clock-backfill"
ABSORBED_EXACT: Final = "absorbed_exact"
ABSORBED_IDENTITY: Final = "absorbed_identity"


class Absorption(msgspec.Struct, frozen=True):
    """One dedupe loser and where it went."""

    absorbed: MemoryEntry
    survivor_id: str
    reason: str  # ABSORBED_EXACT | ABSORBED_IDENTITY


class DedupeResult(msgspec.Struct, frozen=True):
    kept: tuple[MemoryEntry, ...]
    absorptions: tuple[Absorption, ...]
    events: tuple[EvidenceInput, ...]


class MigrationAudit(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One line of ``migration-logs/<migration id>.jsonl``. It names the workspace by its key only,
    never by its absolute root (docs/decisions.md#s17)."""

    migration_id: str
    timestamp: str
    workspace_key: str
    entry_id: str
    type: str
    source: str
    text: str
    reasons: tuple[str, ...]
    hard_reasons: tuple[str, ...]
    before_status: str
    after_status: str


class NormalizeResult(msgspec.Struct, frozen=True):
    store: WorkspaceStore
    events: tuple[EvidenceInput, ...]
    audit: tuple[MigrationAudit, ...]
    absorptions: tuple[Absorption, ...]
    #: entries moved out in this step; the shell appends them to the archive file
    archived: tuple[MemoryEntry, ...]
    #: entries brought back from the archive in this step
    revived: tuple[MemoryEntry, ...]
