"""Running a scenario: the same pure operations the hosts use, on an in-memory workspace with a
virtual clock (docs/simulation.md, "How a run works").

Every day of the scenario, its sessions run one after the other (``domain.simulation.session``) on
the in-memory unit of work (``domain.simulation.workspace``). At the end of every day the block a
session would be shown at that moment is rendered with :func:`~domain.render.render_workspace_block`
(read-only) and measured. Nothing is written anywhere and nothing here re-implements a rule of the
core.

Random choices use named streams of the seeded generator (one per session), and no draw depends on
the store, so two runs of the same scenario with different parameters receive the very same input.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Final, NamedTuple

import msgspec

from domain.enums import Grade, MemoryStatus
from domain.freshness import grade, is_expired
from domain.limits import DAY_MS
from domain.model import MemoryEntry, PendingJournal, WorkspaceStore
from domain.render import render_workspace_block
from domain.retention import dormancy_at, strength
from domain.simulation import freshness as sim_freshness, texts
from domain.simulation.rng import stream
from domain.simulation.scenario import Scenario
from domain.simulation.session import FactSource, run_session, sessions_on
from domain.simulation.workspace import Workspace, date_ms, empty_workspace

#: Days on which ``--compare`` lists the memories that are in one block and not the other.
CHECKPOINT_DAYS: Final = (30, 90, 180, 365)


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
    """One day, measured at its end (the block a session opening then would see): also its rendered
    memories that are stale, its active memories that are expired, and the mean strength of its
    rendered memories (docs/decisions.md#d18)."""

    day: int  # 1 for the end of the first day
    date: str
    stale_rendered: int = 0
    expired: int = 0
    rendered_strength: float = 0.0


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
    #: memories reinforced because a session used them (docs/simulation.md, "Freshness")
    use_reinforcements: int = 0
    strengths: dict[str, tuple[float | None, ...]] = msgspec.field(default_factory=dict)
    thresholds: tuple[float | None, ...] = ()


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


class _Fresh(NamedTuple):
    stale_rendered: int
    expired: int
    rendered_strength: float


def _freshness(
    ws: Workspace, rendered: tuple[MemoryEntry, ...], active: list[MemoryEntry], at_ms: int
) -> _Fresh:
    dormancy = dormancy_at(ws.store, at_ms, ws.tuning)
    powers = [strength(e, at_ms, dormancy, ws.tuning) for e in rendered]
    return _Fresh(
        sum(1 for e in rendered if grade(e, at_ms) is Grade.STALE),
        sum(1 for e in active if e.valid_until is not None and is_expired(e, at_ms)),
        round(sum(powers) / len(powers), 3) if powers else 0.0,
    )


def _probe(
    ws: Workspace,
    day: int,
    at_ms: int,
    tracks: dict[str, MemoryTrack],
    trace: dict[str, list[float | None]] | None,
) -> tuple[list[str], int, dict[str, int], _Fresh]:
    """Render the block at ``at_ms`` without changing anything; update the memory tracks."""
    result = render_workspace_block(ws.store, at_ms, ws.tuning, ws.caches)
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
    return ids, len(result.text), by_type, _freshness(ws, result.rendered, active, at_ms)


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
    gen = FactSource()
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
        if index % 7 == 0:
            sim_freshness.churn(ws, scenario.freshness, scenario.seed, index // 7)
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
        ids, chars, by_type, fresh = _probe(ws, index + 1, day_ms + DAY_MS, tracks, strengths)
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
                stale_rendered=fresh.stale_rendered,
                expired=fresh.expired,
                rendered_strength=fresh.rendered_strength,
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
        use_reinforcements=ws.use_reinforcements,
        strengths={k: tuple(v) for k, v in (strengths or {}).items()},
        thresholds=tuple(thresholds),
    )
