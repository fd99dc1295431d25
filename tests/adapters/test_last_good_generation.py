"""The last good generation of each state file and what recovery takes from it
(docs/decisions.md#last-good-generation): ``<name>.prev`` is the file as it was before the last
commit that replaced it while it decoded; a damaged file comes back as what its damaged bytes still
hold plus what only its last good generation holds, and says exactly how many came from where."""

from __future__ import annotations

import errno
import os
import stat
from functools import partial
from pathlib import Path

import pytest
from msgspec.structs import replace

from adapters.filestore import Workspace
from adapters.jsonl import keep_previous, previous_of
from domain.codec import decode_journal, decode_store, encode_pretty
from domain.enums import MemorySource
from domain.model import EvidenceEvent, PendingJournal, WorkspaceStore
from domain.timeutil import parse_iso_ms
from tests.reliability.damage import garbage, garbled, truncated
from tests.support import builders

NOW = 1_777_636_800_000
STAMP = parse_iso_ms("2026-05-01T00:00:00.000Z") or 0
entry = partial(builders.memory, source=MemorySource.EXPLICIT, at=STAMP)
session = partial(builders.session, at=STAMP)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "project").mkdir()
    return Workspace(tmp_path / "home", str(tmp_path / "project"))


def put_entries(ws: Workspace, count: int, *, start: int = 0) -> WorkspaceStore:
    """Append ``count`` memories to the store in one commit (a write even when ``count`` is 0); the
    store as written."""
    with ws.transaction(NOW) as tx:
        added = tuple(entry(f"memory number {i} holds", id=f"mem_{i}") for i in range(start, start + count))
        tag = f"write-{len(tx.store.migrations)}"
        tx.put_store(
            replace(tx.store, entries=(*tx.store.entries, *added), migrations=(*tx.store.migrations, tag))
        )
    written = tx.written["workspace_memory"]
    assert isinstance(written, WorkspaceStore)
    return written


def quarantine_events(ws: Workspace) -> list[EvidenceEvent]:
    events, _ = ws.read_events()
    return [e for e in events if e.type == "storage_corrupt_json_quarantined"]


# ---- keeping the last good generation ---------------------------------------------------------------


def test_a_commit_keeps_the_file_it_replaces_as_prev(ws: Workspace) -> None:
    put_entries(ws, 2)
    assert not previous_of(ws.paths.store).exists()  # the first write replaced nothing
    first = ws.paths.store.read_bytes()
    put_entries(ws, 1, start=2)
    prev = previous_of(ws.paths.store)
    assert prev.read_bytes() == first
    assert stat.S_IMODE(prev.stat().st_mode) == 0o600
    assert prev.stat().st_ino != ws.paths.store.stat().st_ino
    second = ws.paths.store.read_bytes()
    put_entries(ws, 1, start=3)
    assert prev.read_bytes() == second  # one generation back, never more


def test_journal_and_session_files_keep_theirs_too(ws: Workspace) -> None:
    for turn in (1, 2):
        with ws.transaction(NOW) as tx:
            tx.put_journal(replace(tx.journal, entries=(entry(f"pending note {turn}", id=f"p{turn}"),)))
            tx.put_session(replace(tx.session("s1") or session("s1"), turn=turn))
    assert decode_journal(previous_of(ws.paths.journal).read_bytes()).unwrap().entries[0].id == "p1"
    assert b'"turn": 1' in previous_of(ws.session_path("s1")).read_bytes()


def test_a_deleted_session_takes_its_last_generation_with_it(ws: Workspace) -> None:
    for turn in (1, 2):
        with ws.transaction(NOW) as tx:
            tx.put_session(replace(tx.session("s1") or session("s1"), turn=turn))
    assert previous_of(ws.session_path("s1")).exists()
    with ws.transaction(NOW) as tx:
        tx.delete_session("s1")
    assert list(ws.paths.sessions.iterdir()) == []


def test_a_damaged_file_never_becomes_the_last_good_generation(ws: Workspace) -> None:
    put_entries(ws, 3)
    put_entries(ws, 1, start=3)
    good = previous_of(ws.paths.store).read_bytes()
    ws.paths.store.write_bytes(garbled(ws.paths.store.read_bytes()))
    put_entries(ws, 1, start=4)  # salvages, then replaces the damaged file
    assert previous_of(ws.paths.store).read_bytes() == good


def test_without_hard_links_the_last_generation_is_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b'{"a": 1}')
    target.chmod(0o644)

    def no_links(*_: object, **__: object) -> None:
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    keep_previous(target)
    prev = previous_of(target)
    assert prev.read_bytes() == b'{"a": 1}' and stat.S_IMODE(prev.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_linked_file_of_another_mode_is_kept_private(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"{}")
    target.chmod(0o644)  # a store the reference wrote
    keep_previous(target)
    assert stat.S_IMODE(previous_of(target).stat().st_mode) == 0o600
    keep_previous(tmp_path / "missing.json")  # nothing to keep
    assert not previous_of(tmp_path / "missing.json").exists()


def test_a_directory_or_link_where_the_last_generation_goes_is_moved_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"{}")
    outside = tmp_path / "outside"
    outside.write_bytes(b"not mine")
    previous_of(target).mkdir()
    keep_previous(target)
    assert previous_of(target).read_bytes() == b"{}"
    previous_of(target).unlink()
    previous_of(target).symlink_to(outside)
    keep_previous(target)
    assert outside.read_bytes() == b"not mine" and not previous_of(target).is_symlink()
    moved = sorted(p.name for p in tmp_path.iterdir() if ".prev.corrupt-" in p.name)
    assert len(moved) == 2 and capsys.readouterr().err.count("moved aside") == 2


