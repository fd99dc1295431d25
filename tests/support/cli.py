"""The ``workmem`` command line, driven in-process: :class:`Cli` calls ``main([...])`` with a temporary
``WORKMEM_HOME`` and a fixed ``WORKMEM_NOW``, and the helpers read what a run left in the data home."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any, Final, NamedTuple

import pytest

from adapters import paths
from adapters.cli import main
from domain.codec import decode_journal, decode_session, decode_store
from domain.evidence_records import parse_event_line
from domain.timeutil import iso_from_ms, parse_iso_ms

#: The repository root.
REPO: Final = Path(__file__).resolve().parent.parent.parent
#: The instant a fresh driver runs at.
T0_ISO: Final = "2026-05-01T09:00:00.000Z"
T0: Final = parse_iso_ms(T0_ISO) or 0


class Run(NamedTuple):
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class Cli:
    """Drives ``main`` in-process for one workspace under one data home."""

    def __init__(
        self, home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.monkeypatch = monkeypatch
        self.capsys = capsys
        monkeypatch.setenv("WORKMEM_HOME", str(home))
        monkeypatch.delenv("WORKMEM_DEBUG", raising=False)
        monkeypatch.delenv("WORKMEM_LOCK_TIMEOUT", raising=False)
        self.at_ms(T0)

    def at_ms(self, ms: int) -> None:
        self.now_ms = ms
        self.monkeypatch.setenv("WORKMEM_NOW", iso_from_ms(ms))

    def __call__(self, *args: str, stdin: str | None = None, workspace: bool = True) -> Run:
        self.capsys.readouterr()
        if stdin is not None:
            self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8"))))
        prefix = ["--workspace", str(self.workspace)] if workspace else []
        code = main([*prefix, *args])
        captured = self.capsys.readouterr()
        return Run(code, captured.out, captured.err)

    def ok(self, *args: str, stdin: str | None = None) -> Run:
        run = self(*args, stdin=stdin)
        assert run.code == 0, run
        assert run.err == "", run
        return run

    def memories(self, *extra: str) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = self.ok("list", "--json", *extra).json()["memories"]
        return data


def make_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """A driver for a fresh workspace ``<tmp>/project`` and data home ``<tmp>/home``."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    return Cli(tmp_path / "home", workspace, monkeypatch, capsys)


def one_line_error(run: Run, code: int) -> None:
    """``run`` failed with ``code`` and said why in one ``workmem: `` line, without a traceback."""
    assert run.code == code, run
    assert run.err.startswith("workmem: "), run
    assert run.err.count("\n") == 1, run
    assert "Traceback" not in run.err


# ---------------------------------------------------------------------------------------------
# The parser's commands and options (argparse keeps both only in its private ``_actions``; these are
# the one place the tests read them from)
# ---------------------------------------------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands of ``parser`` by name, an alias beside its command; empty when it has none."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string ``parser`` takes (``--json``, ``-h``, ...)."""
    return {option for action in parser._actions for option in action.option_strings}


# ---------------------------------------------------------------------------------------------
# What a run left in the data home
# ---------------------------------------------------------------------------------------------


def layout(cli: Cli) -> paths.WorkspacePaths:
    """The files of the driver's workspace."""
    return paths.workspace_paths(cli.home, str(cli.workspace))


def events(cli: Cli) -> list[dict[str, Any]]:
    """The workspace's evidence log, one decoded line each (empty when there is no log)."""
    log = layout(cli).evidence
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def stored_data_decodes(home: Path, workspace: Path) -> None:
    """Every file of the workspace under ``home`` decodes: store, journal, sessions, evidence lines."""
    files = paths.workspace_paths(home, str(workspace))
    if files.store.is_file():
        decode_store(files.store.read_bytes()).unwrap()
    if files.journal.is_file():
        decode_journal(files.journal.read_bytes()).unwrap()
    for file in files.sessions.glob("*.json") if files.sessions.is_dir() else []:
        decode_session(file.read_bytes()).unwrap()
    if files.evidence.is_file():
        for line in files.evidence.read_bytes().splitlines():
            assert parse_event_line(line) is not None
