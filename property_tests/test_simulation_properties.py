"""Properties of the simulator and of the retention sort it leans on (docs/simulation.md)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Final

from hypothesis import given, settings, strategies as st

from domain.model import WorkspaceStore
from domain.ranking import retention_sort_key, sort_by_retention
from domain.retention import Tuning, dormancy_at
from domain.simulation.engine import simulate
from domain.simulation.scenario import decode_scenario, with_overrides
from property_tests.store_strategies import NOW_MS, stores

STEADY = Path(__file__).resolve().parent.parent / "scenarios" / "steady.toml"
#: Each example of the simulation property runs two simulations: a sixth of the profile's examples.
FEW: Final = max(4, settings().max_examples // 6)

tunings = st.builds(
    Tuning,
    half_life_days=st.floats(1, 400),
    reinforcement_factor=st.floats(0.1, 1.0),
    reinforcement_cap=st.integers(0, 10),
    dormant_after_days=st.floats(0, 60),
    dormant_multiplier=st.floats(0, 1),
)


@given(stores(), st.integers(-400, 400), tunings)
def test_the_one_loop_sort_is_the_retention_order(
    store: WorkspaceStore, shift_days: int, tuning: Tuning
) -> None:
    now = NOW_MS + shift_days * 86_400_000
    dormancy = dormancy_at(store, now, tuning)
    expected = sorted(store.entries, key=lambda e: retention_sort_key(e, now, dormancy, tuning))
    assert sort_by_retention(store.entries, now, dormancy, tuning) == expected


def _steady(seed: int, half_life: float) -> list[int]:
    with STEADY.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    quick = [("seed", seed), ("days", 24), ("pattern.sessions_per_weekday", 3), ("half_life_days", half_life)]
    run = simulate(decode_scenario(with_overrides(data, quick)).unwrap())
    return [day.rendered for day in run.days]


@settings(max_examples=FEW)
@given(st.integers(0, 10_000), st.floats(5, 200), st.floats(1.01, 4))
def test_a_longer_half_life_never_renders_fewer_memories(seed: int, half_life: float, longer: float) -> None:
    short = _steady(seed, half_life)
    long = _steady(seed, half_life * longer)
    assert all(b >= a for a, b in zip(short, long, strict=True)), (short, long)
