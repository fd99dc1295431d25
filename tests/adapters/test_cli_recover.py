"""``workmem recover``: listing what was set aside and bringing memories back from it
(docs/decisions.md#last-good-generation)."""

from __future__ import annotations

from pathlib import Path

from domain.codec import encode_pretty
from domain.enums import MemorySource
from tests.reliability.damage import garbled
from tests.support import builders
from tests.support.cli import Cli, events, layout, one_line_error

#: an aside name as an earlier version of workmem wrote it (with a pid)
OLD_ASIDE = "workspace-memory.json.corrupt-1777600000000-4242"


def texts(cli: Cli) -> list[str]:
    return sorted(m["text"] for m in cli.memories("--all"))


def old_aside(cli: Cli, *entry_texts: str, damaged: bool = True) -> Path:
    """A (``damaged``) store that an earlier version moved aside, holding memories the store lacks."""
    entries = [
        builders.memory(text, id=f"mem_old_{i}", type="feedback", source=MemorySource.MANUAL)
        for i, text in enumerate(entry_texts)
    ]
    data = encode_pretty(builders.store(*entries, root=str(cli.workspace)))
    aside = layout(cli).directory / OLD_ASIDE
    aside.write_bytes(garbled(data) if damaged else data)
    return aside


def test_an_empty_workspace_has_nothing_set_aside(cli: Cli) -> None:
    assert cli.ok("recover").out == "Nothing is set aside in this workspace.\n"
    assert cli.ok("recover", "--json").json() == {"files": []}


def test_the_last_good_generation_is_listed_with_what_it_holds(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    cli.ok("remember", "prefer tabs in makefiles always")
    [row] = cli.ok("recover", "--json").json()["files"]
    assert row["name"] == "workspace-memory.json.prev"
    assert (row["kind"], row["what"], row["memories"], row["missing"]) == (
        "store",
        "last good generation",
        1,
        0,
    )
    out = cli.ok("recover").out
    assert "workspace-memory.json.prev  store, last good generation" in out
    assert "1 memories, 0 not in the workspace" in out


def test_restore_brings_back_what_an_old_aside_file_holds_and_the_store_lacks(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    lost = [f"keep module {i} of the billing service independent" for i in range(8)]
    aside = old_aside(cli, "always use pnpm for installs", *lost)
    before = aside.read_bytes()
    rows = {row["name"]: row for row in cli.ok("recover", "--json").json()["files"]}
    held, missing = rows[OLD_ASIDE]["memories"], rows[OLD_ASIDE]["missing"]
    present = held - missing  # the garbled bytes may have hidden the pnpm memory or a lost one
    assert rows[OLD_ASIDE]["kind"] == "store" and present in (0, 1) and missing >= 7
    # a dry run says what it would do and changes nothing
    store_bytes = layout(cli).store.read_bytes()
    dry = cli.ok("recover", "--restore", OLD_ASIDE, "--dry-run").out
    assert dry.startswith(
        f"would restore {missing} memories from {OLD_ASIDE} ({held} held, {present} already"
    )
    assert layout(cli).store.read_bytes() == store_bytes
    # the restore itself, through one transaction: evidence names the file, the file stays as it was
    run = cli.ok("recover", "--restore", OLD_ASIDE, "--json").json()
    assert len(run["restored"]) == missing and run["alreadyPresent"] == present and run["dryRun"] is False
    assert len(cli.memories()) == 1 + missing
    restored = [e for e in events(cli) if e["type"] == "memory_restored"]
    assert len(restored) == missing
    assert {e["details"]["file"] for e in restored} == {OLD_ASIDE}
    assert {e["reasonCodes"][0] for e in restored} == {"restored_from_set_aside_file"}
    assert aside.read_bytes() == before
    # nothing left to bring back
    again = cli.ok("recover", "--restore", OLD_ASIDE).out
    assert again.startswith(f"restored 0 memories from {OLD_ASIDE} ({held} held, {held} already")


def test_restore_keeps_forgotten_memories_forgotten_and_redacts(cli: Cli) -> None:
    forgotten = cli.ok("remember", "always use pnpm for installs").out.split()[0]
    cli.ok("forget", forgotten)
    old_aside(
        cli, "always use pnpm for installs", "staging login uses password: hunter2 always", damaged=False
    )
    run = cli.ok("recover", "--restore", OLD_ASIDE, "--json").json()
    assert len(run["restored"]) == 1
    assert texts(cli) == ["always use pnpm for installs", "staging login uses password: [REDACTED] always"]
    assert [m["status"] for m in cli.memories("--all") if "pnpm" in m["text"]] == [
        "superseded"
    ]  # how forget keeps it
    assert "hunter2" not in layout(cli).store.read_text()


def test_pending_memories_of_a_set_aside_journal_are_promoted(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    pending = [
        builders.memory(text, id=f"mem_p{i}", source=MemorySource.EXPLICIT, owner="gone-session")
        for i, text in enumerate(("run the linter before pushing", "prefer small focused commits"))
    ]
    name = "workspace-pending-journal.json.corrupt-1777600000000"
    (layout(cli).directory / name).write_bytes(encode_pretty(builders.journal(*pending)))
    run = cli.ok("recover", "--restore", name, "--json").json()
    assert sorted(run["restored"]) == ["mem_p0", "mem_p1"]
    assert texts(cli) == [
        "always use pnpm for installs",
        "prefer small focused commits",
        "run the linter before pushing",
    ]
    assert "pendingOwnerSessionID" not in layout(cli).store.read_text()


def test_unknown_or_memoryless_names_are_refused_with_one_line(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    one_line_error(cli("recover", "--restore", "workspace-memory.json.corrupt-1"), 3)
    one_line_error(cli("recover", "--restore", "/etc/passwd"), 3)
    one_line_error(cli("recover", "--dry-run"), 2)
    moved = layout(cli).directory / "archive.jsonl.corrupt-1777600000000"
    moved.mkdir()
    run = cli("recover", "--restore", moved.name)
    one_line_error(run, 3)
    assert "holds no memories" in run.err


def test_a_damaged_store_names_the_recovery_command(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    cli.ok("remember", "prefer tabs in makefiles always")
    store = layout(cli).store
    store.write_bytes(store.read_bytes()[:100])
    run = cli("remember", "never force push the main branch")
    assert run.code == 0 and run.err.count("\n") == 1
    assert "1 from the last good generation (workspace-memory.json.prev)" in run.err
    assert "`workmem recover`" in run.err
    names = sorted(row["name"] for row in cli.ok("recover", "--json").json()["files"])
    assert names == [f"workspace-memory.json.corrupt-{cli.now_ms}", "workspace-memory.json.prev"]


def test_a_duplicate_a_restore_brings_is_recorded_and_explained(cli: Cli) -> None:
    kept = cli.ok("remember", "--json", "always use pnpm for installs").json()["id"]
    old_aside(cli, "always use pnpm for installs", damaged=False)  # the same memory, id mem_old_0
    cli.ok("recover", "--restore", OLD_ASIDE)
    [row] = cli.memories("--all")
    assert row["id"] == kept
    said = cli.ok("explain", "mem_old_0").out
    assert said.startswith(f"Memory mem_old_0: Not in the block: merged into {kept} “always use pnpm")
    assert any(e["type"] == "memory_absorbed" for e in events(cli))
