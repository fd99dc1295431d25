"""A session's state as a value: the tool event the adapters hand the core, a fresh state, and the
bounds every stored state is brought back to (docs/decisions.md#hot-session-state)."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from domain.limits import HotStateLimits
from domain.model import SessionState
from domain.session.errors import order_errors, redact_error
from domain.session.files import rank_files
from domain.session.notes import newest_decisions, pending_window, redact_decision, redact_memory
from domain.timeutil import iso_from_ms


class ToolEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One finished tool call, as the adapter hands it to the core."""

    tool: str
    args: dict[str, Any] = {}
    output: str = ""
    exit_code: int | None = None
    metadata: dict[str, Any] = {}


def empty_session(session_id: str, now_ms: int, parent_session_id: str | None = None) -> SessionState:
    """A session with nothing in it yet."""
    return SessionState(
        session_id=session_id,
        updated_at=iso_from_ms(now_ms),
        parent_session_id=parent_session_id,
    )


def normalize_session(state: SessionState, now_ms: int) -> SessionState:
    """Bring a state within its limits: stamp ``updatedAt``, keep the 20 best-ranked files, the 5 errors
    that sort first, the newest 8 decisions (docs/decisions.md#hot-session-state-recent-decisions) and the
    newest 12 distinct pending memories, and redact every stored text (docs/decisions.md#d4)."""
    return replace(
        state,
        updated_at=iso_from_ms(now_ms),
        active_files=rank_files(state.active_files)[: HotStateLimits.MAX_ACTIVE_FILES_STORED],
        open_errors=order_errors(redact_error(e) for e in state.open_errors)[
            : HotStateLimits.MAX_OPEN_ERRORS_STORED
        ],
        recent_decisions=newest_decisions(redact_decision(d) for d in state.recent_decisions),
        pending_memories=pending_window(redact_memory(m) for m in state.pending_memories),
    )
