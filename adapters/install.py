"""``workmem install`` / ``uninstall``: register workmem with a host by merging into its settings.

For each host and scope this module computes the new text of every settings file involved (a
*plan*); the command prints the plan as a diff (``--dry-run``) or writes it. Every edit merges: other
keys, other hooks and their order stay as they were, and running install twice changes nothing the
second time. workmem's own entries are recognised by their command, a ``workmem`` executable (any
directory) followed by exactly ``hook claude-code``, ``hook codex`` or ``mcp``, so an install from
another environment replaces the old entry instead of adding a second. The exact registrations are
listed in docs/hosts.md ("Installing").
"""

from __future__ import annotations

import copy
import importlib.util
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final

from adapters.cli import HOSTS
from adapters.commands import CommandError
from adapters.config_files import ConfigError, decode_json_object, encode_json, json_style, read_text

HOOK_TIMEOUT_S: Final = 10
CLAUDE_TOOL_MATCHER: Final = "Read|Edit|Write|NotebookEdit|Grep|Bash"
CLAUDE_EVENTS: Final[tuple[tuple[str, str | None], ...]] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", CLAUDE_TOOL_MATCHER),
    ("PostToolUseFailure", CLAUDE_TOOL_MATCHER),
    ("PreCompact", None),
    ("PostCompact", None),
    ("SessionEnd", None),
)
CODEX_EVENTS: Final[tuple[tuple[str, str | None], ...]] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", None),
    ("PostCompact", None),
    ("SessionEnd", None),
)
MCP_NAME: Final = "workmem"
_EXECUTABLE_NAMES: Final = frozenset({"workmem", "workmem.exe"})


@dataclass
class FileChange:
    """One settings file: its text before (``None``: missing) and after the edit."""

    path: Path
    old: str | None
    new: str | None

    @property
    def changed(self) -> bool:
        return self.new is not None and self.new != self.old


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- recognising workmem's own entries ---------------------------------------------------------------
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


def find_executable() -> str:
    """The absolute path of the ``workmem`` being run (so hooks work outside this environment)."""
    candidates = [sys.argv[0] if sys.argv else "", str(Path(sys.executable).parent / "workmem")]
    candidates.append(shutil.which("workmem") or "")
    for candidate in candidates:
        if is_workmem_exe(candidate) and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    raise CommandError("cannot find the installed workmem executable; run it as <venv>/bin/workmem install")


def opencode_plugin_dir() -> Path:
    """The OpenCode plugin directory shipped inside the installed ``adapters.hosts`` package."""
    spec = importlib.util.find_spec("adapters.hosts")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise CommandError("cannot locate the adapters.hosts package")
    return Path(locations[0]).resolve() / "opencode"


# --- JSON edits (pure: a settings object in, a new one out) ------------------------------------------
def _hook_group(command: str, matcher: str | None) -> dict[str, Any]:
    group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
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
) -> dict[str, Any]:
    """Claude Code / Codex ``{"hooks": {Event: [{matcher?, hooks: [...]}]}}``: with ``command``,
    one workmem group per event; without, none. Other groups and handlers are kept in order."""
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
            wanted = _hook_group(command, matcher)
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
    key: str,
    wanted: dict[str, Any] | None,
    is_ours: Callable[[object], bool],
) -> dict[str, Any]:
    """``settings[key][MCP_NAME]``: set to ``wanted``, or (``None``) removed when it is ours. An
    entry of that name that is not workmem's is never replaced."""
    out = copy.deepcopy(settings)
    table = out.get(key, {})
    if not isinstance(table, dict):
        raise ConfigError(path, f'"{key}" is {type(table).__name__}, expected an object')
    entry = table.get(MCP_NAME)
    if entry is not None and not is_ours(entry):
        if wanted is not None:
            raise ConfigError(path, f'"{key}.{MCP_NAME}" exists and is not workmem\'s; remove it first')
        return out
    if wanted is not None:
        table[MCP_NAME] = wanted
        out[key] = table
    elif entry is not None:
        del table[MCP_NAME]
        if not table:
            del out[key]
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


def _claude_server(exe: str) -> dict[str, Any]:
    return {"command": exe, "args": ["mcp"]}


def _is_claude_server(entry: object) -> bool:
    return isinstance(entry, dict) and is_workmem_exe(entry.get("command")) and entry.get("args") == ["mcp"]


def _opencode_server(exe: str) -> dict[str, Any]:
    return {"type": "local", "command": [exe, "mcp"], "enabled": True}


def _is_opencode_server(entry: object) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return (
        isinstance(command, list) and len(command) == 2 and is_workmem_exe(command[0]) and command[1] == "mcp"
    )


