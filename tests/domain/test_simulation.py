"""The simulator's pure parts: the seeded generator, scenario decoding, the tuning threaded through
the operations, the generated texts and the engine (determinism, dormancy, the in-memory unit of
work)."""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from returns.pipeline import is_successful

from domain import operations as ops
from domain.commands import Compacted, EndSession, OpenSession
from domain.consolidation import normalize_store
from domain.enums import MemorySource, MemoryType
from domain.limits import DAY_MS, RETENTION_TYPE_MAX, DormancyLimits, LongTermLimits
from domain.model import DormantSpan, MemoryEntry
from domain.render import render_workspace_block
from domain.retention import (
    BASE_HALF_LIFE_DAYS,
    DEFAULT_TUNING,
    REINFORCEMENT_HALFLIFE_FACTOR,
    REINFORCEMENT_MAX_COUNT,
    Tuning,
    dormancy_at,
    mark_activity,
    reinforce,
    strength,
)
from domain.safety import admit
from domain.simulation import texts
from domain.simulation.engine import SimRun, simulate
from domain.simulation.rng import below, chance, next_u64, poisson, stream, uniform, weighted
from domain.simulation.scenario import Scenario, decode_scenario, with_overrides
from domain.simulation.session import sessions_on
from domain.simulation.workspace import Workspace, date_ms, empty_workspace
from domain.timeutil import iso_from_ms
from tests.support import builders

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
NOW = date_ms(dt.date(2026, 3, 2))


def small(**changes: Any) -> Scenario:
    """A quick scenario: three sessions a weekday, overrides as dotted names."""
    data: dict[str, Any] = {
        "name": "small",
        "start": "2026-01-05",
        "days": 12,
        "seed": 3,
        "pattern": {"sessions_per_weekday": 3},
    }
    data = with_overrides(data, [(k.replace("__", "."), v) for k, v in changes.items()])
    return decode_scenario(data).unwrap()


def entry(
    text: str, type_: MemoryType = MemoryType.PROJECT, *, age_days: float = 0, **kw: Any
) -> MemoryEntry:
    """A compaction memory created ``age_days`` before NOW, its retention clock started then."""
    created = NOW - int(age_days * DAY_MS)
    return builders.memory(text, id=f"m-{text[:12]}", type=type_, at=created, retention_clock=created, **kw)


# ---------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------


def test_generator_is_a_pure_function_of_its_state() -> None:
    rng = stream(1, "x")
    first, after = next_u64(rng)
    again, after_again = next_u64(rng)
    assert (first, after) == (again, after_again)
    assert after != rng
    assert stream(1, "x") == stream(1, "x") != stream(2, "x") != stream(1, "y")


def test_generator_values_stay_in_range_and_look_uniform() -> None:
    rng = stream(5, "range")
    counts = [0] * 6
    total = 0.0
    for _ in range(6000):
        value, rng = uniform(rng)
        assert 0.0 <= value < 1.0
        total += value
        index, rng = below(rng, 6)
        counts[index] += 1
    assert abs(total / 6000 - 0.5) < 0.02
    assert all(900 < c < 1100 for c in counts)


def test_poisson_weighted_and_chance_follow_their_parameters() -> None:
    rng = stream(9, "dist")
    draws = []
    for _ in range(4000):
        n, rng = poisson(rng, 3.0)
        draws.append(n)
    assert abs(sum(draws) / len(draws) - 3.0) < 0.15
    assert poisson(rng, 0.0)[0] == 0
    picks = [0, 0, 0]
    for _ in range(3000):
        i, rng = weighted(rng, (1.0, 0.0, 3.0))
        picks[i] += 1
    assert picks[1] == 0 and 2.6 < picks[2] / picks[0] < 3.4
    hits = 0
    for _ in range(2000):
        hit, rng = chance(rng, 0.25)
        hits += hit
    assert 420 < hits < 580


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"pattern": {"weekend_sessions": "two"}},
            "Expected `int`, got `str` - at `$.pattern.weekend_sessions`",
        ),
        ({"pattern": {"weekend_sesions": 1}}, "unknown field `weekend_sesions` - at `$.pattern`"),
        ({"session": {"noise_share": 1.5}}, "Expected `float` <= 1.0 - at `$.session.noise_share`"),
        ({"parameters": {"type_caps": {"projects": 3}}}, "at `key` in `$.parameters.type_caps`"),
        ({"days": 0}, "Expected `int` >= 1 - at `$.days`"),
    ],
)
def test_scenario_errors_name_the_path(changes: dict[str, Any], message: str) -> None:
    data = {"name": "x", "start": "2026-01-05", "days": 3, **changes}
    decoded = decode_scenario(data)
    assert not is_successful(decoded)
    assert message in decoded.failure()
    assert "\n" not in decoded.failure()


