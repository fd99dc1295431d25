"""PostToolUse(Failure) payloads of the command-hook dialect as core tool events
(:mod:`adapters.hosts.hook_dialect`, docs/hosts.md): which file a file tool touched and the text it
wrote, a grep's paths, a shell command with its output and exit code."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.hosts.transcripts import flatten_text
from adapters.hosts.use_input import written_text

if TYPE_CHECKING:
    from adapters.hosts.dialect import Dialect
    from domain.session import ToolEvent

_FAILURE: Final = "PostToolUseFailure"

#: Host tool name -> (core tool name, key of the file path in ``tool_input``). ``MultiEdit`` is gone
#: from current Claude Code; older versions still send it.
FILE_TOOLS: Final[Mapping[str, tuple[str, str]]] = {
    "Read": ("read", "file_path"),
    "Edit": ("edit", "file_path"),
    "MultiEdit": ("edit", "file_path"),
    "Write": ("write", "file_path"),
    "NotebookEdit": ("edit", "notebook_path"),
}
_EXIT_CODE_FIELDS: Final = ("exit_code", "exitCode", "returnCode", "return_code", "code")
_EXIT_CODE_IN_ERROR: Final = re.compile(r"exit(?:[ _]?code)?[\s:=]*(-?[0-9]+)", re.IGNORECASE)


def _grep_output(response: Any) -> str:
    """Grep results as ``path:`` lines: ``content`` mode keeps its ``path:line:text`` lines; file
    lists (``filenames``) become one ``path:`` line each."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return ""
    parts: list[str] = []
    content = flatten_text(response.get("content"))
    if content:
        parts.append(content)
    names = response.get("filenames")
    if isinstance(names, list):
        parts.extend(f"{name}:" for name in names if isinstance(name, str))
    return "\n".join(parts)


def _exit_code_field(response: Mapping[str, Any]) -> int | None:
    for key in _EXIT_CODE_FIELDS:
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _bash_event(
    payload: Mapping[str, Any], tool_input: Mapping[str, Any], dialect: Dialect
) -> ToolEvent | None:
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from domain.session import ToolEvent

    command = tool_input.get("command")
    if not isinstance(command, str) or not command:
        return None
    response = payload.get("tool_response")
    if payload.get("hook_event_name") == _FAILURE:
        # Claude Code reports a non-zero exit through PostToolUseFailure, with an ``error`` text.
        error = flatten_text(payload.get("error")) or flatten_text(response)
        match = _EXIT_CODE_IN_ERROR.search(error)
        failed = int(match.group(1)) if match else 1
        return ToolEvent(tool="bash", args={"command": command}, output=error, exit_code=failed or 1)
    code: int | None = None
    if isinstance(response, dict):
        streams = (flatten_text(response.get("stdout")), flatten_text(response.get("stderr")))
        output = "\n".join(p for p in streams if p)
        code = _exit_code_field(response)
    else:
        output = flatten_text(response)
    if code is None and dialect.bash_exit_code is not None:
        use_id = payload.get("tool_use_id")
        code = dialect.bash_exit_code(payload, use_id if isinstance(use_id, str) and use_id else None)
    elif code is None:
        code = 0  # Claude Code: PostToolUse fires only for commands that succeeded
    return ToolEvent(tool="bash", args={"command": command}, output=output, exit_code=code)


def tool_event(payload: Mapping[str, Any], dialect: Dialect) -> ToolEvent | None:
    """The core :class:`ToolEvent` for a PostToolUse(Failure) payload, or ``None`` for tools (and
    inputs) the hot state does not follow."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from domain.session import ToolEvent

    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        return None
    failed = payload.get("hook_event_name") == _FAILURE
    if name in FILE_TOOLS:
        if failed:
            return None
        core, key = FILE_TOOLS[name]
        path = tool_input.get(key)
        if not isinstance(path, str) or not path:
            return None
        written = written_text(tool_input) if core != "read" else ""  # read for use (docs/decisions.md#d19)
        return ToolEvent(tool=core, args={"filePath": path, **({"content": written} if written else {})})
    if name == "Grep":
        if failed:
            return None
        output = _grep_output(payload.get("tool_response"))
        return ToolEvent(tool="grep", args=dict(tool_input), output=output)
    if name == "Bash":
        return _bash_event(payload, tool_input, dialect)
    return None