# --- where each host keeps its settings -------------------------------------------------------------
@dataclass(frozen=True)
class Where:
    """The inputs that decide file locations: scope, workspace root, environment, home."""

    user: bool
    root: Path
    env: Mapping[str, str]
    home: Path

    def var(self, name: str) -> str | None:
        return self.env.get(name) or None

    def claude_dir(self) -> Path:
        configured = self.var("CLAUDE_CONFIG_DIR")
        return Path(configured) if configured else self.home / ".claude"

    def codex_dir(self) -> Path:
        if not self.user:
            return self.root / ".codex"
        configured = self.var("CODEX_HOME")
        return Path(configured) if configured else self.home / ".codex"

    def opencode_file(self) -> Path:
        if self.user:
            config = self.var("XDG_CONFIG_HOME")
            directory = (Path(config) if config else self.home / ".config") / "opencode"
        else:
            directory = self.root
        plain, commented = directory / "opencode.json", directory / "opencode.jsonc"
        return commented if commented.exists() and not plain.exists() else plain


# --- plans ------------------------------------------------------------------------------------------
class _Files:
    """The files of one plan, each read once; JSON edits are applied in turn to the same value."""

    def __init__(self) -> None:
        self.plan = Plan()
        self._json: dict[Path, tuple[FileChange, dict[str, Any]]] = {}

    def json(self, path: Path, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        if path not in self._json:
            old = read_text(path)
            if path.suffix == ".jsonc" and old is not None:
                self._check_plain_jsonc(path, old)
            change = FileChange(path, old, old)
            self.plan.changes.append(change)
            self._json[path] = (change, decode_json_object(path, old))
        change, value = self._json[path]
        new_value = edit(value)
        self._json[path] = (change, new_value)
        if new_value != decode_json_object(path, change.old):
            change.new = encode_json(new_value, json_style(change.old))
        else:
            change.new = change.old

    @staticmethod
    def _check_plain_jsonc(path: Path, text: str) -> None:
        try:
            decode_json_object(path, text)
        except ConfigError:
            raise ConfigError(
                path,
                "is not plain JSON (comments or trailing commas?); workmem cannot edit it safely,"
                " add the entries by hand",
            ) from None

    def text(self, path: Path, edit: Callable[[str], str]) -> None:
        old = read_text(path)
        new = edit(old or "")
        self.plan.changes.append(FileChange(path, old, old if new == (old or "") else new))


def plan(host: str, where: Where, exe: str, *, mcp: bool, remove: bool) -> Plan:
    """The files ``install`` (or, with ``remove``, ``uninstall``) would write for ``host``."""
    files = _Files()
    if host == "claude-code":
        _plan_claude(files, where, exe, mcp=mcp, remove=remove)
    elif host == "codex":
        _plan_codex(files, where, exe, mcp=mcp, remove=remove)
    elif host == "opencode":
        _plan_opencode(files, where, exe, mcp=mcp, remove=remove)
    else:
        raise CommandError(f"unknown host {host!r} (supported: {', '.join(HOSTS)})")
    return files.plan


def _plan_claude(files: _Files, where: Where, exe: str, *, mcp: bool, remove: bool) -> None:
    settings = (where.claude_dir() if where.user else where.root / ".claude") / "settings.json"
    command = None if remove else shlex.join([exe, "hook", "claude-code"])
    files.json(settings, lambda v: edit_hooks(settings, v, CLAUDE_EVENTS, command, ("hook", "claude-code")))
    if mcp:
        if where.user:
            configured = where.var("CLAUDE_CONFIG_DIR")
            servers = (Path(configured) if configured else where.home) / ".claude.json"
        else:
            servers = where.root / ".mcp.json"
        wanted = None if remove else _claude_server(exe)
        files.json(servers, lambda v: edit_entry(servers, v, "mcpServers", wanted, _is_claude_server))


def _plan_codex(files: _Files, where: Where, exe: str, *, mcp: bool, remove: bool) -> None:
    from adapters.codex_config import CodexConfigEdit
    from domain.extraction import static_compaction_prompt

    directory = where.codex_dir()
    hooks_file = directory / "hooks.json"
    command = None if remove else shlex.join([exe, "hook", "codex"])
    files.json(hooks_file, lambda v: edit_hooks(hooks_file, v, CODEX_EVENTS, command, ("hook", "codex")))
    config = directory / "config.toml"
    editor = CodexConfigEdit(config, is_workmem_exe)
    prompt = static_compaction_prompt()
    if remove:
        files.text(config, lambda text: editor.uninstall(text, prompt, mcp))
    else:
        files.text(config, lambda text: editor.install(text, prompt, exe if mcp else None))
    files.plan.warnings.extend(editor.warnings)


def _plan_opencode(files: _Files, where: Where, exe: str, *, mcp: bool, remove: bool) -> None:
    target = where.opencode_file()
    spec = None
    if not remove:
        plugin = opencode_plugin_dir()
        if not (plugin / "index.js").is_file() and not (plugin / "package.json").is_file():
            raise CommandError(f"the OpenCode plugin is missing from this installation ({plugin})")
        spec = "file://" + str(plugin)
    files.json(target, lambda v: edit_plugins(target, v, spec))
    if mcp:
        wanted = None if remove else _opencode_server(exe)
        files.json(target, lambda v: edit_entry(target, v, "mcp", wanted, _is_opencode_server))
