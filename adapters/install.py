"""``workmem install`` / ``uninstall``: register workmem with a host by merging into its settings.

For each host and scope this module computes the new text of every settings file involved (a
*plan*); the command prints the plan as a diff (``--dry-run``) or writes it. Every edit merges: other
keys, other hooks and their order stay as they were (JSON files are edited in place by
:mod:`adapters.json_splice`, so uninstall after install gives the text back), and running install
twice changes nothing the second time. workmem's own entries are recognised by their command, a
``workmem`` executable (any directory) followed by exactly ``hook claude-code``, ``hook codex`` or
``mcp``, so an install from another environment replaces the old entry instead of adding a second.

With ``--project``, a file the team may commit never gets this machine's absolute path: Claude Code's
entries go to its per-user files (``.claude/settings.local.json``, the project's entry in
``~/.claude.json``), and Codex and OpenCode get ``workmem`` resolved through ``PATH`` when that is the
``workmem`` running install. The exact registrations are listed in docs/hosts.md ("Installing").
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.codex_config import CodexConfigEdit
from adapters.commands import CommandError
from adapters.config_files import ConfigError, decode_json_object, read_text
from adapters.host_names import INSTALL_HOSTS
from adapters.json_splice import splice
from adapters.settings_edits import (
    CLAUDE_EVENTS,
    CLAUDE_TOOL_MATCHER,
    CODEX_EVENTS,
    CODEX_TIMEOUTS,
    HOOK_TIMEOUT_S,
    MCP_NAME,
    claude_server,
    edit_entry,
    edit_hooks,
    edit_plugins,
    find_executable,
    is_claude_server,
    is_opencode_server,
    is_plugin_spec,
    is_workmem_command,
    is_workmem_exe,
    opencode_server,
)
from domain.extraction import static_compaction_prompt

__all__ = [
    "CLAUDE_EVENTS",
    "CLAUDE_TOOL_MATCHER",
    "CODEX_EVENTS",
    "CODEX_TIMEOUTS",
    "HOOK_TIMEOUT_S",
    "MCP_NAME",
    "FileChange",
    "Plan",
    "Where",
    "edit_entry",
    "edit_hooks",
    "edit_plugins",
    "find_executable",
    "is_plugin_spec",
    "is_workmem_command",
    "is_workmem_exe",
    "opencode_plugin_dir",
    "plan",
    "team_command",
]


@dataclass
class FileChange:
    """One settings file: its text before and after the edit (``None``: no file)."""

    path: Path
    old: str | None
    new: str | None

    @property
    def changed(self) -> bool:
        return self.new != self.old


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: directories install may have created, removed by uninstall when it leaves them empty
    prune: list[Path] = field(default_factory=list)


def opencode_plugin_dir() -> Path:
    """The OpenCode plugin directory shipped inside the installed ``adapters.hosts`` package."""
    spec = importlib.util.find_spec("adapters.hosts")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise CommandError("cannot locate the adapters.hosts package")
    return Path(locations[0]).resolve() / "opencode"


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
def team_command(where: Where, exe: str, files: str, warnings: list[str]) -> str:
    """The command written into files a team may commit: ``workmem`` when the ``workmem`` on this
    ``PATH`` is ``exe`` (it then works on every machine with workmem on its ``PATH``), else ``exe``
    with a warning that the files now hold a path of this machine."""
    found = shutil.which("workmem", path=where.var("PATH") or os.defpath)
    if found and os.path.realpath(found) == os.path.realpath(exe):
        return "workmem"
    warnings.append(
        f"{files} name {exe}, which works on this machine only: `workmem` on PATH is"
        f" {found or 'missing'}. Put {os.path.dirname(exe)} on PATH and install again to write"
        " `workmem` instead"
    )
    return exe


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a) == json.dumps(b)


class _Files:
    """The files of one plan, each read once. JSON edits are applied in turn to the same value and
    spliced into the file's text; a file an edit leaves with nothing in it is deleted (a symbolic
    link is kept, with the empty text)."""

    def __init__(self) -> None:
        self.plan = Plan()
        self._json: dict[Path, tuple[FileChange, dict[str, Any], dict[str, Any]]] = {}

    @staticmethod
    def _emptied(path: Path, empty: bool) -> bool:
        return empty and not path.is_symlink()

    def json(self, path: Path, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        if path not in self._json:
            old = read_text(path)
            if path.suffix == ".jsonc" and old is not None:
                self._check_plain_jsonc(path, old)
            original = decode_json_object(path, old)
            change = FileChange(path, old, old)
            self.plan.changes.append(change)
            self._json[path] = (change, original, original)
        change, original, value = self._json[path]
        value = edit(value)
        self._json[path] = (change, original, value)
        if _same(value, original):
            change.new = change.old
        elif self._emptied(path, not value):
            change.new = None
        else:
            change.new = splice(path, change.old, original, value)

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
        new: str | None = edit(old or "")
        if new == (old or ""):
            new = old
        elif new is not None and self._emptied(path, not new.strip()):
            new = None
        self.plan.changes.append(FileChange(path, old, new))


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
        raise CommandError(f"unknown host {host!r} (supported: {', '.join(INSTALL_HOSTS)})")
    return files.plan


def _plan_claude(files: _Files, where: Where, exe: str, *, mcp: bool, remove: bool) -> None:
    """Claude Code: ``--user`` writes its user settings; ``--project`` its per-user project files
    (``.claude/settings.local.json``; the project's entry in ``~/.claude.json``, the "local" MCP
    scope) and takes workmem's entries out of the team's ``.claude/settings.json`` and ``.mcp.json``."""
    tail = ("hook", "claude-code")
    command = None if remove else shlex.join([exe, *tail])

    def hooks(path: Path, wanted: str | None) -> None:
        files.json(path, lambda v: edit_hooks(path, v, CLAUDE_EVENTS, wanted, tail))

    def server(path: Path, keys: str | tuple[str, ...], wanted: dict[str, Any] | None) -> None:
        files.json(path, lambda v: edit_entry(path, v, keys, wanted, is_claude_server))

    configured = where.var("CLAUDE_CONFIG_DIR")
    claude_json = (Path(configured) if configured else where.home) / ".claude.json"
    wanted = None if remove else claude_server(exe)
    if where.user:
        hooks(where.claude_dir() / "settings.json", command)
        if mcp:
            server(claude_json, "mcpServers", wanted)
        return
    directory = where.root / ".claude"
    hooks(directory / "settings.local.json", command)
    hooks(directory / "settings.json", None)
    files.plan.prune.append(directory)
    if mcp:
        server(claude_json, ("projects", os.path.realpath(where.root), "mcpServers"), wanted)
        server(where.root / ".mcp.json", "mcpServers", None)


def _plan_codex(files: _Files, where: Where, exe: str, *, mcp: bool, remove: bool) -> None:

    directory = where.codex_dir()
    hooks_file, config = directory / "hooks.json", directory / "config.toml"
    if not where.user:
        files.plan.prune.append(directory)
        if not remove:
            exe = team_command(where, exe, f"{hooks_file} and {config}", files.plan.warnings)
    tail = ("hook", "codex")
    command = None if remove else shlex.join([exe, *tail])
    files.json(hooks_file, lambda v: edit_hooks(hooks_file, v, CODEX_EVENTS, command, tail, CODEX_TIMEOUTS))
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
        if not (remove or where.user):
            exe = team_command(where, exe, str(target), files.plan.warnings)
        wanted = None if remove else opencode_server(exe)
        files.json(target, lambda v: edit_entry(target, v, "mcp", wanted, is_opencode_server))
