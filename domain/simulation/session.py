"""One simulated day's sessions (docs/simulation.md, "How a run works").

A session opens (``OpenSession``), receives the user's messages (``UserMessage``, some with an
explicit "remember this") and tool results (``ToolResult``), compacts once with its candidates
(``Compacted``, sometimes with a ``(supersedes Mn)`` line), may get a manual ``Remember`` or a
``Forget``, and ends (``EndSession``): the commands every door builds (:mod:`domain.commands`).
Every random choice comes from the session's own stream of the seeded generator, and no draw depends
on the store.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from domain.commands import Compacted, EndSession, Forget, OpenSession, Remember, ToolResult, UserMessage
from domain.enums import MemoryType
from domain.model import MemoryEntry
from domain.session import ToolEvent
from domain.simulation import texts
from domain.simulation.rng import Rng, below, chance, poisson, uniform
from domain.simulation.scenario import Scenario
from domain.simulation.workspace import SIM_ROOT, Workspace


def sessions_on(scenario: Scenario, day: dt.date) -> int:
    """How many sessions run on ``day``: none on holidays and during breaks."""
    pattern = scenario.pattern
    if day in pattern.holidays:
        return 0
    for gap in pattern.breaks:
        if gap.start <= day < gap.start + dt.timedelta(days=gap.days):
            return 0
    return pattern.weekend_sessions if day.weekday() >= 5 else pattern.sessions_per_weekday


# ---------------------------------------------------------------------------------------------
# One session
# ---------------------------------------------------------------------------------------------


class FactSource:
    """The catalogue of facts and the text-to-fact index of one run (it grows as the run goes; the
    randomness is in the generator state passed in)."""

    def __init__(self) -> None:
        self.catalogue: list[texts.Fact] = []
        self.core: list[int] = []
        self.fact_of: dict[str, int] = {}

    def candidate(self, rng: Rng, scenario: Scenario) -> tuple[texts.Said, Rng]:
        """A compaction candidate: noise with the scenario's noise share, else a fact."""
        is_noise, rng = chance(rng, scenario.session.noise_share)
        if is_noise:
            return texts.noise(rng)
        return self.fact(rng, scenario)

    def fact(self, rng: Rng, scenario: Scenario) -> tuple[texts.Said, Rng]:
        """A new or repeated fact (what a user asks to remember is never noise)."""
        plan = scenario.session
        said, rng = texts.candidate(rng, self.catalogue, self.core, plan.types.weights(), plan.repeat_share)
        self.fact_of.setdefault(said.text, said.fact)
        return said, rng

    def replacement_for(self, entry: MemoryEntry) -> str:
        index = self.fact_of.get(entry.text)
        if index is None or self.catalogue[index].type is not MemoryType.DECISION:
            return f"Use the documented defaults for {entry.type.value} settings from now on"
        return texts.replacement(self.catalogue[index])


def _summary(lines: Sequence[str], topic: str) -> str:
    body = "\n".join(f"- {line}" for line in lines)
    return f"## Summary\n{topic}\n\nMemory candidates:\n{body}\n\nNext steps:\n- carry on tomorrow\n"


def _tool_event(rng: Rng) -> tuple[ToolEvent, Rng]:
    module, rng = below(rng, len(texts.MODULES))
    file, rng = below(rng, len(texts.FILES))
    name = texts.MODULES[module]
    path = f"{SIM_ROOT}/src/{name}/{texts.FILES[file]}.py"
    failed, rng = chance(rng, 0.2)
    kind, rng = below(rng, 3)
    if kind == 0:
        return ToolEvent(tool="read", args={"filePath": path}), rng
    if kind == 1:
        return ToolEvent(tool="edit", args={"filePath": path}), rng
    output = (
        f"FAILED tests/{name}/test_{texts.FILES[file]}.py::test_{name} - AssertionError" if failed else ""
    )
    command = f"pytest tests/{name}"
    return ToolEvent(tool="bash", args={"command": command}, output=output, exit_code=int(failed)), rng


def run_session(
    ws: Workspace,
    gen: FactSource,
    scenario: Scenario,
    session_id: str,
    start_ms: int,
    length_ms: int,
    rng: Rng,
) -> tuple[tuple[str, ...], int]:
    """One session from open to end. Returns the block ids it was shown at the start and the
    number of compaction candidates offered."""
    plan = scenario.session
    step = max(1, length_ms // 8)
    from domain.simulation import freshness

    freshness.before_open(ws, scenario, start_ms)
    ws.execute(OpenSession(session=session_id), start_ms)
    opened = ws.sessions.get(session_id)
    shown = opened.block_ids if opened is not None else ()
    freshness.after_open(ws, scenario, session_id, shown, start_ms)

    explicit, rng = poisson(rng, plan.explicit)
    for index in range(max(plan.messages, explicit)):
        if index < explicit:
            said, rng = gen.fact(rng, scenario)
            text = texts.explicit_request(said)
        else:
            text, rng = texts.chatter(rng)
        at = start_ms + step * (1 + index % 3)
        message_id = f"{session_id}-m{index}"
        ws.execute(UserMessage(session=session_id, message_id=message_id, text=text), at)
    for index in range(plan.tool_results):
        event, rng = _tool_event(rng)
        at = start_ms + step * (2 + index % 3)
        ws.execute(ToolResult(session=session_id, event=event), at)

    count, rng = poisson(rng, plan.candidates)
    lines: list[str] = []
    for _ in range(count):
        said, rng = gen.candidate(rng, scenario)
        lines.append(f"[{said.type.value}] {said.text}")
    supersedes, rng = chance(rng, plan.supersede)
    where, rng = uniform(rng)
    if supersedes:
        block = ws.block_entries(session_id)
        decisions = [(n, e) for n, e in enumerate(block, start=1) if e.type is MemoryType.DECISION]
        if decisions:
            label, old = decisions[min(len(decisions) - 1, int(where * len(decisions)))]
            lines.append(f"[decision] {gen.replacement_for(old)} (supersedes M{label})")
    at = start_ms + step * 6
    if lines:
        summary = _summary(lines, "Worked through the planned changes.")
        ws.execute(Compacted(session=session_id, summary=summary), at)

    manual, rng = poisson(rng, plan.manual)
    for _ in range(manual):
        said, rng = gen.fact(rng, scenario)
        ws.execute(Remember(text=said.text, type=said.type), at + 1)
    forgets, rng = chance(rng, plan.forget)
    which, rng = uniform(rng)
    if forgets:
        block = ws.block_entries(session_id)
        if block:
            target = block[min(len(block) - 1, int(which * len(block)))].id
            ws.execute(Forget(memory_id=target), at + 2)
    ws.execute(EndSession(session=session_id), start_ms + length_ms)
    return shown, count
