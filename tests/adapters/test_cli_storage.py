"""Storage faults seen through the command line (docs/decisions.md#d5), the extraction rejection log
written by ``compacted`` (docs/decisions.md#rejection-log), sub-agent sessions, and the read-only
promise of the diagnostics (docs/decisions.md#diagnostics)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from adapters import paths
from tests.support.cli import REPO, Cli, events, layout, one_line_error


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
        for p in sorted(root.rglob("*"))
    }


def rejection_records(cli: Cli) -> list[dict[str, Any]]:
    log = paths.rejection_log(cli.home)
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


# ---------------------------------------------------------------------------------------------
# Corrupt files: the command still works, the bytes are moved aside (never deleted), one event
# ---------------------------------------------------------------------------------------------


def test_corrupt_store_is_moved_aside_and_the_command_works(cli: Cli) -> None:
    store = layout(cli).store
    store.parent.mkdir(parents=True)
    store.write_text("{ truncated store")
    # a read-only command says it cannot read it (never "no memories"), and touches nothing
    listed = cli("list", "--json")
    assert listed.code == 4 and listed.out == "" and "cannot be read" in listed.err
    assert store.read_text() == "{ truncated store"
    # a writing command quarantines it and carries on from an empty store
    run = cli("remember", "Always run the linter before committing", "--type", "feedback")
    assert run.code == 0
    assert run.out.split()[1] == "promoted"
    assert run.err.count("\n") == 1 and "moved aside" in run.err  # one warning line
    [moved] = [p for p in store.parent.iterdir() if p.name.startswith("workspace-memory.json.corrupt-")]
    assert moved.read_text() == "{ truncated store"
    quarantined = [e for e in events(cli) if e["type"] == "storage_corrupt_json_quarantined"]
    assert len(quarantined) == 1
    assert quarantined[0]["reasonCodes"] == ["invalid_json"]
    assert "truncated" not in json.dumps(quarantined)
    assert len(cli.memories()) == 1
    # the diagnostics list the moved-aside file
    assert moved.name in cli.ok("health").out
    data = cli.ok("health", "--json").json()
    assert data["summary"]["corruptStoresQuarantinedLast30Days"] == 1
    assert "Quarantined stores:" in cli.ok("explain", "--verbose").out
    assert "1 damaged file(s) were set aside: `workmem recover` lists them" in cli.ok("explain").out


@pytest.mark.parametrize("kind", ["journal", "session"])
def test_corrupt_journal_or_session_is_moved_aside(cli: Cli, kind: str) -> None:
    lay = layout(cli)
    target = lay.journal if kind == "journal" else lay.sessions / paths.session_file_name("S")
    target.parent.mkdir(parents=True)
    target.write_text("garbage{")
    run = cli("message", "--session", "S", "Remember this: always use pnpm in this repository")
    assert run.code == 0
    assert run.out.startswith("pending [")
    assert "moved aside" in run.err
    assert any(p.name.startswith(target.name + ".corrupt-") for p in target.parent.iterdir())
    assert [
        e["details"]["storeKind"] for e in events(cli) if e["type"] == "storage_corrupt_json_quarantined"
    ] == ["pending_journal" if kind == "journal" else "session_state"]
    assert "always use pnpm" in cli.ok("context", "--session", "S").out


def test_directory_in_place_of_the_store_is_moved_aside(cli: Cli) -> None:
    store = layout(cli).store
    store.mkdir(parents=True)
    (store / "inner").write_text("kept")
    one_line_error(cli("list"), 4)  # a read-only command says it cannot read the store
    assert store.is_dir()
    # a writing command moves the directory aside (nothing lost) and carries on
    run = cli("remember", "Always run the linter before committing")
    assert run.code == 0 and "moved aside" in run.err
    [aside] = [p for p in store.parent.iterdir() if p.name.startswith("workspace-memory.json.corrupt-")]
    assert (aside / "inner").read_text() == "kept"
    assert len(cli.memories()) == 1


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores permissions")
def test_read_only_home_is_storage_unavailable(cli: Cli) -> None:
    cli.ok("remember", "Always run the linter before committing")
    directory = layout(cli).directory
    os.chmod(directory, 0o500)
    try:
        one_line_error(cli("remember", "Prefer small focused pull requests"), 4)
    finally:
        os.chmod(directory, 0o700)
    assert len(cli.memories()) == 1


# ---------------------------------------------------------------------------------------------
# Locks
# ---------------------------------------------------------------------------------------------

_HOLDER = """
import sys, time, filelock
lock = filelock.FileLock(sys.argv[1])
lock.acquire()
open(sys.argv[2], "w").close()
time.sleep(60)
"""


def _hold_lock(lock: Path, ready: Path) -> subprocess.Popen[bytes]:
    lock.parent.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(lock), str(ready)])
    deadline = time.monotonic() + 20
    while not ready.exists():
        assert child.poll() is None, "lock holder died"
        assert time.monotonic() < deadline, "lock holder did not start"
        time.sleep(0.01)
    return child


def test_lock_timeout_exits_4_with_one_line(cli: Cli, tmp_path: Path) -> None:
    lay = layout(cli)
    child = _hold_lock(lay.lock, tmp_path / "ready")
    try:
        cli.monkeypatch.setenv("WORKMEM_LOCK_TIMEOUT", "0.2")
        started = time.monotonic()
        run = cli("remember", "Always run the linter before committing")
        assert time.monotonic() - started < 5
        one_line_error(run, 4)
        assert "lock" in run.err
        # read-only commands do not need the lock
        assert cli.memories() == []
    finally:
        child.kill()
        child.wait()
    timeouts = [e for e in events(cli) if e["type"] == "storage_lock_timeout"]
    assert len(timeouts) == 1
    assert re.search(rf"(?<![0-9a-f]){child.pid}(?![0-9a-f])", json.dumps(timeouts)) is None
    assert not lay.store.exists()


def test_lock_of_a_killed_process_is_recovered(cli: Cli, tmp_path: Path) -> None:
    lay = layout(cli)
    cli.ok("remember", "Always run the linter before committing")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from adapters.filestore import Workspace\n"
        "ws = Workspace(Path(sys.argv[1]), sys.argv[2])\n"
        "with ws.transaction(0):\n"
        "    open(sys.argv[3], 'w').close()\n"
        "    import time; time.sleep(60)\n"
    )
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(cli.home), str(cli.workspace), str(ready)], env=env
    )
    deadline = time.monotonic() + 20
    while not ready.exists():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    run = cli.ok("remember", "Prefer small focused pull requests", "--type", "feedback")
    assert run.out.split()[1] == "promoted"
    assert [e["type"] for e in events(cli)].count("storage_stale_lock_recovered") == 1
    assert len(cli.memories()) == 2
    assert lay.lock.exists()


# ---------------------------------------------------------------------------------------------
# The extraction rejection log, written by ``compacted`` (docs/decisions.md#rejection-log)
# ---------------------------------------------------------------------------------------------


def test_10_8_1_and_2_progress_snapshot_is_logged_with_workspace_scope(cli: Cli) -> None:
    summary = "Memory candidates:\n- feedback Wave 1 completed successfully and all tests passed"
    run = cli.ok("compacted", "--session", "S", "-", stdin=summary)
    assert run.out.startswith("reject progress_snapshot,bad_feedback")
    assert cli.memories() == []
    [record] = rejection_records(cli)
    assert record["type"] == "feedback"
    assert record["text"] == "Wave 1 completed successfully and all tests passed"
    assert record["reasons"] == ["progress_snapshot", "bad_feedback"]
    assert record["source"] == "compaction"
    # the reference's test 2: workmem always knows the workspace, so every record is scoped
    assert record["workspaceKey"] == layout(cli).directory.name
    assert len(record["workspaceRootHash"]) == 16
    assert record["workspaceRootHash"] != record["workspaceKey"]


def test_10_8_3_rejection_record_text_is_redacted(cli: Cli) -> None:
    summary = (
        "Memory candidates:\n"
        "- reference TypeError: bearer sk_test token=tok123 password=pass123 secret=sec123 api_key=key123"
    )
    cli.ok("compacted", "--session", "S", "-", stdin=summary)
    [record] = rejection_records(cli)
    for secret in ("sk_test", "tok123", "pass123", "sec123", "key123"):
        assert secret not in record["text"]
    assert record["text"] == (
        "TypeError: bearer [REDACTED] token=[REDACTED] password=[REDACTED] "
        "secret=[REDACTED] api_key=[REDACTED]"
    )
    log_text = paths.rejection_log(cli.home).read_text() + layout(cli).evidence.read_text()
    assert "tok123" not in log_text and "pass123" not in log_text


def test_rejections_command_reads_the_log(cli: Cli) -> None:
    summary = "Memory candidates:\n- feedback Wave 1 completed successfully and all tests passed"
    cli.ok("compacted", "--session", "S", "-", stdin=summary)
    out = cli.ok("rejections").out
    assert "Total rejected: 1" in out
    assert "progress_snapshot" in out
    data = cli.ok("rejections", "--quality", "--json").json()
    assert (data["totalRecords"], data["workspaceScopedCount"], data["legacyUnscopedCount"]) == (1, 1, 0)
    assert cli.ok("rejections", "--reason", "raw_error").out.count("Total rejected: 0") == 1


# ---------------------------------------------------------------------------------------------
# Sub-agents and read-only diagnostics
# ---------------------------------------------------------------------------------------------


def test_sub_agent_sessions_cause_no_writes(cli: Cli) -> None:
    assert cli.ok("message", "--session", "sub", "--parent", "P", "Remember this: always use pnpm").out == ""
    assert cli.ok(
        "tool", "--session", "sub", "--parent", "P", "--tool", "read", "--args", '{"filePath": "a.ts"}'
    )
    assert (
        cli.ok("compacted", "--session", "sub", "--parent", "P", "-", stdin="Memory candidates:\n").out == ""
    )
    assert cli.ok("context", "--session", "sub", "--parent", "P").out == ""
    assert not cli.home.exists()


def test_diagnostics_never_write_and_redact_by_default(cli: Cli) -> None:
    cli.ok("context", "--session", "S")
    cli.ok("message", "--session", "S", "Remember this: the fixture password: sushi lives in tests/fixtures")
    cli.ok("remember", f"Config lives in {cli.workspace}/src/config.ts", "--type", "reference")
    summary = (
        "Memory candidates:\n- [project] Wave 1 completed and all tests passed\n"
        "- [decision] Use msgspec structs for every persisted value because decoding is fast\n"
    )
    cli.ok("compacted", "--session", "S", "-", stdin=summary)
    memory_id = cli.memories()[0]["id"]
    before = tree(cli.home)
    outputs: list[str] = []
    for command in (
        ["health"],
        ["health", "--json"],
        ["explain"],
        ["explain", memory_id],
        ["trace", memory_id],
        ["quality"],
        ["quality", "--json"],
        ["coverage", "--include-historical"],
        ["coverage", "--json"],
        ["disappearances", "--explain"],
        ["disappearances", "--json"],
        ["rejections"],
        ["rejections", "--unique"],
        ["rejections", "--quality"],
        ["rejections", "--quality", "--json"],
    ):
        run = cli.ok(*command)
        outputs.append(run.out)
        if "--json" in command:
            json.loads(run.out)  # one parseable document
    assert tree(cli.home) == before
    everything = "\n".join(outputs)
    assert "sushi" not in everything
    assert str(cli.workspace) not in everything
    assert str(cli.home) not in everything
    raw = cli.ok("health", "--raw").out
    assert str(cli.home) in raw  # --raw shows the paths


def test_health_all_lists_every_workspace(cli: Cli, tmp_path: Path) -> None:
    cli.ok("remember", "Always run the linter before committing")
    other = tmp_path / "other"
    other.mkdir()
    cli.workspace = other
    cli.ok("remember", "Prefer small focused pull requests")
    out = cli("health", "--all", workspace=False)
    assert out.code == 0
    assert out.out.startswith("Workspace memory health\n\n")
    assert out.out.count("Stored active memories: 1") == 2
    empty = cli("--home", str(tmp_path / "nothing"), "health", "--all", workspace=False)
    assert empty.out == "Workspace memory health\n\nNo workspace stores found.\n"
