"""Fixtures of the tests under ``tests/``; the helpers behind them live in :mod:`tests.support`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import Cli, make_cli


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """The command line of a fresh workspace ``<tmp>/project`` with data home ``<tmp>/home``."""
    return make_cli(tmp_path, monkeypatch, capsys)


@pytest.fixture
def root(tmp_path: Path) -> str:
    """A fresh workspace directory, ``<tmp>/project``."""
    directory = tmp_path / "project"
    directory.mkdir()
    return str(directory)
