"""The chart of ``workmem simulate --plot`` (adapters/simulation_plot.py): labelled lines on a small
store, bands by type on a large one, a render threshold that hides no memory, named idle and dormant
stretches, legends off the data, plain log ticks and an x axis that ends on the last day."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest

from adapters import simulation_plot as chart
from domain.simulation.engine import SimRun, simulate
from domain.simulation.scenario import Scenario, decode_scenario

pytest.importorskip("matplotlib")

from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D


def _scenario(days: int, **changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "plot",
        "start": dt.date(2026, 1, 5),
        "days": days,
        "seed": 3,
        "pattern": {"sessions_per_weekday": 1, "weekend_sessions": 0},
        "session": {"candidates": 1.0, "noise_share": 0.0, "explicit": 0.3, "repeat_share": 0.3},
    }
    for key, value in changes.items():
        data.setdefault(key, {}).update(value) if isinstance(value, dict) else data.update({key: value})
    return decode_scenario(data).unwrap()


def _drawn(scenario: Scenario) -> tuple[SimRun, Figure]:
    run = simulate(scenario, trace=True)
    fig = chart.draw(run, scenario.parameters.tuning())
    fig.draw_without_rendering()
    return run, fig


def _lines(fig: Figure, prefix: str) -> list[Line2D]:
    return [ln for ln in fig.axes[0].get_lines() if (ln.get_gid() or "").startswith(prefix)]


def _legend_texts(fig: Figure) -> list[str]:
    legend = fig.axes[0].get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def _ydata(line: Line2D) -> list[float]:
    import numpy as np

    return [float(v) for v in np.asarray(line.get_ydata(), dtype=float)]


def _legends(fig: Figure) -> list[Legend]:
    return [legend for axis in fig.axes if (legend := axis.get_legend()) is not None]


def test_a_small_store_gets_one_labelled_line_per_memory() -> None:
    run, fig = _drawn(_scenario(9, parameters={"global_cap": 4}))
    assert 1 < len(run.memories) <= chart.SMALL_STORE
    lines = _lines(fig, "memory-")
    assert [ln.get_gid() for ln in lines] == [f"memory-{m.id}" for m in run.memories]
    assert all(ln.get_linewidth() >= 2 for ln in lines)
    # the legend names each memory by its type and the start of its text
    labels = _legend_texts(fig)
    for number, memory in enumerate(run.memories, start=1):
        assert f"{number}. [{memory.type}] {chart.excerpt(memory.text)}" in labels[number - 1]
    # two memories never share colour, marker and dash pattern
    styles = {(ln.get_color(), ln.get_marker(), str(ln.get_linestyle())) for ln in lines}
    assert len(styles) == len(lines)


def test_a_large_store_is_summarised_by_type_not_one_line_per_memory() -> None:
    run, fig = _drawn(_scenario(40, pattern={"sessions_per_weekday": 3}))
    assert len(run.memories) > chart.SMALL_STORE
    assert _lines(fig, "memory-") == []
    kinds = {m.type for m in run.memories}
    assert {ln.get_gid() for ln in _lines(fig, "median-")} == {f"median-{k}" for k in kinds}
    bands = [c for c in fig.axes[0].collections if (c.get_gid() or "").startswith("band-")]
    assert len(bands) == len(kinds) and all(isinstance(b, PolyCollection) for b in bands)
    assert len(fig.axes[0].get_lines()) == len(kinds) + 1  # the medians and the threshold


def test_the_threshold_is_dashed_behind_the_memories_and_only_where_something_was_left_out() -> None:
    run, fig = _drawn(_scenario(9, parameters={"global_cap": 4}))
    (threshold,) = _lines(fig, "threshold")
    assert threshold.get_linestyle() == "--" and threshold.get_color() == chart.THRESHOLD_COLOUR
    assert all(threshold.get_zorder() < ln.get_zorder() for ln in _lines(fig, "memory-"))
    values = _ydata(threshold)
    for day, value in zip(run.days, values, strict=True):
        assert math.isnan(value) == (day.active <= day.rendered)
    assert any(not math.isnan(v) for v in values)
    # when every memory fits, there is no threshold, and the legend says so
    roomy = _drawn(_scenario(9))[1]
    (line,) = _lines(roomy, "threshold")
    assert all(math.isnan(v) for v in _ydata(line))
    assert chart.NO_THRESHOLD in _legend_texts(roomy)


def test_legends_sit_outside_the_axes() -> None:
    for scenario in (_scenario(9), _scenario(40, pattern={"sessions_per_weekday": 3})):
        _, fig = _drawn(scenario)
        legends = _legends(fig)
        assert len(legends) == 2
        for legend in legends:
            box = legend.get_window_extent()
            assert box.x0 >= legend.axes.get_window_extent().x1


def test_idle_and_dormant_stretches_are_shaded_and_named() -> None:
    scenario = _scenario(60, pattern={"breaks": [{"start": dt.date(2026, 1, 19), "days": 30}]})
    run, fig = _drawn(scenario)
    top, strip, bottom = fig.axes
    tuning = scenario.parameters.tuning()
    idle = chart.idle_stretches(run)
    dormant = chart.dormant_stretches(run, tuning)
    assert idle == [(12, 43)]  # the weekend before and the 30 days (Monday to Tuesday)
    ((start, end),) = dormant
    assert start == pytest.approx(12 + tuning.dormant_after_days, abs=1) and end == pytest.approx(44, abs=1)
    for axis in (top, strip, bottom):
        gids = [p.get_gid() for p in axis.patches]
        assert "idle-0" in gids and "dormant-0" in gids
    labels = [t.get_text() for t in strip.texts if t.get_gid() == "span-label"]
    assert labels == ["no sessions for 32 days", "dormant: time runs at ×0.25"]


def test_the_log_axis_reads_as_plain_numbers_and_the_time_axis_ends_on_the_last_day() -> None:
    run, fig = _drawn(_scenario(40, pattern={"sessions_per_weekday": 3}))
    top, _, bottom = fig.axes
    low, high = top.get_ylim()
    ticks = [t for t in top.get_yticklabels() if low <= t.get_position()[1] <= high]
    assert len(ticks) >= 3
    assert all(float(t.get_text()) == pytest.approx(t.get_position()[1]) for t in ticks)
    left, right = bottom.get_xlim()
    assert right - left == pytest.approx(len(run.days))
    assert bottom.xaxis.get_offset_text().get_text() == ""
    assert bottom.get_xlabel() == "2026-01-05 to 2026-02-14 (UTC)"


def test_excerpt_and_shades() -> None:
    assert chart.excerpt("short  text\nhere") == "short text here"
    long = chart.excerpt("x" * 100, width=10)
    assert len(long) == 10 and long.endswith("…")
    assert chart.shade("#d62728", 0, 1) == pytest.approx((0xD6 / 255, 0x27 / 255, 0x28 / 255))
    darker, lighter = chart.shade("#d62728", 0, 2), chart.shade("#d62728", 1, 2)
    assert sum(darker) < sum(chart.shade("#d62728", 0, 1)) < sum(lighter)
