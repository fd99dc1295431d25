"""Whole-process timings of ``workmem simulate`` (docs/performance.md, "Simulation").

Runs the shipped steady scenario (ten sessions every weekday, about three candidates per session)
as a fresh ``workmem simulate ... --json`` process: for one year, and for 90 and 360 days to check
that the cost grows linearly with the simulated time. One warm-up run (the 90-day one, which also
fills the byte-code cache), then ``--runs`` timed runs of each; the table gives the median, fastest
and slowest wall time, the median CPU time of the child process (the machine may be shared: CPU
time is what the run itself used), and the median as a multiple of a bare interpreter start
(``python -c pass``) measured in the same invocation.

    python -m bench.simulation              # prints a markdown table and the two checks
    python -m bench.simulation --runs 5

Targets: the one-year run at most 20 s; the 360-day run at most 4.5 times the 90-day run.
The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from bench.cli import workmem_command

REPO = Path(__file__).resolve().parent.parent
STEADY = REPO / "scenarios" / "steady.toml"
YEAR_TARGET_S = 20.0
LINEAR_TARGET = 4.5


class Sample(NamedTuple):
    wall_s: float
    cpu_s: float


class Timing(NamedTuple):
    label: str
    samples: tuple[Sample, ...]

    @property
    def wall(self) -> float:
        return statistics.median(s.wall_s for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu_s for s in self.samples)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv: Sequence[str], env: dict[str, str]) -> Sample:
    cpu = _child_cpu()
    started = time.perf_counter()
    done = subprocess.run(list(argv), env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode(errors='replace')}")
    return Sample(wall, _child_cpu() - cpu)


def time_runs(label: str, argv: Sequence[str], runs: int, env: dict[str, str]) -> Timing:
    return Timing(label, tuple(run_once(argv, env) for _ in range(runs)))


def table(timings: Sequence[Timing], baseline: Timing) -> str:
    lines = [
        "| run | median wall s | min s | max s | median CPU s | × `python -c pass` |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t in (baseline, *timings):
        walls = [s.wall_s for s in t.samples]
        lines.append(
            f"| {t.label} | {t.wall:.2f} | {min(walls):.2f} | {max(walls):.2f} | {t.cpu:.2f} "
            f"| {t.wall / baseline.wall:.0f} |"
        )
    return "\n".join(lines)


def quarters(days: int = 360, size: int = 90) -> list[float]:
    """CPU seconds of each ``size``-day stretch of one in-process ``days``-day steady run: equal
    stretches once the store is full mean the cost per simulated day stays flat."""
    import tomllib

    from domain.simulation.engine import simulate
    from domain.simulation.scenario import decode_scenario, with_overrides

    with STEADY.open("rb") as handle:
        data = tomllib.load(handle)
    scenario = decode_scenario(with_overrides(data, [("days", days)])).unwrap()
    marks = [time.process_time()]

    def on_day(day: int) -> None:
        if day % size == 0:
            marks.append(time.process_time())

    simulate(scenario, on_day=on_day)
    return [b - a for a, b in itertools.pairwise(marks)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.simulation", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per length (at least 3)")
    args = parser.parse_args(argv)
    runs = max(3, args.runs)
    workmem = workmem_command()
    with tempfile.TemporaryDirectory(prefix="workmem-bench-") as scratch:
        env = {
            **os.environ,
            "WORKMEM_HOME": str(Path(scratch) / "home"),
            "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pycache"),
        }

        def simulate(days: int | None) -> list[str]:
            extra = ["--days", str(days)] if days is not None else []
            return [*workmem, "simulate", str(STEADY), "--json", *extra]

        run_once(simulate(90), env)  # warm-up
        baseline = time_runs("`python -c pass`", [sys.executable, "-c", "pass"], max(runs, 7), env)
        quarter = time_runs("steady, 90 days", simulate(90), runs, env)
        long = time_runs("steady, 360 days", simulate(360), runs, env)
        year = time_runs("steady, one year (365 days)", simulate(None), runs, env)
    stretches = quarters()
    print(table((quarter, long, year), baseline))
    print()
    print(
        "CPU s per 90 simulated days of one 360-day run (in-process): "
        + ", ".join(f"{q:.1f}" for q in stretches)
    )
    ratio = long.wall / quarter.wall
    cpu_ratio = long.cpu / quarter.cpu
    year_ok = year.wall <= YEAR_TARGET_S
    linear_ok = ratio <= LINEAR_TARGET
    print()
    verdict = "met" if year_ok else "MISSED"
    print(
        f"one year: {year.wall:.1f} s wall, {year.cpu:.1f} s CPU (target <= {YEAR_TARGET_S:g} s): {verdict}"
    )
    print(
        f"360 days / 90 days: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= {LINEAR_TARGET:g}x): "
        f"{'met' if linear_ok else 'MISSED'}"
    )
    return 0 if year_ok and linear_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
