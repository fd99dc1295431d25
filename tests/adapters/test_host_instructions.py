"""What the host's own instruction files already say is not injected again (docs/decisions.md#d22):
the pure comparison, the bounded read of the files each host loads, and each host dialect end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.host_instructions import MAX_BYTES, read_bounded, read_instructions
from domain.commands import OpenSession
from domain.enums import EventType, MemoryType
from domain.host_instructions import (
    IN_HOST_INSTRUCTIONS,
    HostContext,
    HostKind,
    InstructionFile,
    covered_among,
    covering_file,
    instruction_index,
    instruction_lines,
)
from domain.pending import empty_journal
from domain.workspace_port import InMemoryWorkspace
from tests.support.builders import KEY, NOW, ROOT, memory, store
from tests.support.cli import Cli

PNPM = "Always use pnpm for package installs"
FRIDAYS = "Never deploy on Fridays"
CLAUDE_MD = """# Project rules

- Always use **pnpm** for package installs.
- Run the linter before committing; never push to main
  without a review.
"""


def files(text: str, name: str = "CLAUDE.md") -> tuple[InstructionFile, ...]:
    return (InstructionFile(name=name, lines=instruction_lines(text)),)


# ---------------------------------------------------------------------------------------------
# The comparison (pure)
# ---------------------------------------------------------------------------------------------


def test_lines_drop_markdown_marks_and_join_paragraphs() -> None:
    lines = instruction_lines(CLAUDE_MD)
    assert "always use pnpm for package installs" in lines
    assert "run the linter before committing never push to main without a review" in lines


@pytest.mark.parametrize(
    ("text", "covered"),
    [
        (PNPM, True),  # the same line, other punctuation and emphasis
        ("always use pnpm", True),  # three words inside one line, the same (no) negation
        ("never push to main", False),  # the line says "never ... without a review": markers differ
        ("use pnpm", False),  # two words: only an equal line covers it
        ("Never use pnpm for package installs", False),  # a negation the file does not have
        (FRIDAYS, False),
    ],
)
def test_a_memory_is_covered_only_when_the_file_says_it(text: str, covered: bool) -> None:
    found = covering_file(memory(text), files(CLAUDE_MD))
    assert (found == "CLAUDE.md") is covered


def test_an_equal_line_covers_even_a_short_memory() -> None:
    assert covering_file(memory("use pnpm"), files("- Use pnpm!")) == "CLAUDE.md"


def test_the_block_leaves_out_a_covered_memory_with_an_event_naming_the_file() -> None:
    ws = InMemoryWorkspace(
        store(
            memory(PNPM, id="a", type=MemoryType.FEEDBACK), memory(FRIDAYS, id="b", type=MemoryType.FEEDBACK)
        ),
        empty_journal(ROOT, KEY, NOW),
    )
    context = HostContext(host=HostKind.CLAUDE_CODE, files=files(CLAUDE_MD))
    result = ws.execute(OpenSession(session="S", host=context), NOW)
    assert result is not None
    assert FRIDAYS in result.output and PNPM not in result.output
    (event,) = [
        e
        for e in result.events
        if e.type is EventType.RENDER_OMITTED and IN_HOST_INSTRUCTIONS in e.reason_codes
    ]
    assert (
        event.details == {"file": "CLAUDE.md"} and event.memory is not None and event.memory.memory_id == "a"
    )
    assert [e.id for e in ws.store.entries] == ["a", "b"]  # still stored, only not shown
    plain = InMemoryWorkspace(ws.store, ws.journal).execute(OpenSession(session="T"), NOW)
    assert plain is not None and PNPM in plain.output


def test_without_a_host_or_its_files_nothing_is_left_out() -> None:
    assert instruction_index(None) is None
    assert instruction_index(HostContext(host=HostKind.CODEX)) is None
    index = instruction_index(HostContext(host=HostKind.CODEX, files=files(CLAUDE_MD, "AGENTS.md")))
    assert list(covered_among((memory(PNPM, id="a"), memory(FRIDAYS, id="b")), index)) == ["a"]


def test_a_large_store_is_compared_only_where_it_shows() -> None:
    """The 40 covered memories of 60 are left out over several renders; the block is full of the
    others."""
    said = "\n".join(f"- Always run the check number {i} before committing" for i in range(40))
    held = store(
        *[
            memory(f"Always run the check number {i} before committing", id=f"c{i}", type=MemoryType.FEEDBACK)
            for i in range(40)
        ],
        *[
            memory(f"Keep module {i} free of network calls", id=f"k{i}", type=MemoryType.FEEDBACK)
            for i in range(20)
        ],
    )
    ws = InMemoryWorkspace(held, empty_journal(ROOT, KEY, NOW))
    context = HostContext(host=HostKind.CLAUDE_CODE, files=files(said))
    result = ws.execute(OpenSession(session="S", host=context), NOW)
    assert result is not None
    assert "check number" not in result.output and result.output.count("Keep module") >= 5


# ---------------------------------------------------------------------------------------------
# The bounded read of the files each host loads
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "userhome"
    place.mkdir()
    monkeypatch.setenv("HOME", str(place))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENCODE_DISABLE_CLAUDE_CODE", raising=False)
    monkeypatch.delenv("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT", raising=False)
    return place


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names(host: HostKind, root: Path) -> list[str]:
    return [f.name for f in read_instructions(host, str(root), os.environ)]


def test_each_host_reads_the_files_it_loads(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "project"
    put(root / "CLAUDE.md", "- a")
    put(root / "AGENTS.md", "- b")
    put(root / ".claude" / "CLAUDE.md", "- c")
    put(home / ".claude" / "CLAUDE.md", "- d")
    put(home / ".codex" / "AGENTS.md", "- e")
    put(home / ".config" / "opencode" / "AGENTS.md", "- f")
    assert names(HostKind.CLAUDE_CODE, root) == ["CLAUDE.md", ".claude/CLAUDE.md", "~/.claude/CLAUDE.md"]
    assert names(HostKind.CODEX, root) == ["AGENTS.md", "~/.codex/AGENTS.md"]
    assert names(HostKind.OPENCODE, root) == ["AGENTS.md", "~/.config/opencode/AGENTS.md"]


def test_the_alternatives_each_host_prefers(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    put(root / "AGENTS.override.md", "- override")
    put(root / "AGENTS.md", "- plain")
    put(root / "CLAUDE.md", "- claude")
    put(home / ".claude" / "CLAUDE.md", "- user claude")
    codex_home = put(tmp_path / "codexhome" / "AGENTS.md", "- codex home").parent
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    codex = read_instructions(HostKind.CODEX, str(root), os.environ)
    assert [(f.name, f.lines) for f in codex] == [
        ("AGENTS.override.md", ("override",)),
        ("~/.codex/AGENTS.md", ("codex home",)),
    ]
    # OpenCode: the project's agents file wins over the Claude one; the user's Claude file stands in
    # for a global agents file
    assert names(HostKind.OPENCODE, root) == ["AGENTS.md", "~/.claude/CLAUDE.md"]
    monkeypatch.setenv("OPENCODE_DISABLE_CLAUDE_CODE", "1")
    assert names(HostKind.OPENCODE, root) == ["AGENTS.md"]
    (root / "AGENTS.md").unlink()
    assert names(HostKind.OPENCODE, root) == ["CLAUDE.md"]


def test_links_outside_the_root_fifos_and_size_are_bounded(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    secret = put(tmp_path / "elsewhere.md", "- outside")
    (root / "CLAUDE.md").symlink_to(secret)
    assert read_bounded(root / "CLAUDE.md", root) is None
    put(root / "AGENTS.md", "- inside")
    (root / "CLAUDE.local.md").symlink_to(root / "AGENTS.md")
    assert read_bounded(root / "CLAUDE.local.md", root) == "- inside"
    os.mkfifo(root / ".fifo.md")
    assert read_bounded(root / ".fifo.md", root) is None  # would block: never opened for reading whole
    big = put(root / "big.md", "x" * (3 * MAX_BYTES))
    assert len(read_bounded(big, root) or "") == MAX_BYTES
    assert read_bounded(root / "missing.md", root) is None
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    assert read_bounded(root / "dangling.md", root) is None
    (root / "dir.md").mkdir()
    assert read_bounded(root / "dir.md", root) is None
    garbage = root / "garbage.md"
    garbage.write_bytes(b"\xff\xfe\x00- Always use pnpm for package installs\n\x00\x80")
    assert "always use pnpm for package installs" in instruction_lines(read_bounded(garbage, root) or "")


# ---------------------------------------------------------------------------------------------
# Per host, end to end
# ---------------------------------------------------------------------------------------------


def _start(cli: Cli, host: str, session: str) -> str:
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": None if host == "codex" else "",
        "cwd": str(cli.workspace),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    run = cli("hook", host, stdin=json.dumps(payload), workspace=False)
    assert run.code == 0 and run.err == "", run
    text: str = json.loads(run.out)["hookSpecificOutput"]["additionalContext"] if run.out else ""
    return text


@pytest.mark.parametrize(("host", "file"), [("claude-code", "CLAUDE.md"), ("codex", "AGENTS.md")])
def test_a_hook_host_is_not_handed_what_its_file_says(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch, host: str, file: str
) -> None:
    monkeypatch.chdir(cli.workspace)
    cli.ok("remember", PNPM, "--type", "feedback")
    cli.ok("remember", FRIDAYS, "--type", "feedback")
    put(cli.workspace / ("AGENTS.md" if file == "CLAUDE.md" else "CLAUDE.md"), CLAUDE_MD)  # not this host's
    assert PNPM in _start(cli, host, "S1")
    put(cli.workspace / file, CLAUDE_MD)
    shown = _start(cli, host, "S2")
    assert FRIDAYS in shown and PNPM not in shown
    log = cli.home.glob("workspaces/*/evidence/events.jsonl")
    records = [json.loads(line) for path in log for line in path.read_text().splitlines()]
    assert any(r["type"] == "render_omitted" and IN_HOST_INSTRUCTIONS in r["reasonCodes"] for r in records)


def test_serve_reads_the_opencode_files(cli: Cli, home: Path) -> None:
    from adapters.api import WorkingMemory

    cli.ok("remember", PNPM, "--type", "feedback")
    put(cli.workspace / "AGENTS.md", CLAUDE_MD)
    m = WorkingMemory(str(cli.workspace))
    assert PNPM in m.open_session("S1").text
    assert PNPM not in m.open_session("S2", host="opencode").text
    assert PNPM in m.open_session("S3", host="no-such-host").text
