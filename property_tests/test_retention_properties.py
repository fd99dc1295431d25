"""Properties of retention strength, effective age and reinforcement
(docs/decisions.md#retention-strength-and-decay, docs/decisions.md#d3, docs/decisions.md#d8)."""

from __future__ import annotations

import math

from hypothesis import event, given, strategies as st
from msgspec.structs import replace

from domain.enums import Importance, MemorySource, MemoryType
from domain.limits import DAY_MS
from domain.model import DormantSpan, MemoryEntry, WorkspaceStore
from domain.retention import (
    Dormancy,
    can_reinforce,
    dormancy_at,
    effective_age_days,
    half_life_days,
    initial_strength,
    mark_activity,
    merge_spans,
    reinforce,
    reinforcement_count,
    strength,
)
from domain.timeutil import iso_from_ms
from property_tests.shapes import steady_lists
from tests.support.builders import memory, store

BASE = 1_767_225_600_000  # 2026-01-01T00:00:00Z
YEAR = 365 * DAY_MS

times = st.integers(min_value=BASE - YEAR, max_value=BASE + 2 * YEAR)
timestamps = st.one_of(
    times.map(iso_from_ms),
    st.sampled_from(["", "garbage", "2026-02-30", "1714000000000", "2026-04-28"]),
)


@st.composite
def entries(draw: st.DrawFn, max_count: int = 9) -> MemoryEntry:
    """Any entry; its reinforcement count, when set, is ``0..max_count``."""
    return memory(
        id=draw(st.text("abc123", min_size=1, max_size=4)),
        type=draw(st.sampled_from(list(MemoryType))),
        text="memory",
        source=draw(st.sampled_from(list(MemorySource))),
        confidence=0.75,
        created_at=draw(timestamps),
        updated_at=draw(timestamps),
        retention_clock=draw(st.one_of(st.none(), times, st.just(-1))),
        reinforcement_count=draw(st.one_of(st.none(), st.integers(0, max_count))),
        last_reinforced_at=draw(st.one_of(st.none(), st.just(0), times)),
        last_reinforced_session_id=draw(st.one_of(st.none(), st.sampled_from(["s1", "s2"]))),
        user_importance=draw(st.one_of(st.none(), st.sampled_from(list(Importance)))),
    )


@st.composite
def dormancies(draw: st.DrawFn) -> Dormancy:
    starts = draw(steady_lists(st.tuples(times, st.integers(1, 90 * DAY_MS)), max_size=4))
    spans = tuple((float(s), float(s + length)) for s, length in starts)
    return Dormancy(spans)


@st.composite
def stores(draw: st.DrawFn) -> WorkspaceStore:
    starts = dict(
        draw(steady_lists(st.tuples(times, st.integers(1, 30 * DAY_MS)), max_size=4))
    )  # unique starts
    spans = tuple(DormantSpan(start=s, end=s + starts[s]) for s in sorted(starts))
    return store(
        root="/r",
        key="k",
        at=BASE,
        last_activity_at=draw(st.one_of(st.none(), timestamps)),
        dormant_spans=spans,
    )


@given(entries(), stores(), times)
def test_strength_is_finite_nonnegative_and_at_most_initial(
    e: MemoryEntry, s: WorkspaceStore, now: int
) -> None:
    value = strength(e, now, dormancy_at(s, now))
    assert math.isfinite(value)
    assert 0.0 <= value <= initial_strength(e) * (1 + 1e-12)


@given(entries(), stores(), times, st.integers(0, 400 * DAY_MS))
def test_strength_never_increases_with_time(e: MemoryEntry, s: WorkspaceStore, now: int, step: int) -> None:
    # entries() makes no negative reinforcement count
    earlier = strength(e, now, dormancy_at(s, now))
    later = strength(e, now + step, dormancy_at(s, now + step))
    assert later <= earlier * (1 + 1e-12)


@given(entries(), times, st.integers(0, 6), st.integers(0, 6))
def test_more_reinforcement_never_weaker_at_equal_age(e: MemoryEntry, now: int, a: int, b: int) -> None:
    low, high = min(a, b), max(a, b)
    weaker = strength(replace(e, reinforcement_count=low), now)
    stronger = strength(replace(e, reinforcement_count=high), now)
    assert stronger >= weaker


@given(times, times, dormancies())
def test_effective_age_within_quarter_and_full_wall_age(start: int, now: int, d: Dormancy) -> None:
    wall = max(0.0, (now - start) / DAY_MS)
    age = effective_age_days(start, now, d)
    assert 0.25 * wall - 1e-9 <= age <= wall + 1e-9


