"""The generic constructor of an evidence event (:func:`event`), the reference of a memory and of a
relation, and stamping a session on events (:mod:`domain.evidence`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from domain import keys
from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.model import DetailValue, EvidenceInput, MemoryEntry, MemoryRef, Relation
from domain.safety import preview


def memory_ref(entry: MemoryEntry, *, with_keys: bool = True) -> MemoryRef:
    """``{memoryId, memoryKeyHash, identityKeyHash, type, source, status}`` of ``entry``."""
    exact, identity = keys.entry_keys(entry) if with_keys else (None, None)
    return MemoryRef(
        memory_id=entry.id,
        memory_key_hash=exact,
        identity_key_hash=identity,
        type=entry.type.value,
        source=entry.source.value,
        status=entry.status.value,
    )


def relation(role: RelationRole, entry: MemoryEntry | None) -> Relation:
    return Relation(role=role, memory=memory_ref(entry) if entry is not None else None)


def event(
    type_: EventType,
    phase: Phase,
    outcome: Outcome,
    reasons: Iterable[str],
    *,
    memory: MemoryEntry | MemoryRef | None = None,
    relations: Iterable[Relation] = (),
    details: Mapping[str, DetailValue] | None = None,
    text: str | None = None,
    preview_limit: int = 120,
    session_id: str | None = None,
    message_id: str | None = None,
) -> EvidenceInput:
    """Build one event. ``text`` becomes a redacted, whitespace-collapsed preview of at most
    ``preview_limit`` characters; ``session_id``/``message_id`` are raw and get hashed by the log."""
    ref = memory_ref(memory) if isinstance(memory, MemoryEntry) else memory
    return EvidenceInput(
        type=type_,
        phase=phase,
        outcome=outcome,
        reason_codes=tuple(reasons),
        session_id=session_id,
        message_id=message_id,
        memory=ref,
        relations=tuple(relations),
        details=dict(details) if details else {},
        text_preview=preview(text, preview_limit) if text else None,
    )


def with_session(events: Iterable[EvidenceInput], session_id: str | None) -> tuple[EvidenceInput, ...]:
    """Stamp ``session_id`` on events that have none."""
    from msgspec.structs import replace

    if session_id is None:
        return tuple(events)
    return tuple(e if e.session_id else replace(e, session_id=session_id) for e in events)
