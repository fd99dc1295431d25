"""Events in the life of a stored memory: redacted, renamed, superseded by a migration, absorbed,
reinforced, revived, archived, superseded, forgotten and restored
(docs/decisions.md#evidence-log-per-memory-lifecycle)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.evidence.build import event, relation
from domain.model import DetailValue, EvidenceInput, MemoryEntry, Relation

#: Reason code of a reinforcement the guards allowed (docs/decisions.md#d8).
_ALLOWED: Final = "reinforcement_window_allowed"


def _about(
    entry: MemoryEntry,
    kind: tuple[EventType, Phase, Outcome],
    reasons: Iterable[str],
    *,
    relations: Iterable[Relation] = (),
    details: Mapping[str, DetailValue] | None = None,
    text: str | None = None,
) -> EvidenceInput:
    """An event about ``entry``, previewing its text (or ``text``)."""
    type_, phase, outcome = kind
    shown = entry.text if text is None else text
    return event(
        type_, phase, outcome, reasons, memory=entry, relations=relations, details=details, text=shown
    )


def _pair(
    first: RelationRole, a: MemoryEntry, second: RelationRole, b: MemoryEntry | None
) -> tuple[Relation, ...]:
    return (relation(first, a), relation(second, b))


_REDACTED: Final = (EventType.MEMORY_REDACTED, Phase.CONSOLIDATION, Outcome.REDACTED)
_RENAMED: Final = (EventType.MEMORY_MIGRATED, Phase.CONSOLIDATION, Outcome.ACCEPTED)
_MIGRATED_OUT: Final = (EventType.MEMORY_SUPERSEDED, Phase.MIGRATION, Outcome.SUPERSEDED)
_ABSORBED: Final = (EventType.MEMORY_ABSORBED, Phase.CONSOLIDATION, Outcome.ABSORBED)
_REINFORCED: Final = (EventType.MEMORY_REINFORCED, Phase.REINFORCEMENT, Outcome.REINFORCED)
_REVIVED: Final = (EventType.MEMORY_REVIVED, Phase.LIFECYCLE, Outcome.REVIVED)
_ARCHIVED: Final = (EventType.MEMORY_ARCHIVED, Phase.LIFECYCLE, Outcome.ARCHIVED)
_SUPERSEDED: Final = (EventType.MEMORY_SUPERSEDED, Phase.LIFECYCLE, Outcome.SUPERSEDED)
_REFUSED: Final = (EventType.MEMORY_SUPERSEDED, Phase.LIFECYCLE, Outcome.REJECTED)
_FORGOTTEN: Final = (EventType.MEMORY_FORGOTTEN, Phase.LIFECYCLE, Outcome.FORGOTTEN)
_RESTORED: Final = (EventType.MEMORY_RESTORED, Phase.LIFECYCLE, Outcome.RESTORED)


def redacted(entry: MemoryEntry, fields: tuple[str, ...]) -> EvidenceInput:
    """A stored memory's ``fields`` (text, rationale) held a credential and were redacted."""
    return _about(entry, _REDACTED, ("credential_redacted",), details={"fields": fields})


def renamed(entry: MemoryEntry, previous_id: str) -> EvidenceInput:
    """Two memories said different things under one id; this one got a new id
    (docs/decisions.md#s14)."""
    return _about(entry, _RENAMED, ("duplicate_id_renamed",), details={"previousId": previous_id})


def migrated_out(entry: MemoryEntry, migration_id: str, hard: tuple[str, ...], text: str) -> EvidenceInput:
    """A one-time migration superseded ``entry`` (its ``hard`` quality reasons; ``text`` as it was)."""
    reasons = (migration_id, *(f"quality:{reason}" for reason in hard))
    return _about(
        entry, _MIGRATED_OUT, reasons, relations=(relation(RelationRole.SUPERSEDED, entry),), text=text
    )


def absorbed(loser: MemoryEntry, survivor: MemoryEntry, reason: str) -> EvidenceInput:
    """Dedupe merged ``loser`` into ``survivor`` (``absorbed_exact`` / ``absorbed_identity``)."""
    links = _pair(RelationRole.ABSORBED, loser, RelationRole.RETAINED, survivor)
    return _about(loser, _ABSORBED, (reason,), relations=links)


def reinforced(
    entry: MemoryEntry, by: MemoryEntry, duplicate: str, *, path: str | None = None
) -> EvidenceInput:
    """``entry`` was reinforced by its duplicate ``by`` (``duplicate_exact`` / ``duplicate_identity``);
    ``path`` names the step when it is not dedupe (``promotion``, docs/decisions.md#b14)."""
    links = _pair(RelationRole.REINFORCED, entry, RelationRole.REINFORCED_BY, by)
    details = {"path": path} if path is not None else None
    return _about(entry, _REINFORCED, (duplicate, _ALLOWED), relations=links, details=details)


def revived(entry: MemoryEntry, trigger: MemoryEntry, reason: str, archived_at: str) -> EvidenceInput:
    """An archived memory came back because ``trigger`` duplicates it (docs/decisions.md#d2)."""
    links = _pair(RelationRole.RETAINED, entry, RelationRole.REINFORCED_BY, trigger)
    return _about(entry, _REVIVED, (reason,), relations=links, details={"archivedAt": archived_at})


def archived(entry: MemoryEntry, limit: int, active_before: int) -> EvidenceInput:
    """``entry`` moved to the archive: more than ``limit`` memories were active
    (docs/decisions.md#d2)."""
    details = {"maxStoredActive": limit, "activeBefore": active_before}
    return _about(entry, _ARCHIVED, ("stored_active_limit",), details=details)


def superseded(old: MemoryEntry, new: MemoryEntry | None, reason: str) -> EvidenceInput:
    """``old`` was replaced by ``new`` (docs/decisions.md#d10)."""
    links = _pair(RelationRole.SUPERSEDED, old, RelationRole.SUPERSEDED_BY, new)
    return _about(old, _SUPERSEDED, (reason,), relations=links)


def supersede_refused(entry: MemoryEntry, label: str, reason: str) -> EvidenceInput:
    """A ``(supersedes Mn)`` request for the candidate ``entry`` that could not be carried out."""
    return _about(entry, _REFUSED, (reason,), details={"label": label})


def forgotten(entry: MemoryEntry, reason: str, text: str) -> EvidenceInput:
    """The user forgot ``entry``; a tombstone keeps extraction from bringing it back
    (``text``: the memory's text)."""
    return _about(entry, _FORGOTTEN, (reason,), relations=(relation(RelationRole.REMOVED, entry),), text=text)


def restored(entry: MemoryEntry) -> EvidenceInput:
    """The user restored ``entry`` (forgotten, superseded or archived before)."""
    return _about(entry, _RESTORED, ("restored_by_user",))
