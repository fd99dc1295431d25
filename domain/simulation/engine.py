"""Running a scenario: the same pure operations the hosts use, on an in-memory workspace with a
virtual clock (docs/simulation.md, "How a run works").

:class:`Workspace` is the in-memory unit of work. It mirrors what the shell does around one
operation (``adapters/commands/_run.py``): build the :class:`~domain.operations.Snapshot` (the
session, the other sessions, the archive), call the operation, keep the new store, journal and
session (or drop the session when it ended) and add archived entries to the archive. Nothing is
written anywhere and nothing here re-implements a rule of the core.

Every day of the scenario, sessions run one after the other: ``open_session``, the user's messages
(``observe_user_message``, some with an explicit "remember this"), tool results
(``observe_tool_result``), a compaction summary with memory candidates (``observe_compaction``,
sometimes a ``(supersedes Mn)`` line), a manual ``remember`` or a ``forget`` now and then, and
``end_session``. At the end of every day the block a session would be shown at that moment is
rendered with :func:`~domain.render.render_workspace_block` (read-only) and measured.

Random choices use named streams of the seeded generator (one per day and session), and no draw
depends on the store, so two runs of the same scenario with different parameters receive the very
same input.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import partial
from typing import Final

import msgspec

from domain import operations as ops
from domain.keys import exact_key, key_hash
from domain.model import (
    DAY_MS,
    EventType,
    EvidenceInput,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    PendingJournal,
    SessionState,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.operations import OpResult, Snapshot
from domain.render import render_workspace_block
from domain.retention import Tuning, dormancy_at, strength
from domain.session import ToolEvent
from domain.simulation import texts
from domain.simulation.rng import Rng, below, chance, poisson, stream, uniform
from domain.simulation.scenario import Scenario
from domain.timeutil import iso_from_ms

#: Where a simulated workspace says it lives (a label only: nothing is read or written there).
SIM_ROOT: Final = "/projects/simulated"
SIM_KEY: Final = "simulated-workspace"
#: Days on which ``--compare`` lists the memories that are in one block and not the other.
CHECKPOINT_DAYS: Final = (30, 90, 180, 365)

_REJECTION_EVENTS: Final = frozenset(
    {EventType.EXTRACTION_CANDIDATE_REJECTED, EventType.EXPLICIT_MEMORY_IGNORED}
)
_EPOCH: Final = dt.date(1970, 1, 1).toordinal()


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


class Tally(msgspec.Struct, frozen=True, kw_only=True):
    """The measures of a stretch of time: the state of the workspace at its end (active, rendered,
    block size, archived) and what happened during it (sessions, block entries and exits,
    candidates offered and rejected)."""

    sessions: int
    active: int
    rendered: int
    rendered_by_type: dict[str, int]
    block_chars: int
    archived: int
    entered: int
    left: int
    candidates: int
    #: candidates and explicit requests turned down (one may have several reasons)
    rejected_total: int
    #: reason code -> rejections with that reason
    rejected: dict[str, int]


class DayStat(Tally, frozen=True, kw_only=True):
    """One day, measured at its end (the block a session opening then would see)."""

    day: int  # 1 for the end of the first day
    date: str


class MemoryTrack(msgspec.Struct, kw_only=True):
    """One memory seen in the store at the end of some day."""

    id: str
    type: str
    source: str
    text: str
    first_day: int
    days_rendered: int = 0
    in_session_block: bool = False
    reinforcements: int = 0


class SimRun(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a run measured. ``strengths`` (memory id -> strength at the end of each day,
    ``None`` while it was not stored) and ``thresholds`` (the weakest rendered strength per day)
    are filled only when traced, for plots."""

    name: str
    seed: int
    start: str
    days: tuple[DayStat, ...]
    memories: tuple[MemoryTrack, ...]
    session_churn: tuple[int, ...]
    reinforcement: dict[str, int]
    checkpoints: dict[str, tuple[str, ...]]
    final_store: WorkspaceStore
    strengths: dict[str, tuple[float | None, ...]] = msgspec.field(default_factory=dict)
    thresholds: tuple[float | None, ...] = ()


# ---------------------------------------------------------------------------------------------
# The in-memory unit of work
# ---------------------------------------------------------------------------------------------


