"""The Claude Code host (``workmem hook claude-code``): its side of the shared hook dialect.

===================== ==========================================================================
hook event            what happens (docs/hosts.md has the full table)
===================== ==========================================================================
SessionStart          ``open_session`` (a resumed session gets its kept hot state back); prints the
                      frozen block and the hot state as ``additionalContext``. ``source`` "compact"
                      only opens the epoch: the summary does not exist yet at that point.
UserPromptSubmit      ``observe_user_message`` for prompts typed by a person (``source`` absent,
                      ``user`` or ``sdk``); message id from ``prompt_id``. Prints the block again
                      when a compaction changed it, else the hot state when it changed; a note
                      of what the prompt forgot or corrected comes first (docs/decisions.md#d19).
PostToolUse(Failure)  ``observe_tool_result`` for Read/Edit/Write/NotebookEdit, Grep and Bash (the
                      text an edit or a write puts in is read for use, docs/decisions.md#d19).
PreCompact            read-only: prints an addendum to Claude Code's own summary prompt (the
                      ``Memory candidates:`` rules, after ``</summary>``) with the numbered block
                      and hot state as background, within Claude Code's 10,000-character cut.
PostCompact           ``observe_compaction`` of ``compact_summary`` (an empty or missing summary
                      leaves a ``compaction_summary_missing`` event). It cannot inject context:
                      the new block reaches the model with the next prompt.
SessionEnd            ``end_session``: promotes what the session owns; keeps its hot state for a
                      resume unless ``reason`` is ``clear`` or ``logout``.
Stop                  ``reply`` with ``last_assistant_message`` (the ids it cites); prints nothing.
every other event     a silent no-op (the names of ``HOOK_EVENTS`` in the Agent SDK's types).
===================== ==========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.hosts.dialect import Dialect
from adapters.hosts.hook_dialect import (
    UNKNOWN_EVENT,
    HookEnv,
    HookResult,
    run_hook as _run_hook,
    text_field,
)
from adapters.hosts.hook_tools import tool_event as _tool_event

if TYPE_CHECKING:
    from domain.model import SessionState
    from domain.session import ToolEvent

__all__ = ["DIALECT", "HOST", "UNKNOWN_EVENT", "HookEnv", "HookResult", "pre_compact_text", "run_hook"]

HOST: Final = "claude-code"

#: Every hook event Claude Code 2.1.332 defines (``HOOK_EVENTS`` in the Agent SDK 0.3.332 types).
HOOK_EVENTS: Final = frozenset(
    {
        "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
        "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure",
        "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch",
        "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted",
        "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
        "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay",
        "PreSkillShellCommand",
    }
)  # fmt: skip

#: Claude Code cuts a PreCompact hook's output at this many characters.
MAX_PRE_COMPACT_CHARS: Final = 10_000
_CUT_NOTE: Final = "\n[background cut to fit the host's limit]"


def pre_compact_text(session: SessionState | None, root: str) -> str:
    """The addendum for Claude Code's compaction prompt: memory rules first, background last, the
    whole within :data:`MAX_PRE_COMPACT_CHARS` (the background is cut at a line, never the rules)."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from domain.extraction import build_compaction_addendum
    from domain.session import render_hot_state

    block = hot = ""
    if session is not None and session.parent_session_id is None:
        block = session.numbered_block or session.frozen_block or ""
        hot = render_hot_state(session, root)
    background = "\n\n".join(p for p in (block, hot) if p)
    text = build_compaction_addendum(background)
    if len(text) + 1 <= MAX_PRE_COMPACT_CHARS:
        return text
    rules = build_compaction_addendum("")
    room = MAX_PRE_COMPACT_CHARS - len(rules) - len(_CUT_NOTE) - 200
    kept = background[: max(0, room)]
    kept = kept[: kept.rfind("\n")] if "\n" in kept else ""
    text = build_compaction_addendum(kept + _CUT_NOTE) if kept else rules
    return text[: MAX_PRE_COMPACT_CHARS - 1]


def _summary(payload: Mapping[str, Any]) -> str:
    """PostCompact carries the summary it just wrote (``compact_summary``, required by the host)."""
    return text_field(payload, "compact_summary") or ""


DIALECT: Final = Dialect(host=HOST, known_events=HOOK_EVENTS, summary=_summary, pre_compact=pre_compact_text)


def tool_event(payload: Mapping[str, Any]) -> ToolEvent | None:
    """The core tool event for a Claude Code PostToolUse(Failure) payload (``None``: not followed)."""
    return _tool_event(payload, DIALECT)


def run_hook(raw: str, env: HookEnv) -> HookResult:
    """Handle one Claude Code hook payload. Never raises."""
    return _run_hook(raw, env, DIALECT)
