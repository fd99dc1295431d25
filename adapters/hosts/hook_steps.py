"""The steps the command-hook dialect runs (docs/hosts.md): pure functions of a workspace snapshot,
each run by the shell in one transaction, plus the hook output they produce. They keep, in the
session's extras, hashes of what was last injected, so a prompt re-injects only what changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from domain.operations import OpResult, Snapshot

#: Session-state extras (kept by the codec like any unknown field): ``hash16`` of the hot state and
#: of the frozen block this host last injected, so a prompt re-injects only what changed.
INJECTED_HOT_STATE_KEY: Final = "claudeCodeInjectedHotState"
INJECTED_BLOCK_KEY: Final = "hookInjectedBlock"
#: ``SessionEnd.reason`` values after which the session cannot come back: its state is dropped.
FINAL_END_REASONS: Final = frozenset({"clear", "logout"})


def additional_context(event: str, text: str) -> str:
    """The JSON the hosts read from SessionStart / UserPromptSubmit hooks; ``""`` for no text."""
    if not text:
        return ""
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(body, ensure_ascii=False) + "\n"


def _hot_state(result: OpResult) -> str:
    from domain.session import render_hot_state

    if result.session is None or result.session.parent_session_id is not None:
        return ""
    return render_hot_state(result.session, result.store.workspace.root)


def _mark_injected(result: OpResult, *, hot: str | None = None, block: str | None = None) -> OpResult:
    from msgspec.structs import replace

    from domain.ids import hash16

    session = result.session
    if session is None:
        return result
    extras = dict(session.extras)
    if hot is not None:
        extras[INJECTED_HOT_STATE_KEY] = hash16(hot)
    if block is not None:
        extras[INJECTED_BLOCK_KEY] = hash16(block)
    if extras == session.extras:
        return result
    return replace(result, session=replace(session, extras=extras))


def open_step(sid: str, now_ms: int) -> Callable[[Snapshot], OpResult]:
    """SessionStart (any source): open the session (resuming kept hot state) and inject the frozen
    block and the hot state."""
    from domain import operations

    def step(snap: Snapshot) -> OpResult:
        opened = operations.open_session(snap, sid, now_ms)
        block = (opened.session.frozen_block or "") if opened.session is not None else ""
        return _mark_injected(opened, hot=_hot_state(opened), block=block)

    return step


def prompt_step(sid: str, msg_id: str, prompt: str, now_ms: int) -> Callable[[Snapshot], OpResult]:
    """UserPromptSubmit: observe the prompt; inject the block again when its epoch changed since the
    last injection (a compaction promoted memories), else the hot state when it changed."""
    from msgspec.structs import replace

    from domain import operations
    from domain.ids import hash16

    def step(snap: Snapshot) -> OpResult:
        result = operations.observe_user_message(snap, sid, msg_id, prompt, now_ms)
        session = result.session
        if session is None:
            return result
        hot = _hot_state(result)
        block = session.frozen_block or ""
        injected_block = session.extras.get(INJECTED_BLOCK_KEY)
        if injected_block is None:  # a session from before this key: its block is in context already
            result = _mark_injected(result, block=block)
        elif block and injected_block != hash16(block):
            text = operations.context_text(session, result.store.workspace.root)
            return replace(_mark_injected(result, hot=hot, block=block), output=text)
        if session.extras.get(INJECTED_HOT_STATE_KEY) == hash16(hot):
            return result
        return replace(_mark_injected(result, hot=hot), output=hot)

    return step


def compaction_step(sid: str, summary: str, now_ms: int) -> Callable[[Snapshot], OpResult]:
    """PostCompact: observe the summary once (a summary seen before is skipped)."""
    from domain import operations
    from domain.ids import hash16

    summary_id = "cmp_" + hash16(summary) if summary.strip() else None
    return lambda snap: operations.observe_compaction(snap, sid, summary, now_ms, summary_id=summary_id)


def end_step(sid: str, reason: str | None, now_ms: int) -> Callable[[Snapshot], OpResult]:
    """SessionEnd: promote what the session owns; keep its hot state for a resume unless the reason
    says it cannot come back."""
    from domain import operations

    keep = reason not in FINAL_END_REASONS
    return lambda snap: operations.end_session(snap, sid, now_ms, keep_hot_state=keep)
