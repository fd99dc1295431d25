"""The pure part of ``workmem install``: recognising workmem's own entries in a host's settings and
editing a settings value (a JSON object in, a new one out). :mod:`adapters.install` decides which
files get which edit and turns the new values into text; docs/hosts.md ("Installing") lists every
registration.

workmem's entries are recognised by their command: a ``workmem`` executable (any directory) followed
by exactly ``hook claude-code``, ``hook codex`` or ``mcp``.
"""

from __future__ import annotations

import copy
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final

from adapters.commands import CommandError
from adapters.config_files import ConfigError
from adapters.host_names import HookEvent

HOOK_TIMEOUT_S: Final = 10
#: Codex cuts a SessionEnd hook to 3 s and reports every longer timeout as an error in each run.
CODEX_TIMEOUTS: Final[Mapping[str, int]] = {HookEvent.SESSION_END: 3}
CLAUDE_TOOL_MATCHER: Final = "Read|Edit|Write|NotebookEdit|Grep|Bash"
CLAUDE_EVENTS: Final[tuple[tuple[str, str | None], ...]] = (
    (HookEvent.SESSION_START, None),
    (HookEvent.USER_PROMPT_SUBMIT, None),
    (HookEvent.POST_TOOL_USE, CLAUDE_TOOL_MATCHER),
    (HookEvent.POST_TOOL_USE_FAILURE, CLAUDE_TOOL_MATCHER),
    (HookEvent.PRE_COMPACT, None),
    (HookEvent.POST_COMPACT, None),
    (HookEvent.SESSION_END, None),
    (HookEvent.STOP, None),
)
CODEX_EVENTS: Final[tuple[tuple[str, str | None], ...]] = (
    (HookEvent.SESSION_START, None),
    (HookEvent.USER_PROMPT_SUBMIT, None),
    (HookEvent.POST_TOOL_USE, None),
    (HookEvent.POST_COMPACT, None),
    (HookEvent.SESSION_END, None),
    (HookEvent.STOP, None),
)
MCP_NAME: Final = "workmem"
_EXECUTABLE_NAMES: Final = frozenset({"workmem", "workmem.exe"})


def is_workmem_exe(word: object) -> bool:
    if not isinstance(word, str) or not word:
        return False
    return PurePosixPath(word).name in _EXECUTABLE_NAMES or PureWindowsPath(word).name in _EXECUTABLE_NAMES


