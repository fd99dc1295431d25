"""The edit ``workmem install codex`` makes to a Codex ``config.toml``, and its exact undo.

Install adds, keeping every other line, comment and blank line as it was:

* ``hooks = true`` in ``[features]`` (Codex runs no hook without it). A line we add carries the
  comment ``# added by workmem install``; when the file said ``hooks = false`` only the value
  changes and ``# set by workmem install (was false)`` is appended to the line's own comment, if
  any. A ``[features]`` table we create carries the same "added" comment on its header.
  ``hooks = true`` already there is the user's and is left alone. Turning hooks on makes Codex run
  every hook configured for it, so install warns.
* ``compact_prompt = <multi-line string> # added by workmem install`` first in the file: the
  compaction prompt that asks for a ``Memory candidates:`` section. A ``compact_prompt`` that is
  neither marked nor equal to workmem's prompt is the user's: install keeps it and warns.
* with ``--mcp``: a ``[mcp_servers.workmem]`` table (``command``, ``args = ["mcp"]`` and
  ``env_vars``: Codex starts an MCP server with only a few variables such as ``HOME`` and
  ``PATH``, so the ones that choose workmem's data home are forwarded by name, as the hooks see them).

Uninstall removes exactly those: marked lines (``was false`` restores ``hooks = false`` and the
line's comment as it was), a
``compact_prompt`` that is marked or equal to workmem's prompt, the ``[features]`` table when we
created it and it holds nothing else, and a ``[mcp_servers.workmem]`` whose command is a
``workmem`` executable. A block still exactly as install wrote it is cut from the text; anything
edited since is removed through the TOML document. Every result is parsed again and compared with
the expected value before it may be written; a mismatch is a ConfigError and nothing is written.

``tomlkit`` (format-preserving) is imported only here, and this module only by ``install``.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Bool, Table

from adapters.config_files import ConfigError

ADDED: Final = "added by workmem install"
WAS_FALSE: Final = "set by workmem install (was false)"
MCP_NAME: Final = "workmem"
#: what the hooks read from Codex's environment and the MCP server would otherwise not get
MCP_ENV_VARS: Final = ("WORKMEM_HOME", "XDG_DATA_HOME", "WORKMEM_LOCK_TIMEOUT", "WORKMEM_NOW")
_WAS_FALSE_COMMENT: Final = f"# {WAS_FALSE}"
_UNSAFE: Final = "cannot be edited safely (unexpected layout); "


def _comment(item: object) -> str:
    trivia = getattr(item, "trivia", None)
    return str(getattr(trivia, "comment", "")).removeprefix("#").strip()


def _prompt_block(prompt: str) -> str:
    item = tomlkit.string(prompt, multiline=True)
    return f"compact_prompt = {item.as_string()} # {ADDED}\n"


def _features_block() -> str:
    return f"\n[features] # {ADDED}\nhooks = true # {ADDED}\n"


def _mcp_block(command: str) -> str:
    env_vars = tomlkit.item(list(MCP_ENV_VARS)).as_string()
    return (
        f"\n[mcp_servers.{MCP_NAME}]\ncommand = {tomlkit.string(command).as_string()}\n"
        f'args = ["mcp"]\nenv_vars = {env_vars}\n'
    )


def _parse(path: Path, text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except (TOMLKitError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(path, f"not valid TOML ({first})") from None


def _plain(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ConfigError(path, f"not valid TOML ({exc})") from None


def is_workmem_server(entry: object, is_workmem_exe: Callable[[object], bool]) -> bool:
    return (
        isinstance(entry, dict)
        and is_workmem_exe(entry.get("command"))
        and list(entry.get("args") or []) == ["mcp"]
    )


def _plain_table(doc: Container, key: str) -> Table | None:
    """``doc[key]`` when it is an ordinary ``[key]`` table we may add a line to."""
    if key not in doc:
        return None
    item = doc.item(key)
    if isinstance(item, Table) and not item.is_super_table():
        return item
    return None


def _without_ours(value: dict[str, Any], prompt: bool, mcp: bool) -> dict[str, Any]:
    """``value`` less what install manages, and less the empty tables that leaves behind."""
    out = copy.deepcopy(value)
    features = out.get("features")
    if isinstance(features, dict):
        features.pop("hooks", None)
        if not features:
            del out["features"]
    if prompt:
        out.pop("compact_prompt", None)
    servers = out.get("mcp_servers")
    if mcp and isinstance(servers, dict):
        servers.pop(MCP_NAME, None)
        if not servers:
            del out["mcp_servers"]
    return out


class CodexConfigEdit:
    """One install or uninstall edit of one ``config.toml`` text."""

    def __init__(self, path: Path, is_workmem_exe: Callable[[object], bool]) -> None:
        self.path = path
        self.is_workmem_exe = is_workmem_exe
        self.warnings: list[str] = []

    def install(self, text: str, prompt: str, mcp_command: str | None) -> str:
        return _keeping_the_end(text, lambda t: self._install(t, prompt, mcp_command))

    def uninstall(self, text: str, prompt: str, mcp: bool) -> str:
        return _keeping_the_end(text, lambda t: self._uninstall(t, prompt, mcp))

    # --- install ---------------------------------------------------------------------------------
    def _install(self, text: str, prompt: str, mcp_command: str | None) -> str:
        doc = _parse(self.path, text)
        before = _plain(self.path, text)
        prefix, suffix = "", ""
        features = _plain_table(doc, "features")
        table = before.get("features")
        current = table.get("hooks") if isinstance(table, dict) else None
        if "features" not in doc:
            suffix += _features_block()
        elif current is True:
            pass
        elif features is not None and current in (None, False):
            hooks = features.item("hooks") if "hooks" in features else None
            if isinstance(hooks, Bool):
                trivia = hooks.trivia
                if trivia.comment:
                    trivia.comment = f"{trivia.comment} {_WAS_FALSE_COMMENT}"
                else:
                    trivia.comment_ws, trivia.comment = " ", _WAS_FALSE_COMMENT
                features["hooks"] = Bool(True, trivia)
            else:
                features.append("hooks", _marked_bool(ADDED))
        else:
            raise ConfigError(self.path, "cannot set hooks = true in [features] safely; add it by hand")
        if current is not True:
            self.warnings.append(
                f"{self.path}: [features] hooks = true (it was {'false' if current is False else 'unset'})"
                " makes Codex run every hook configured for it, not only workmem's: review them with"
                " /hooks in Codex"
            )
        ours_prompt = False
        if "compact_prompt" in doc:
            item = doc.item("compact_prompt")
            if _comment(item) == ADDED or before.get("compact_prompt") == prompt:
                ours_prompt = True
                if not (_comment(item) == ADDED and before.get("compact_prompt") == prompt):
                    doc.remove("compact_prompt")
                    prefix = _prompt_block(prompt)
            else:
                self.warnings.append(
                    f"{self.path}: kept your own compact_prompt; compaction memories need a"
                    " 'Memory candidates:' section in it (see `workmem compaction-prompt`)"
                )
        else:
            ours_prompt = True
            prefix = _prompt_block(prompt)
        if mcp_command is not None:
            suffix += self._install_mcp(doc, before, mcp_command)
        new = prefix + doc.as_string() + suffix
        after = _plain(self.path, new)
        ok = (
            after.get("features", {}).get("hooks") is True
            and (not ours_prompt or after.get("compact_prompt") == prompt)
            and (mcp_command is None or after.get("mcp_servers", {}).get(MCP_NAME) == _server(mcp_command))
            and _without_ours(after, ours_prompt, mcp_command is not None)
            == _without_ours(before, ours_prompt, mcp_command is not None)
        )
        if not ok:
            raise ConfigError(self.path, _UNSAFE + "add the settings by hand")
        return new

    def _install_mcp(self, doc: tomlkit.TOMLDocument, before: dict[str, Any], command: str) -> str:
        servers = before.get("mcp_servers")
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        if entry is None:
            return _mcp_block(command)
        if not is_workmem_server(entry, self.is_workmem_exe):
            raise ConfigError(
                self.path, f"[mcp_servers.{MCP_NAME}] exists and is not workmem's; remove it first"
            )
        table = doc["mcp_servers"][MCP_NAME]
        if entry.get("command") != command:
            table["command"] = command
        if entry.get("env_vars") != list(MCP_ENV_VARS):
            table["env_vars"] = list(MCP_ENV_VARS)
        return ""

    # --- uninstall -------------------------------------------------------------------------------
    def _uninstall(self, text: str, prompt: str, mcp: bool) -> str:
        doc = _parse(self.path, text)
        before = _plain(self.path, text)
        cuts: list[tuple[str, bool, Callable[[tomlkit.TOMLDocument], object]]] = []  # block, first?, else
        ours_prompt = False
        if "compact_prompt" in doc:
            item = doc.item("compact_prompt")
            if _comment(item) == ADDED or before.get("compact_prompt") == prompt:
                ours_prompt = True
                cuts.append((_prompt_block(prompt), True, lambda d: d.remove("compact_prompt")))
        features = _plain_table(doc, "features")
        if features is not None and "hooks" in features:
            marker = _comment(features.item("hooks"))
            if marker == ADDED:
                if _comment(features) == ADDED and len(features) == 1:
                    cuts.append((_features_block(), False, lambda d: d.remove("features")))
                else:
                    features.remove("hooks")
            elif isinstance(hooks := features.item("hooks"), Bool):
                trivia = hooks.trivia
                if trivia.comment == _WAS_FALSE_COMMENT:
                    trivia.comment_ws, trivia.comment = "", ""
                    features["hooks"] = Bool(False, trivia)
                elif trivia.comment.endswith(f" {_WAS_FALSE_COMMENT}"):
                    trivia.comment = trivia.comment.removesuffix(f" {_WAS_FALSE_COMMENT}")
                    features["hooks"] = Bool(False, trivia)
        servers = before.get("mcp_servers")
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        if mcp and is_workmem_server(entry, self.is_workmem_exe):
            assert isinstance(entry, dict)
            cuts.append((_mcp_block(str(entry["command"])), False, _remove_server))
        new = doc.as_string()
        for block, first, remove in cuts:  # a block still as install wrote it is cut, else removed
            if new.startswith(block) if first else new.count(block) == 1:
                new = new.replace(block, "", 1)
            else:
                edited = _parse(self.path, new)
                remove(edited)
                new = edited.as_string()
        after = _plain(self.path, new)
        if _without_ours(after, ours_prompt, mcp) != _without_ours(before, ours_prompt, mcp) or (
            mcp and is_workmem_server(after.get("mcp_servers", {}).get(MCP_NAME), self.is_workmem_exe)
        ):
            raise ConfigError(self.path, _UNSAFE + "remove the settings by hand")
        return new


def _keeping_the_end(text: str, edit: Callable[[str], str]) -> str:
    """``edit`` of a text that ends with a newline; a file without a final newline stays without."""
    if not text or text.endswith("\n"):
        return edit(text)
    return edit(text + "\n").removesuffix("\n")


def _remove_server(doc: tomlkit.TOMLDocument) -> None:
    container = doc["mcp_servers"]
    container.remove(MCP_NAME)
    if not container and isinstance(container, Table) and container.is_super_table():
        doc.remove("mcp_servers")


def _marked_bool(marker: str) -> Bool:
    item = tomlkit.item(True)
    item.comment(marker)
    return item


def _server(command: str) -> dict[str, Any]:
    return {"command": command, "args": ["mcp"], "env_vars": list(MCP_ENV_VARS)}
