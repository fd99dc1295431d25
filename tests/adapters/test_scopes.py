"""Scopes (docs/decisions.md#d17): ``user`` memories are kept once, in the user's own store, and shown
in every workspace; a triggered memory can say so; the user's store can follow a git remote."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Final

import anyio
import msgspec
import pytest

from adapters.api import InvalidInput, WorkingMemory
from tests.adapters.test_mcp_server import call_tools
from tests.adapters.test_serve import Client
from tests.support.cli import Cli, one_line_error

PREFERENCE: Final = "Always write commit messages in the imperative mood"


@pytest.fixture
def other(cli: Cli) -> Path:
    """A second workspace under the same data home."""
    found = cli.workspace.parent / "other"
    found.mkdir()
    return found


def _context(cli: Cli, workspace: Path, session: str) -> str:
    return cli.ok("--workspace", str(workspace), "open-session", "--session", session).out


def test_a_user_memory_is_kept_once_and_shown_in_every_workspace(cli: Cli, other: Path) -> None:
    remembered = cli.ok("remember", "--json", "--scope", "user", PREFERENCE).json()
    assert [(m["id"], m["scope"]) for m in cli.memories()] == [(remembered["id"], "user")]  # the user's
    assert cli.memories() == [
        m for m in cli.ok("--workspace", str(other), "list", "--json").json()["memories"]
    ]
    assert PREFERENCE in _context(cli, other, "s1")
    assert PREFERENCE in _context(cli, cli.workspace, "s2")
    assert (
        cli.ok("forget", remembered["id"]).out == f"{remembered['id']} forgotten\n"
    )  # found in the user's store
    assert PREFERENCE not in _context(cli, other, "s3")


def test_remember_for_all_projects_reaches_every_workspace(cli: Cli, other: Path) -> None:
    cli.ok("message", "--session", "s1", f"remember for all projects: {PREFERENCE}")
    cli.ok("end-session", "--session", "s1")
    assert PREFERENCE in _context(cli, other, "s2")
    (row,) = cli.memories()
    assert row["text"] == PREFERENCE  # kept where it was said too, shown once
    assert _context(cli, cli.workspace, "s3").count(PREFERENCE) == 1


def test_a_user_memory_forgotten_where_it_was_said_stays_forgotten_there(cli: Cli, other: Path) -> None:
    cli.ok("message", "--session", "s1", f"remember for all projects: {PREFERENCE}")
    cli.ok("end-session", "--session", "s1")
    (row,) = cli.memories()
    cli.ok("forget", row["id"])
    assert PREFERENCE not in _context(cli, cli.workspace, "s2")
    assert PREFERENCE in _context(cli, other, "s3")


def test_every_door_takes_a_scope(cli: Cli, tmp_path: Path) -> None:
    api = WorkingMemory(cli.workspace, home=cli.home)
    assert api.remember("We deploy with blue-green switching", type="decision", scope="personal").outcome == (
        "promoted"
    )
    with pytest.raises(InvalidInput, match="unknown scope 'everyone'"):
        api.remember(PREFERENCE, scope="everyone")
    one_line_error(cli("remember", "--scope", "everyone", PREFERENCE), 2)
    pytest.importorskip("mcp")
    (answer,) = anyio.run(
        call_tools, cli.home, cli.workspace, [("remember", {"text": PREFERENCE, "scope": "user"})]
    )
    assert '"outcome": "promoted"' in answer or '"outcome":"promoted"' in answer.replace(" ", "")
    assert PREFERENCE in api.open_session("s9").text


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_user_store_follows_a_git_remote_between_machines(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in (("GIT_AUTHOR_NAME", "A"), ("GIT_AUTHOR_EMAIL", "a@example.com")):
        monkeypatch.setenv(key, value)
        monkeypatch.setenv(key.replace("AUTHOR", "COMMITTER"), value)
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    cli.ok("remember", "--scope", "user", PREFERENCE)
    first = cli.ok("sync", "--user", "--remote", str(remote)).out
    assert "git: pushed" in first
    assert "Always write" not in _git("log", "--format=%s", cwd=cli.home / "user")
    # a second machine: another data home following the same remote
    laptop = tmp_path / "laptop"
    monkeypatch.setenv("WORKMEM_HOME", str(laptop))
    cli.home = laptop
    cli.ok("sync", "--user", "--remote", str(remote))
    assert PREFERENCE in _context(cli, cli.workspace, "s1")
    # a push that fails is reported, the local commit is kept, and the next sync sends it
    cli.ok("remember", "--scope", "user", "Prefer small pull requests over big ones")
    remote.rename(tmp_path / "gone.git")
    failed = cli.ok("sync").out
    assert "pull failed" in failed and "tried again at the next sync" in failed
    (tmp_path / "gone.git").rename(remote)
    assert "git: pushed" in cli.ok("sync").out
    assert "small pull requests" in _git("--git-dir", str(remote), "log", "-p", "--format=", cwd=tmp_path)


def test_list_shows_the_users_own_memories_after_the_workspaces_own_once_each(cli: Cli, other: Path) -> None:
    own = cli.ok("remember", "--json", "--type", "decision", "We deploy with blue-green switching").json()
    cli.ok("message", "--session", "s1", f"remember for all projects: {PREFERENCE}")
    cli.ok("end-session", "--session", "s1")  # kept here and in the user's store: listed once, from here
    spelling = cli.ok("remember", "--json", "--scope", "user", "Answer in British English spelling").json()
    rows = cli.memories()
    assert [m["text"] for m in rows].count(PREFERENCE) == 1
    here = {m["text"]: m for m in rows[:2]}  # the workspace's own, strongest first
    assert (here[PREFERENCE]["scope"], here["We deploy with blue-green switching"]["id"]) == (
        "user",
        own["id"],
    )
    assert [(m["id"], m["scope"]) for m in rows[2:]] == [(spelling["id"], "user")]  # then the user's
    lines = cli.ok("list").out.splitlines()
    assert [line.split()[0] for line in lines] == [m["id"] for m in rows]
    assert [" scope=user " in line for line in lines] == [m["scope"] == "user" for m in rows]
    # every door lists what the command line lists
    api = WorkingMemory(cli.workspace, home=cli.home)
    assert [msgspec.to_builtins(m) for m in api.list()] == rows
    served = Client(cli.home)
    try:
        assert served.call(id=1, op="list", workspace=str(cli.workspace))["memories"] == rows
    finally:
        served.close()
    # another workspace lists only the user's own memories
    others = cli.ok("--workspace", str(other), "list", "--json").json()["memories"]
    assert {m["text"] for m in others} == {PREFERENCE, "Answer in British English spelling"}


def test_a_user_memory_pinned_where_it_was_said_is_pinned_in_the_users_store(cli: Cli, other: Path) -> None:
    cli.ok("message", "--session", "s1", f"remember for all projects: {PREFERENCE}")
    cli.ok("end-session", "--session", "s1")
    (row,) = cli.memories()
    cli.ok("pin", row["id"])
    (there,) = cli.ok("--workspace", str(other), "list", "--json").json()["memories"]
    assert (there["text"], there["scope"], there.get("pinned")) == (PREFERENCE, "user", True)


def test_the_block_a_new_session_would_start_with_holds_the_users_own(cli: Cli, other: Path) -> None:
    """``WorkingMemory.block`` (and the MCP ``block`` tool) shows what a session start in that
    workspace shows: the user's own memories compete for it too (docs/decisions.md#d17)."""
    cli.ok("remember", "--scope", "user", PREFERENCE)
    upcoming = WorkingMemory(other, home=cli.home).block().text
    assert PREFERENCE in upcoming
    assert upcoming in _context(cli, other, "s1")
