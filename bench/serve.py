"""Request latency of ``workmem serve`` (one long-lived process, JSON lines over pipes).

A ``workmem serve`` child is started against a workspace whose store holds ``--entries`` active
memories (1,000 by default). Each kind of request is sent ``--warmup`` times untimed, then
``--requests`` times timed, one at a time; a sample is the wall time from writing the request line to
reading its response line, as the host sees it. The table shows the median, the 90th percentile, the
fastest and the slowest request, and the median as a fraction of the baseline measured in the same
invocation: the same ``context`` request as one ``workmem context`` process (what a host that runs
one command per event pays; one warm-up run, then ``--cli-runs`` runs). ``hello`` is the protocol
round trip alone (no storage). ``atomic write`` is the floor of every request that writes: one
``adapters.jsonl.atomic_write`` of a 2 KiB file (temp file, fsync, rename, directory fsync) in the
data home, timed in this process between the request kinds — ``tool`` writes one file, ``message``
two, so on a disk whose fsync is slow (a busy machine) they cannot be faster than that; the row after
it is the same write preceded by keeping the file's last good generation (a hard link and a rename),
as every commit does for a file it read whole, the two timed alternately.

- ``context``: the same session on every request — what a host sends before each model request
  (within a fresh cache epoch: the frozen block and hot state, nothing written).
- ``context (new session)``: a new session id on every request — the full session start (promotion,
  render, freeze, write).
- ``message``: a new explicit memory request on every request (a pending memory: session and journal
  written, evidence appended).
- ``tool``: a file edit, the most frequent host event.

    python -m bench.serve                 # prints a markdown table
    python -m bench.serve --requests 400 --entries 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from bench.cli import NOW_ISO, Command, Timing, build_store, time_interleaved, workmem_command

TARGET_MS = 5.0


class Child:
    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*workmem_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        self.stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]

    def request(self, payload: dict[str, Any]) -> float:
        """Milliseconds from writing the request to reading its response; a failed request aborts."""
        line = json.dumps(payload).encode() + b"\n"
        started = time.perf_counter()
        self.stdin.write(line)
        self.stdin.flush()
        answer = self.stdout.readline()
        elapsed = (time.perf_counter() - started) * 1000
        if b'"error"' in answer:
            raise SystemExit(f"{payload['op']}: {answer.decode(errors='replace').strip()}")
        return elapsed

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=60)
        self.stdout.close()


def measure(
    child: Child, label: str, make: Callable[[int], dict[str, Any]], warmup: int, requests: int
) -> Timing:
    for i in range(warmup):
        child.request(make(-1 - i))
    return Timing(label, tuple(child.request(make(i)) for i in range(requests)))


def time_atomic_writes(directory: Path, count: int) -> list[Timing]:
    """``atomic_write`` of a 2 KiB file, alone and after ``keep_previous`` (what a commit does to a
    file it read whole, docs/decisions.md#last-good-generation), ``count`` of each, alternately, so
    that whatever else the disk is doing touches both alike."""
    from adapters.jsonl import atomic_write, keep_previous, previous_of

    target = directory / "bench-atomic-write.json"
    atomic_write(target, b"x" * 2048)
    plain: list[float] = []
    keeping: list[float] = []
    kept: list[float] = []
    for i in range(2 * count):
        started = time.perf_counter()
        if i % 2:
            keep_previous(target)
            kept.append((time.perf_counter() - started) * 1000)
        atomic_write(target, b"x" * 2048)
        (keeping if i % 2 else plain).append((time.perf_counter() - started) * 1000)
    target.unlink()
    previous_of(target).unlink()
    return [
        Timing("atomic write (2 fsyncs, no workmem)", tuple(plain)),
        Timing("the same, keeping the last good generation", tuple(keeping)),
        Timing("of which keeping it (link, lstat, rename)", tuple(kept)),
    ]


def latency_table(timings: Sequence[Timing], baseline: Timing) -> str:
    rows = [
        "| request | median ms | p90 ms | min ms | max ms | × baseline |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t in (baseline, *timings):
        p90 = statistics.quantiles(t.samples, n=10)[-1]
        ratio = t.median / baseline.median if baseline.median else float("nan")
        low, high = min(t.samples), max(t.samples)
        rows.append(f"| {t.label} | {t.median:.2f} | {p90:.2f} | {low:.2f} | {high:.2f} | {ratio:.4f} |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="timed requests per kind (at least 20)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed requests per kind first")
    parser.add_argument("--entries", type=int, default=1000, help="active memories in the store")
    parser.add_argument("--cli-runs", type=int, default=9, help="timed runs of the CLI baseline")
    args = parser.parse_args(argv)
    if args.requests < 20:
        parser.error("--requests must be at least 20")

    started_load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="workmem-bench-serve-") as scratch:
        home = Path(scratch) / "home"
        root = str(Path(scratch) / "project")
        os.makedirs(root)
        build_store(home, root, args.entries)
        env = {
            **os.environ,
            "WORKMEM_HOME": str(home),
            "WORKMEM_NOW": NOW_ISO,
            "PYTHONPYCACHEPREFIX": str(Path(scratch) / "pycache"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte code cached, as for an installed package
        env.pop("WORKMEM_DEBUG", None)
        # the baseline first, while the workspace holds one session (the new-session rows add many)
        argv = [*workmem_command(), "--workspace", root, "context", "--session", "steady"]
        [baseline] = time_interleaved(
            [Command("baseline: `workmem context` process", lambda i: argv)], max(10, args.cli_runs), env
        )
        child = Child(env)
        ws = {"workspace": root}
        try:
            child.request({"op": "context", "session": "steady", **ws})
            steady = {"op": "context", "session": "steady", **ws}
            rows = [
                measure(child, "`context`", lambda i: steady, args.warmup, args.requests),
                measure(
                    child,
                    "`message`",
                    lambda i: {
                        "op": "message",
                        "session": "steady",
                        "messageId": f"m{i}",
                        "text": f"remember: module {i} must stay independent of module {i + 1}",
                        **ws,
                    },
                    args.warmup,
                    args.requests,
                ),
                measure(
                    child,
                    "`tool` (edit)",
                    lambda i: {
                        "op": "tool",
                        "session": "steady",
                        "tool": "edit",
                        "args": {"filePath": f"src/m{i % 7}.py"},
                        **ws,
                    },
                    args.warmup,
                    args.requests,
                ),
                measure(
                    child,
                    "`context` (new session)",
                    lambda i: {"op": "context", "session": f"new{i}", **ws},
                    args.warmup,
                    args.requests,
                ),
            ]  # fmt: skip
            rows.append(measure(child, "`hello`", lambda i: {"op": "hello"}, args.warmup, args.requests))
            rows.extend(time_atomic_writes(home, max(20, args.requests // 3)))
        finally:
            child.close()

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"workmem serve, {args.entries} active entries, {args.requests} timed requests per kind")
    print(f"load average before and after: {started_load}; {load}")
    print()
    print(latency_table(rows, baseline))
    slow = [r.label for r in rows[:2] if r.median > TARGET_MS]
    if slow:
        print(f"over the {TARGET_MS:g} ms target: {', '.join(slow)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
