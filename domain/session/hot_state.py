"""The hot-state block a host injects after the workspace block (at most 700 characters,
docs/decisions.md#hot-session-state)."""

from __future__ import annotations

from typing import Final

from domain.enums import ErrorStatus
from domain.keys import first_per_key
from domain.limits import HotStateLimits
from domain.model import OpenError, SessionState
from domain.safety import redact
from domain.session.errors import order_errors
from domain.session.files import display_path, rank_files
from domain.session.notes import entry_key
from domain.text import single_line

HEADER: Final = "Hot session state (current session):"
MAYBE_FIXED_MARK: Final = "(maybe fixed)"


def _error_line(error: OpenError) -> str:
    mark = f"{MAYBE_FIXED_MARK} " if error.status == ErrorStatus.MAYBE_FIXED else ""
    return f"- [{error.category.value}] {mark}{single_line(redact(error.summary))}"


def render_hot_state(state: SessionState, workspace_root: str) -> str:
    """The hot-state prompt block, or ``""`` when there is nothing to show.

    Up to 8 files (best ranked), 3 errors (open first, then maybe fixed, each newest first), the newest
    8 decisions and the newest 6 distinct pending memories, one ``- `` line each under its section
    header; empty sections are left out; the whole block is cut at 700 characters. Line breaks inside
    an item become spaces (the reference prints them as they are).
    """
    files = rank_files(state.active_files)[: HotStateLimits.MAX_ACTIVE_FILES_RENDERED]
    errors = order_errors(state.open_errors)[: HotStateLimits.MAX_OPEN_ERRORS_RENDERED]
    decisions = state.recent_decisions[-HotStateLimits.MAX_RECENT_DECISIONS_STORED :]
    pending = first_per_key(state.pending_memories, entry_key)[
        -HotStateLimits.MAX_PENDING_MEMORIES_RENDERED :
    ]
    if not (files or errors or decisions or pending):
        return ""

    lines = [HEADER]
    if files:
        lines.append("active_files:")
        lines.extend(
            f"- {single_line(redact(display_path(workspace_root, f.path)))} ({f.action.value}, {f.count}x)"
            for f in files
        )
    if errors:
        lines.append("open_errors:")
        lines.extend(_error_line(e) for e in errors)
    if decisions:
        lines.append("recent_decisions:")
        lines.extend(f"- {single_line(redact(d.text))}" for d in decisions)
    if pending:
        lines.append("pending_memories:")
        lines.extend(f"- [{m.type.value}] {single_line(redact(m.text))}" for m in pending)
    return "\n".join(lines)[: HotStateLimits.MAX_RENDERED_CHARS]
