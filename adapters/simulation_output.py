"""How ``workmem simulate`` shows a run: a weekly table and a summary, JSON, and charts
(docs/simulation.md, "Reading the output"). The JSON keys are the struct field names of
``domain.simulation.report``; the schema is in the docs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from adapters.commands import EXIT_USAGE, CommandError
from domain.model import DAY_MS
from domain.render import render_workspace_block
from domain.retention import Tuning
from domain.simulation.engine import SimRun
from domain.simulation.report import Summary, WeekRow, compare, summarize, weeks
from domain.simulation.scenario import Scenario

TYPE_COLUMNS: Final = (("fb", "feedback"), ("pr", "project"), ("de", "decision"), ("re", "reference"))
TYPE_COLOURS: Final = {
    "feedback": "#d62728",
    "project": "#1f77b4",
    "decision": "#2ca02c",
    "reference": "#9467bd",
}


def _json(value: Any) -> None:
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n")
    sys.stdout.flush()


def _out(lines: Sequence[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n")


def tuning_dict(tuning: Tuning) -> dict[str, Any]:
    return msgspec.to_builtins(tuning)  # type: ignore[no-any-return]


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------------------------------------
# One run
# ---------------------------------------------------------------------------------------------


#: Short names for the rejection reasons in the weekly table (the summary and JSON use the codes).
REASON_SHORT: Final = {
    "too_short": "short",
    "progress_snapshot": "progress",
    "temporary_status": "temp",
    "raw_error": "error",
    "commit_or_ci_snapshot": "commit",
    "active_file_snapshot": "file",
    "code_or_api_signature": "code",
    "path_heavy": "paths",
    "bad_feedback": "feedback",
    "bad_decision": "decision",
    "prompt_injection": "inject",
    "duplicate_in_summary": "dup",
    "negated_request": "negated",
}


def week_table(rows: Sequence[WeekRow]) -> list[str]:
    head = (
        f"{'week':>4}  {'from':<10}  {'sess':>4}  {'active':>6}  {'shown':>5}  "
        + "  ".join(f"{short:>2}" for short, _ in TYPE_COLUMNS)
        + f"  {'chars':>5}  {'archived':>8}  {'in':>3}  {'out':>3}  {'cand':>4}  rejected  (by reason)"
    )
    lines = [head]
    for row in rows:
        reasons = " ".join(f"{REASON_SHORT.get(r, r)}:{n}" for r, n in row.rejected.items())
        rejected = f"{row.rejected_total} {reasons}" if row.rejected_total else "-"
        lines.append(
            f"{row.week:>4}  {row.start:<10}  {row.sessions:>4}  {row.active:>6}  {row.rendered:>5}  "
            + "  ".join(f"{row.rendered_by_type.get(name, 0):>2}" for _, name in TYPE_COLUMNS)
            + f"  {row.block_chars:>5}  {row.archived:>8}  {row.entered:>3}  {row.left:>3}"
            + f"  {row.candidates:>4}  {rejected}"
        )
    return lines


def summary_lines(summary: Summary) -> list[str]:
    by_type = ", ".join(f"{k} {_fmt(v)}" for k, v in summary.median_days_rendered_by_type.items())
    by_source = ", ".join(f"{k} {_fmt(v)}" for k, v in summary.median_days_rendered_by_source.items())
    reinforcement = ", ".join(f"{k}x {v}" for k, v in summary.reinforcement.items()) or "-"
    rejected = ", ".join(f"{k} {v}" for k, v in summary.rejected_by_reason.items()) or "-"
    return [
        f"days {summary.days}, sessions {summary.sessions}, candidates {summary.candidates}, "
        f"rejected {summary.rejected}",
        f"rejected by reason: {rejected}",
        f"memories stored {summary.memories_stored}, never rendered {summary.never_rendered}",
        f"median days rendered by type: {by_type}",
        f"median days rendered by source: {by_source}",
        f"reinforcements of the active memories at the end: {reinforcement}",
        f"block churn per session: mean {summary.churn_per_session_mean:g}, "
        f"median {summary.churn_per_session_median:g}, max {summary.churn_per_session_max}",
        f"at the end: {summary.final_active} active, {summary.final_rendered} rendered "
        f"({summary.final_block_chars} chars), {summary.final_archived} archived",
    ]


def _final_block(run: SimRun, scenario: Scenario) -> str:
    """The block a session opening right after the last simulated day would see."""
    from domain.simulation.workspace import date_ms

    end_ms = date_ms(scenario.start) + scenario.days * DAY_MS
    return render_workspace_block(run.final_store, end_ms, scenario.parameters.tuning()).text


def print_run(run: SimRun, scenario: Scenario, *, as_json: bool, from_store: bool) -> None:
    rows = weeks(run.days)
    summary = summarize(run)
    if as_json:
        document: dict[str, Any] = {
            "scenario": scenario.name,
            "seed": scenario.seed,
            "start": run.start,
            "days": scenario.days,
            "parameters": tuning_dict(scenario.parameters.tuning()),
            "weeks": rows,
            "summary": summary,
        }
        if from_store:
            document["final_block"] = _final_block(run, scenario)
        _json(document)
        return
    lines = [
        f"scenario {scenario.name!r}, seed {scenario.seed}, {scenario.days} days from {run.start}",
        "",
        *week_table(rows),
        "",
        *summary_lines(summary),
    ]
    if from_store:
        block = _final_block(run, scenario)
        lines += ["", f"the block after {scenario.days} days:", block or "(empty)"]
    _out(lines)


# ---------------------------------------------------------------------------------------------
# Comparisons and sweeps
# ---------------------------------------------------------------------------------------------


def _changed(baseline: Scenario, variant: Scenario) -> str:
    left = tuning_dict(baseline.parameters.tuning())
    right = tuning_dict(variant.parameters.tuning())
    changed = [f"{k}={_fmt(right[k]) if not isinstance(right[k], dict) else right[k]}" for k in right
               if right[k] != left[k]]  # fmt: skip
    return ", ".join(changed) or "(no parameter changed)"


def print_compare(
    base_run: SimRun, variant_run: SimRun, baseline: Scenario, variant: Scenario, *, as_json: bool
) -> None:
    result = compare(base_run, variant_run)
    if as_json:
        _json(
            {
                "scenario": baseline.name,
                "baseline": {"parameters": tuning_dict(baseline.parameters.tuning())},
                "variant": {"parameters": tuning_dict(variant.parameters.tuning())},
                "blocks": result.blocks,
                "metrics": result.metrics,
            }
        )
        return
    lines = [f"scenario {baseline.name!r}: baseline vs. {_changed(baseline, variant)}", ""]
    for block in result.blocks:
        lines.append(
            f"day {block.day}: {len(block.only_baseline)} only in the baseline's block, "
            f"{len(block.only_variant)} only in the variant's"
        )
        lines += [f"  - baseline only: {text}" for text in block.only_baseline]
        lines += [f"  + variant only:  {text}" for text in block.only_variant]
    if not result.blocks:
        lines.append("(the run is shorter than the first checkpoint, day 30)")
    lines += ["", f"{'metric':<44}  {'baseline':>10}  {'variant':>10}  {'delta':>10}"]
    for metric in result.metrics:
        lines.append(
            f"{metric.name:<44}  {_fmt(metric.baseline):>10}  {_fmt(metric.variant):>10}  "
            f"{_fmt(metric.delta):>10}"
        )
    _out(lines)


SWEEP_COLUMNS: Final = (
    ("final_rendered", "shown"),
    ("final_active", "active"),
    ("final_archived", "archived"),
    ("never_rendered", "never"),
    ("churn_per_session_mean", "churn"),
    ("rejected", "rejected"),
)


def print_sweep(name: str, values: Sequence[str], runs: Sequence[SimRun], *, as_json: bool) -> None:
    summaries = [summarize(run) for run in runs]
    if as_json:
        _json(
            {
                "name": name,
                "rows": [{"value": v, "summary": s} for v, s in zip(values, summaries, strict=True)],
            }
        )
        return
    width = max(len(name), *(len(v) for v in values))
    medians = [f"med.{t[:4]}" for t in ("feedback", "project", "decision", "reference")]
    lines = [
        f"{name:<{width}}  " + "  ".join(f"{label:>8}" for _, label in SWEEP_COLUMNS)
        + "  " + "  ".join(f"{m:>9}" for m in medians)
    ]  # fmt: skip
    for value, summary in zip(values, summaries, strict=True):
        cells = [f"{_fmt(getattr(summary, field)):>8}" for field, _ in SWEEP_COLUMNS]
        med = [f"{_fmt(v):>9}" for v in summary.median_days_rendered_by_type.values()]
        lines.append(f"{value:<{width}}  " + "  ".join(cells) + "  " + "  ".join(med))
    _out(lines)


# ---------------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------------


def check_plot_target(path: str) -> None:
    """``--plot`` takes an .svg or .png name, and needs matplotlib (the ``sim`` extra)."""
    if not path.lower().endswith((".svg", ".png")):
        raise CommandError("--plot FILE must end in .svg or .png", EXIT_USAGE)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(SIM_EXTRA_HINT, EXIT_USAGE) from None


SIM_EXTRA_HINT: Final = "--plot needs matplotlib: pip install 'workmem[sim]'"


def _idle_stretches(run: SimRun, min_days: int = 7) -> list[tuple[int, int]]:
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


def plot(run: SimRun, path: str) -> int:
    """Two charts in one file: the strength of every memory that was ever in the block, with the
    render threshold (the weakest strength shown that day), and the block's composition by type.
    Returns the number of memory series drawn (each line carries the id ``memory-<id>``)."""
    import datetime as dt

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    plt.rcParams["svg.hashsalt"] = "workmem"  # the same run gives the same SVG bytes
    first = dt.date.fromisoformat(run.start)
    dates = [first + dt.timedelta(days=d.day) for d in run.days]
    shown = [m for m in run.memories if m.days_rendered > 0]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(11, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]}, dpi=100
    )
    for memory in shown:
        series = run.strengths.get(memory.id, ())
        values = [v if v is not None else float("nan") for v in series]
        (line,) = top.plot(dates[: len(values)], values, color=TYPE_COLOURS[memory.type], lw=0.7, alpha=0.45)
        line.set_gid(f"memory-{memory.id}")
    threshold = [v if v is not None else float("nan") for v in run.thresholds]
    top.plot(dates[: len(threshold)], threshold, color="black", lw=1.6, ls="--")
    top.set_yscale("log")
    top.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    top.yaxis.set_major_formatter(ScalarFormatter())
    top.yaxis.set_minor_formatter(NullFormatter())
    top.set_ylabel("strength (log scale)")
    idle = _idle_stretches(run)
    for axis in (top, bottom):
        for first_day, last_day in idle:
            axis.axvspan(dates[first_day], dates[last_day], color="#999999", alpha=0.15, lw=0)
    top.set_title(f"{run.name}: strength of the {len(shown)} memories that were ever in the block")
    handles: list[Artist] = [Line2D([], [], color=c, lw=2, label=t) for t, c in TYPE_COLOURS.items()]
    handles.append(Line2D([], [], color="black", lw=1.6, ls="--", label="render threshold (weakest shown)"))
    if idle:
        handles.append(Patch(color="#999999", alpha=0.3, label="no sessions"))
    top.legend(handles=handles, loc="upper right", fontsize=8, ncols=6)
    top.grid(alpha=0.3)

    stacks = [[d.rendered_by_type.get(t, 0) for d in run.days] for t in TYPE_COLOURS]
    bottom.stackplot(
        dates, *stacks, labels=list(TYPE_COLOURS), colors=list(TYPE_COLOURS.values()), alpha=0.8, step="post"
    )
    bottom.set_ylabel("memories in the block")
    bottom.set_title("block composition by type (end of each day)")
    bottom.legend(loc="upper left", fontsize=8, ncols=4)
    bottom.grid(alpha=0.3)
    locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
    bottom.xaxis.set_major_locator(locator)
    bottom.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    fig.tight_layout()
    try:
        fig.savefig(path, metadata={"Date": None} if path.lower().endswith(".svg") else {"Software": None})
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or type(exc).__name__}", 4) from None
    finally:
        plt.close(fig)
    return len(shown)
