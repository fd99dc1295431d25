"""Retention: the strength tables, half-lives, decay points, dormancy and reinforcement guards
(docs/decisions.md#retention-strength-and-decay, docs/decisions.md#d3, docs/decisions.md#d8)."""

from __future__ import annotations

import itertools
import math

import pytest
from msgspec.structs import replace

from domain.enums import Importance
from domain.limits import DAY_MS
from domain.model import DormantSpan, MemoryEntry, WorkspaceStore
from domain.ranking import sort_by_retention
from domain.render import render_workspace_block
from domain.retention import (
    Tuning,
    dormancy_at,
    effective_age_days,
    half_life_days,
    initial_strength,
    mark_activity,
    merge_spans,
    reinforce,
    retention_start_ms,
    strength,
)
from domain.timeutil import iso_from_ms, parse_iso_ms
from tests.support.builders import memory, store

NOW = parse_iso_ms("2026-06-01T00:00:00.000Z") or 0


def entry(
    type_: str = "decision",
    source: str = "compaction",
    *,
    age_days: float = 0.0,
    importance: str | None = None,
    count: int | None = None,
    id_: str = "m1",
    created_at: str | None = None,
) -> MemoryEntry:
    """A memory of confidence 0.75 created ``age_days`` before NOW (or at ``created_at``), its
    retention clock started then."""
    at = NOW - age_days * DAY_MS
    stamps = {"created_at": created_at, "updated_at": created_at} if created_at is not None else {}
    return memory(
        id=id_,
        type=type_,
        source=source,
        confidence=0.75,
        at=at,
        retention_clock=at,
        user_importance=Importance(importance) if importance else None,
        reinforcement_count=count,
        **stamps,
    )


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


#: The reference's numbers: ``high`` importance weighs 1.5 and decays like any other memory
#: (workmem weighs it 2.0 and halves its decay, docs/decisions.md#d20, docs/compatibility.md).
REFERENCE = Tuning(high_importance_factor=1.5, high_importance_half_life=1.0)

INITIAL_TABLE = {
    ("decision", "explicit"): (3.5, 5.0, 7.5),
    ("decision", "manual"): (2.45, 3.5, 5.25),
    ("decision", "compaction"): (1.75, 2.5, 3.75),
    ("feedback", "explicit"): (3.15, 4.5, 6.75),
    ("feedback", "manual"): (2.205, 3.15, 4.725),
    ("feedback", "compaction"): (1.575, 2.25, 3.375),
    ("project", "explicit"): (1.75, 2.5, 3.75),
    ("project", "manual"): (1.225, 1.75, 2.625),
    ("project", "compaction"): (0.875, 1.25, 1.875),
    ("reference", "explicit"): (1.4, 2.0, 3.0),
    ("reference", "manual"): (0.98, 1.4, 2.1),
    ("reference", "compaction"): (0.7, 1.0, 1.5),
}


@pytest.mark.parametrize(("key", "values"), sorted(INITIAL_TABLE.items()))
def test_initial_strength_table(key: tuple[str, str], values: tuple[float, float, float]) -> None:
    type_, source = key
    for importance, expected in zip(("low", "normal", "high"), values, strict=True):
        assert close(initial_strength(entry(type_, source, importance=importance), REFERENCE), expected)
    assert close(initial_strength(entry(type_, source)), values[1])  # absent importance is normal


@pytest.mark.parametrize(("key", "values"), sorted(INITIAL_TABLE.items()))
def test_high_importance_weighs_twice_normal_and_decays_at_half_the_speed(
    key: tuple[str, str], values: tuple[float, float, float]
) -> None:
    type_, source = key
    assert close(initial_strength(entry(type_, source, importance="high")), 2 * values[1])
    assert close(initial_strength(entry(type_, source, importance="low")), values[0])  # unchanged
    for count, days in HALF_LIVES:
        assert close(half_life_days(entry(count=count, importance="high")), 2 * days)
        assert close(half_life_days(entry(count=count, importance="low")), days)
        assert close(half_life_days(entry(count=count, importance="high"), REFERENCE), days)


