"""Builders of the domain values the tests start from: one memory, a store, a journal, a session and an
evidence event, each with keyword arguments and defaults that make a valid value.

Every argument that is not a convenience (``at``, ``owner``, ``root``, ``key``, ``reasons``, ...) is
the struct field of the same name; other fields pass through as keyword arguments and win over the
defaults (``memory(created_at="not-a-date")``, ``store(updated_at="x")``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import count
from typing import Any, Final

from domain.enums import EventType, MemorySource, MemoryStatus, MemoryType, Outcome, Phase, RelationRole
from domain.model import (
    EvidenceEvent,
    EvidenceInput,
    MemoryEntry,
    MemoryRef,
    PendingJournal,
    Relation,
    SessionState,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.timeutil import iso_from_ms, parse_iso_ms

#: The instant most tests run at: 2026-06-01T12:00:00.000Z.
NOW: Final = parse_iso_ms("2026-06-01T12:00:00.000Z") or 0
NOW_ISO: Final = iso_from_ms(NOW)
#: The workspace most tests belong to, and its key.
ROOT: Final = "/home/dev/project"
KEY: Final = "0123456789abcdef"


def memory(
    text: str = "Some durable memory text",
    *,
    id: str = "m1",
    type: MemoryType | str = MemoryType.DECISION,
    source: MemorySource | str = MemorySource.COMPACTION,
    status: MemoryStatus | str = MemoryStatus.ACTIVE,
    at: float = NOW,
    owner: str | None = None,
    **fields: Any,
) -> MemoryEntry:
    """An active decision created and updated ``at``; confidence 0.75 for a compaction candidate and
    1.0 otherwise, as the core gives them; ``owner`` is the pending owner session."""
    stamp = iso_from_ms(at)
    values: dict[str, Any] = {
        "confidence": 0.75 if MemorySource(source) is MemorySource.COMPACTION else 1.0,
        "created_at": stamp,
        "updated_at": stamp,
        "pending_owner_session_id": owner,
        **fields,
    }
    return MemoryEntry(
        id=id,
        type=MemoryType(type),
        text=text,
        source=MemorySource(source),
        status=MemoryStatus(status),
        **values,
    )


def store(
    *entries: MemoryEntry, root: str = ROOT, key: str = KEY, at: float = NOW, **fields: Any
) -> WorkspaceStore:
    """The workspace store of ``root`` holding ``entries``, updated ``at``."""
    values: dict[str, Any] = {"updated_at": iso_from_ms(at), **fields}
    return WorkspaceStore(workspace=WorkspaceRef(root=root, key=key), entries=entries, **values)


def journal(
    *entries: MemoryEntry, root: str = ROOT, key: str = KEY, at: float = NOW, **fields: Any
) -> PendingJournal:
    """The pending journal of ``root`` holding ``entries`` as given (not normalised), updated ``at``."""
    values: dict[str, Any] = {"updated_at": iso_from_ms(at), **fields}
    return PendingJournal(workspace=WorkspaceRef(root=root, key=key), entries=entries, **values)


def session(session_id: str = "s1", *, at: float = NOW, **fields: Any) -> SessionState:
    """The hot state of ``session_id``, updated ``at``."""
    values: dict[str, Any] = {"updated_at": iso_from_ms(at), **fields}
    return SessionState(session_id=session_id, **values)


def ref(
    memory_id: str, type: str | None = None, source: str | None = None, status: str | None = None
) -> MemoryRef:
    """A reference to the memory ``memory_id`` as an event names it."""
    return MemoryRef(memory_id=memory_id, type=type, source=source, status=status)


_event_ids = count(1)


def event(
    type: EventType | str = EventType.PROMOTION_PROMOTED,
    phase: Phase | str = Phase.PROMOTION,
    outcome: Outcome | str = Outcome.PROMOTED,
    reasons: Iterable[str] = (),
    *,
    memory: MemoryRef | None = None,
    relations: Sequence[tuple[str, str]] = (),
    details: dict[str, Any] | None = None,
    at: float = NOW,
    created_at: str | None = None,
    preview: str | None = None,
    key: str = KEY,
    root_hash: str | None = None,
    event_id: str | None = None,
) -> EvidenceEvent:
    """One line of the evidence log as the shell writes it. ``relations`` are (role, memory id) pairs;
    each event gets a fresh id unless ``event_id`` is given."""
    return EvidenceEvent(
        version=1,
        event_id=event_id if event_id is not None else f"evt_{NOW}_{next(_event_ids):08d}",
        created_at=created_at if created_at is not None else iso_from_ms(at),
        workspace_key=key,
        workspace_root_hash=root_hash if root_hash is not None else key,
        type=str(type),
        phase=str(phase),
        outcome=str(outcome),
        reason_codes=tuple(reasons),
        memory=memory,
        relations=tuple(Relation(role=RelationRole(role), memory=ref(mid)) for role, mid in relations),
        details=details or {},
        text_preview=preview,
    )


def event_input(**changes: Any) -> EvidenceInput:
    """An event as the core emits it: a promoted explicit decision, with ``changes`` applied."""
    values: dict[str, Any] = {
        "type": EventType.PROMOTION_PROMOTED,
        "phase": Phase.PROMOTION,
        "outcome": Outcome.PROMOTED,
        "reason_codes": ("new_workspace_entry",),
        "memory": MemoryRef(memory_id="mem-a", type="decision", source="explicit", status="active"),
        "text_preview": "Use npm test before release",
        **changes,
    }
    return EvidenceInput(**values)


def event_input_of(
    type: EventType, phase: Phase, outcome: Outcome, *reasons: str, **changes: Any
) -> EvidenceInput:
    """:func:`event_input` of ``type`` in ``phase`` with ``outcome``, for ``reasons``."""
    return event_input(type=type, phase=phase, outcome=outcome, reason_codes=reasons, **changes)
