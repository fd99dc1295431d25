"""The five core operations every host shares, plus the user's own commands on memories.

Each operation is a pure function ``(snapshot, input, now_ms) -> OpResult``: it receives the workspace
store, the pending journal and the session state as values, and returns the new values, the evidence
events it caused and, where there is one, the text to hand back to the host. The shell writes what
changed and appends the events (docs/architecture.md, "Data flow of one host event"; the operations
are described in docs/decisions.md#host-events).

1. ``open_session``     — closes a dormant stretch (docs/decisions.md#d3), promotes the unowned
                           backlog and the owned entries of idle sessions (docs/decisions.md#d7), and
                           freezes the workspace block for this session's cache epoch;
2. ``observe_user_message`` — explicit triggers → session pending + owned journal entries;
3. ``observe_tool_result``  — hot session state;
4. ``observe_compaction``   — candidates, promotion, ``(supersedes Mn)`` lines (docs/decisions.md#d10)
                              and a new epoch;
5. ``end_session``          — promotes the session's own pending memories and drops its state.

Sub-agent sessions (a session with a parent) get no injection and cause no writes.

The package: :mod:`~domain.operations.values` (snapshot and result), :mod:`~domain.operations.common`
(the steps the operations share), :mod:`~domain.operations.host_events` (the five operations),
:mod:`~domain.operations.supersession` and :mod:`~domain.operations.commands` (the user's commands).
Every name it offered as one module is still importable from here.
"""

from domain.operations.commands import forget, remember, restore, supersede
from domain.operations.common import (
    ACTIVITY_STAMP_INTERVAL_MS,
    adoptable_owner_ids,
    compaction_prompt,
    context_text,
    idle_owner_ids,
    prunable_sessions,
    render_block,
    stamp_rendered,
)
from domain.operations.host_events import (
    end_session,
    observe_compaction,
    observe_tool_result,
    observe_user_message,
    open_session,
)
from domain.operations.supersession import supersede_entry
from domain.operations.values import CommandOutcome, OpResult, Snapshot, is_sub_agent, unchanged

__all__ = [
    "ACTIVITY_STAMP_INTERVAL_MS",
    "CommandOutcome",
    "OpResult",
    "Snapshot",
    "adoptable_owner_ids",
    "compaction_prompt",
    "context_text",
    "end_session",
    "forget",
    "idle_owner_ids",
    "is_sub_agent",
    "observe_compaction",
    "observe_tool_result",
    "observe_user_message",
    "open_session",
    "prunable_sessions",
    "remember",
    "render_block",
    "restore",
    "stamp_rendered",
    "supersede",
    "supersede_entry",
    "unchanged",
]
