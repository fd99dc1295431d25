"""``workmem simulate``: run a scenario offline and show what the defaults (or other parameters) do
(docs/simulation.md).

The shell around the pure engine (``domain.simulation``): read the scenario file (TOML), apply
``--days``/``--set``, run, and print a table or JSON; ``--compare`` and ``--sweep`` run several
variants in parallel processes; ``--from-store`` starts from the current workspace's store, read
only; ``--plot`` draws with matplotlib and the progress bar uses tqdm (the optional ``sim`` extra,
imported only here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import sys
import tomllib
from collections.abc import Collection, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Final

import msgspec
from returns.pipeline import is_successful

from adapters import simulation_output as out, simulation_plot as chart
from adapters.commands import EXIT_OK, EXIT_STORAGE, CommandError, context, open_workspace
from domain.model import MemoryEntry, PendingJournal, WorkspaceStore
from domain.simulation.engine import SimRun, simulate
from domain.simulation.scenario import Scenario, decode_scenario, with_overrides

#: Runs at least this long (in days) get a progress bar on a terminal.
PROGRESS_MIN_DAYS: Final = 60
#: The forecast of ``--from-store`` without a scenario: nobody works on the workspace.
IDLE_DAYS: Final = 90


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML value (``60``, ``0.5``, ``true``, ``2026-03-01``, ``[]``), else the
    text itself as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignment(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name or any(not part for part in name.split(".")):
        raise CommandError(f"expected NAME=VALUE, got {text[:60]!r}")
    return name, parse_value(value.strip())


def read_scenario(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CommandError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise CommandError(f"{path}: invalid TOML: not UTF-8") from None


def build(data: dict[str, Any], assignments: Sequence[tuple[str, Any]], days: int | None) -> Scenario:
    """The scenario with the overrides applied, or a usage error naming the bad field's path."""
    changes = list(assignments)
    if days is not None:
        changes.append(("days", days))
    decoded = decode_scenario(with_overrides(data, changes))
    if not is_successful(decoded):
        raise CommandError(f"scenario: {decoded.failure()}")
    return decoded.unwrap()


def idle_forecast(today: dt.date, days: int | None) -> dict[str, Any]:
    """The scenario of ``--from-store`` without a scenario file: nobody works on the workspace."""
    return {
        "name": "idle forecast",
        "description": "nobody works on the workspace",
        "start": today,
        "days": IDLE_DAYS if days is None else days,
        "pattern": {"sessions_per_weekday": 0, "weekend_sessions": 0},
    }


class _Start(msgspec.Struct, frozen=True):
    """Where a forecast starts: a real workspace's values."""

    store: WorkspaceStore
    journal: PendingJournal
    archive: dict[str, MemoryEntry]


def _real_workspace(args: argparse.Namespace) -> tuple[_Start, dt.date]:
    """The current workspace's store, journal and archive, read without a lock and without writing."""

    ctx = context(args)
    ws = open_workspace(ctx)
    today = dt.datetime.fromtimestamp(ctx.now_ms / 1000, tz=dt.UTC).date()
    store = ws.read_store(ctx.now_ms)
    if store.corrupt:
        raise CommandError("the workspace store is unreadable; run 'workmem health'", EXIT_STORAGE)
    journal = ws.read_journal(ctx.now_ms)
    return _Start(store.value, journal.value, ws.read_archive()), today


# ---------------------------------------------------------------------------------------------
# Running (also in worker processes)
# ---------------------------------------------------------------------------------------------


def progress_bar(days: int, enabled: bool) -> Any:
    """A tqdm bar on stderr, or ``None`` (no terminal, JSON mode, a short run, or no tqdm)."""
    if not enabled or days < PROGRESS_MIN_DAYS or not sys.stderr.isatty():
        return None
    try:  # optional extra: a progress bar where tqdm is installed
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm(total=days, unit="day", file=sys.stderr, leave=False)


