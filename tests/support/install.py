"""``workmem install`` / ``uninstall`` run in-process on temporary directories: a fake HOME, no
CLAUDE_CONFIG_DIR, CODEX_HOME or XDG_CONFIG_HOME, a ``PATH`` without ``workmem``, a ``workmem``
executable path with a space in it (the command must be quoted) and a stand-in OpenCode plugin."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import adapters.install
from adapters.cli import main


class Run(NamedTuple):
    code: int
    out: str
    err: str


class Env(NamedTuple):
    root: Path
    home: Path
    exe: str
    plugin: Path

    def put_exe_on_path(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make ``exe`` a real executable and the ``workmem`` found on ``PATH``."""
        path = Path(self.exe)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        monkeypatch.setenv("PATH", str(path.parent))


def make_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    root, home, empty = tmp_path / "proj", tmp_path / "home", tmp_path / "empty-bin"
    for directory in (root, home, empty):
        directory.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(empty))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "WORKMEM_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    exe = str(tmp_path / "venv one" / "bin" / "workmem")
    monkeypatch.setattr(adapters.install, "find_executable", lambda: exe)
    plugin = tmp_path / "site" / "adapters" / "hosts" / "opencode"
    plugin.mkdir(parents=True)
    (plugin / "index.js").write_text("export default {}\n")
    monkeypatch.setattr(adapters.install, "opencode_plugin_dir", lambda: plugin)
    return Env(root, home, exe, plugin)


def runner(env: Env, capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``run("install", "codex", ...)`` runs ``workmem --workspace ROOT install codex ...``."""

    def call(*args: str) -> Run:
        capsys.readouterr()
        code = main(["--workspace", str(env.root), *args])
        out, err = capsys.readouterr()
        return Run(code, out, err)

    return call


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]


def hook_cmd(env: Env, host: str) -> str:
    return f"'{env.exe}' hook {host}"


_VERBS = frozenset({"created", "updated", "unchanged", "removed"})


def files_lines(out: str) -> list[str]:
    """The ``created`` / ``updated`` / ``unchanged`` / ``removed`` lines of an install's output."""
    return [line for line in out.splitlines() if line.split(" ", 1)[0] in _VERBS]


def next_steps(out: str) -> str:
    return out[out.index("next steps for ") :] if "next steps for " in out else ""