# ---- recovering with it -------------------------------------------------------------------------------


def test_a_destroyed_store_comes_back_whole_from_its_last_good_generation(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    put_entries(ws, 40)
    put_entries(ws, 0)
    destroyed = garbage(ws.paths.store.read_bytes())
    ws.paths.store.write_bytes(destroyed)
    capsys.readouterr()
    with ws.transaction(NOW) as tx:
        recovered = tx.store
    assert [e.id for e in recovered.entries] == [f"mem_{i}" for i in range(40)]
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "workspace-memory.json is damaged; recovered 0 entries from the damaged bytes and 40 from the "
        "last good generation (workspace-memory.json.prev)"
    ) in err
    assert f"the original is kept as workspace-memory.json.corrupt-{NOW} " in err
    assert "workmem recover" in err
    assert decode_store(ws.paths.store.read_bytes()).unwrap().entries == recovered.entries
    aside = ws.paths.store.with_name(f"workspace-memory.json.corrupt-{NOW}")
    assert aside.read_bytes() == destroyed
    [event] = quarantine_events(ws)
    assert event.outcome == "recovered" and event.reason_codes == ("salvaged",)
    assert event.details["previousEntries"] == 40 and event.details["readableEntries"] == 0
    assert event.details["asideFile"] == aside.name
    assert event.details["previousFile"] == "workspace-memory.json.prev"


def test_a_torn_store_takes_only_what_it_lacks_from_the_last_generation(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    put_entries(ws, 30)
    with ws.transaction(NOW) as tx:  # the newer version of mem_0 is in the damaged bytes
        first = replace(tx.store.entries[0], text="memory number 0 holds, corrected")
        tx.put_store(replace(tx.store, entries=(first, *tx.store.entries[1:])))
    ws.paths.store.write_bytes(truncated(ws.paths.store.read_bytes()))
    with ws.transaction(NOW) as tx:
        store = tx.store
    assert [e.id for e in store.entries] == [f"mem_{i}" for i in range(30)]
    assert store.entries[0].text == "memory number 0 holds, corrected"
    [event] = quarantine_events(ws)
    read, previous = event.details["readableEntries"], event.details["previousEntries"]
    assert read + previous == 30 and read > 0 and previous > 0
    assert "known lost" in capsys.readouterr().err


def test_a_symlink_in_place_of_the_store_is_moved_aside_and_the_store_recovered(
    ws: Workspace, tmp_path: Path
) -> None:
    put_entries(ws, 5)
    put_entries(ws, 0)
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"not mine")
    ws.paths.store.unlink()
    ws.paths.store.symlink_to(outside)
    with ws.transaction(NOW) as tx:
        assert len(tx.store.entries) == 5
    assert outside.read_bytes() == b"not mine"
    assert ws.paths.store.is_file() and not ws.paths.store.is_symlink()
    assert len(decode_store(ws.paths.store.read_bytes()).unwrap().entries) == 5
    [aside] = ws.quarantined_files()
    assert aside.is_symlink()


def test_a_read_only_view_shows_the_recovered_store_and_touches_nothing(ws: Workspace) -> None:
    put_entries(ws, 4)
    put_entries(ws, 1, start=4)
    ws.paths.store.write_bytes(b"\x00" * 64)
    before = sorted(p.name for p in ws.paths.directory.iterdir())
    loaded = ws.read_store(NOW)
    assert not loaded.corrupt and len(loaded.value.entries) == 4
    assert loaded.damage is not None and "4 from the last good generation" in loaded.damage
    assert sorted(p.name for p in ws.paths.directory.iterdir()) == before


def test_a_damaged_journal_does_not_get_back_what_the_store_holds_since(ws: Workspace) -> None:
    with ws.transaction(NOW) as tx:
        tx.put_journal(replace(tx.journal, entries=(entry("first pending", id="p1"),)))
    with ws.transaction(NOW) as tx:
        both = (entry("first pending", id="p1"), entry("second pending", id="p2"))
        tx.put_journal(replace(tx.journal, entries=both))
    with ws.transaction(NOW) as tx:  # p1 is promoted: stored, and gone from the journal
        tx.put_store(replace(tx.store, entries=(entry("first pending", id="p1"),)))
        tx.put_journal(replace(tx.journal, entries=(entry("second pending", id="p2"),)))
    ws.paths.journal.write_bytes(b"\x00garbage")
    with ws.transaction(NOW) as tx:
        journal = tx.journal
    assert isinstance(journal, PendingJournal)
    assert [e.id for e in journal.entries] == ["p2"]


def test_without_a_last_good_generation_an_unreadable_file_is_moved_aside_as_before(ws: Workspace) -> None:
    ws.paths.directory.mkdir(parents=True)
    ws.paths.store.write_bytes(encode_pretty(builders.store(entry("only one", id="m1")))[:20])
    with ws.transaction(NOW) as tx:
        assert tx.store.entries == ()
    assert not ws.paths.store.exists()
    [event] = quarantine_events(ws)
    assert event.outcome == "quarantined"
    assert [p.name for p in ws.quarantined_files()] == [f"workspace-memory.json.corrupt-{NOW}"]
    assert not os.path.exists(previous_of(ws.paths.store))