def test_a_high_importance_decision_stays_above_eleven_newer_normal_ones() -> None:
    """Issue 24: a ``--importance high`` decision made a month ago is shown beside eleven normal
    decisions asked for in chat yesterday (explicit, the strongest source); with the reference's
    numbers the ten-decision cap drops it."""
    high = entry("decision", "manual", age_days=30, importance="high", id_="high")
    newer = [entry("decision", "explicit", age_days=1 + i / 24, id_=f"n{i:02}") for i in range(11)]
    memories = store(high, *newer)
    block = render_workspace_block(memories, NOW)
    assert high in block.rendered
    assert sort_by_retention([high, *newer], NOW)[0] is high
    assert high not in render_workspace_block(memories, NOW, REFERENCE).rendered  # the reference


HALF_LIVES = [
    (0, 45.0),
    (1, 52.94117647058824),
    (2, 62.28373702422146),
    (3, 73.2749847343782),
    (4, 86.20586439338611),
    (5, 101.41866399221895),
    (6, 119.31607528496347),
    (9, 119.31607528496347),
]


@pytest.mark.parametrize(("count", "days"), HALF_LIVES)
def test_half_life_table(count: int, days: float) -> None:
    assert close(half_life_days(entry(count=count)), days)


DECAY = [
    (0, 2.5),
    (1, 2.461786882336078),
    (14, 2.015051880808344),
    (30, 1.5749013123685915),
    (45, 1.25),
    (90, 0.625),
    (135, 0.3125),
    (180, 0.15625),
    (365, 0.009041745237180572),
]


@pytest.mark.parametrize(("age", "expected"), DECAY)
def test_decay_points_decision_compaction(age: int, expected: float) -> None:
    assert close(strength(entry(age_days=age), NOW), expected)


@pytest.mark.parametrize(("age", "expected"), [(0, 1.0), (45, 0.7699573745414982), (90, 0.5928343586108369)])
def test_decay_points_reinforced_reference(age: int, expected: float) -> None:
    assert close(strength(entry("reference", age_days=age, count=6), NOW), expected)


def test_crossover_decision_beats_fresh_reference_until_59_5_days() -> None:
    fresh_reference = strength(entry("reference"), NOW)
    assert strength(entry(age_days=59.48), NOW) > fresh_reference
    assert strength(entry(age_days=59.49), NOW) < fresh_reference


def test_invalid_timestamps_never_give_nan() -> None:
    bad = replace(entry(), retention_clock=None, created_at="garbage", updated_at="also garbage")
    assert strength(bad, NOW) == initial_strength(bad)
    assert retention_start_ms(bad, NOW) == NOW
    future = replace(entry(), retention_clock=NOW + 10 * DAY_MS)
    assert strength(future, NOW) == initial_strength(future)
    ancient = replace(entry(), retention_clock=-1)
    value = strength(ancient, NOW)
    assert math.isfinite(value) and 0.0 <= value < 1e-100
    negative = replace(entry(), reinforcement_count=-1)
    assert close(half_life_days(negative), 38.25)


def test_fallback_prefers_updated_at() -> None:
    e = replace(
        entry(),
        retention_clock=None,
        created_at=iso_from_ms(NOW - 90 * DAY_MS),
        updated_at=iso_from_ms(NOW - 45 * DAY_MS),
    )
    assert close(strength(e, NOW), 1.25)


def _store(last_activity_days_ago: float | None, spans: tuple[DormantSpan, ...] = ()) -> WorkspaceStore:
    last = None if last_activity_days_ago is None else iso_from_ms(NOW - last_activity_days_ago * DAY_MS)
    return store(root="/repo", key="k", at=NOW, last_activity_at=last, dormant_spans=spans)


@pytest.mark.parametrize(
    ("entry_age", "idle", "expected"),
    [(60, 30, 48.0), (10, 30, 2.5), (20, 30, 8.0), (60, 10, 60.0), (100, 19, 96.25)],
)
def test_dormancy_examples(entry_age: float, idle: float, expected: float) -> None:
    d = dormancy_at(_store(idle), NOW)
    assert math.isclose(effective_age_days(NOW - entry_age * DAY_MS, NOW, d), expected, rel_tol=1e-12)


