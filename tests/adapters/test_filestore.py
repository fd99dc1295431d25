"""Workspace storage: the transaction helper, locking, quarantine, revisions and storage faults
(docs/decisions.md#storage-transactions, docs/decisions.md#d5), with the reference's concurrency, lock and
corrupt-file cases adapted to workmem's design."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

import adapters.jsonl as jsonl
from adapters.filestore import Workspace
from adapters.paths import migration_log, rejection_log, session_file_name
from adapters.storage_io import LockTimeout, StaleWrite, StorageError, StorageUnavailable, archive_key
from adapters.transaction import Transaction
from domain.codec import encode_pretty
from domain.enums import EventType, MemorySource, Outcome, Phase
from domain.model import EvidenceEvent, EvidenceInput
from domain.timeutil import parse_iso_ms
from tests.support import builders

NOW = 1_777_636_800_000


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def ws(home: Path, root: str) -> Workspace:
    return Workspace(home, root)


def increment(ws: Workspace, tag: str = "x") -> None:
    with ws.transaction(NOW) as tx:
        store = tx.store
        tx.put_store(replace(store, migrations=(*store.migrations, tag)))


def events_of(ws: Workspace, type_: str) -> list[EvidenceEvent]:
    events, _ = ws.read_events()
    return [e for e in events if e.type == type_]


#: Stored entries and sessions are stamped 2026-05-01T00:00:00.000Z.
STAMP = parse_iso_ms("2026-05-01T00:00:00.000Z") or 0
entry = partial(builders.memory, id="mem_1", source=MemorySource.EXPLICIT, at=STAMP)
session = partial(builders.session, at=STAMP)


def chmod_is_effective(directory: Path) -> bool:
    """False when running with privileges that ignore directory permissions (for example root)."""
    os.chmod(directory, 0o500)
    try:
        probe = directory / ".probe"
        probe.write_text("x")
    except PermissionError:
        return True
    else:
        probe.unlink()
        return False
    finally:
        os.chmod(directory, 0o700)


CHILD_PRELUDE = textwrap.dedent(
    """
    import random, sys, threading, time
    from pathlib import Path
    from msgspec.structs import replace
    from adapters.filestore import Workspace
    home, root, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    ws = Workspace(home, root)
    NOW = 1_777_636_800_000
    def increment(tag):
        with ws.transaction(NOW) as tx:
            store = tx.store
            tx.put_store(replace(store, migrations=(*store.migrations, tag)))
    """
)

CHILD_MODES = textwrap.dedent(
    """
    if mode == "increments":
        def work(i):
            time.sleep(random.random() * 0.004)
            increment(f"{sys.argv[4]}-{i}")
        threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
        for t in threads: t.start()
        for t in threads: t.join()
    elif mode == "hold":
        with ws.transaction(NOW) as tx:
            store = tx.store
            tx.put_store(replace(store, migrations=(*store.migrations, "child")))
            print("locked", flush=True)
            time.sleep(float(sys.argv[4]))
    """
)


def spawn(home: Path, root: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD_PRELUDE + CHILD_MODES, str(home), root, *args],
        stdout=subprocess.PIPE,
        text=True,
    )


def wait_locked(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"


# ---- concurrency ----------------------------------------------------------------------------------


def test_1_twenty_five_concurrent_increments_from_threads(ws: Workspace, root: str, home: Path) -> None:
    def work(i: int) -> None:
        increment(Workspace(home, root), f"t{i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(25)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = ws.read_store(NOW).value
    assert len(store.migrations) == 25
    assert len(set(store.migrations)) == 25
    assert store.revision == 25


def test_8_five_processes_times_twenty_increments(ws: Workspace, root: str, home: Path) -> None:
    children = [spawn(home, root, "increments", f"p{n}") for n in range(5)]
    for child in children:
        assert child.wait(timeout=60) == 0
    store = ws.read_store(NOW).value
    assert len(store.migrations) == 100
    assert store.revision == 100


def test_9_a_waiting_writer_runs_after_the_holder(ws: Workspace, root: str, home: Path) -> None:
    child = spawn(home, root, "hold", "0.25")
    wait_locked(child)
    started = time.monotonic()
    with ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=(*tx.store.migrations, "parent")))
    assert time.monotonic() - started > 0.05
    assert child.wait(timeout=10) == 0
    store = ws.read_store(NOW).value
    assert set(store.migrations) == {"child", "parent"}
    assert store.revision == 2
    assert not ws.paths.lock_holder.exists()


# ---- locks --------------------------------------------------------------------------------------


def test_7_lock_held_by_a_live_process_times_out(ws: Workspace, root: str, home: Path) -> None:
    child = spawn(home, root, "hold", "30")
    try:
        wait_locked(child)
        waiting = Workspace(home, root, lock_timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(LockTimeout) as info, waiting.transaction(NOW):
            pytest.fail("the body must not run without the lock")
        assert 0.3 <= time.monotonic() - started < 3
        assert "\n" not in str(info.value)
        assert "timed out" in str(info.value)
    finally:
        child.kill()
        child.wait()
    (event,) = events_of(ws, "storage_lock_timeout")
    assert event.reason_codes == ("lock_wait_timeout",)
    assert event.outcome == "failed"
    assert event.details == {"storeKind": "workspace", "waitMs": 300}
    assert re.search(rf"(?<![0-9a-f]){child.pid}(?![0-9a-f])", json.dumps(event.details)) is None


def test_5_6_lock_of_a_killed_holder_is_recovered(ws: Workspace, root: str, home: Path) -> None:
    child = spawn(home, root, "hold", "60")
    wait_locked(child)
    # a temp file the dead holder never renamed
    orphan = ws.paths.directory / f"workspace-memory.json.{child.pid}.{NOW}.deadbeef.tmp"
    orphan.write_text("{half")
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert ws.paths.lock_holder.exists()

    increment(ws, "after")

    store = ws.read_store(NOW).value
    assert store.migrations == ("after",)  # the killed holder's write never landed
    (event,) = events_of(ws, "storage_stale_lock_recovered")
    assert event.reason_codes == ("stale_lock",)
    assert event.outcome == "recovered"
    assert event.details == {"storeKind": "workspace"}
    assert re.search(rf"(?<![0-9a-f]){child.pid}(?![0-9a-f])", json.dumps(event.details)) is None
    assert not orphan.exists()
    assert not ws.paths.lock_holder.exists()
    increment(ws, "again")
    assert len(events_of(ws, "storage_stale_lock_recovered")) == 1


def test_lock_is_released_after_a_failing_body(ws: Workspace) -> None:
    with pytest.raises(ValueError), ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("never",)))
        raise ValueError("boom")
    assert not ws.paths.store.exists()
    increment(ws, "next")
    assert ws.read_store(NOW).value.migrations == ("next",)
    assert events_of(ws, "storage_stale_lock_recovered") == []


# ---- corrupt files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", ["{ invalid json", '{"version": 1, "workspace": {"root"', "\x00\xff garbage"]
)
@pytest.mark.parametrize("kind", ["store", "journal", "session"])
def test_3_4_corrupt_file_in_a_transaction_is_quarantined(
    ws: Workspace, kind: str, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = {"store": ws.paths.store, "journal": ws.paths.journal, "session": ws.session_path("s1")}[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    with ws.transaction(NOW) as tx:
        if kind == "store":
            assert tx.store.entries == () and tx.store.workspace.key == ws.key
            tx.put_store(replace(tx.store, migrations=("fresh",)))
        elif kind == "journal":
            assert tx.journal.entries == ()
            tx.put_journal(replace(tx.journal, updated_at="2026-05-02T00:00:00.000Z"))
        else:
            assert tx.session("s1") is None
            tx.put_session(session("s1", turn=1))
    moved = [p for p in path.parent.iterdir() if p.name.startswith(path.name + ".corrupt-")]
    assert len(moved) == 1
    assert moved[0].read_text() == content  # never deleted
    assert moved[0].name == f"{path.name}.corrupt-{NOW}"  # no pid: an event may name it
    assert moved[0] in ws.quarantined_files()
    (event,) = events_of(ws, "storage_corrupt_json_quarantined")
    store_kind = {"store": "workspace_memory", "journal": "pending_journal", "session": "session_state"}[kind]
    assert event.details == {"storeKind": store_kind, "quarantined": True}
    assert event.reason_codes == ("invalid_json",)
    assert event.outcome == "quarantined"
    raw_log = ws.paths.evidence.read_text()
    assert "invalid json" not in raw_log and "garbage" not in raw_log
    # the pid must not appear as a value of its own (hex hashes may contain its digits by chance)
    assert re.search(rf"(?<![0-9a-f]){os.getpid()}(?![0-9a-f])", raw_log) is None
    assert path.exists()  # the work continued and wrote a fresh file
    assert "invalid JSON" in capsys.readouterr().err


def test_wrong_shape_is_quarantined_as_invalid_shape(ws: Workspace) -> None:
    ws.paths.directory.mkdir(parents=True)
    ws.paths.store.write_text("[1, 2, 3]")
    with ws.transaction(NOW) as tx:
        assert tx.store.entries == ()
    (event,) = events_of(ws, "storage_corrupt_json_quarantined")
    assert event.reason_codes == ("invalid_shape",)


def test_quarantine_evidence_survives_a_failing_body(ws: Workspace) -> None:
    ws.paths.directory.mkdir(parents=True)
    ws.paths.journal.write_text("{not json")
    with pytest.raises(RuntimeError), ws.transaction(NOW) as tx:
        _ = tx.journal
        raise RuntimeError("step failed")
    assert len(events_of(ws, "storage_corrupt_json_quarantined")) == 1
    assert not ws.paths.journal.exists()


def test_read_views_never_write_or_quarantine(ws: Workspace) -> None:
    assert ws.read_store(NOW).missing
    assert not ws.paths.directory.exists()  # reading created nothing
    ws.paths.sessions.mkdir(parents=True)
    ws.paths.store.write_text("{ invalid json")
    ws.paths.journal.write_text("")
    ws.session_path("s").write_text("nope")
    before = {p: p.read_bytes() for p in ws.paths.directory.rglob("*") if p.is_file()}
    store = ws.read_store(NOW)
    assert store.corrupt and not store.missing and store.value.entries == ()
    assert ws.read_journal(NOW).corrupt
    loaded = ws.read_session("s")
    assert loaded.corrupt and loaded.value is None
    assert ws.read_session("other").missing
    after = {p: p.read_bytes() for p in ws.paths.directory.rglob("*") if p.is_file()}
    assert before == after
    assert ws.read_events() == ((), 0)


def test_valid_read_is_pure(ws: Workspace) -> None:
    increment(ws)
    before = ws.paths.store.stat()
    for _ in range(3):
        assert ws.read_store(NOW).value.revision == 1
    after = ws.paths.store.stat()
    assert (before.st_mtime_ns, before.st_ino) == (after.st_mtime_ns, after.st_ino)


# ---- revisions and stale writers ------------------------------------------------------------------


def test_revision_increments_on_every_write(ws: Workspace) -> None:
    for expected in (1, 2, 3):
        increment(ws)
        assert ws.read_store(NOW).value.revision == expected


def test_stale_revision_is_rejected(ws: Workspace) -> None:
    increment(ws, "a")
    snapshot = ws.read_store(NOW).value  # revision 1, read outside any lock
    increment(ws, "b")  # revision 2
    with pytest.raises(StaleWrite) as info, ws.transaction(NOW) as tx:
        tx.put_store(replace(snapshot, migrations=("lost update",)))
    assert "revision 2" in str(info.value) and "revision 1" in str(info.value)
    assert ws.read_store(NOW).value.migrations == ("a", "b")
    (event,) = events_of(ws, "storage_stale_write_rejected")
    assert event.details == {"storeKind": "workspace_memory", "expectedRevision": 1, "foundRevision": 2}
    assert event.outcome == "rejected"


def test_writer_bypassing_the_lock_is_detected(ws: Workspace) -> None:
    increment(ws, "a")
    with pytest.raises(StaleWrite), ws.transaction(NOW) as tx:
        store = tx.store
        rogue = replace(store, revision=7, migrations=("rogue",))
        ws.paths.store.write_bytes(encode_pretty(rogue))
        tx.put_store(replace(store, migrations=("mine",)))
    assert ws.read_store(NOW).value.migrations == ("rogue",)


def test_stale_session_write_is_rejected_and_nothing_is_written(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        tx.put_session(session("s1", turn=1))
    old = ws.read_session("s1").value
    assert old is not None and old.revision == 1
    with ws.transaction(NOW) as tx:
        tx.put_session(replace(old, turn=2))
    with pytest.raises(StaleWrite), ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("with stale session",)))
        tx.put_session(replace(old, turn=99))
    assert not ws.paths.store.exists()  # the whole commit was rejected
    current = ws.read_session("s1").value
    assert current is not None and current.turn == 2


def test_unchanged_values_are_not_rewritten(ws: Workspace) -> None:
    increment(ws)
    before = ws.paths.store.stat()
    with ws.transaction(NOW) as tx:
        tx.put_store(tx.store)
        tx.put_journal(tx.journal)
    after = ws.paths.store.stat()
    assert before.st_ino == after.st_ino
    assert ws.read_store(NOW).value.revision == 1
    assert not ws.paths.journal.exists()


def test_unknown_fields_are_kept_on_rewrite_d11(ws: Workspace, root: str) -> None:
    ws.paths.directory.mkdir(parents=True)
    reference_store = {
        "version": 1,
        "workspace": {"root": root, "key": ws.key},
        "limits": {"maxRenderedChars": 3600, "maxEntries": 28},
        "entries": [],
        "updatedAt": "2026-04-01T00:00:00.000Z",
        "someFutureField": {"x": [1, 2]},
    }
    ws.paths.store.write_text(json.dumps(reference_store, indent=2))
    increment(ws, "m")
    stored = json.loads(ws.paths.store.read_text())
    assert stored["someFutureField"] == {"x": [1, 2]}
    assert stored["revision"] == 1


# ---- layout, modes, sessions, archive and logs ----------------------------------------------------


def test_files_are_0600_and_directories_0700(ws: Workspace, home: Path) -> None:
    with ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("m",)))
        tx.put_journal(replace(tx.journal, updated_at="2026-05-02T00:00:00.000Z"))
        tx.put_session(session("s1"))
        tx.emit([EvidenceInput(type=EventType.HOOK_FAILED, phase=Phase.HOOK, outcome=Outcome.FAILED)])
        tx.append_archive([entry("archived")])
    for path in (
        ws.paths.store,
        ws.paths.journal,
        ws.session_path("s1"),
        ws.paths.evidence,
        ws.paths.archive,
    ):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(ws.paths.lock.stat().st_mode) == 0o600
    for directory in (
        home,
        home / "workspaces",
        ws.paths.directory,
        ws.paths.sessions,
        ws.paths.evidence_dir,
    ):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory


def test_rewritten_file_gets_private_mode(ws: Workspace) -> None:
    increment(ws)
    os.chmod(ws.paths.store, 0o644)
    increment(ws)
    assert stat.S_IMODE(ws.paths.store.stat().st_mode) == 0o600


def test_store_file_is_pretty_json_without_trailing_newline(ws: Workspace) -> None:
    increment(ws)
    text = ws.paths.store.read_text()
    assert text.startswith('{\n  "version": 1,') and not text.endswith("\n")


def test_sessions_put_get_list_and_delete(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        assert tx.sessions() == []
        tx.put_session(session("s1"))
        tx.put_session(session("s2"))
        assert tx.session("s1") == session("s1")
        assert {s.session_id for s in tx.sessions()} == {"s1", "s2"}
    assert ws.session_path("s1").name == session_file_name("s1")
    with ws.transaction(NOW) as tx:
        assert {s.session_id for s in tx.sessions()} == {"s1", "s2"}
        tx.delete_session("s1")
        assert tx.session("s1") is None
        assert [s.session_id for s in tx.sessions()] == ["s2"]
    assert not ws.session_path("s1").exists()
    assert ws.read_session("s2").value is not None


def test_sessions_listing_quarantines_corrupt_files(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        tx.put_session(session("good"))
    ws.session_path("bad").write_text("{")
    with ws.transaction(NOW) as tx:
        assert [s.session_id for s in tx.sessions()] == ["good"]
    assert len(events_of(ws, "storage_corrupt_json_quarantined")) == 1


def test_archive_is_appended_and_read_back_latest_per_key(ws: Workspace) -> None:
    first = entry("Use pnpm", id="mem_1")
    later = replace(first, updated_at="2026-06-01T00:00:00.000Z")
    with ws.transaction(NOW) as tx:
        assert dict(tx.archive()) == {}
        tx.append_archive([first])
    with ws.transaction(NOW) as tx:
        tx.append_archive([later, entry("Other", id="mem_2")])
    archive = ws.read_archive()
    assert archive[archive_key(first)] == later
    assert len(archive) == 2
    with open(ws.paths.archive, "a") as handle:
        handle.write("not json\n")
    assert len(ws.read_archive()) == 2


def test_archive_is_written_before_the_store(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_write(target: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("adapters.transaction.atomic_write", failing_write)
    gone = entry("moved out", id="mem_9")
    with pytest.raises(StorageUnavailable), ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("archived one",)))
        tx.append_archive([gone])
    assert archive_key(gone) in ws.read_archive()


def test_migration_audit_and_rejection_logs(ws: Workspace, home: Path) -> None:
    class Audit(msgspec.Struct, frozen=True):
        migration_id: str
        memory_id: str

    class Rejection(msgspec.Struct, frozen=True):
        reason: str

    with ws.transaction(NOW) as tx:
        tx.append_migration_audit([Audit("2026-04-28-quality-cleanup", "m1"), Audit("other", "m2")])
        tx.append_rejections([Rejection("too_short")])
    audit = migration_log(home, "2026-04-28-quality-cleanup").read_text().splitlines()
    assert [json.loads(line) for line in audit] == [
        {"migration_id": "2026-04-28-quality-cleanup", "memory_id": "m1"}
    ]
    assert migration_log(home, "other").exists()
    assert json.loads(rejection_log(home).read_text()) == {"reason": "too_short"}
    assert stat.S_IMODE(rejection_log(home).stat().st_mode) == 0o600


def test_emitted_evidence_is_appended_on_commit_only(ws: Workspace) -> None:
    ev = EvidenceInput(
        type=EventType.PROMOTION_PROMOTED,
        phase=Phase.PROMOTION,
        outcome=Outcome.PROMOTED,
        session_id="raw-session",
    )
    with pytest.raises(KeyError), ws.transaction(NOW) as tx:
        tx.emit([ev])
        raise KeyError("x")
    assert ws.read_events() == ((), 0)
    with ws.transaction(NOW) as tx:
        tx.emit([ev])
    (stored,) = events_of(ws, "promotion_promoted")
    assert stored.workspace_key == ws.key and stored.workspace_root_hash == ws.root_hash
    assert "raw-session" not in ws.paths.evidence.read_text()


def test_emit_outside_a_transaction(ws: Workspace) -> None:
    records = ws.emit(
        [EvidenceInput(type=EventType.HOOK_FAILED, phase=Phase.HOOK, outcome=Outcome.FAILED)], NOW
    )
    assert len(records) == 1
    assert ws.read_events()[0] == records


def test_transaction_cannot_be_used_after_its_block(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        pass
    kept: Transaction = tx
    with pytest.raises(RuntimeError):
        kept.put_store(ws.empty_store(NOW))
    with pytest.raises(RuntimeError):
        _ = kept.store


def test_written_values_carry_their_new_revision(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("m",)))
        tx.put_session(session("s1"))
    assert tx.written["workspace_memory"].revision == 1  # type: ignore[attr-defined]
    assert tx.written["session:s1"].revision == 1  # type: ignore[attr-defined]


# ---- storage faults --------------------------------------------------------------------------------


def test_directory_where_the_store_should_be(ws: Workspace) -> None:
    ws.paths.store.mkdir(parents=True)
    (ws.paths.store / "keep.txt").write_text("precious")
    assert ws.read_store(NOW).corrupt  # a read never moves anything
    assert ws.paths.store.is_dir()
    with ws.transaction(NOW) as tx:
        assert tx.store.entries == ()
    # moved aside whole, never replaced or deleted (docs/decisions.md#b3); the workspace works again
    [aside] = ws.quarantined_files()
    assert (aside / "keep.txt").read_text() == "precious"


def test_file_where_the_workspace_directory_should_be(home: Path, root: str) -> None:
    ws = Workspace(home, root)
    ws.paths.directory.parent.mkdir(parents=True)
    ws.paths.directory.write_text("in the way")
    with pytest.raises(StorageUnavailable), ws.transaction(NOW):
        pass
    assert ws.paths.directory.read_text() == "in the way"


def test_file_where_the_sessions_directory_should_be(ws: Workspace) -> None:
    increment(ws)
    ws.paths.sessions.write_text("in the way")
    with pytest.raises(StorageUnavailable), ws.transaction(NOW) as tx:
        tx.put_store(replace(tx.store, migrations=("x",)))
        tx.put_session(session("s1"))
    assert ws.paths.sessions.read_text() == "in the way"


def test_read_only_directory(ws: Workspace) -> None:
    increment(ws, "kept")
    original = ws.paths.store.read_bytes()
    if not chmod_is_effective(ws.paths.directory):
        pytest.skip("directory permissions are not enforced for this user; see the injected-fault tests")
    os.chmod(ws.paths.directory, 0o500)
    try:
        with pytest.raises(StorageUnavailable) as info:
            increment(ws, "lost?")
        assert "\n" not in str(info.value)
    finally:
        os.chmod(ws.paths.directory, 0o700)
    assert ws.paths.store.read_bytes() == original


@pytest.mark.parametrize(
    ("code", "where"), [(errno.EROFS, "replace"), (errno.ENOSPC, "write"), (errno.EACCES, "replace")]
)
def test_injected_write_faults_lose_nothing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, code: int, where: str
) -> None:
    increment(ws, "kept")
    original = ws.paths.store.read_bytes()

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    if where == "replace":
        monkeypatch.setattr(os, "replace", fail)
    else:
        monkeypatch.setattr(jsonl, "_write_all", fail)
    with pytest.raises(StorageUnavailable) as info:
        increment(ws, "new")
    monkeypatch.undo()
    assert os.strerror(code) in str(info.value)
    assert ws.paths.store.read_bytes() == original
    assert [p for p in ws.paths.directory.iterdir() if p.name.endswith(".tmp")] == []
    increment(ws, "later")  # the lock was released
    assert ws.read_store(NOW).value.migrations == ("kept", "later")


def test_unreadable_store_is_unavailable_not_quarantined(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/decisions.md#b3: the reference quarantined on any read error, including EACCES."""
    increment(ws, "kept")

    def denied(target: Path) -> bytes | None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("adapters.storage_io.read_bytes", denied)
    with pytest.raises(StorageUnavailable), ws.transaction(NOW) as tx:
        _ = tx.store
    monkeypatch.undo()
    assert ws.read_store(NOW).value.migrations == ("kept",)
    assert ws.quarantined_files() == []


def test_storage_errors_share_a_base() -> None:
    for cls in (LockTimeout, StaleWrite, StorageUnavailable):
        assert issubclass(cls, StorageError)
