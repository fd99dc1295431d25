"""The edit ``workmem install codex`` makes to a Codex ``config.toml``, and its exact undo.

Install adds, keeping every other line, comment and blank line as it was:

* ``hooks = true`` in ``[features]`` (Codex runs no hook without it). A line we add carries the
  comment ``# added by workmem install``; when the file said ``hooks = false`` the comment is
  ``# set by workmem install (was false)``. A ``[features]`` table we create carries the same
  "added" comment on its header. ``hooks = true`` already there is the user's and is left alone.
* ``compact_prompt = <multi-line string> # added by workmem install`` first in the file: the
  compaction prompt that asks for a ``Memory candidates:`` section. A ``compact_prompt`` that is
  neither marked nor equal to workmem's prompt is the user's: install keeps it and warns.
* with ``--mcp``: a ``[mcp_servers.workmem]`` table (``command``, ``args = ["mcp"]``).

Uninstall removes exactly those: marked lines (``was false`` restores ``hooks = false``), a
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
    return f'\n[mcp_servers.{MCP_NAME}]\ncommand = {tomlkit.string(command).as_string()}\nargs = ["mcp"]\n'


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

    # --- install ---------------------------------------------------------------------------------
    def install(self, text: str, prompt: str, mcp_command: str | None) -> str:
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
            marker = WAS_FALSE if current is False else ADDED
            if "hooks" in features:
                features["hooks"] = _marked_bool(marker)
            else:
                features.append("hooks", _marked_bool(marker))
        else:
            raise ConfigError(self.path, "cannot set hooks = true in [features] safely; add it by hand")
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
        new = prefix + doc.as_string()
        if suffix:
            new = (new if not new or new.endswith("\n") else new + "\n") + suffix
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
        if entry.get("command") != command:
            table = doc["mcp_servers"][MCP_NAME]
            table["command"] = command
        return ""

    # --- uninstall -------------------------------------------------------------------------------
    def uninstall(self, text: str, prompt: str, mcp: bool) -> str:
        doc = _parse(self.path, text)
        before = _plain(self.path, text)
        cuts: list[str] = []
        prompt_block = _prompt_block(prompt)
        ours_prompt = False
        if "compact_prompt" in doc:
            item = doc.item("compact_prompt")
            if _comment(item) == ADDED or before.get("compact_prompt") == prompt:
                ours_prompt = True
                if text.startswith(prompt_block):
                    cuts.append(prompt_block)
                else:
                    doc.remove("compact_prompt")
        features = _plain_table(doc, "features")
        if features is not None and "hooks" in features:
            marker = _comment(features.item("hooks"))
            if marker == ADDED:
                if _comment(features) == ADDED and len(features) == 1:
                    if text.count(_features_block()) == 1:
                        cuts.append(_features_block())
                    else:
                        doc.remove("features")
                else:
                    features.remove("hooks")
            elif marker == WAS_FALSE:
                features["hooks"] = False
                replaced = features.item("hooks")  # it keeps the comment of the item it replaced
                if isinstance(replaced, Bool):
                    replaced.trivia.comment_ws, replaced.trivia.comment = "", ""
        if mcp:
            self._uninstall_mcp(doc, text, before, cuts)
        new = doc.as_string()
        for block in cuts:
            new = new.replace(block, "", 1)
        after = _plain(self.path, new)
        if _without_ours(after, ours_prompt, mcp) != _without_ours(before, ours_prompt, mcp) or (
            mcp and is_workmem_server(after.get("mcp_servers", {}).get(MCP_NAME), self.is_workmem_exe)
        ):
            raise ConfigError(self.path, _UNSAFE + "remove the settings by hand")
        return new

    def _uninstall_mcp(
        self, doc: tomlkit.TOMLDocument, text: str, before: dict[str, Any], cuts: list[str]
    ) -> None:
        servers = before.get("mcp_servers")
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        if not is_workmem_server(entry, self.is_workmem_exe):
            return
        assert isinstance(entry, dict)
        block = _mcp_block(str(entry["command"]))
        if text.count(block) == 1:
            cuts.append(block)
            return
        container = doc["mcp_servers"]
        container.remove(MCP_NAME)
        if not container and isinstance(container, Table) and container.is_super_table():
            doc.remove("mcp_servers")


def _marked_bool(marker: str) -> Bool:
    item = tomlkit.item(True)
    item.comment(marker)
    return item


def _server(command: str) -> dict[str, Any]:
    return {"command": command, "args": ["mcp"]}