def test_missing_or_bad_last_activity_means_no_discount() -> None:
    assert dormancy_at(_store(None), NOW).spans == ()
    bad = replace(_store(None), last_activity_at="not a date")
    assert dormancy_at(bad, NOW).spans == ()


def test_dormancy_persists_after_activity_resumes_b1() -> None:
    """docs/decisions.md#s1: in the reference the discount vanished as soon as activity was stamped.
    Here the span is recorded first, so the returning session still sees the discounted age."""
    store = _store(30)
    before = effective_age_days(NOW - 60 * DAY_MS, NOW, dormancy_at(store, NOW))
    stamped, span = mark_activity(store, NOW)
    assert span == DormantSpan(start=NOW - 16 * DAY_MS, end=NOW)
    assert stamped.last_activity_at == iso_from_ms(NOW)
    after = effective_age_days(NOW - 60 * DAY_MS, NOW, dormancy_at(stamped, NOW))
    assert after == before == 48.0
    # and a week later the old break is still discounted
    later = NOW + 7 * DAY_MS
    assert effective_age_days(NOW - 60 * DAY_MS, later, dormancy_at(stamped, later)) == 55.0


def test_short_break_records_nothing() -> None:
    stamped, span = mark_activity(_store(10), NOW)
    assert span is None and stamped.dormant_spans == ()


def test_merge_spans_sorts_merges_and_caps() -> None:
    spans = [DormantSpan(start=i * 10, end=i * 10 + 5) for i in range(70)]
    merged = merge_spans([*spans, DormantSpan(start=3, end=12)])
    assert len(merged) == 64
    assert merged[0].start == 0
    assert all(a.end < b.start for a, b in itertools.pairwise(merged))


# ---- reinforcement guards (v1.5.2 order, docs/decisions.md#d8) -------------------------------

T0 = parse_iso_ms("2026-05-01T23:30:00.000Z") or 0
MIN = 60_000


def test_reinforcement_scenarios() -> None:
    first = reinforce(entry(), "s1", T0)
    assert first.reinforcement_count == 1
    assert first.last_reinforced_session_id == "s1"
    assert first.retention_clock == T0 and first.last_reinforced_at == T0
    assert reinforce(first, "s1", T0 + 7 * DAY_MS) is first  # same session
    assert reinforce(first, "s2", T0 + 20 * MIN) is first  # same UTC day
    assert reinforce(first, "s2", T0 + 40 * MIN) is first  # next day but under one hour
    second = reinforce(first, "s2", T0 + 61 * MIN)
    assert second.reinforcement_count == 2


def test_reinforcement_caps_at_six() -> None:
    current = entry()
    for day in range(10):
        current = reinforce(current, f"s{day}", T0 + day * DAY_MS + 2 * 3_600_000)
    assert current.reinforcement_count == 6


def test_falsy_last_reinforced_at_never_blocks() -> None:
    e = replace(entry(), last_reinforced_at=0, reinforcement_count=2)
    assert reinforce(e, "s1", T0).reinforcement_count == 3


def test_missing_session_id_never_blocks_later_b15() -> None:
    """docs/decisions.md#s15: an owner-less reinforcement used to stamp a fake session id that blocked
    every later owner-less reinforcement forever."""
    first = reinforce(entry(), None, T0)
    assert first.reinforcement_count == 1 and first.last_reinforced_session_id is None
    again = reinforce(first, None, T0 + 3 * DAY_MS)
    assert again.reinforcement_count == 2


def test_reinforce_never_mutates_and_resets_strength() -> None:
    old = entry(age_days=30)
    before = strength(old, NOW)
    new = reinforce(old, "s9", NOW)
    assert old.reinforcement_count is None
    assert strength(new, NOW) == initial_strength(new) > before


def test_sort_by_retention_is_total_with_invalid_created_at() -> None:
    a = entry(id_="b", created_at="garbage")
    b = entry(id_="a", created_at="garbage")
    c = entry(id_="c")
    assert [e.id for e in sort_by_retention([a, b, c], NOW)] == ["c", "a", "b"]
    assert [e.id for e in sort_by_retention([c, b, a], NOW)] == ["c", "a", "b"]
