"""What a session notes beyond files and errors: its recent decisions (the newest 8) and the explicit
memories still waiting for promotion, all redacted (docs/decisions.md#hot-session-state-recent-decisions)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TypeVar

from msgspec.structs import replace

from domain.enums import DecisionSource
from domain.ids import decision_id
from domain.keys import first_per_key
from domain.limits import HotStateLimits
from domain.model import MemoryEntry, SessionDecision, SessionState
from domain.safety import redact
from domain.text import collapse_whitespace, memory_key
from domain.timeutil import iso_from_ms


def _decision_norm(text: str) -> str:
    return collapse_whitespace(text.lower())


#: A decision or a pending memory: both carry a text and an optional rationale.
_Noted = TypeVar("_Noted", SessionDecision, MemoryEntry)


def redacted_entry(noted: _Noted) -> _Noted:
    """``noted`` with its text and rationale redacted (the same object when nothing changed)."""
    text = redact(noted.text)
    rationale = None if noted.rationale is None else redact(noted.rationale)
    if text == noted.text and rationale == noted.rationale:
        return noted
    return replace(noted, text=text, rationale=rationale)


def redact_decision(decision: SessionDecision) -> SessionDecision:
    return redacted_entry(decision)


def newest_decisions(decisions: Iterable[SessionDecision]) -> tuple[SessionDecision, ...]:
    return tuple(decisions)[-HotStateLimits.MAX_RECENT_DECISIONS_STORED :]


def add_recent_decision(
    state: SessionState,
    text: str,
    source: DecisionSource,
    now_ms: int,
    rationale: str | None = None,
) -> SessionState:
    """Remember a decision taken in this session. A decision equal up to case and whitespace refreshes
    the existing one (time, source, rationale when given) and keeps its place and wording. The newest
    8 are kept."""
    text = redact(text)
    rationale = None if rationale is None else redact(rationale)
    norm = _decision_norm(text)
    decisions: list[SessionDecision] = []
    found = False
    for item in state.recent_decisions:
        if not found and _decision_norm(item.text) == norm:
            found = True
            item = replace(
                item,
                created_at=now_ms,
                rationale=rationale if rationale is not None else item.rationale,
                source=source,
            )
        decisions.append(item)
    if not found:
        decisions.append(
            SessionDecision(
                id=decision_id(now_ms, len(state.recent_decisions), text),
                text=text,
                rationale=rationale,
                source=source,
                created_at=now_ms,
            )
        )
    return replace(state, recent_decisions=newest_decisions(decisions), updated_at=iso_from_ms(now_ms))


def entry_key(entry: MemoryEntry) -> str:
    return memory_key(entry.type.value, entry.text)


def redact_memory(entry: MemoryEntry) -> MemoryEntry:
    return redacted_entry(entry)


def pending_window(entries: Iterable[MemoryEntry]) -> tuple[MemoryEntry, ...]:
    return tuple(first_per_key(entries, entry_key)[-HotStateLimits.MAX_PENDING_MEMORIES_STORED :])


def add_pending_memories(state: SessionState, entries: Sequence[MemoryEntry]) -> SessionState:
    """Append explicit memories waiting for promotion (redacted). The first of equal memory keys wins;
    the newest 12 distinct ones are kept."""
    return replace(
        state,
        pending_memories=pending_window((*state.pending_memories, *map(redact_memory, entries))),
    )


def remove_pending_memories(state: SessionState, keys: Collection[str]) -> SessionState:
    """Drop the pending memories whose ``memory_key(type, text)`` is in ``keys``."""
    kept = tuple(entry for entry in state.pending_memories if entry_key(entry) not in keys)
    return state if len(kept) == len(state.pending_memories) else replace(state, pending_memories=kept)