def run_one(
    scenario: Scenario, start: _Start | None, *, trace: bool = False, progress: bool = False
) -> SimRun:
    """One run. The cyclic garbage collector is off meanwhile: the core builds frozen values that
    form no reference cycles (a year of the steady scenario leaves a few dozen cyclic objects and the
    same peak memory either way), and walking the growing heap again and again cost about a fifth of
    the run (docs/performance.md, "Simulation")."""
    bar = progress_bar(scenario.days, progress)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return simulate(
            scenario,
            store=start.store if start else None,
            journal=start.journal if start else None,
            archive=start.archive if start else None,
            trace=trace,
            on_day=(lambda _day: bar.update(1)) if bar is not None else None,
        )
    finally:
        if collecting:
            gc.enable()
        if bar is not None:
            bar.close()


class _Job(msgspec.Struct, frozen=True):
    scenario: Scenario
    start: _Start | None
    trace: bool = False  # keep strengths per day (the run that gets plotted)


def _worker(payload: bytes) -> bytes:
    """One run in a worker process. Scenario and start go in, the run comes out, both as JSON
    bytes, so that only plain data crosses the process boundary."""
    job = msgspec.json.decode(payload, type=_Job)
    return msgspec.json.encode(run_one(job.scenario, job.start, trace=job.trace))


def run_many(
    scenarios: Sequence[Scenario], start: _Start | None, *, traced: Collection[int] = ()
) -> list[SimRun]:
    """Each scenario in its own process (at most one per core), results in input order; the runs at
    the indexes ``traced`` keep their strengths for a plot."""
    payloads = [
        msgspec.json.encode(_Job(scenario=s, start=start, trace=i in traced)) for i, s in enumerate(scenarios)
    ]
    workers = max(1, min(len(payloads), os.cpu_count() or 1))
    if workers == 1:
        results = [_worker(p) for p in payloads]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_worker, payloads))
    return [msgspec.json.decode(r, type=SimRun) for r in results]


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


def simulate_cmd(args: argparse.Namespace) -> int:

    if args.days is not None and not 1 <= args.days <= 3650:
        raise CommandError("--days must be between 1 and 3650")
    if args.plot is not None:
        chart.check_plot_target(args.plot)
    assignments = [parse_assignment(a) for a in args.set]
    start: _Start | None = None
    if args.from_store:
        start, today = _real_workspace(args)
        data = read_scenario(args.scenario) if args.scenario else idle_forecast(today, args.days)
        assignments.append(("start", today))
    elif args.scenario:
        data = read_scenario(args.scenario)
    else:
        raise CommandError("a SCENARIO file is required (or --from-store)")
    baseline = build(data, assignments, args.days)

    if args.sweep is not None:
        name, _, values = args.sweep.partition("=")
        choices = [v.strip() for v in values.split(",") if v.strip()]
        if not name.strip() or not choices:
            raise CommandError(f"expected --sweep NAME=V1,V2,..., got {args.sweep[:60]!r}")
        variants = [build(data, [*assignments, (name.strip(), parse_value(v))], args.days) for v in choices]
        runs = run_many(variants, start, traced=(0,) if args.plot is not None else ())
        out.print_sweep(name.strip(), choices, runs, as_json=args.json)
        if args.plot is not None:
            chart.plot(runs[0], variants[0].parameters.tuning(), args.plot)
        return EXIT_OK
    if args.compare is not None:
        extra = [parse_assignment(a) for a in args.compare]
        variant = build(data, [*assignments, *extra], args.days)
        base_run, variant_run = run_many(
            [baseline, variant], start, traced=(1,) if args.plot is not None else ()
        )
        out.print_compare(base_run, variant_run, baseline, variant, as_json=args.json)
        if args.plot is not None:
            chart.plot(variant_run, variant.parameters.tuning(), args.plot)
        return EXIT_OK

    run = run_one(baseline, start, trace=args.plot is not None, progress=not args.json)
    out.print_run(run, baseline, as_json=args.json, from_store=args.from_store)
    if args.plot is not None:
        chart.plot(run, baseline.parameters.tuning(), args.plot)
    return EXIT_OK
