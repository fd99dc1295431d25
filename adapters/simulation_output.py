"""How ``workmem simulate`` shows a run: a weekly table and a summary, and JSON
(docs/simulation.md, "Reading the output"; the chart is ``adapters.simulation_plot``). The JSON keys
are the struct field names of ``domain.simulation.report``; the schema is in the docs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from domain.limits import DAY_MS
from domain.render import render_workspace_block
from domain.retention import Tuning
from domain.simulation.engine import SimRun
from domain.simulation.report import Comparison, Summary, WeekRow, compare, summarize, weeks
from domain.simulation.scenario import Scenario
from domain.simulation.workspace import date_ms

TYPE_COLUMNS: Final = (("fb", "feedback"), ("pr", "project"), ("de", "decision"), ("re", "reference"))


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
        f"freshness: stale among rendered {summary.stale_rendered_share:g}, expired at the end "
        f"{summary.final_expired_share:g}, reinforced from use {summary.use_reinforcements}, "
        f"mean strength of the last block {summary.final_rendered_strength:g}",
    ]


def _final_block(run: SimRun, scenario: Scenario) -> str:
    """The block a session opening right after the last simulated day would see."""

    end_ms = date_ms(scenario.start) + scenario.days * DAY_MS
    return render_workspace_block(run.final_store, end_ms, scenario.parameters.tuning()).text


def run_lines(run: SimRun, scenario: Scenario, *, from_store: bool = False) -> list[str]:
    """What ``workmem simulate`` prints for one run: a title, the weekly table and the summary."""
    lines = [
        f"scenario {scenario.name!r}, seed {scenario.seed}, {scenario.days} days from {run.start}",
        "",
        *week_table(weeks(run.days)),
        "",
        *summary_lines(summarize(run)),
    ]
    if from_store:
        block = _final_block(run, scenario)
        lines += ["", f"the block after {scenario.days} days:", block or "(empty)"]
    return lines


def print_run(run: SimRun, scenario: Scenario, *, as_json: bool, from_store: bool) -> None:
    if not as_json:
        _out(run_lines(run, scenario, from_store=from_store))
        return
    document: dict[str, Any] = {
        "scenario": scenario.name,
        "seed": scenario.seed,
        "start": run.start,
        "days": scenario.days,
        "parameters": tuning_dict(scenario.parameters.tuning()),
        "weeks": weeks(run.days),
        "summary": summarize(run),
    }
    if from_store:
        document["final_block"] = _final_block(run, scenario)
    _json(document)


# ---------------------------------------------------------------------------------------------
# Comparisons and sweeps
# ---------------------------------------------------------------------------------------------


def _changed(baseline: Scenario, variant: Scenario) -> str:
    left = tuning_dict(baseline.parameters.tuning())
    right = tuning_dict(variant.parameters.tuning())
    changed = [f"{k}={_fmt(right[k]) if not isinstance(right[k], dict) else right[k]}" for k in right
               if right[k] != left[k]]  # fmt: skip
    return ", ".join(changed) or "(no parameter changed)"


def compare_lines(result: Comparison, baseline: Scenario, variant: Scenario) -> list[str]:
    """What ``--compare`` prints: the block differences on the checkpoint days, then the metrics."""
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
    return lines


def print_compare(
    base_run: SimRun, variant_run: SimRun, baseline: Scenario, variant: Scenario, *, as_json: bool
) -> None:
    result = compare(base_run, variant_run)
    if not as_json:
        _out(compare_lines(result, baseline, variant))
        return
    _json(
        {
            "scenario": baseline.name,
            "baseline": {"parameters": tuning_dict(baseline.parameters.tuning())},
            "variant": {"parameters": tuning_dict(variant.parameters.tuning())},
            "blocks": result.blocks,
            "metrics": result.metrics,
        }
    )


SWEEP_COLUMNS: Final = (
    ("final_rendered", "shown"),
    ("final_active", "active"),
    ("final_archived", "archived"),
    ("never_rendered", "never"),
    ("churn_per_session_mean", "churn"),
    ("rejected", "rejected"),
)


def sweep_lines(name: str, values: Sequence[str], summaries: Sequence[Summary]) -> list[str]:
    """What ``--sweep`` prints: one row per value."""
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
    return lines


def print_sweep(name: str, values: Sequence[str], runs: Sequence[SimRun], *, as_json: bool) -> None:
    summaries = [summarize(run) for run in runs]
    if not as_json:
        _out(sweep_lines(name, values, summaries))
        return
    rows = [{"value": v, "summary": s} for v, s in zip(values, summaries, strict=True)]
    _json({"name": name, "rows": rows})