def test_overrides_reach_parameters_and_fields_without_touching_the_input() -> None:
    data: dict[str, Any] = {"name": "x", "start": "2026-01-05", "days": 3, "pattern": {"weekend_sessions": 1}}
    changed = with_overrides(
        data, [("half_life_days", 60), ("type_caps.project", 3), ("pattern.weekend_sessions", 2), ("days", 9)]
    )
    assert data["pattern"] == {"weekend_sessions": 1} and "parameters" not in data
    scenario = decode_scenario(changed).unwrap()
    tuning = scenario.parameters.tuning()
    assert tuning.half_life_days == 60
    assert tuning.type_caps[MemoryType.PROJECT] == 3
    assert tuning.type_caps[MemoryType.FEEDBACK] == RETENTION_TYPE_MAX[MemoryType.FEEDBACK]
    assert scenario.pattern.weekend_sessions == 2 and scenario.days == 9


def test_shipped_scenarios_decode() -> None:
    found = sorted(SCENARIOS.glob("*.toml"))
    assert {p.stem for p in found} >= {"steady", "break", "noisy"}
    for path in found:
        with path.open("rb") as handle:
            assert is_successful(decode_scenario(tomllib.load(handle))), path


def test_working_pattern_skips_weekends_holidays_and_breaks() -> None:
    scenario = small(
        pattern__weekend_sessions=1,
        pattern__holidays=[dt.date(2026, 1, 6)],
        pattern__breaks=[{"start": dt.date(2026, 1, 8), "days": 2}],
    )
    sessions = [sessions_on(scenario, dt.date(2026, 1, 5) + dt.timedelta(days=i)) for i in range(7)]
    assert sessions == [3, 0, 3, 0, 0, 1, 1]


# ---------------------------------------------------------------------------------------------
# The tuning, threaded through the operations
# ---------------------------------------------------------------------------------------------


def test_default_tuning_is_todays_constants() -> None:
    assert (
        Tuning(
            half_life_days=BASE_HALF_LIFE_DAYS,
            reinforcement_factor=REINFORCEMENT_HALFLIFE_FACTOR,
            reinforcement_cap=REINFORCEMENT_MAX_COUNT,
            dormant_after_days=DormancyLimits.WORKSPACE_DORMANT_AFTER_DAYS,
            dormant_multiplier=DormancyLimits.DORMANT_DECAY_MULTIPLIER,
            type_caps=dict(RETENTION_TYPE_MAX),
            global_cap=LongTermLimits.MAX_ENTRIES,
            char_budget=LongTermLimits.MAX_RENDERED_CHARS,
            max_stored_active=LongTermLimits.MAX_STORED_ACTIVE,
        )
        == DEFAULT_TUNING
    )


def test_half_life_and_reinforcement_factor_change_strength() -> None:
    old = entry("src/app/main.py holds the app entry point", age_days=45)
    assert math.isclose(strength(old, NOW), 1.25 / 2)
    assert math.isclose(strength(old, NOW, tuning=Tuning(half_life_days=90)), 1.25 * 2**-0.5)
    once = msgspec.structs.replace(old, reinforcement_count=1)
    assert math.isclose(strength(once, NOW, tuning=Tuning(reinforcement_factor=0.5)), 1.25 * 2**-0.5)


def test_reinforcement_cap_is_a_parameter() -> None:
    full = entry("src/app/main.py holds the app entry point", reinforcement_count=2)
    later = NOW + 2 * DAY_MS
    assert reinforce(full, "s", later).reinforcement_count == 3
    assert reinforce(full, "s", later, Tuning(reinforcement_cap=2)) is full


def test_dormancy_threshold_and_multiplier_are_parameters() -> None:
    store, _ = empty_workspace(NOW)
    idle = msgspec.structs.replace(store, last_activity_at=iso_from_ms(NOW))
    later = NOW + 30 * DAY_MS
    assert dormancy_at(idle, later).spans == ((NOW + 14 * DAY_MS, later),)
    assert dormancy_at(idle, later, Tuning(dormant_after_days=20)).spans == ((NOW + 20 * DAY_MS, later),)
    _, span = mark_activity(idle, later, Tuning(dormant_after_days=40))
    assert span is None
    _, span = mark_activity(idle, later)
    assert span == DormantSpan(start=NOW + 14 * DAY_MS, end=later)
    old = entry("src/app/main.py holds the app entry point")
    assert math.isclose(strength(old, later, dormancy_at(idle, later)), 1.25 * 2 ** (-(14 + 16 * 0.25) / 45))
    no_discount = Tuning(dormant_multiplier=1.0)
    assert math.isclose(
        strength(old, later, dormancy_at(idle, later, no_discount), no_discount), 1.25 * 2 ** (-30 / 45)
    )


