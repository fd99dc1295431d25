"""The chart of ``workmem simulate --plot`` (docs/simulation.md, "--plot"): matplotlib, the optional
``sim`` extra, imported only when a plot is asked for.

Three panels share the time axis. The strength of the memories (log scale): on a small store one
labelled line per memory, on a larger one a band per type (median and 10th–90th percentile of the
memories stored that day), with the render threshold — the weakest strength shown on days when
some stored memory was left out of the block — dashed and behind the memories. Under it the
sessions per day, where stretches without sessions and dormant stretches (time slowed down) are
shaded and named; both shadings continue over the other panels. At the bottom, the block's
composition by type against the global cap. Legends sit to the right of the panels, never on the
data.
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from adapters.commands import EXIT_STORAGE, EXIT_USAGE, CommandError
from domain.limits import DAY_MS
from domain.retention import Tuning, dormancy_at
from domain.simulation.engine import MemoryTrack, SimRun
from domain.simulation.workspace import date_ms

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIM_EXTRA_HINT: Final = "--plot needs matplotlib: pip install 'workmem[sim]'"

#: Up to this many stored memories, each gets its own labelled line; above, bands by type.
SMALL_STORE: Final = 12
#: Stretches of at least this many days without a session are shaded (weekends are not).
IDLE_MIN_DAYS: Final = 7
#: Characters of a memory's text in the legend of a small store.
EXCERPT_CHARS: Final = 46

TYPE_COLOURS: Final = {
    "feedback": "#d62728",
    "project": "#1f77b4",
    "decision": "#2ca02c",
    "reference": "#9467bd",
}
#: A small store's memories are coloured by type, each in its own shade, with its own marker and
#: dash pattern, so two memories of one type stay apart.
MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
DASHES: Final = ("-", "--", "-.", ":")
#: The render threshold: wide, grey and dashed, drawn behind the memories so it never hides one.
THRESHOLD_COLOUR: Final = "#333333"
THRESHOLD_DASHES: Final = (0, (5, 3))
IDLE_COLOUR: Final = "#9a9a9a"
DORMANT_COLOUR: Final = "#f0a030"
NO_THRESHOLD: Final = "no render threshold: every stored\nmemory was in the block every day"


def check_plot_target(path: str) -> None:
    """Before the run: ``--plot`` takes an .svg or .png name in a directory that exists and can be
    written (docs/simulation.md, "--plot"), and needs matplotlib (the ``sim`` extra)."""
    if not path.lower().endswith((".svg", ".png")):
        raise CommandError("--plot FILE must end in .svg or .png", EXIT_USAGE)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"--plot {path}: no directory {folder}", EXIT_USAGE)
    if not os.access(folder, os.W_OK):
        raise CommandError(f"cannot write {path}: directory not writable", EXIT_STORAGE)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(SIM_EXTRA_HINT, EXIT_USAGE) from None


# ---------------------------------------------------------------------------------------------
# What the chart marks: stretches of days
# ---------------------------------------------------------------------------------------------


def idle_stretches(run: SimRun, min_days: int = IDLE_MIN_DAYS) -> list[tuple[int, int]]:
    """(first, last) day indexes of stretches of at least ``min_days`` days without a session."""
    stretches: list[tuple[int, int]] = []
    start: int | None = None
    for index, day in enumerate([*run.days, None]):
        if day is not None and day.sessions == 0:
            start = index if start is None else start
            continue
        if start is not None and index - start >= min_days:
            stretches.append((start, index - 1))
        start = None
    return stretches


def dormant_stretches(run: SimRun, tuning: Tuning) -> list[tuple[float, float]]:
    """The workspace's dormant stretches within the run, as (start, end) in days since its start:
    the spans the store recorded, and the one still open after the last day (docs/decisions.md#d3)."""
    begin = date_ms(dt.date.fromisoformat(run.start))
    end = begin + len(run.days) * DAY_MS
    spans = dormancy_at(run.final_store, end, tuning).spans
    days = len(run.days)
    return [
        (max(0.0, (s - begin) / DAY_MS), min(float(days), (e - begin) / DAY_MS))
        for s, e in spans
        if e > begin and (s - begin) / DAY_MS < days
    ]


def excerpt(text: str, width: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def threshold_series(run: SimRun) -> list[float]:
    """The render threshold per day, only on days when some stored memory was left out of the block
    (when everything fits, the weakest memory shown is no threshold: NaN)."""
    return [
        value if value is not None and day.active > day.rendered else float("nan")
        for day, value in zip(run.days, run.thresholds, strict=False)
    ]


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


def _values(run: SimRun, memory_id: str) -> list[float]:
    return [v if v is not None else float("nan") for v in run.strengths.get(memory_id, ())]


def shade(colour: str, rank: int, count: int) -> tuple[float, float, float]:
    """The ``rank``-th of ``count`` shades of ``colour``: from darker to lighter, the colour itself
    when it is alone."""
    from matplotlib.colors import to_rgb

    base = to_rgb(colour)
    mix = 0.0 if count == 1 else -0.45 + 0.9 * rank / (count - 1)
    target = 1.0 if mix > 0 else 0.0
    return (
        base[0] + (target - base[0]) * abs(mix),
        base[1] + (target - base[1]) * abs(mix),
        base[2] + (target - base[2]) * abs(mix),
    )


def _memory_lines(axis: Axes, run: SimRun, x: Sequence[float]) -> list[Artist]:
    handles: list[Artist] = []
    per_type: dict[str, int] = {}
    for memory in run.memories:
        per_type[memory.type] = per_type.get(memory.type, 0) + 1
    seen: dict[str, int] = {}
    for index, memory in enumerate(run.memories):
        rank = seen.get(memory.type, 0)
        seen[memory.type] = rank + 1
        values = _values(run, memory.id)
        label = f"{index + 1}. [{memory.type}] {excerpt(memory.text)}"
        if memory.days_rendered == 0:
            label += " (never shown)"
        (line,) = axis.plot(
            x[: len(values)],
            values,
            color=shade(TYPE_COLOURS.get(memory.type, "#555555"), rank, per_type[memory.type]),
            linestyle=DASHES[rank % len(DASHES)],
            marker=MARKERS[index % len(MARKERS)],
            markevery=max(1, len(values) // 8),
            markersize=5,
            linewidth=2.0,
            label=label,
            zorder=3,
        )
        line.set_gid(f"memory-{memory.id}")
        handles.append(line)
    return handles


def _type_bands(axis: Axes, run: SimRun, x: Sequence[float]) -> list[Artist]:
    import numpy as np

    handles: list[Artist] = []
    days = len(run.days)
    for kind, colour in TYPE_COLOURS.items():
        members: list[MemoryTrack] = [m for m in run.memories if m.type == kind]
        if not members:
            continue
        grid = np.full((len(members), days), np.nan)
        for row, memory in enumerate(members):
            values = _values(run, memory.id)[:days]
            grid[row, : len(values)] = values
        with warnings.catch_warnings():  # days without a memory of this type: NaN, no warning
            warnings.simplefilter("ignore", category=RuntimeWarning)
            low, median, high = np.nanpercentile(grid, [10, 50, 90], axis=0)
        band = axis.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0, zorder=2)
        band.set_gid(f"band-{kind}")
        (line,) = axis.plot(x, median, color=colour, linewidth=2.2, zorder=3)
        line.set_gid(f"median-{kind}")
        line.set_label(f"{kind}: median, 10–90% band ({len(members)} stored)")
        handles.append(line)
    return handles


def _log_axis(axis: Axes, values: Sequence[float]) -> None:
    """A log axis whose ticks read as plain numbers (0.2, 0.5, 1, 2, 5), denser on a narrow range."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    finite = [v for v in values if v == v and v > 0]
    low, high = (min(finite), max(finite)) if finite else (0.1, 10.0)
    axis.set_yscale("log")
    axis.set_ylim(low / 1.25, high * 1.25)
    ratio = high / low
    subs = (1.0, 2.0, 5.0) if ratio > 8 else (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
    axis.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.yaxis.set_minor_formatter(NullFormatter())


Spans = Sequence[tuple[float, float]]


def _shade(axes: Sequence[Axes], spans: Spans, colour: str, gid: str) -> None:
    for number, (left, right) in enumerate(spans):
        for axis in axes:
            patch = axis.axvspan(left, right, color=colour, alpha=0.16, linewidth=0, zorder=0)
            patch.set_gid(f"{gid}-{number}")


def _name_spans(axis: Axes, spans: Spans, long: str, short: str, y: float, total: float) -> None:
    """Write what a shaded stretch is inside it, on the sessions strip (where a stretch without
    sessions has no bars to cover), if the text fits."""
    from matplotlib.transforms import blended_transform_factory

    where = blended_transform_factory(axis.transData, axis.transAxes)
    for left, right in spans:
        width = right - left
        text = long if width / total >= 0.16 else short if width / total >= 0.05 else ""
        if text:
            label = axis.text((left + right) / 2, y, text.format(days=round(width)), transform=where,
                              ha="center", va="center", fontsize=8, color="#333333")  # fmt: skip
            label.set_gid("span-label")


def draw(run: SimRun, tuning: Tuning) -> Figure:
    """The chart of a traced run, as a matplotlib figure (no pyplot, no global state)."""
    from matplotlib.dates import AutoDateLocator, DateFormatter, date2num
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    first = float(date2num(dt.datetime.fromisoformat(run.start)))  # type: ignore[no-untyped-call]
    days = len(run.days)
    x = [first + d.day for d in run.days]  # the end of each day, in matplotlib's days
    small = len(run.memories) <= SMALL_STORE
    fig = Figure(figsize=(13, 8.5), dpi=100, layout="constrained")
    top, strip, bottom = fig.subplots(3, 1, sharex=True, gridspec_kw={"height_ratios": [3.2, 0.7, 1.6]})
    fig.suptitle(f"{run.name}: {days} days from {run.start}, {len(run.memories)} memories stored")

    handles = _memory_lines(top, run, x) if small else _type_bands(top, run, x)
    threshold = threshold_series(run)
    (line,) = top.plot(x[: len(threshold)], threshold, color=THRESHOLD_COLOUR, linestyle=THRESHOLD_DASHES,
                       linewidth=3.0, alpha=0.55, zorder=2)  # fmt: skip
    line.set_gid("threshold")
    if any(v == v for v in threshold):
        line.set_label("render threshold: the weakest strength shown\non days some memory was left out")
        handles.append(line)
    else:
        handles.append(Line2D([], [], linestyle="none", label=NO_THRESHOLD))
    strengths = [v for m in run.memories for v in _values(run, m.id)]
    _log_axis(top, strengths)
    top.set_ylabel("strength (log scale)")
    top.set_title(
        "strength of each memory" if small else "strength of the stored memories, by type", fontsize=10
    )
    top.grid(alpha=0.3)

    strip.bar([first + i for i in range(days)], [d.sessions for d in run.days], width=1.0, align="edge",
              color="#6b6b6b")  # fmt: skip
    strip.set_ylabel("sessions\nper day", fontsize=8)
    strip.set_ylim(0, max(1, max(d.sessions for d in run.days)) * 1.15)
    strip.tick_params(axis="y", labelsize=7)
    strip.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))

    idle = [(first + a, first + b + 1.0) for a, b in idle_stretches(run)]
    dormant = [(first + a, first + b) for a, b in dormant_stretches(run, tuning)]
    _shade((top, strip, bottom), idle, IDLE_COLOUR, "idle")
    _shade((top, strip, bottom), dormant, DORMANT_COLOUR, "dormant")
    speed = f"×{tuning.dormant_multiplier:g}"
    _name_spans(strip, idle, "no sessions for {days} days", "{days} d idle", 0.72, days)
    _name_spans(strip, dormant, f"dormant: time runs at {speed}", f"dormant {speed}", 0.3, days)
    if idle:
        handles.append(Patch(color=IDLE_COLOUR, alpha=0.35, label=f"no sessions ({IDLE_MIN_DAYS}+ days)"))
    if dormant:
        handles.append(
            Patch(
                color=DORMANT_COLOUR,
                alpha=0.35,
                label=f"dormant: after {tuning.dormant_after_days:g} idle days\ntime runs at {speed}",
            )
        )
    top.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)

    # each day's end-of-day block drawn over that day: steps from the day's start to its end
    stacks = [[d.rendered_by_type.get(t, 0) for d in [*run.days, run.days[-1]]] for t in TYPE_COLOURS]
    edges = [first + i for i in range(days + 1)]
    bottom.stackplot(edges, *stacks, labels=list(TYPE_COLOURS), colors=list(TYPE_COLOURS.values()),
                     alpha=0.8, step="post")  # fmt: skip
    cap = tuning.global_cap
    bottom.axhline(cap, color="#333333", linestyle=":", linewidth=1.2, label=f"cap ({cap})")
    bottom.set_ylim(0, max(tuning.global_cap, max(d.rendered for d in run.days)) * 1.12)
    bottom.set_ylabel("memories\nin the block")
    bottom.set_title("the block's composition by type (end of each day)", fontsize=10)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)
    bottom.grid(alpha=0.3)

    bottom.xaxis.set_major_locator(AutoDateLocator(minticks=6, maxticks=12))  # type: ignore[no-untyped-call]
    bottom.xaxis.set_major_formatter(DateFormatter("%b %d" if days <= 400 else "%b %Y"))  # type: ignore[no-untyped-call]
    bottom.xaxis_date()
    bottom.set_xlim(first, x[-1])
    last = dt.date.fromisoformat(run.start) + dt.timedelta(days=days)
    bottom.set_xlabel(f"{run.start} to {last.isoformat()} (UTC)")
    return fig


def plot(run: SimRun, tuning: Tuning, path: str) -> Figure:
    """Draw ``run`` into ``path`` (.svg or .png); the same run gives the same SVG bytes."""
    import matplotlib

    fig = draw(run, tuning)
    svg = path.lower().endswith(".svg")
    try:
        with matplotlib.rc_context({"svg.hashsalt": "workmem"}):
            fig.savefig(path, metadata={"Date": None} if svg else {"Software": None})
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CommandError(f"cannot write {path}: {reason}", EXIT_STORAGE) from None
    return fig
