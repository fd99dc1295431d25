"""Tool events (docs/decisions.md#hot-session-state-tool-events): which files a call touched, its exit
code wherever the host put it, the paths a grep printed, and the one step that folds a finished
tool call into the hot state."""

from __future__ import annotations

import math
import re
from typing import Final

from domain.bounds import tool_output_window
from domain.enums import FileAction
from domain.model import SessionState
from domain.session.errors import (
    clear_errors_for_successful_command,
    extract_errors_from_bash,
    mark_errors_maybe_fixed_for_file,
    upsert_open_error,
)
from domain.session.files import touch_active_file
from domain.session.state import ToolEvent, normalize_session
from domain.text import WS, lazy_compile, replace_surrogates, replace_surrogates_in

MAX_GREP_PATHS: Final = 10
_FILE_TOOLS: Final[dict[str, FileAction]] = {
    "read": FileAction.READ,
    "edit": FileAction.EDIT,
    "write": FileAction.WRITE,
}


_EXIT_CODE_KEYS: Final = ("exitCode", "exit_code", "code", "status")
_NUMERIC_STRING: Final = lazy_compile(r"-?[0-9]+\Z")
_EXIT_CODE_IN_TEXT: Final = lazy_compile(
    rf"(?:exit[{WS}]*code|exitCode|status)[:=][{WS}]*(-?[0-9]+)", re.IGNORECASE
)


def _as_exit_code(value: object) -> int | None:
    """A number, or a string of decimal digits with an optional minus; anything else is no answer."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _NUMERIC_STRING.match(value):
        return int(value)
    return None


def resolve_exit_code(event: ToolEvent) -> int | None:
    """The exit code of a shell command: the first usable value among ``exit_code``,
    ``metadata.exitCode``, ``metadata.exit_code``, ``metadata.code`` and ``metadata.status``, else an
    ``exit code: N`` / ``exitCode=N`` / ``status: N`` mention in the output, else ``None``."""
    for candidate in (event.exit_code, *(event.metadata.get(key) for key in _EXIT_CODE_KEYS)):
        code = _as_exit_code(candidate)
        if code is not None:
            return code
    match = _EXIT_CODE_IN_TEXT.search(event.output)
    return int(match.group(1)) if match else None


_GREP_PATH: Final = lazy_compile(
    r"(?:^|(?<=[\n\r\u2028\u2029]))(/[^\n]+\.(?:ts|tsx|js|jsx|json|md|py|go|rs|toml|yml|yaml)):"
)


def grep_paths(output: str) -> tuple[str, ...]:
    """Absolute source paths at the start of grep output lines (``/x/y.ts:``), distinct, first 10."""
    seen: dict[str, None] = {}
    for match in _GREP_PATH.finditer(output):
        seen.setdefault(match.group(1), None)
    return tuple(seen)[:MAX_GREP_PATHS]


def observe_tool(state: SessionState, event: ToolEvent, workspace_root: str, now_ms: int) -> SessionState:
    """Fold one tool result into the hot state (docs/decisions.md#hot-session-state-tool-events).

    ``read``/``edit``/``write`` touch ``args.filePath``; ``edit``/``write`` also mark errors in that file
    as maybe fixed; ``grep`` touches the absolute paths found in its output. ``bash`` with a known exit
    code clears the errors of the command's category on success and records the errors in its output on
    failure; with no exit code it changes nothing. Other tools are ignored. The result is normalised.
    Lone surrogates anywhere in the event become U+FFFD (bad input never becomes a storage error);
    only a bounded window of the output is scanned (:func:`domain.bounds.tool_output_window`).
    """
    event = ToolEvent(
        tool=replace_surrogates(event.tool),
        args=replace_surrogates_in(event.args),
        output=replace_surrogates(tool_output_window(event.output).text),
        exit_code=event.exit_code,
        metadata=replace_surrogates_in(event.metadata),
    )
    updated = state
    if event.tool in _FILE_TOOLS:
        path = event.args.get("filePath")
        if isinstance(path, str):
            action = _FILE_TOOLS[event.tool]
            updated = touch_active_file(updated, path, action, now_ms)
            if action in (FileAction.EDIT, FileAction.WRITE):
                updated = mark_errors_maybe_fixed_for_file(updated, path, workspace_root, now_ms)
    elif event.tool == "grep":
        for path in grep_paths(event.output):
            updated = touch_active_file(updated, path, FileAction.GREP, now_ms)
    elif event.tool == "bash":
        raw_command = event.args.get("command")
        command = raw_command if isinstance(raw_command, str) else ""
        exit_code = resolve_exit_code(event)
        if exit_code is not None and command:
            if exit_code == 0:
                updated = clear_errors_for_successful_command(updated, command)
            else:
                for error in extract_errors_from_bash(command, event.output, now_ms):
                    updated = upsert_open_error(updated, error, now_ms)
    return normalize_session(updated, now_ms)