def _store_of(*entries: MemoryEntry) -> Any:
    store, _ = empty_workspace(NOW)
    return normalize_store(msgspec.structs.replace(store, entries=entries), NOW).store


def test_caps_and_budget_are_parameters_of_render() -> None:
    entries = [entry(f"src/mod{i}/file{i}.py holds module {i} of the app", age_days=i) for i in range(12)]
    store = _store_of(*entries)
    assert len(render_workspace_block(store, NOW).rendered) == RETENTION_TYPE_MAX[MemoryType.PROJECT]
    caps = {**RETENTION_TYPE_MAX, MemoryType.PROJECT: 11}
    assert len(render_workspace_block(store, NOW, Tuning(type_caps=caps)).rendered) == 11
    assert len(render_workspace_block(store, NOW, Tuning(type_caps=caps, global_cap=5)).rendered) == 5
    short = render_workspace_block(store, NOW, Tuning(char_budget=200))
    assert 0 < len(short.rendered) < 8 and len(short.text) <= 200


def test_max_stored_active_is_a_parameter_of_normalisation() -> None:
    entries = [entry(f"src/mod{i}/file{i}.py holds module {i} of the app", age_days=40 + i) for i in range(6)]
    store, _ = empty_workspace(NOW)
    store = msgspec.structs.replace(store, entries=tuple(entries))
    assert normalize_store(store, NOW).archived == ()
    result = normalize_store(store, NOW, tuning=Tuning(max_stored_active=4))
    assert len(result.archived) == 2 and len(result.store.entries) == 4


def test_operations_read_the_tuning_from_the_snapshot() -> None:
    store = _store_of(*[entry(f"src/mod{i}/file{i}.py holds module {i} of the app") for i in range(6)])
    _, journal = empty_workspace(NOW)
    snap = ops.Snapshot(store=store, journal=journal)
    assert len(ops.open_session(snap, "s", NOW).session.block_ids) == 6  # type: ignore[union-attr]
    tuned = msgspec.structs.replace(snap, tuning=Tuning(global_cap=2))
    assert len(ops.open_session(tuned, "s", NOW).session.block_ids) == 2  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# Generated texts
# ---------------------------------------------------------------------------------------------


def test_generated_memories_pass_the_gate_and_noise_does_not() -> None:
    rng = stream(4, "texts")
    catalogue: list[texts.Fact] = []
    core: list[int] = []
    for _ in range(300):
        said, rng = texts.candidate(rng, catalogue, core, (1, 3, 2, 2), 0.4)
        assert is_successful(admit(said.type, said.text, source=MemorySource.COMPACTION)), said
    reasons: set[str] = set()
    for _ in range(300):
        said, rng = texts.noise(rng)
        outcome = admit(said.type, said.text, source=MemorySource.COMPACTION)
        assert not is_successful(outcome), said
        reasons.update(outcome.failure().reasons)
    assert {"progress_snapshot", "raw_error", "too_short", "bad_feedback", "bad_decision"} <= reasons
    for fact in catalogue:
        if fact.type is MemoryType.DECISION:
            replacement = texts.replacement(fact)
            assert is_successful(admit(fact.type, replacement, source=MemorySource.COMPACTION)), replacement


# ---------------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------------


def test_same_scenario_and_seed_give_the_same_run() -> None:
    first = msgspec.json.encode(simulate(small()))
    assert msgspec.json.encode(simulate(small())) == first
    assert msgspec.json.encode(simulate(small(seed=4))) != first


def test_a_shorter_run_is_a_prefix_of_a_longer_one() -> None:
    short = simulate(small(days=6))
    long = simulate(small(days=12))
    assert short.days == long.days[:6]


def test_parameters_do_not_change_the_input_a_run_receives() -> None:
    base = simulate(small())
    other = simulate(small(half_life_days=5, global_cap=3))
    assert [d.candidates for d in base.days] == [d.candidates for d in other.days]
    assert [d.sessions for d in base.days] == [d.sessions for d in other.days]
    assert max(d.rendered for d in other.days) == 3 < max(d.rendered for d in base.days)


def test_the_run_uses_the_real_gate_dedupe_and_promotion() -> None:
    run = simulate(small(session__noise_share=0.5, session__repeat_share=0.6))
    rejected = {reason for day in run.days for reason in day.rejected}
    assert {"progress_snapshot", "too_short"} & rejected
    assert any(m.reinforcements > 0 for m in run.memories)  # repeats reinforce
    assert {m.source for m in run.memories} >= {"compaction", "explicit"}
    assert all(e.pending_owner_session_id is None for e in run.final_store.entries)


