"""Concurrent writers and readers, and writers killed at random moments: no lost update, no torn
file, no acknowledged write missing, the lock recovered within the configured wait."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from adapters import paths
from domain.codec import decode_journal, decode_session, decode_store
from domain.evidence_records import parse_event_line
from tests.support.cli import REPO, Cli, make_cli

WRITERS = 8
WRITES_PER_WRITER = 50
READERS = 2
KILLS = 50

#: One writer: 50 ``remember`` calls in one process, printing each acknowledged text.
WRITER = """
import sys
from adapters.cli import main
import io, contextlib
name = sys.argv[1]
for i in range(int(sys.argv[2])):
    text = f"always use the tool {name}-{i} for the task {name}-{i}"
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["--workspace", sys.argv[3], "remember", text])
    if code == 0:
        print(text, flush=True)
"""

#: One reader: ``list --json`` until told to stop, printing how many memories each call saw.
READER = """
import sys, os, io, json, time, contextlib
from adapters.cli import main
stop = sys.argv[1]
while not os.path.exists(stop):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--workspace", sys.argv[2], "list", "--json"])
    print(code, len(json.loads(out.getvalue())["memories"]) if code == 0 else -1, flush=True)
    time.sleep(0.02)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKMEM_")}
    env.update(WORKMEM_HOME=str(home), WORKMEM_LOCK_TIMEOUT="60", PYTHONPATH=str(REPO))
    return env


def _events(home: Path, workspace: Path) -> list[dict[str, Any]]:
    log = paths.workspace_paths(home, str(workspace)).evidence
    return [json.loads(line) for line in log.read_bytes().splitlines() if line.strip()]


def test_concurrent_writers_and_readers_lose_nothing(tmp_path: Path) -> None:
    home, workspace, stop = tmp_path / "home", tmp_path / "project", tmp_path / "stop"
    workspace.mkdir()
    env = _env(home)
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(stop), str(workspace)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(READERS)
    ]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{n}", str(WRITES_PER_WRITER), str(workspace)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    acknowledged: list[str] = []
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0 and "Traceback" not in err, err
        acknowledged.extend(out.splitlines())
    stop.touch()
    for reader in readers:
        out, _ = reader.communicate(timeout=60)
        seen = [line.split() for line in out.splitlines()]
        assert seen and all(code == "0" for code, _ in seen)
        counts = [int(count) for _, count in seen]
        assert counts == sorted(counts)  # a reader never sees the store go back

    assert len(acknowledged) == WRITERS * WRITES_PER_WRITER
    layout = paths.workspace_paths(home, str(workspace))
    store = decode_store(layout.store.read_bytes()).unwrap()
    assert sorted(e.text for e in store.entries) == sorted(acknowledged)  # 0 lost
    assert store.revision == len(acknowledged)  # one committed write each
    promoted = [
        e["memory"]["memoryId"] for e in _events(home, workspace) if e["type"] == "promotion_promoted"
    ]
    assert len(promoted) == len(set(promoted)) == len(acknowledged)  # one promotion event per memory


def _child(workspace: Path, wfd: int, seed: int) -> None:
    """Runs in a forked child until it is killed: remember, then acknowledge on the pipe."""
    try:
        from adapters.cli import main

        for i in range(10_000):
            text = f"always keep the rule {seed}-{i} for the deploy step {seed}-{i}"
            command = ["--workspace", str(workspace), "message", "--session", f"k{seed}", f"remember: {text}"]
            if i % 3 == 0:
                command = ["--workspace", str(workspace), "remember", text]
            if main(command) == 0:
                os.write(wfd, (text + "\n").encode())
    finally:
        os._exit(0)


def _check_every_file_parses(layout: paths.WorkspacePaths) -> None:
    if layout.store.exists():
        decode_store(layout.store.read_bytes()).unwrap()
    if layout.journal.exists():
        decode_journal(layout.journal.read_bytes()).unwrap()
    for session in layout.sessions.glob("*.json"):
        decode_session(session.read_bytes()).unwrap()
    for line in layout.evidence.read_bytes().splitlines() if layout.evidence.exists() else []:
        assert parse_event_line(line) is not None, line[:80]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_writers_killed_at_random_moments_lose_no_acknowledged_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli: Cli = make_cli(tmp_path, monkeypatch, capsys)
    monkeypatch.delenv("WORKMEM_NOW")
    monkeypatch.setenv("WORKMEM_LOCK_TIMEOUT", "2")
    rng = random.Random(11)
    layout = paths.workspace_paths(cli.home, str(cli.workspace))
    acknowledged: list[str] = []
    recovered = 0
    for kill in range(KILLS):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            os.close(rfd)
            _child(cli.workspace, wfd, kill)
        os.close(wfd)
        time.sleep(rng.uniform(0.01, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with os.fdopen(rfd, "rb") as pipe:
            acknowledged.extend(line.decode() for line in pipe.read().splitlines())
        _check_every_file_parses(layout)
        # the next writer gets the lock within the configured wait (2 s here; exit 4 otherwise):
        # the dead holder's lock went with it, and its holder record is reported as recovered
        run = cli("remember", f"never skip the review step number {kill} of the release")
        assert run.code == 0, run
        acknowledged.append(f"never skip the review step number {kill} of the release")
        recovered += sum(
            1 for e in _events(cli.home, cli.workspace)[-20:] if e["type"] == "storage_stale_lock_recovered"
        )
    for session in {f"k{n}" for n in range(KILLS)}:
        assert cli("end-session", "--session", session).code == 0  # promote what is still pending
    stored = {m["text"] for m in cli.memories("--all")}
    archive = layout.archive.read_bytes().decode() if layout.archive.exists() else ""
    missing = [text for text in acknowledged if text not in stored and text not in archive]
    assert not missing
    _check_every_file_parses(layout)
    assert recovered >= 1  # at least one kill hit a lock holder, and it was recovered