class Workspace:
    """A workspace held in memory: what the file store holds on disk, as values."""

    def __init__(
        self,
        store: WorkspaceStore,
        journal: PendingJournal,
        archive: dict[str, MemoryEntry],
        tuning: Tuning,
    ) -> None:
        self.store = store
        self.journal = journal
        self.sessions: dict[str, SessionState] = {}
        self.archive = archive
        self.tuning = tuning
        self.rejected: dict[str, int] = {}
        self.rejected_total = 0

    def run(self, session_id: str | None, op: Callable[[Snapshot], OpResult]) -> OpResult:
        """One operation: snapshot, pure step, keep what it returned (as ``run_operation`` does)."""
        session = self.sessions.get(session_id) if session_id is not None else None
        others = tuple(s for sid, s in self.sessions.items() if sid != session_id)
        snap = Snapshot(
            store=self.store,
            journal=self.journal,
            session=session,
            others=others,
            archive=self.archive,
            workspace_root_hash=SIM_KEY,
            tuning=self.tuning,
        )
        result = op(snap)
        self.store = result.store
        self.journal = result.journal
        if session_id is not None:
            if result.delete_session:
                self.sessions.pop(session_id, None)
            elif result.session is not None:
                self.sessions[session_id] = result.session
        for entry in result.archived:
            self.archive[key_hash(exact_key(entry))] = entry
        self._count_rejections(result.events)
        return result

    def _count_rejections(self, events: Sequence[EvidenceInput]) -> None:
        for event in events:
            if event.type in _REJECTION_EVENTS:
                self.rejected_total += 1
                for reason in event.reason_codes:
                    self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def block_entries(self, session_id: str) -> list[MemoryEntry]:
        """The memories of the block frozen for ``session_id``, in block order."""
        session = self.sessions.get(session_id)
        if session is None:
            return []
        by_id = {e.id: e for e in self.store.entries}
        return [by_id[i] for i in session.block_ids if i in by_id]


def empty_workspace(now_ms: int) -> tuple[WorkspaceStore, PendingJournal]:
    ref = WorkspaceRef(root=SIM_ROOT, key=SIM_KEY)
    stamp = iso_from_ms(now_ms)
    return WorkspaceStore(workspace=ref, updated_at=stamp), PendingJournal(workspace=ref, updated_at=stamp)


def date_ms(day: dt.date) -> int:
    """Midnight UTC of ``day`` in epoch milliseconds."""
    return (day.toordinal() - _EPOCH) * DAY_MS


# ---------------------------------------------------------------------------------------------
# The working pattern
# ---------------------------------------------------------------------------------------------


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


class _Generator:
    """The catalogue of facts and the text-to-fact index (grows with the run; no randomness here)."""

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
    gen: _Generator,
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
    ws.run(session_id, lambda s: ops.open_session(s, session_id, start_ms))
    opened = ws.sessions.get(session_id)
    shown = opened.block_ids if opened is not None else ()

    explicit, rng = poisson(rng, plan.explicit)
    for index in range(max(plan.messages, explicit)):
        if index < explicit:
            said, rng = gen.fact(rng, scenario)
            text = texts.explicit_request(said)
        else:
            text, rng = texts.chatter(rng)
        at = start_ms + step * (1 + index % 3)
        message_id = f"{session_id}-m{index}"
        ws.run(
            session_id,
            partial(
                ops.observe_user_message, session_id=session_id, message_id=message_id, text=text, now_ms=at
            ),
        )
    for index in range(plan.tool_results):
        event, rng = _tool_event(rng)
        at = start_ms + step * (2 + index % 3)
        ws.run(
            session_id, partial(ops.observe_tool_result, session_id=session_id, tool_event=event, now_ms=at)
        )

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
        ws.run(session_id, lambda s: ops.observe_compaction(s, session_id, summary, at))

    manual, rng = poisson(rng, plan.manual)
    for _ in range(manual):
        said, rng = gen.fact(rng, scenario)
        ws.run(None, partial(ops.remember, text=said.text, type_=said.type, now_ms=at + 1))
    forgets, rng = chance(rng, plan.forget)
    which, rng = uniform(rng)
    if forgets:
        block = ws.block_entries(session_id)
        if block:
            target = block[min(len(block) - 1, int(which * len(block)))].id
            ws.run(None, lambda s: ops.forget(s, target, at + 2))
    ws.run(session_id, lambda s: ops.end_session(s, session_id, start_ms + length_ms))
    return shown, count


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


def _probe(
    ws: Workspace,
    day: int,
    at_ms: int,
    tracks: dict[str, MemoryTrack],
    trace: dict[str, list[float | None]] | None,
) -> tuple[list[str], int, dict[str, int]]:
    """Render the block at ``at_ms`` without changing anything; update the memory tracks."""
    result = render_workspace_block(ws.store, at_ms, ws.tuning)
    active = [e for e in ws.store.entries if e.status is not MemoryStatus.SUPERSEDED]
    for entry in active:
        track = tracks.get(entry.id)
        if track is None:
            tracks[entry.id] = MemoryTrack(
                id=entry.id,
                type=entry.type.value,
                source=entry.source.value,
                text=entry.text,
                first_day=day,
                reinforcements=entry.reinforcement_count or 0,
            )
        else:
            track.reinforcements = entry.reinforcement_count or 0
    by_type: dict[str, int] = {t.value: 0 for t in texts.TYPES}
    ids = []
    for entry in result.rendered:
        tracks[entry.id].days_rendered += 1
        by_type[entry.type.value] += 1
        ids.append(entry.id)
    if trace is not None:
        dormancy = dormancy_at(ws.store, at_ms, ws.tuning)
        for entry in active:
            series = trace.setdefault(entry.id, [None] * (day - 1))
            series.append(strength(entry, at_ms, dormancy, ws.tuning))
        for series in trace.values():
            if len(series) < day:
                series.append(None)
    return ids, len(result.text), by_type


