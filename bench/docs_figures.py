"""The numbers and charts of docs/simulation.md, "What the shipped scenarios show", from fresh runs.

Every figure of that section sits between ``<!-- figures:NAME -->`` and ``<!-- /figures:NAME -->``
and is written here from the runs listed in ``SPECS`` (the shipped scenarios with the ``--days`` and
``--set`` the doc shows), with the same functions ``workmem simulate`` prints with. The runs are
shorter than the scenarios' own lengths so that tests/test_docs_figures.py, which regenerates the
figures and fails when the doc differs, stays within a CI budget.

    python -m bench.docs_figures            # rewrite the figures in docs/simulation.md
    python -m bench.docs_figures --check    # exit 1 and print a diff if the doc is out of date
    python -m bench.docs_figures --images   # also redraw docs/simulation-*.png (the sim extra)
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import io
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from adapters.commands.simulate import build, idle_forecast, parse_assignment, read_scenario, run_many
from adapters.simulation_output import compare_lines, summary_lines, sweep_lines, week_table
from adapters.simulation_plot import idle_stretches
from domain.limits import DAY_MS
from domain.simulation.engine import SimRun, simulate
from domain.simulation.report import Comparison, compare, summarize, weeks
from domain.simulation.scenario import Scenario

REPO: Final = Path(__file__).resolve().parent.parent
DOC: Final = REPO / "docs" / "simulation.md"


class Spec(NamedTuple):
    """One run: a shipped scenario, ``--days`` and ``--set NAME=VALUE`` assignments."""

    scenario: str
    days: int | None = None
    sets: tuple[str, ...] = ()

    def build(self) -> Scenario:
        data = read_scenario(str(REPO / self.scenario))
        return build(data, [parse_assignment(a) for a in self.sets], self.days)


STEADY_DAYS: Final = 90
FRESHNESS_DAYS: Final = 90
SPECS: Final = {
    "steady": Spec("scenarios/steady.toml", STEADY_DAYS),
    "steady-cap": Spec("scenarios/steady.toml", STEADY_DAYS, ("global_cap=34",)),
    "steady-30": Spec("scenarios/steady.toml", STEADY_DAYS, ("half_life_days=30",)),
    "steady-90": Spec("scenarios/steady.toml", STEADY_DAYS, ("half_life_days=90",)),
    "break": Spec("scenarios/break.toml"),
    "break-flat": Spec("scenarios/break.toml", None, ("dormant_multiplier=1.0",)),
    "noisy": Spec("scenarios/noisy.toml"),
    "freshness": Spec("scenarios/freshness.toml", FRESHNESS_DAYS),
    "freshness-no-use": Spec("scenarios/freshness.toml", FRESHNESS_DAYS, ("freshness.use_rate=0",)),
}
#: The runs drawn into docs/simulation-<scenario>.png.
CHARTED: Final = ("steady", "break", "noisy", "freshness")
#: The small workspace of docs/simulation-from-store.png: ten days of one session a day with one
#: candidate each, then the 60 idle days ``--from-store --days 60`` forecasts.
SMALL_WORKSPACE: Final = Spec(
    "scenarios/steady.toml", 10, ("pattern.sessions_per_weekday=1", "session.candidates=1.0")
)
FORECAST_DAYS: Final = 60

Runs = Mapping[str, SimRun]


def run_all(*, traced: bool = False) -> tuple[dict[str, Scenario], dict[str, SimRun]]:
    """Every run of ``SPECS``, in parallel processes (one per core)."""
    scenarios = {name: spec.build() for name, spec in SPECS.items()}
    names = list(scenarios)
    keep = {names.index(n) for n in CHARTED} if traced else set()
    runs = run_many([scenarios[n] for n in names], None, traced=keep)
    return scenarios, dict(zip(names, runs, strict=True))


# ---------------------------------------------------------------------------------------------
# Writing the figures
# ---------------------------------------------------------------------------------------------


def command(spec: Spec, *extra: str) -> str:
    days = [f"--days {spec.days}"] if spec.days is not None else []
    sets = [f"--set {a}" for a in spec.sets]
    return " ".join(["workmem simulate", spec.scenario, *days, *sets, *extra])


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def _rows(table: Sequence[str], picked: Sequence[int]) -> list[str]:
    """The header and the picked week rows (1-based) of a weekly table, ``...`` where rows are left out."""
    lines = [table[0]]
    previous = 0
    for week in sorted(set(picked)):
        if week != previous + 1:
            lines.append("...")
        lines.append(table[week])
        previous = week
    if previous != len(table) - 1:
        lines.append("...")
    return lines


def _text(lines: Sequence[str]) -> list[str]:
    return ["```text", *lines, "```"]


def steady(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    run, scenario = runs["steady"], scenarios["steady"]
    tuning = scenario.parameters.tuning()
    summary = summarize(run)
    rows = weeks(run.days)
    full = next(d.day for d in run.days if d.rendered == tuning.global_cap)
    after = [d for d in run.days if d.day >= full]
    filled = next(d.day for d in run.days if d.active >= tuning.max_stored_active)
    fill_week = (filled - 1) // 7 + 1
    weekly = summary.final_archived / ((len(run.days) - filled) / 7)
    caps = {t.value: n for t, n in tuning.type_caps.items()}
    by_type = {t: _span([d.rendered_by_type[t] for d in after]) for t in caps}
    duplicates = summary.rejected_by_reason.get("duplicate_in_summary", 0)
    picked = [1, 2, fill_week, len(rows) - 1, len(rows)]
    return [
        f"`{command(SPECS['steady'])}`: {summary.sessions:,} sessions, {summary.candidates:,} compaction "
        "candidates. The first weeks, the week the store fills up and the last weeks of the table, "
        "then the summary:",
        "",
        *_text(
            [
                f"scenario {scenario.name!r}, seed {scenario.seed}, {scenario.days} days from {run.start}",
                "",
                *_rows(week_table(rows), picked),
                "",
                *summary_lines(summary),
            ]
        ),
        "",
        "Measured in this run:",
        "",
        f"- the block holds {_span([d.rendered for d in after])} memories every day from day {full} on "
        f"(global cap {tuning.global_cap}): feedback {by_type['feedback']}, decisions "
        f"{by_type['decision']}, projects {by_type['project']}, references {by_type['reference']} "
        f"(type caps {caps['feedback']}, {caps['decision']}, {caps['project']}, {caps['reference']});",
        f"- {_span([d.block_chars for d in after])} characters of the {tuning.char_budget:,}-character "
        "budget;",
        f"- the store reaches {tuning.max_stored_active} active memories on day {filled} (week "
        f"{fill_week}); from then on the archive takes {weekly:.0f} memories a week "
        f"({summary.final_archived:,} by day {len(run.days)});",
        f"- {summary.memories_stored:,} memories stored, {summary.never_rendered:,} of them "
        f"({100 * summary.never_rendered / summary.memories_stored:.0f}%) never shown;",
        f"- {summary.rejected:,} rejections among the {summary.candidates:,} candidates and the explicit "
        f"requests, {duplicates} of them duplicates within one summary.",
    ]


def _kinds(labels: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for label in labels:
        kind = label[1 : label.index("]")]
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _compare_excerpt(
    result: Comparison, baseline: Scenario, variant: Scenario, names: Sequence[str]
) -> list[str]:
    """``--compare`` output without the memory lists, and only the metric rows named."""
    full = compare_lines(result, baseline, variant)
    keep = [full[0], ""]
    keep += [line for line in full[2:] if line.startswith("day ")]
    metrics = full.index(next(line for line in full if line.startswith("metric ")))
    keep += ["", full[metrics], "..."]
    keep += [line for line in full[metrics + 1 :] if line.split()[0] in names]
    return keep


COMPARED: Final = (
    "never_rendered",
    "churn_per_session_mean",
    "final_rendered",
    "final_block_chars",
)


def steady_cap(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    result = compare(runs["steady"], runs["steady-cap"])
    day = max(b.day for b in result.blocks)
    block = next(b for b in result.blocks if b.day == day)
    return [
        f"`{command(SPECS['steady'], '--compare global_cap=34')}`: on day {day} the variant's block has "
        f"{len(block.only_variant)} memories the baseline's has not ({_kinds(block.only_variant)}) and "
        + (
            f"lacks {len(block.only_baseline)} of the baseline's:"
            if block.only_baseline
            else "keeps all of the baseline's:"
        ),
        "",
        *_text(_compare_excerpt(result, scenarios["steady"], scenarios["steady-cap"], COMPARED)),
    ]


def steady_half_life(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    del scenarios
    values = ["30", "45", "90"]
    summaries = [summarize(runs[n]) for n in ("steady-30", "steady", "steady-90")]
    return [
        f"`{command(SPECS['steady'], '--sweep half_life_days=' + ','.join(values))}`:",
        "",
        *_text(sweep_lines("half_life_days", values, summaries)),
    ]


def broke(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    run, scenario = runs["break"], scenarios["break"]
    rows = weeks(run.days)
    idle = [r.week for r in rows if r.sessions == 0]
    first, last = idle[0], idle[-1]
    churn = {r.week: r.entered + r.left for r in rows}
    before = [churn[w] for w in range(2, first - 1)]  # week 1 fills the empty block
    during = [churn[w] for w in idle]
    resumed = [churn[w] for w in range(last + 1, len(rows) + 1)]
    (stretch,) = [s for s in idle_stretches(run) if s[1] - s[0] > 14]
    start_chars = run.days[stretch[0] - 1].block_chars
    end_chars = run.days[stretch[1]].block_chars
    (span,) = run.final_store.dormant_spans
    dormant = (span.end - span.start) / DAY_MS
    tuning = scenario.parameters.tuning()
    ratio = 2 ** ((1 - tuning.dormant_multiplier) * dormant / tuning.half_life_days)
    (pause,) = scenario.pattern.breaks
    return [
        f"`{command(SPECS['break'])}`: the weeks around the break ({pause.start} for {pause.days} days):",
        "",
        *_text(_rows(week_table(rows), range(max(1, first - 2), min(len(rows), last + 3) + 1))),
        "",
        "Measured in this run:",
        "",
        f"- memories in and out of the end-of-day block per week: {_span(before)} while working "
        f"(weeks 2–{first - 2}), {_span(during)} during the break (weeks {first}–{last}), "
        f"{_span(resumed)} once work resumes (weeks {last + 1}–{len(rows)});",
        f"- the block grows from {start_chars:,} characters on the last working day to {end_chars:,} on the "
        "last idle day, as the stale marks appear;",
        f"- the store records one dormant span of {dormant:.1f} days, so a memory from before the break "
        f"that is not reinforced afterwards stays {ratio:.2f} times stronger than without the discount "
        f"(2 ** ({1 - tuning.dormant_multiplier:g} × {dormant:.1f} / {tuning.half_life_days:g})).",
    ]


def break_discount(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    result = compare(runs["break"], runs["break-flat"])
    return [
        f"`{command(SPECS['break'], '--compare dormant_multiplier=1.0')}`:",
        "",
        *_text(_compare_excerpt(result, scenarios["break"], scenarios["break-flat"], COMPARED)),
    ]


def noisy(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    run, scenario = runs["noisy"], scenarios["noisy"]
    tuning = scenario.parameters.tuning()
    summary = summarize(run)
    reasons = sorted(summary.rejected_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
    full = next(d.day for d in run.days if d.rendered == tuning.global_cap)
    explicit = summary.median_days_rendered_by_source["explicit"]
    return [
        f"`{command(SPECS['noisy'])}`: {summary.rejected:,} rejections among the {summary.candidates:,} "
        "candidates and the explicit requests, by reason: "
        + ", ".join(f"`{r}` {n}" for r, n in reasons)
        + ". "
        f"{summary.memories_stored:,} memories stored in {len(run.days)} days; the block is full from day "
        f"{full}; explicit requests stay in it a median of {explicit:g} days.",
    ]


def freshness(scenarios: Mapping[str, Scenario], runs: Runs) -> list[str]:
    from collections import Counter

    from domain.enums import MemoryStatus
    from domain.freshness import grade
    from domain.simulation.workspace import date_ms

    run, scenario = runs["freshness"], scenarios["freshness"]
    summary, without = summarize(run), summarize(runs["freshness-no-use"])
    end = date_ms(scenario.start) + len(run.days) * DAY_MS
    active = [e for e in run.final_store.entries if e.status is not MemoryStatus.SUPERSEDED]
    grades = Counter(grade(e, end).value for e in active)
    marked = sum(1 for e in active if e.stale_reason)
    cited = sum(1 for e in active if e.cites)
    return [
        f"`{command(SPECS['freshness'])}`: at the end, of {len(active)} active memories "
        + ", ".join(f"{grades.get(g, 0)} are {g}" for g in ("fresh", "aging", "stale", "expired"))
        + f"; {cited} cite the simulated code and {marked} of them are stale because the code they cite "
        f"changed. Day by day a share of {summary.stale_rendered_share:g} of the memories the block showed "
        "were stale: a stale memory ranks at half its strength, and a busy store has fresher ones to show. "
        f"Sessions used what they were shown {summary.use_reinforcements:,} times; the last block's mean "
        f"strength is {summary.final_rendered_strength:g}, against {without.final_rendered_strength:g} "
        f"with `--set freshness.use_rate=0`, and {without.never_rendered:,} memories are never shown "
        f"without use against {summary.never_rendered:,} with it.",
        "",
        *_text(summary_lines(summary)),
    ]


FIGURES: Final[dict[str, Callable[[Mapping[str, Scenario], Runs], list[str]]]] = {
    "steady": steady,
    "steady-cap": steady_cap,
    "steady-half-life": steady_half_life,
    "break": broke,
    "break-discount": break_discount,
    "noisy": noisy,
    "freshness": freshness,
}

REGION: Final = re.compile(r"(<!-- figures:([a-z-]+) -->\n)(.*?)(<!-- /figures:\2 -->)", re.DOTALL)


def rewrite(doc: str, figures: Mapping[str, str]) -> str:
    """``doc`` with every marked region replaced by its figure; every figure needs exactly one region,
    and every region a figure."""
    found = [m.group(2) for m in REGION.finditer(doc)]
    if sorted(found) != sorted(figures):
        raise ValueError(f"figure regions {sorted(found)} do not match the figures {sorted(figures)}")
    return REGION.sub(lambda m: m.group(1) + figures[m.group(2)] + m.group(4), doc)


def figures(scenarios: Mapping[str, Scenario], runs: Runs) -> dict[str, str]:
    return {name: "\n".join(write(scenarios, runs)) + "\n" for name, write in FIGURES.items()}


def fresh_doc() -> str:
    scenarios, runs = run_all()
    return rewrite(DOC.read_text(encoding="utf-8"), figures(scenarios, runs))


# ---------------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------------


def _save_png(fig: object, path: Path) -> None:
    """A small PNG: the figure with at most 256 colours."""
    from matplotlib.figure import Figure
    from PIL import Image

    assert isinstance(fig, Figure)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    with Image.open(buffer) as image:
        image.convert("RGB").quantize(256).save(path, optimize=True)


def draw_images(scenarios: Mapping[str, Scenario], runs: Runs) -> list[Path]:
    from adapters.simulation_plot import draw

    written = []
    for name in CHARTED:
        path = REPO / "docs" / f"simulation-{name}.png"
        _save_png(draw(runs[name], scenarios[name].parameters.tuning()), path)
        written.append(path)
    small = SMALL_WORKSPACE.build()
    store = simulate(small).final_store
    today = small.start + dt.timedelta(days=small.days)
    forecast = build(idle_forecast(today, FORECAST_DAYS), [], None)
    run = simulate(forecast, store=store, trace=True)
    path = REPO / "docs" / "simulation-from-store.png"
    _save_png(draw(run, forecast.parameters.tuning()), path)
    written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.docs_figures", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if the doc differs")
    parser.add_argument("--images", action="store_true", help="also redraw docs/simulation-*.png")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    scenarios, runs = run_all(traced=args.images)
    old = DOC.read_text(encoding="utf-8")
    new = rewrite(old, figures(scenarios, runs))
    elapsed = time.perf_counter() - started
    if args.check:
        diff = difflib.unified_diff(
            old.splitlines(), new.splitlines(), "docs/simulation.md", "fresh runs", lineterm=""
        )
        text = "\n".join(diff)
        print(text or f"docs/simulation.md is up to date ({elapsed:.1f} s)")
        return 1 if text else 0
    DOC.write_text(new, encoding="utf-8")
    print(f"docs/simulation.md: {'rewritten' if new != old else 'unchanged'} ({elapsed:.1f} s)")
    if args.images:
        for path in draw_images(scenarios, runs):
            print(f"{path.relative_to(REPO)}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
