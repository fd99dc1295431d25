"""Runs the OpenCode plugin's own tests (``node --test tests/opencode/``) when ``node`` is on the PATH,
against a real ``workmem serve`` from this checkout, with a scratch data home."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not on the PATH")
def test_the_opencode_plugin_node_tests_pass(tmp_path: Path) -> None:
    assert NODE is not None
    env = {
        **os.environ,
        "WORKMEM_HOME": str(tmp_path / "home"),
        "WORKMEM_NOW": "2026-05-01T09:00:00Z",
        "WORKMEM_COMMAND": json.dumps([sys.executable, "-m", "adapters.cli"]),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [NODE, "--test", str(ROOT / "tests" / "opencode")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout


def test_the_plugin_ships_as_package_data() -> None:
    """The plugin directory must load as a directory (``package.json`` ``main``) from an installed
    copy, so its files are package data of ``adapters``."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["adapters"]
    plugin = ROOT / "adapters" / "hosts" / "opencode"
    package = json.loads((plugin / "package.json").read_text())
    assert (plugin / package["main"]).is_file()
    shipped = {p for pattern in patterns for p in (ROOT / "adapters").glob(pattern)}
    assert {*plugin.glob("*.js"), plugin / "package.json"} <= shipped
