"""Nothing lost: damaged stores are salvaged entry by entry, a damaged journal is rebuilt from the
sessions, torn log lines never swallow a new record, and symbolic links are never followed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from adapters import paths
from adapters.jsonl import append_bytes
from domain.model import WorkspaceRef, WorkspaceStore
from domain.salvage import SalvageMode, repair_text, salvage_document
from tests.reliability.corpus import failed_tool
from tests.support.cli import Cli, events, layout

EMPTY = WorkspaceStore(workspace=WorkspaceRef(root="/r", key="k"), updated_at="2026-01-01T00:00:00.000Z")
ENTRY = (
    b'{"id":"m1","type":"feedback","text":"ok one","source":"manual","confidence":1.0,"status":"active",'
    b'"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}'
)


def store_doc(*entries: bytes) -> bytes:
    return (
        b'{"workspace":{"root":"/r","key":"k"},"updatedAt":"2026-01-01T00:00:00.000Z","revision":3,'
        b'"entries":[' + b",".join(entries) + b"]}"
    )


# ---- the pure salvage -------------------------------------------------------------------------


def test_repair_text_replaces_invalid_bytes_and_lone_surrogates_only() -> None:
    assert repair_text(b'{"a":"fine \\ud83d\\ude00 \xef\xbf\xbd"}') == (
        '{"a":"fine \\ud83d\\ude00 \ufffd"}',
        0,
    )
    text, n = repair_text(b'{"a":"x\xff \\ud83d y \\\\ud83d"}')
    assert n == 2
    assert text == '{"a":"x\ufffd \\ufffd y \\\\ud83d"}'  # an escaped backslash is not an escape


def test_salvage_keeps_every_entry_of_a_store_with_one_bad_memory() -> None:
    bad = ENTRY.replace(b"m1", b"m2").replace(b"ok one", b"cut emoji \\ud83d and \xff")
    salvaged = salvage_document(store_doc(ENTRY, bad), WorkspaceStore, EMPTY)
    assert salvaged is not None and salvaged.mode == SalvageMode.LENIENT
    assert [e.text for e in salvaged.value.entries] == ["ok one", "cut emoji \ufffd and \ufffd"]
    assert (salvaged.replaced_characters, salvaged.readable_entries, salvaged.value.revision) == (2, 2, 3)


def test_salvage_reads_the_entries_of_a_torn_store_up_to_the_tear() -> None:
    second = ENTRY.replace(b"m1", b"m2")
    torn = store_doc(ENTRY, second)[:-40]
    salvaged = salvage_document(torn, WorkspaceStore, EMPTY)
    assert salvaged is not None and salvaged.mode == SalvageMode.ENTRIES
    assert [e.id for e in salvaged.value.entries] == ["m1"]
    assert salvaged.unreadable_entries == 1
    assert salvaged.value.workspace == EMPTY.workspace


@pytest.mark.parametrize("data", [b"", b"garbage", b"\x00" * 64, b"[]", b'"entries"', b'{"entries": 5}'])
def test_salvage_gives_up_on_nothing_readable(data: bytes) -> None:
    assert salvage_document(data, WorkspaceStore, EMPTY) is None


# ---- through the command line -------------------------------------------------------------------


def test_one_bad_byte_no_longer_loses_the_store(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    cli.ok("remember", "prefer small commits 😀 with clear messages")
    store = layout(cli).store
    damaged = store.read_bytes().replace("😀".encode(), b"\\ud83d").replace(b"pnpm", b"pn\xffpm")
    store.write_bytes(damaged)
    # read-only: both memories listed, one warning, nothing touched
    listed = cli("list", "--json")
    assert listed.code == 0 and listed.err.count("\n") == 1 and "salvaged: 2 entries readable" in listed.err
    assert sorted(m["text"] for m in listed.json()["memories"]) == [
        "always use pn\ufffdpm for installs",
        "prefer small commits \ufffd with clear messages",
    ]
    assert store.read_bytes() == damaged
    # the next write keeps the original aside, writes the salvaged store and records it
    run = cli("context", "--session", "s1")
    assert run.code == 0 and "prefer small commits" in run.out and "always use pn" in run.out
    assert "original is kept as workspace-memory.json.corrupt-" in run.err
    [aside] = [p for p in store.parent.iterdir() if p.name.startswith("workspace-memory.json.corrupt-")]
    assert aside.read_bytes() == damaged
    store.read_bytes().decode("utf-8")  # valid UTF-8 again
    [event] = [e for e in events(cli) if e["reasonCodes"] == ["salvaged"]]
    assert event["outcome"] == "recovered"
    assert event["details"]["readableEntries"] == 2 and event["details"]["replacedCharacters"] == 2
    assert len(cli.memories()) == 2


def test_a_torn_store_keeps_the_entries_before_the_tear(cli: Cli) -> None:
    for text in ("always use pnpm for installs", "prefer tabs in makefiles always", "never force push main"):
        cli.ok("remember", text)
    store = layout(cli).store
    data = store.read_bytes()
    store.write_bytes(data[: data.index(b"never force push") - 40])
    run = cli("remember", "keep commits small always")
    assert run.code == 0
    texts = sorted(m["text"] for m in cli.memories())
    assert "keep commits small always" in texts and len(texts) >= 3


def test_list_never_shows_an_unreadable_store_as_empty(cli: Cli) -> None:
    store = layout(cli).store
    store.parent.mkdir(parents=True)
    store.write_bytes(b"\x00\x01garbage")
    run = cli("list")
    assert run.code == 4 and run.out == "" and "cannot be read" in run.err
    assert cli("remember", "always use pnpm for installs").code == 0  # moves it aside, carries on
    cli.ok("forget", cli.memories()[0]["id"])
    run = cli("list")
    assert run.out == "No memories stored.\n" and "moved aside" in run.err


def test_import_owm_salvages_a_store_with_a_lone_surrogate(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "owm" / "workspaces" / "abcdef0123456789"
    source.mkdir(parents=True)
    doc = store_doc(ENTRY.replace(b"ok one", b"emoji cut \\ud83d here")).replace(
        b'"/r"', json.dumps(str(cli.workspace)).encode()
    )
    (source / paths.STORE_FILE).write_bytes(doc)
    run = cli("import-owm", str(tmp_path / "owm"), workspace=False)
    assert run.code == 0, run
    assert "salvaged: 1 entries readable, 1 damaged characters replaced" in run.out
    assert [m["text"] for m in cli.memories()] == ["emoji cut \ufffd here"]


def test_a_corrupt_journal_is_rebuilt_from_the_sessions(cli: Cli) -> None:
    cli.ok("message", "--session", "a1", "remember: always run the linter before pushing")
    journal = layout(cli).journal
    journal.write_text('{"broken')
    run = cli("message", "--session", "a1", "thanks")
    assert run.code == 0 and "moved aside" in run.err
    rebuilt = json.loads(journal.read_text())
    assert [e["text"] for e in rebuilt["entries"]] == ["always run the linter before pushing"]
    cli.ok("end-session", "--session", "a1")
    assert [m["text"] for m in cli.memories()] == ["always run the linter before pushing"]


# ---- torn lines and symbolic links ----------------------------------------------------------------


def test_an_append_after_a_torn_last_line_starts_a_new_line(tmp_path: Path) -> None:
    log = tmp_path / "archive.jsonl"
    log.write_bytes(b'{"a":1}\n{"torn":')
    append_bytes(log, b'{"b":2}\n')
    assert log.read_bytes().splitlines() == [b'{"a":1}', b'{"torn":', b'{"b":2}']
    append_bytes(log, b'{"c":3}\n')  # a well-terminated file gets no blank line
    assert log.read_bytes().endswith(b'{"b":2}\n{"c":3}\n')


def test_the_evidence_log_survives_a_torn_last_line(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    log = layout(cli).evidence
    log.write_bytes(log.read_bytes() + b'{"version":1,"eventId":"evt_torn')
    cli.ok("remember", "prefer tabs in makefiles always")
    lines = log.read_bytes().splitlines()
    assert lines[-1].startswith(b"{") and json.loads(lines[-1])["type"]


def _outside(tmp_path: Path, name: str, content: bytes) -> Path:
    target = tmp_path / "outside" / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(content)
    target.chmod(0o644)
    return target


@pytest.mark.parametrize("which", ["store", "journal", "lock_holder", "evidence"])
def test_a_symlinked_file_is_moved_aside_and_never_written_through(
    cli: Cli, tmp_path: Path, which: str
) -> None:
    cli.ok("message", "--session", "s1", "remember: always use pnpm for installs")
    link: Path = getattr(layout(cli), which)
    content = link.read_bytes() if link.exists() else b"outside data\n"
    target = _outside(tmp_path, which, content)
    if link.exists():
        link.unlink()
    link.symlink_to(target)
    run = cli("message", "--session", "s1", "remember: prefer tabs in makefiles always")
    assert run.code == 0, run
    assert "moved aside" in run.err
    assert target.read_bytes() == content and (target.stat().st_mode & 0o777) == 0o644
    assert not link.is_symlink()
    [aside] = [p for p in link.parent.iterdir() if p.name.startswith(link.name + ".corrupt-")]
    assert aside.is_symlink()


def test_appending_to_a_symlink_moves_the_link_aside(tmp_path: Path) -> None:
    target = _outside(tmp_path, "archive.jsonl", b"outside\n")
    link = tmp_path / "archive.jsonl"
    link.symlink_to(target)
    append_bytes(link, b'{"a":1}\n')
    assert target.read_bytes() == b"outside\n"
    assert link.read_bytes() == b'{"a":1}\n' and not link.is_symlink()


@pytest.mark.parametrize("which", ["sessions", "evidence_dir"])
def test_a_symlinked_directory_is_moved_aside(cli: Cli, tmp_path: Path, which: str) -> None:
    cli.ok("message", "--session", "s1", "remember: always use pnpm for installs")
    link: Path = getattr(layout(cli), which)
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    outside.chmod(0o755)
    for item in link.iterdir():
        item.rename(outside / item.name)
    link.rmdir()
    link.symlink_to(outside)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    assert cli("message", "--session", "s1", "remember: always run the linter first").code == 0
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert (outside.stat().st_mode & 0o777) == 0o755
    assert link.is_dir() and not link.is_symlink()
    assert os.path.islink(
        next(p for p in link.parent.iterdir() if p.name.startswith(link.name + ".corrupt-"))
    )


# ---- bad input is never a storage error ---------------------------------------------------------------


@pytest.mark.parametrize(
    "tool_args",
    [
        ("edit", '{"filePath": "src/\\ud83d.ts"}'),
        ("bash", '{"command": "echo \\ud83d"}'),
        ("read", '{"\\udc00": "\\ud83d", "filePath": "a\\udfffb.py"}'),
    ],
)
def test_a_lone_surrogate_in_tool_args_is_replaced_not_a_storage_error(
    cli: Cli, tool_args: tuple[str, str]
) -> None:
    tool, args = tool_args
    run = cli(*failed_tool(tool, args), stdin="Error: failed \\ud83d")
    assert run.code == 0, run
    state = cli.ok("context", "--session", "s1").out
    state.encode("utf-8")
    if tool != "bash":
        assert "\ufffd" in state


# ---- the pending journal's bound (docs/decisions.md#pending-journal-bound) -----------------------


def _remember_many(cli: Cli, sessions: list[str]) -> None:
    for i, sid in enumerate(sessions):
        cli.at_ms(cli.now_ms + 1_000)
        cli.ok("message", "--session", sid, f"remember this: rule number {i} is to keep module {i} tidy")


@pytest.mark.parametrize("asker", ["others", "itself"])
def test_a_request_pushed_over_the_journal_bound_is_stored(cli: Cli, asker: str) -> None:
    """A request acknowledged as pending, then 60 newer requests (from other sessions, or from the
    session itself), then the session's next message and context, then its end: the request is
    stored. The 50-entry journal cap used to drop it, and the next message the session's copy too."""
    pnpm = "always use pnpm for package installs"
    assert cli.ok("message", "--session", "S", f"remember this: {pnpm}").out == f"pending [feedback] {pnpm}\n"
    _remember_many(cli, [f"O{i}" if asker == "others" else "S" for i in range(60)])
    cli.at_ms(cli.now_ms + 1_000)
    cli.ok("message", "--session", "S", "thanks, carry on")
    cli.ok("context", "--session", "S")
    cli.ok("end-session", "--session", "S")
    texts = [m["text"] for m in cli.memories()]
    assert pnpm in texts
    if asker == "itself":
        assert len(texts) == 61
    early = [e for e in events(cli) if "journal_cap_early_promotion" in e.get("reasonCodes", ())]
    assert early and not [e for e in events(cli) if "journal_cap" in e.get("reasonCodes", ())]
    unknown = cli.ok("disappearances").out
    assert "historical_absent_unknown_reason" not in unknown
    health = cli.ok("health").out
    assert "early promotions (journal bound): " in health
