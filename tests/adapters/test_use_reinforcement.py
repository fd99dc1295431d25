"""Reinforcement from use, not from being shown (docs/decisions.md#d19): the cues a frozen block
records, the signals (a cited id, a rare term in an edit/write/bash input), the guards (shown this
session only, once per session, gain shrinking with strength, nothing but the retention clock
moves), the ``memory_used`` evidence, and the doors (API tool results on the store's head, replies)."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from domain.commands import OpenSession, ToolResult, handle
from domain.enums import EventType, MemoryType
from domain.limits import DAY_MS
from domain.model import SessionState
from domain.operations import OpResult, Snapshot
from domain.operations.replies import observe_agent_reply
from domain.operations.use import USE_GAIN, UseSignal, use_signals
from domain.retention import initial_strength, strength
from domain.session import ToolEvent
from tests.support.builders import NOW, journal, memory, session, store
from workmem import WorkingMemory

ENTRIES = (
    memory("Deploy to staging with scripts/deploy.sh before production", id="mem_1_deploy"),
    memory("Run the full checks with make check-all before pushing", id="mem_1_checks"),
    memory("The importer lives in src/importer.py and stays synchronous", id="mem_1_importer"),
    memory("Prefer small focused commits with descriptive messages", id="mem_1_commits"),
)
LATER = NOW + 20 * DAY_MS


def _opened(*entries: object, at: int = LATER) -> OpResult:
    held = tuple(e for e in entries if not isinstance(e, str)) or ENTRIES
    snap = Snapshot(store=store(*held), journal=journal(), session=session("s1"))  # type: ignore[arg-type]
    return handle(snap, OpenSession(session="s1"), at)


def _tool(result: OpResult, tool: str, at: int = LATER + 1000, **args: str) -> OpResult:
    return handle(result.next_snapshot(), ToolResult(session="s1", event=ToolEvent(tool=tool, args=args)), at)


def _used(result: OpResult) -> list[tuple[str, str]]:
    return [
        (e.memory.memory_id or "", str(e.details["signal"]))
        for e in result.events
        if e.type is EventType.MEMORY_USED and e.memory is not None
    ]


def _session(result: OpResult) -> SessionState:
    assert result.session is not None
    return result.session


def test_a_frozen_block_records_the_rare_terms_of_each_memory_shown() -> None:
    cues = {c.memory_id: c.terms for c in _session(_opened()).use_cues}
    assert set(cues) == {e.id for e in ENTRIES}
    assert cues["mem_1_deploy"][0] == "scripts/deploy.sh" and "check-all" in cues["mem_1_checks"]


def test_signals_by_strength() -> None:
    state = _session(_opened())
    assert use_signals(state, "as mem_1_commits says", writing=False)[0].signal is UseSignal.CITED_ID
    (rare,) = use_signals(state, "make check-all && git push", writing=True)
    assert rare.memory_id == "mem_1_checks" and rare.seen == ("check-all",)
    assert use_signals(state, "make check-all", writing=False) == ()  # a reply's words are no use
    two_words = use_signals(state, "staging production rollout", writing=True)
    assert [u.memory_id for u in two_words] == ["mem_1_deploy"]
    assert use_signals(state, "git commit -m 'small fix'", writing=True) == ()  # common words only
    assert use_signals(state, "see M2", writing=False, aliases={"M2": "mem_1_importer"})[0].seen == (
        "mem_1_importer",
    )


def test_a_use_reinforces_once_per_session_and_only_the_clock_moves() -> None:
    opened = _opened()
    first = _tool(opened, "bash", command="bash scripts/deploy.sh --staging")
    assert _used(first) == [("mem_1_deploy", "rare_term")]
    before = next(e for e in opened.store.entries if e.id == "mem_1_deploy")
    after = next(e for e in first.store.entries if e.id == "mem_1_deploy")
    assert replace(after, retention_clock=before.retention_clock) == before  # nothing else moved
    share = strength(before, LATER + 1000) / initial_strength(before)
    now_share = strength(after, LATER + 1000) / initial_strength(after)
    assert abs(now_share - (share + USE_GAIN * (1 - share))) < 1e-6
    again = _tool(first, "write", at=LATER + 2000, filePath="notes.md", content="ran scripts/deploy.sh")
    assert _used(again) == [] and again.store.entries == first.store.entries
    assert _session(again).used_memory_ids == ("mem_1_deploy",)


def test_the_gain_shrinks_as_strength_rises() -> None:
    young = memory("Deploy with scripts/deploy.sh", id="mem_1_young", retention_clock=LATER - 2 * DAY_MS)
    old = memory("Check with scripts/check.sh", id="mem_1_old", retention_clock=LATER - 150 * DAY_MS)
    used = _tool(_opened(young, old), "bash", command="scripts/deploy.sh && scripts/check.sh")
    gains = {
        str(e.memory.memory_id if e.memory else ""): float(str(e.details["shareAfter"]))
        - float(str(e.details["shareBefore"]))
        for e in used.events
        if e.type is EventType.MEMORY_USED
    }
    assert 0 < gains["mem_1_young"] < gains["mem_1_old"]


def test_shown_memories_only_and_reads_are_no_use() -> None:
    opened = _opened()
    late = memory("Lint with ruff --select ALL", id="mem_1_late", type=MemoryType.FEEDBACK)
    added = replace(opened, store=replace(opened.store, entries=(*opened.store.entries, late)))
    used = _tool(added, "bash", command="ruff --select ALL . && make check-all")
    assert _used(used) == [("mem_1_checks", "rare_term")]  # the memory not shown counts nothing
    assert _used(_tool(opened, "read", filePath="/w/src/importer.py")) == []
    assert _used(_tool(opened, "grep", pattern="scripts/deploy.sh")) == []


def test_a_reply_citing_an_id_is_use() -> None:
    opened = _opened()
    replied = observe_agent_reply(opened.next_snapshot(), "s1", "Per mem_1_commits I split it.", LATER + 5)
    assert _used(replied) == [("mem_1_commits", "cited_id")]
    assert observe_agent_reply(opened.next_snapshot(), "s1", "Done.", LATER + 5).store is opened.store
    child = observe_agent_reply(opened.next_snapshot(), "s1", "mem_1_commits", LATER, parent_session_id="p")
    assert _used(child) == []


def test_through_the_api_a_tool_result_read_on_the_head_still_reinforces(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    clock = [NOW]
    wm = WorkingMemory(tmp_path / "p", home=tmp_path / "h", clock=lambda: clock[0])
    kept = wm.remember("Run the full checks with make check-all before pushing", type="project")
    clock[0] += 30 * DAY_MS
    wm.open_session("s1")
    before = {m.id: m.strength for m in wm.list()}
    wm.tool_result("s1", "bash", args={"command": "make check-all"})
    wm.tool_result("s1", "bash", args={"command": "make check-all"})
    assert kept.id is not None and next(m.strength for m in wm.list()) > before[kept.id]
    assert wm.agent_reply("s1", f"used {kept.id}").decisions == ()
    used = [line for line in wm.workspace().paths.evidence.read_text().splitlines() if "memory_used" in line]
    assert len(used) == 1 and '"where":"tool:bash"' in used[0]


def test_claude_code_file_tools_hand_the_text_they_write_never_the_replaced_text() -> None:
    from adapters.hosts.claude_code import tool_event

    def event(name: str, **tool_input: object) -> ToolEvent | None:
        return tool_event({"hook_event_name": "PostToolUse", "tool_name": name, "tool_input": tool_input})

    edit = event("Edit", file_path="/w/a.py", old_string="old()", new_string="new()")
    assert edit is not None and edit.args == {"filePath": "/w/a.py", "content": "new()"}
    multi = event(
        "MultiEdit",
        file_path="/w/a.py",
        edits=[{"old_string": "x", "new_string": "y1"}, {"new_string": "y2"}],
    )
    assert multi is not None and multi.args["content"] == "y1\ny2"
    notebook = event("NotebookEdit", notebook_path="/w/n.ipynb", new_source="make check-all")
    assert notebook is not None and notebook.args["content"] == "make check-all"
    read = event("Read", file_path="/w/a.py")
    assert read is not None and read.args == {"filePath": "/w/a.py"}
