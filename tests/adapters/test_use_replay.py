"""The labelled replay set of reinforcement from use (docs/decisions.md#d19,
``tests/support/use_replay.py``): 60 sessions of Claude Code, Codex and OpenCode, replayed through
the same door as the hosts (the hook dialect's commands, the plugin's ``serve`` requests) into the
core. Precision of the bumps at least 0.8, no bump of a memory that was only shown, at most one bump
per memory per session."""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from adapters.hosts import claude_code, codex
from adapters.hosts.hook_dialect import command_of
from domain.commands import Command, ContextMode, OpenSession, ToolResult, handle
from domain.enums import EventType
from domain.extraction import classify_explicit_memory
from domain.limits import DAY_MS
from domain.operations import OpResult, Snapshot
from domain.operations.replies import AgentReply
from domain.session import ToolEvent
from tests.support.builders import NOW, journal, memory, store
from tests.support.use_replay import SESSIONS, ReplaySession, Step, memory_id, replay_sessions

DIALECTS = {"claude-code": claude_code.DIALECT, "codex": codex.DIALECT}


def _command(session: ReplaySession, step: Step) -> Command | None:
    payload = step.payload
    if session.dialect != "opencode":
        event = "Stop" if step.kind == "reply" else str(payload["hook_event_name"])
        return command_of(payload, event, DIALECTS[session.dialect])
    if step.kind == "reply":
        return AgentReply(session=payload["session"], text=payload["text"])
    tool = ToolEvent(
        tool=payload["tool"],
        args=payload["args"],
        output=payload.get("output", ""),
        exit_code=payload.get("exitCode"),
    )
    return ToolResult(session=payload["session"], event=tool)


def replay(session: ReplaySession) -> tuple[Counter[str], frozenset[str]]:
    """The bumps per memory key, and the keys the session's block showed."""
    at = NOW + 20 * DAY_MS
    entries = tuple(
        memory(m.text, id=memory_id(m.key), type=classify_explicit_memory(m.text), retention_clock=NOW)
        for m in session.memories
    )
    sid = str(session.steps[0].payload.get("session_id") or session.steps[0].payload.get("session"))
    mode = ContextMode.REBUILT if session.dialect == "opencode" else ContextMode.APPENDED
    result: OpResult = handle(
        Snapshot(store=store(*entries), journal=journal()), OpenSession(session=sid, context=mode), at
    )
    assert result.session is not None
    shown = frozenset(i.removeprefix(memory_id("")) for i in result.session.block_ids)
    bumps: Counter[str] = Counter()
    for step in session.steps:
        at += 30_000
        command = _command(session, step)
        if command is None:
            continue
        result = handle(result.next_snapshot(), command, at)
        for event in result.events:
            if event.type is EventType.MEMORY_USED and event.memory is not None:
                bumps[(event.memory.memory_id or "").removeprefix(memory_id(""))] += 1
    return bumps, shown


class Report(NamedTuple):
    sessions: int
    used: int
    bumps: int
    true_bumps: int
    shown_only_bumps: int
    most_per_memory: int
    not_shown_bumps: int

    @property
    def precision(self) -> float:
        return self.true_bumps / self.bumps if self.bumps else 1.0

    @property
    def recall(self) -> float:
        return self.true_bumps / self.used if self.used else 1.0


def report() -> Report:
    used = bumps_total = true = shown_only = most = not_shown = sessions = 0
    for session in replay_sessions():
        sessions += 1
        bumps, shown = replay(session)
        used += sum(1 for key, label in session.labels.items() if label and key in shown)
        bumps_total += sum(bumps.values())
        true += sum(n for key, n in bumps.items() if session.labels[key])
        shown_only += sum(
            n for key, n in bumps.items() if not session.labels[key] and key not in session.coincidences
        )
        not_shown += sum(n for key, n in bumps.items() if key not in shown)
        most = max([most, *bumps.values()])
    return Report(sessions, used, bumps_total, true, shown_only, most, not_shown)


def test_the_replay_set_precision_and_guards() -> None:
    found = report()
    assert found.sessions == SESSIONS >= 50
    assert found.used >= 40 and found.bumps >= 30  # the set exercises the detector
    assert found.precision >= 0.8, found
    assert found.shown_only_bumps == 0 and found.not_shown_bumps == 0, found
    assert found.most_per_memory <= 1, found


if __name__ == "__main__":
    r = report()
    print(
        f"sessions {r.sessions}, memories used (shown) {r.used}, bumps {r.bumps}, true {r.true_bumps}, "
        f"precision {r.precision:.3f}, recall {r.recall:.3f}, shown-only bumps {r.shown_only_bumps}, "
        f"not-shown bumps {r.not_shown_bumps}, most bumps per memory per session {r.most_per_memory}"
    )