def is_workmem_command(command: object, *tail: str) -> bool:
    """``command`` runs a ``workmem`` executable with exactly the words ``tail``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return len(words) == 1 + len(tail) and is_workmem_exe(words[0]) and tuple(words[1:]) == tail


# --- edits ------------------------------------------------------------------------------------------
def _hook_group(command: str, matcher: str | None, timeout: int) -> dict[str, Any]:
    group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
    return group


def _is_our_handler(handler: object, tail: tuple[str, ...]) -> bool:
    return isinstance(handler, dict) and is_workmem_command(handler.get("command"), *tail)


def _without_our_handlers(groups: list[Any], tail: tuple[str, ...]) -> tuple[list[Any], int]:
    kept: list[Any] = []
    removed = 0
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        rest = [h for h in handlers if not _is_our_handler(h, tail)]
        removed += len(handlers) - len(rest)
        if len(rest) == len(handlers):
            kept.append(group)
        elif rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def edit_hooks(
    path: Path,
    settings: dict[str, Any],
    events: tuple[tuple[str, str | None], ...],
    command: str | None,
    tail: tuple[str, ...],
    timeouts: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Claude Code / Codex ``{"hooks": {Event: [{matcher?, hooks: [...]}]}}``: with ``command``,
    one workmem group per event (timeout: ``timeouts[event]``, else 10 s); without, none. Other
    groups and handlers are kept in order."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(path, f'"hooks" is {type(hooks).__name__}, expected an object')
    had_hooks = bool(hooks)
    for event, matcher in events:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ConfigError(path, f'"hooks.{event}" is {type(groups).__name__}, expected a list')
        kept, removed = _without_our_handlers(groups, tail)
        if command is not None:
            wanted = _hook_group(command, matcher, (timeouts or {}).get(event, HOOK_TIMEOUT_S))
            if removed == 1 and wanted in groups:
                continue
            hooks[event] = [*kept, wanted]
        elif removed:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if hooks or command is not None:
        out["hooks"] = hooks
    elif had_hooks:
        del out["hooks"]
    return out


def edit_entry(
    path: Path,
    settings: dict[str, Any],
    key: str | tuple[str, ...],
    wanted: dict[str, Any] | None,
    is_ours: Callable[[object], bool],
) -> dict[str, Any]:
    """``settings[key][MCP_NAME]`` (``key`` may be a path of keys): set to ``wanted``, or (``None``)
    removed when it is ours, with the objects that leaves empty. An entry of that name that is not
    workmem's is never replaced."""
    keys = (key,) if isinstance(key, str) else key
    where = ".".join(keys)
    out = copy.deepcopy(settings)
    tables = [out]
    for name in keys:
        table = tables[-1].get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(path, f'"{where}" is {type(table).__name__}, expected an object')
        tables.append(table)
    entry = tables[-1].get(MCP_NAME)
    if entry is not None and not is_ours(entry):
        if wanted is not None:
            raise ConfigError(path, f'"{where}.{MCP_NAME}" exists and is not workmem\'s; remove it first')
        return out
    if wanted is not None:
        tables[-1][MCP_NAME] = wanted
        for parent, name, table in zip(tables[:-1], keys, tables[1:], strict=True):
            parent[name] = table
    elif entry is not None:
        del tables[-1][MCP_NAME]
        for parent, name, table in reversed(list(zip(tables[:-1], keys, tables[1:], strict=True))):
            if table:
                break
            del parent[name]
    return out


def is_plugin_spec(spec: object) -> bool:
    return (
        isinstance(spec, str)
        and spec.startswith("file://")
        and spec.rstrip("/").endswith("/adapters/hosts/opencode")
    )


def edit_plugins(path: Path, settings: dict[str, Any], spec: str | None) -> dict[str, Any]:
    """OpenCode ``"plugin": [...]``: workmem's plugin directory once (``spec``), or not at all."""
    out = copy.deepcopy(settings)
    plugins = out.get("plugin", [])
    if not isinstance(plugins, list):
        raise ConfigError(path, f'"plugin" is {type(plugins).__name__}, expected a list')
    kept = [p for p in plugins if not is_plugin_spec(p)]
    if spec is not None:
        if not (len(plugins) - len(kept) == 1 and spec in plugins):
            out["plugin"] = [*kept, spec]
    elif len(kept) != len(plugins):
        if kept:
            out["plugin"] = kept
        else:
            del out["plugin"]
    return out


def claude_server(exe: str) -> dict[str, Any]:
    return {"command": exe, "args": ["mcp"]}


def is_claude_server(entry: object) -> bool:
    return isinstance(entry, dict) and is_workmem_exe(entry.get("command")) and entry.get("args") == ["mcp"]


def opencode_server(exe: str) -> dict[str, Any]:
    return {"type": "local", "command": [exe, "mcp"], "enabled": True}


def is_opencode_server(entry: object) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return (
        isinstance(command, list) and len(command) == 2 and is_workmem_exe(command[0]) and command[1] == "mcp"
    )


def find_executable() -> str:
    """The absolute path of the ``workmem`` being run (so hooks and the git merge driver work
    outside this environment)."""
    candidates = [sys.argv[0] if sys.argv else "", str(Path(sys.executable).parent / "workmem")]
    candidates.append(shutil.which("workmem") or "")
    for candidate in candidates:
        if is_workmem_exe(candidate) and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    raise CommandError("cannot find the installed workmem executable; run it as <venv>/bin/workmem install")