def simulate(
    scenario: Scenario,
    *,
    store: WorkspaceStore | None = None,
    journal: PendingJournal | None = None,
    archive: dict[str, MemoryEntry] | None = None,
    start: dt.date | None = None,
    trace: bool = False,
    on_day: Callable[[int], None] | None = None,
) -> SimRun:
    """Run ``scenario`` from an empty workspace, or from ``store``/``journal``/``archive`` (a
    forecast from a real workspace, starting on ``start``). ``trace`` keeps each memory's strength
    per day; ``on_day`` is called after each simulated day (a progress bar)."""
    first = start or scenario.start
    begin_ms = date_ms(first)
    empty_store, empty_journal = empty_workspace(begin_ms)
    tuning = scenario.parameters.tuning()
    ws = Workspace(store or empty_store, journal or empty_journal, dict(archive or {}), tuning)
    gen = _Generator()
    tracks: dict[str, MemoryTrack] = {}
    strengths: dict[str, list[float | None]] | None = {} if trace else None
    thresholds: list[float | None] = []
    days: list[DayStat] = []
    churn: list[int] = []
    checkpoints: dict[str, tuple[str, ...]] = {}
    previous_block: tuple[str, ...] | None = None
    previous_probe: set[str] = set()
    pattern = scenario.pattern
    for index in range(scenario.days):
        today = first + dt.timedelta(days=index)
        day_ms = begin_ms + index * DAY_MS
        sessions = sessions_on(scenario, today)
        day_minutes = (24 - pattern.first_session_hour) * 60
        spacing = min(pattern.session_minutes + 10, day_minutes // max(1, sessions))
        length = min(pattern.session_minutes, max(1, spacing - 1)) * 60_000
        ws.rejected = {}
        ws.rejected_total = 0
        offered = 0
        for number in range(sessions):
            session_id = f"sim-{index:04d}-{number:02d}"
            begin = day_ms + pattern.first_session_hour * 3_600_000 + number * spacing * 60_000
            shown, count = run_session(
                ws, gen, scenario, session_id, begin, length, stream(scenario.seed, "session", index, number)
            )
            offered += count
            for memory_id in shown:
                if memory_id in tracks:
                    tracks[memory_id].in_session_block = True
            if previous_block is not None:
                churn.append(len(set(shown).symmetric_difference(previous_block)))
            previous_block = shown
        ids, chars, by_type = _probe(ws, index + 1, day_ms + DAY_MS, tracks, strengths)
        if trace:
            rendered_strengths = [
                value for memory_id in ids if strengths and (value := strengths[memory_id][-1]) is not None
            ]
            thresholds.append(min(rendered_strengths) if rendered_strengths else None)
        current = set(ids)
        if index + 1 in CHECKPOINT_DAYS:
            checkpoints[str(index + 1)] = tuple(ids)
        days.append(
            DayStat(
                day=index + 1,
                date=today.isoformat(),
                sessions=sessions,
                active=sum(1 for e in ws.store.entries if e.status is not MemoryStatus.SUPERSEDED),
                rendered=len(ids),
                rendered_by_type=by_type,
                block_chars=chars,
                archived=len(ws.store.archived),
                entered=len(current - previous_probe),
                left=len(previous_probe - current),
                candidates=offered,
                rejected_total=ws.rejected_total,
                rejected=dict(sorted(ws.rejected.items())),
            )
        )
        previous_probe = current
        if on_day is not None:
            on_day(index + 1)
    reinforcement: dict[str, int] = {}
    for entry in ws.store.entries:
        if entry.status is not MemoryStatus.SUPERSEDED:
            key = str(entry.reinforcement_count or 0)
            reinforcement[key] = reinforcement.get(key, 0) + 1
    return SimRun(
        name=scenario.name,
        seed=scenario.seed,
        start=first.isoformat(),
        days=tuple(days),
        memories=tuple(tracks.values()),
        session_churn=tuple(churn),
        reinforcement=dict(sorted(reinforcement.items(), key=lambda kv: int(kv[0]))),
        checkpoints=checkpoints,
        final_store=ws.store,
        strengths={k: tuple(v) for k, v in (strengths or {}).items()},
        thresholds=tuple(thresholds),
    )


SOURCES: Final = tuple(s.value for s in MemorySource)
