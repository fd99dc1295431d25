"""What normalisation and dedupe return, and the ids of the one-time store migrations
(docs/decisions.md#normalisation-and-migrations)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import msgspec

from domain.emitted import Emits
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore

QUALITY_CLEANUP_MIGRATION_ID: Final = "2026-04-28-quality-cleanup"
P0_CLEANUP_MIGRATION_ID: Final = "2026-04-26-p0-cleanup"
RETENTION_CLOCK_BACKFILL_MIGRATION_ID: Final = "2026-05-01-retention-clock-backfill"


class AbsorptionReason(StrEnum):
    """Why dedupe merged a memory into another: the same exact key, or the same identity (path or
    URL) key (docs/decisions.md#dedupe)."""

    EXACT = "absorbed_exact"
    IDENTITY = "absorbed_identity"


ABSORBED_EXACT: Final = AbsorptionReason.EXACT
ABSORBED_IDENTITY: Final = AbsorptionReason.IDENTITY


class Absorption(msgspec.Struct, frozen=True):
    """One dedupe loser and where it went."""

    absorbed: MemoryEntry
    survivor_id: str
    reason: AbsorptionReason


class DedupeResult(msgspec.Struct, frozen=True):
    kept: tuple[MemoryEntry, ...]
    absorptions: tuple[Absorption, ...]
    events: tuple[EvidenceInput, ...]


class NormalizeResult(Emits, frozen=True, kw_only=True):
    """The normalised store, the dedupe losers and the entries brought back from the archive; it
    emits its events, migration audit records and the entries it moved to the archive (which the
    shell appends to the archive file)."""

    store: WorkspaceStore
    absorptions: tuple[Absorption, ...] = ()
    revived: tuple[MemoryEntry, ...] = ()
