"""Whole-process timings of the ``workmem`` command line.

Each command runs as a fresh process (what a host hook pays on every event): one warm-up run, then
``--runs`` timed runs (at least 7); the table shows the median, the fastest and the slowest run, and
the median as a multiple of a bare interpreter start (``python -c pass``) measured in the same
invocation. ``context``, ``message`` and ``list --json`` run against a workspace whose store holds
``--entries`` active memories (1,000 by default); ``tool`` records a file edit, the most frequent
hook. ``context`` uses a new session id on every run, so
each run does the full session start (promotion, render, freeze, write); ``message`` sends a new
explicit memory request on every run. Byte code is cached in a scratch directory, as it would be for
an installed package, and filled by the warm-up run.

    python -m bench.cli              # prints a markdown table
    python -m bench.cli --runs 15 --entries 1000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from adapters.paths import workspace_paths
from domain.codec import encode_pretty
from domain.model import (
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.timeutil import iso_from_ms, parse_iso_ms

NOW_ISO = "2026-05-01T09:00:00.000Z"
NOW = parse_iso_ms(NOW_ISO) or 0
TYPES = (MemoryType.FEEDBACK, MemoryType.PROJECT, MemoryType.DECISION, MemoryType.REFERENCE)
SOURCES = (MemorySource.EXPLICIT, MemorySource.COMPACTION, MemorySource.MANUAL)


class Timing(NamedTuple):
    label: str
    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def workmem_command() -> list[str]:
    """The installed ``workmem`` script next to this interpreter, else ``python -m adapters.cli``."""
    script = shutil.which("workmem", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "adapters.cli"]


def build_store(home: Path, root: str, entries: int) -> None:
    """A workspace store with ``entries`` distinct active memories created over the last 20 days."""
    stamp = iso_from_ms(NOW)
    items = []
    for i in range(entries):
        created = iso_from_ms(NOW - (i % 20) * 86_400_000)
        items.append(
            MemoryEntry(
                id=f"mem_{NOW}_{i:06d}",
                type=TYPES[i % 4],
                text=f"Benchmark memory number {i}: keep module {i % 37} independent of module {i % 41}",
                source=SOURCES[i % 3],
                confidence=0.75,
                status=MemoryStatus.ACTIVE,
                created_at=created,
                updated_at=created,
                retention_clock=NOW - (i % 20) * 86_400_000,
            )
        )
    layout = workspace_paths(home, root)
    layout.directory.mkdir(parents=True, exist_ok=True)
    store = WorkspaceStore(
        workspace=WorkspaceRef(root=root, key=layout.directory.name),
        entries=tuple(items),
        updated_at=stamp,
        last_activity_at=stamp,
    )
    layout.store.write_bytes(encode_pretty(store))


def time_runs(
    label: str,
    make_argv: Callable[[int], Sequence[str]],
    runs: int,
    env: dict[str, str],
    *,
    stdin: Path | None = None,
) -> Timing:
    """One warm-up run, then ``runs`` timed runs (``stdin``: a file fed to each run); a failing run
    aborts the benchmark."""
    samples: list[float] = []
    for i in range(runs + 1):
        argv = list(make_argv(i))
        with open(stdin or os.devnull, "rb") as feed:
            started = time.perf_counter()
            done = subprocess.run(argv, env=env, stdin=feed, capture_output=True, check=False)
            elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            raise SystemExit(
                f"{label}: exit {done.returncode}: {done.stderr.decode(errors='replace').strip()}"
            )
        if i > 0:
            samples.append(elapsed)
    return Timing(label, tuple(samples))


def table(timings: Sequence[Timing], baseline: Timing) -> str:
    lines = [
        "| command | median ms | min ms | max ms | × `python -c pass` |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in (baseline, *timings):
        ratio = t.median / baseline.median if baseline.median else float("nan")
        lines.append(
            f"| {t.label} | {t.median:.1f} | {min(t.samples):.1f} | {max(t.samples):.1f} | {ratio:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cli", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed runs per command (at least 7)")
    parser.add_argument("--entries", type=int, default=1000, help="active memories in the store")
    args = parser.parse_args(argv)
    runs = max(7, args.runs)
    workmem = workmem_command()
    with tempfile.TemporaryDirectory(prefix="workmem-bench-") as scratch:
        home = Path(scratch) / "home"
        root = Path(scratch) / "project"
        root.mkdir()
        build_store(home, str(root), args.entries)
        repo = str(Path(__file__).resolve().parent.parent)
        env = {
            **os.environ,
            "WORKMEM_HOME": str(home),
            "WORKMEM_NOW": NOW_ISO,
            "PYTHONPATH": os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p),
        }
        env.pop("WORKMEM_DEBUG", None)
        # measure what an installed package costs: byte code is cached (in the scratch directory, so
        # the source tree stays untouched), and the warm-up run fills that cache
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        base = [*workmem, "--workspace", str(root)]
        baseline = time_runs("`python -c pass`", lambda _: [sys.executable, "-c", "pass"], runs, env)
        timings = [
            time_runs("`workmem --version`", lambda _: [*workmem, "--version"], runs, env),
            time_runs(
                f"`workmem context` ({args.entries} entries)",
                lambda i: [*base, "context", "--session", f"bench-session-{i}"],
                runs,
                env,
            ),
            time_runs(
                f"`workmem message` ({args.entries} entries)",
                lambda i: [
                    *base,
                    "message",
                    "--session",
                    "bench",
                    f"Remember this: benchmark rule {i} holds",
                ],
                runs,
                env,
            ),
            time_runs(
                f"`workmem tool` ({args.entries} entries)",
                lambda i: [
                    *base,
                    "tool",
                    "--session",
                    "bench",
                    "--tool",
                    "edit",
                    "--args",
                    f'{{"filePath": "src/module_{i}.ts"}}',
                ],
                runs,
                env,
            ),
            time_runs(
                f"`workmem list --json` ({args.entries} entries)",
                lambda _: [*base, "list", "--json"],
                runs,
                env,
            ),
        ]
    sys.stdout.write(f"workmem whole-process timings ({runs} runs after 1 warm-up, {sys.executable})\n\n")
    sys.stdout.write(table(timings, baseline) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
