"""What a host that appends its context was handed (docs/decisions.md#hook-injection): a host that
appends what it is handed to its conversation (Claude Code and Codex ``additionalContext``,
:class:`domain.commands.ContextMode` ``APPENDED``) is handed, on a prompt, only what changed since
then. The session records the hashes of the block and of the hot state it was last handed;
:func:`domain.commands.handle` reads and marks them here."""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from domain import operations
from domain.ids import hash16
from domain.model import SessionState
from domain.operations import OpResult
from domain.session import render_hot_state


def _hot_state(result: OpResult) -> str:
    if result.session is None or result.session.parent_session_id is not None:
        return ""
    return render_hot_state(result.session, result.store.workspace.root)


#: Where sessions written before the typed fields kept the same hashes (in their extras).
_LEGACY_BLOCK_KEY: Final = "hookInjectedBlock"
_LEGACY_HOT_STATE_KEY: Final = "claudeCodeInjectedHotState"


def handed_out(session: SessionState) -> tuple[str | None, str | None]:
    """The hashes of the block and of the hot state last handed to a host that appends its context
    (``None``: nothing recorded). A session written before the typed fields kept them in its extras."""
    block = session.injected_block_hash
    hot = session.injected_hot_state_hash
    if block is None and isinstance(found := session.extras.get(_LEGACY_BLOCK_KEY), str):
        block = found
    if hot is None and isinstance(found := session.extras.get(_LEGACY_HOT_STATE_KEY), str):
        hot = found
    return block, hot


def mark_handed_out(result: OpResult, *, block: bool, hot: bool) -> OpResult:
    """``result`` with its session recording that the host was handed the block and/or the hot
    state it holds now."""
    session = result.session
    if session is None or session.parent_session_id is not None:
        return result
    block_mark, hot_mark = handed_out(session)
    if block:
        block_mark = hash16(session.frozen_block or "")
    if hot:
        hot_mark = hash16(_hot_state(result))
    extras = session.extras
    if _LEGACY_BLOCK_KEY in extras or _LEGACY_HOT_STATE_KEY in extras:
        extras = {k: v for k, v in extras.items() if k not in (_LEGACY_BLOCK_KEY, _LEGACY_HOT_STATE_KEY)}
    marked = replace(session, injected_block_hash=block_mark, injected_hot_state_hash=hot_mark, extras=extras)
    return result if marked == session else replace(result, session=marked)


def changes_since_handed_out(result: OpResult, *, resumed: bool = False) -> OpResult:
    """What a host that appends its context has not been handed yet: the whole context again when the
    block changed since it was handed out (a compaction or a session end promoted memories), else the
    hot state when it changed, else nothing. A message in a session that never recorded its block
    assumes the block is in the conversation already; a resumed conversation that never recorded one
    is handed the whole context."""
    session = result.session
    if session is None or session.parent_session_id is not None:
        return result
    block = session.frozen_block or ""
    block_mark, hot_mark = handed_out(session)
    if block_mark is None and not resumed:  # a session from before the record: its block is handed out
        result = mark_handed_out(result, block=True, hot=False)
    elif block and block_mark != hash16(block):
        text = operations.context_text(session, result.store.workspace.root)
        return replace(mark_handed_out(result, block=True, hot=True), output=text)
    hot = _hot_state(result)
    if hot_mark == hash16(hot):
        return replace(result, output="")
    return replace(mark_handed_out(result, block=False, hot=True), output=hot)