def test_in_memory_unit_of_work_keeps_sessions_and_archive_like_the_shell() -> None:
    store, journal = empty_workspace(NOW)
    ws = Workspace(store, journal, {}, Tuning(max_stored_active=3))
    ws.execute(OpenSession(session="s1"), NOW)
    assert set(ws.sessions) == {"s1"}
    ws.execute(OpenSession(session="s2"), NOW + 1)
    summary = "Memory candidates:\n" + "\n".join(
        f"- [project] src/mod{i}/file{i}.py holds module {i} of the app" for i in range(5)
    )
    ws.execute(Compacted(session="s1", summary=summary), NOW + 2)
    assert len(ws.store.entries) == 5  # nothing is old enough to be archived yet
    later = NOW + 40 * DAY_MS
    result = ws.execute(EndSession(session="s1"), later)
    assert result is not None
    assert set(ws.sessions) == {"s2"}
    assert len(result.archived) == 2 and len(ws.archive) == 2
    assert {e.id for e in ws.archive.values()} == {m.memory_id for m in ws.store.archived}


def test_archive_fills_when_the_store_passes_max_stored_active() -> None:
    run = simulate(small(days=45, max_stored_active=15, session__candidates=4))
    uncapped = simulate(small(days=45, session__candidates=4))
    assert uncapped.days[-1].archived == 0
    assert run.days[-1].archived > 0
    # only memories unseen for 30 days may go, so the store stays above the limit for a while
    assert 15 < run.days[-1].active < uncapped.days[-1].active


def test_trace_records_one_strength_per_day_for_each_memory() -> None:
    run = simulate(small(days=5), trace=True)
    assert run.strengths and all(len(series) == 5 for series in run.strengths.values())
    assert len(run.thresholds) == 5
    untraced = simulate(small(days=5))
    assert untraced.strengths == {} and untraced.days == run.days


def _break_runs() -> tuple[SimRun, SimRun, SimRun]:
    path = SCENARIOS / "break.toml"
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    quick = [
        ("days", 100),
        ("pattern.sessions_per_weekday", 2),
        ("pattern.breaks", [{"start": dt.date(2026, 2, 16), "days": 40}]),
    ]

    def run(extra: list[tuple[str, Any]]) -> SimRun:
        return simulate(decode_scenario(with_overrides(data, quick + extra)).unwrap(), trace=True)

    return run([]), run([("dormant_multiplier", 1.0)]), run([("pattern.breaks", [])])


def test_the_break_scenario_shows_the_persistent_dormancy_discount() -> None:
    with_break, no_discount, no_break = _break_runs()
    assert no_break.final_store.dormant_spans == ()
    (span,) = with_break.final_store.dormant_spans
    dormant_days = (span.end - span.start) / DAY_MS
    assert 25 < dormant_days < 40  # 40 idle days (plus the weekend before), minus the 14-day grace
    resumed = (dt.date(2026, 3, 30) - dt.date(2026, 1, 5)).days + 1
    before = {m.id for m in with_break.memories if m.first_day < 42}
    # Thirty days after work resumed, memories from before the break are still stronger than they
    # would be without the discount: the dormant stretch stays on the store.
    day = resumed + 14
    ratios = [
        with_break.strengths[i][day - 1] / no_discount.strengths[i][day - 1]  # type: ignore[operator]
        for i in before
        if with_break.strengths[i][day - 1] and no_discount.strengths.get(i, [None] * day)[day - 1]
    ]
    assert ratios and max(ratios) > 1.2
    expected = 2 ** (0.75 * dormant_days / BASE_HALF_LIFE_DAYS)
    assert any(math.isclose(r, expected, rel_tol=1e-9) for r in ratios)
    shown_before = sum(m.days_rendered for m in with_break.memories if m.id in before)
    shown_no_discount = sum(m.days_rendered for m in no_discount.memories if m.id in before)
    assert shown_before > shown_no_discount


def test_a_candidate_with_two_reasons_is_one_rejection() -> None:
    store, journal = empty_workspace(NOW)
    ws = Workspace(store, journal, {}, DEFAULT_TUNING)
    summary = "Memory candidates:\n- [decision] fix: handle empty billing payloads\n"
    ws.execute(Compacted(session="s", summary=summary), NOW)
    assert ws.rejected_total == 1
    assert ws.rejected == {"bad_decision": 1, "commit_or_ci_snapshot": 1}


def test_noise_never_reaches_the_store() -> None:
    run = simulate(small(session__noise_share=0.9, session__explicit=2.0, session__manual=1.0))
    assert sum(d.rejected_total for d in run.days) > 0
    noise = [re.compile(re.sub(r"\\\{[a-z]\\\}", ".+", re.escape(t))) for t in texts.NOISE]
    assert noise[0].fullmatch("Fixed the flaky billing test in this session")
    for memory in run.final_store.entries:
        assert not any(p.fullmatch(memory.text) for p in noise), memory.text
