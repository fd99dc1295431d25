"""The README's ``console`` blocks run as pasted (the README, "A short tour"): in order, in one bash
shell started in a copy of the checkout after the set-up command, with the installed ``workmem``.
Every ``$ `` line must exit 0; the lines under it, when there are any, must be exactly its output.
Nothing may reach the user's data home or the checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.support.cli import REPO

BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
STEP = re.compile(r"\n?@@readme-step (\d+) (\d+)\n")
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", ".mypy_cache", ".ruff_cache", ".pytest_cache",
    ".hypothesis", "build", "dist",
)  # fmt: skip


class Command(NamedTuple):
    block: int
    line: str
    expected: tuple[str, ...]


def console_commands(markdown: str) -> list[Command]:
    """Every ``$ `` line of every ``console`` block, with the output lines shown under it."""
    commands: list[Command] = []
    for number, match in enumerate(BLOCK.finditer(markdown), start=1):
        lines = match.group(1).splitlines()
        if lines and not lines[0].startswith("$ "):
            raise ValueError(f"console block {number} does not start with a command: {lines[0]!r}")
        for line in lines:
            if line.startswith("$ "):
                commands.append(Command(number, line[2:], ()))
            else:
                last = commands[-1]
                commands[-1] = last._replace(expected=(*last.expected, line))
    return commands


def script(commands: list[Command]) -> str:
    """One bash script: each command, then a marker line with its index and exit code; it stops at
    the first command that fails."""
    lines = ['__step() { printf \'\\n@@readme-step %s %s\\n\' "$1" "$2"; return "$2"; }']
    for index, command in enumerate(commands):
        lines += [command.line, f"__step {index} $? || exit 0"]
    return "\n".join(lines) + "\n"


def outputs(text: str) -> list[tuple[int, str]]:
    """(exit code, output) per command that ran, from the script's combined output."""
    parts = STEP.split(text)
    # [out0, i0, rc0, out1, i1, rc1, ..., tail]
    return [(int(parts[k + 2]), parts[k]) for k in range(0, len(parts) - 1, 3)]


def _checkout(tmp_path: Path) -> Path:
    """A copy of the checkout after the set-up command: its ``.venv`` is the environment running the
    tests (or, when that is no virtual environment, one whose ``activate`` puts it on ``PATH``)."""
    copy = tmp_path / "checkout"
    shutil.copytree(REPO, copy, ignore=IGNORED, symlinks=True)
    prefix = Path(sys.prefix)
    if (prefix / "bin" / "activate").is_file() and (prefix / "bin" / "workmem").is_file():
        (copy / ".venv").symlink_to(prefix, target_is_directory=True)
    else:
        bindir = Path(sys.executable).parent
        (copy / ".venv" / "bin").mkdir(parents=True)
        (copy / ".venv" / "bin" / "activate").write_text(f'export PATH="{bindir}:$PATH"\n', encoding="utf-8")
        (copy / ".venv" / "bin" / "workmem").symlink_to(bindir / "workmem")
    return copy


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if ".venv" not in p.relative_to(root).parts}


def test_console_blocks_are_parsed_into_commands_and_their_output() -> None:
    text = "```console\n$ a\nout 1\nout 2\n$ b\n```\n\n```sh\n$ not console\n```\n```console\n$ c\n```\n"
    assert console_commands(text) == [
        Command(1, "a", ("out 1", "out 2")),
        Command(1, "b", ()),
        Command(2, "c", ()),
    ]
    with pytest.raises(ValueError, match="does not start with a command"):
        console_commands("```console\noutput first\n```\n")
    assert outputs("x\n\n@@readme-step 0 0\n\n@@readme-step 1 3\n") == [(0, "x\n"), (3, "")]


def test_every_readme_console_block_runs_as_pasted(tmp_path: Path) -> None:
    assert shutil.which("bash"), "the README's blocks are bash"
    commands = console_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert commands[0].line == "source .venv/bin/activate" and len(commands) > 10
    checkout = _checkout(tmp_path)
    before = _files(checkout)
    home = tmp_path / "user"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKMEM_", "XDG_", "VIRTUAL_ENV"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(bindir)]
    env.update(HOME=str(home), TMPDIR=str(scratch), PATH=os.pathsep.join(path), WORKMEM_HOOK_SERVER="0")
    run = subprocess.run(
        ["bash", "-c", script(commands)],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=180,
        check=False,
    )
    results = outputs(run.stdout)
    for command, (code, output) in zip(commands, results, strict=False):
        where = f"README console block {command.block}: $ {command.line}"
        assert code == 0, f"{where}\nexit {code}:\n{output}"
        if command.expected:
            assert output.rstrip("\n").splitlines() == list(command.expected), f"{where}\nprinted:\n{output}"
    assert len(results) == len(commands), f"the script stopped early:\n{run.stdout[-2000:]}"
    assert not (home / ".local" / "share" / "workmem").exists(), "the tour wrote into the real data home"
    assert _files(checkout) == before, "the tour wrote into the checkout"


def test_the_set_up_tour_names_a_command_that_runs(tmp_path: Path) -> None:
    """Right after the set-up, ``workmem`` is not on ``PATH``: the tour names the command it was
    started by (the README, "Set-up")."""
    workmem = Path(sys.executable).parent / "workmem"
    bindir = workmem.parent
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != bindir]
    env = {**os.environ, "PATH": os.pathsep.join(path), "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    env.pop("WORKMEM_HOME", None)
    run = subprocess.run(
        [str(workmem), "tour"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert f'Try `{workmem} check "remember: ..."`' in run.stdout
    with_path = {**env, "PATH": os.pathsep.join([str(bindir), *path])}
    again = subprocess.run(
        ["workmem", "tour"], env=with_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert 'Try `workmem check "remember: ..."`' in again.stdout


def test_invoked_as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from adapters import tour

    script = tmp_path / "bin" / "workmem"
    script.parent.mkdir()
    script.write_text("", encoding="utf-8")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert tour.invoked_as(".venv/bin/workmem") == ".venv/bin/workmem"
    assert tour.invoked_as("/usr/lib/python3/workmem/__main__.py") == "workmem"
    monkeypatch.setattr(shutil, "which", lambda name: str(script))
    assert tour.invoked_as(str(script)) == "workmem"
    assert tour.invoked_as(".venv/bin/workmem") == ".venv/bin/workmem"  # another workmem on PATH