@given(times, stores(), times, st.integers(0, 200 * DAY_MS), st.integers(0, 200 * DAY_MS))
def test_effective_age_never_decreases_even_across_resumed_activity(
    start: int, s: WorkspaceStore, now: int, resume_after: int, step: int
) -> None:
    """Activity resumes at ``resume``; effective age measured before, at and after must be monotone."""
    resume = now + resume_after
    before = effective_age_days(start, now, dormancy_at(s, now))
    at_resume_open = effective_age_days(start, resume, dormancy_at(s, resume))
    stamped, _ = mark_activity(s, resume)
    at_resume_closed = effective_age_days(start, resume, dormancy_at(stamped, resume))
    after = effective_age_days(start, resume + step, dormancy_at(stamped, resume + step))
    assert math.isclose(at_resume_open, at_resume_closed, rel_tol=1e-9, abs_tol=1e-9)
    assert before <= at_resume_open + 1e-9
    assert at_resume_closed <= after + 1e-9


@given(
    entries(max_count=6),
    steady_lists(
        st.tuples(st.sampled_from([None, "s1", "s2", "s3"]), st.integers(0, 30 * DAY_MS)), max_size=12
    ),
)
def test_reinforcement_count_never_exceeds_six(e: MemoryEntry, steps: list[tuple[str | None, int]]) -> None:
    """From any entry at six or fewer, no run of reinforcements goes past six."""
    now = BASE
    current = e
    for session, delta in steps:
        now += delta
        current = reinforce(current, session, now)
        assert (current.reinforcement_count or 0) <= 6


@given(entries(), times, st.sampled_from([None, "s1", "s2", "s3"]), st.sampled_from([None, "s4", "s5"]))
def test_a_reinforcement_counts_once_and_a_second_the_same_day_changes_nothing(
    e: MemoryEntry, now: int, first: str | None, second: str | None
) -> None:
    """When the guards allow it, a reinforcement adds one to the count, lengthens the half-life,
    restarts the clock now, remembers the session and changes nothing else, and a second one the
    same instant (so the same UTC day), from any session, is refused; when the guards refuse it, the
    entry comes back unchanged, the very same object."""
    once = reinforce(e, first, now)
    if can_reinforce(e, first, now):
        event("reinforced")
        assert once.reinforcement_count == reinforcement_count(e) + 1
        assert half_life_days(once) > half_life_days(e)
        assert (once.retention_clock, once.last_reinforced_at, once.last_reinforced_session_id) == (
            now,
            now,
            first,
        )
        fields = (
            "reinforcement_count",
            "retention_clock",
            "last_reinforced_at",
            "last_reinforced_session_id",
        )
        assert replace(once, **{name: getattr(e, name) for name in fields}) == e
        assert reinforce(once, second, now) is once
    else:
        event("refused")
        assert once is e


@given(entries(), stores(), times, st.sampled_from([None, "s1", "s9"]))
def test_reinforcement_never_lowers_strength_when_it_happens(
    e: MemoryEntry, s: WorkspaceStore, now: int, session: str | None
) -> None:
    # entries() makes no negative reinforcement count
    d = dormancy_at(s, now)
    assert strength(reinforce(e, session, now), now, d) >= strength(e, now, d) * (1 - 1e-12)


@given(
    steady_lists(st.tuples(times, st.integers(1, 40 * DAY_MS)), min_size=60, max_size=80),
    times,
    st.integers(0, 400 * DAY_MS),
)
def test_capping_the_span_list_never_lowers_an_effective_age(
    raw: list[tuple[int, int]], start: int, after: int
) -> None:
    """docs/decisions.md#d3 caps ``dormantSpans`` at 64; folding the oldest spans together must not make any
    entry younger (which would raise its strength out of nothing)."""
    spans = [DormantSpan(start=s, end=s + length) for s, length in raw]
    uncapped = sorted((float(s.start), float(s.end)) for s in spans)
    merged_exact: list[tuple[float, float]] = []
    for a, b in uncapped:
        if merged_exact and a <= merged_exact[-1][1]:
            merged_exact[-1] = (merged_exact[-1][0], max(merged_exact[-1][1], b))
        else:
            merged_exact.append((a, b))
    capped = merge_spans(spans)
    assert len(capped) <= 64
    now = max(e for _, e in uncapped) + after
    exact_age = effective_age_days(start, now, Dormancy(tuple(merged_exact)))
    capped_age = effective_age_days(
        start, now, Dormancy(tuple((float(s.start), float(s.end)) for s in capped))
    )
    assert capped_age >= exact_age - 1e-9
