"""Every benchmark in one command: warm-up and repeated runs, medians and ratios.

1. Core: normalise + render by store size (``bench.core``, in-process CPU time).
2. Hook latency: whole-process ``workmem`` calls against a bare interpreter start (``bench.cli``).
3. Evidence log: appending one event and a batch, and pruning a log over its bounds (in-process).
4. Large inputs: whole-process ``message``, ``compacted``, ``tool``, ``remember`` and ``check`` on a
   50 MB input each, against a bare interpreter start; each must stay under 2 s.

    python -m bench.run              # everything, markdown tables on stdout
    python -m bench.run --only large --runs 3
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from adapters.evidence_log import EvidenceLog
from bench import cli as cli_bench, core as core_bench
from domain.enums import EventType, Outcome, Phase
from domain.limits import EvidenceLogLimits
from domain.model import EvidenceInput

SECTIONS = ("core", "hooks", "evidence", "large")
LARGE_BYTES = 50 * 1000 * 1000
LARGE_LIMIT_MS = 2000.0
_WORDS = (
    "the a we use build test deploy config server client module value error fix always never prefer "
    "project team token password secret: key= Error: failed"
)


def _median_ms(step: Callable[[], object], runs: int) -> tuple[float, float, float]:
    """One warm-up call, then ``runs`` timed calls: (median, min, max) in wall-clock ms."""
    step()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        step()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), min(samples), max(samples)


def _event(n: int) -> EvidenceInput:
    return EvidenceInput(
        type=EventType.PROMOTION_PROMOTED,
        phase=Phase.PROMOTION,
        outcome=Outcome.PROMOTED,
        reason_codes=("new_workspace_entry",),
        details={"n": n},
        text_preview=f"benchmark event number {n}",
    )


def evidence_table(runs: int) -> str:
    """Append one event, append a batch of 50, and prune a log 600 events over its line bound."""
    now = cli_bench.NOW
    rows: list[tuple[str, tuple[float, float, float]]] = []
    with tempfile.TemporaryDirectory(prefix="workmem-bench-") as scratch:
        log = EvidenceLog(Path(scratch) / "one" / "events.jsonl", workspace_key="k", workspace_root_hash="r")
        counter = iter(range(10**9))
        rows.append(("append 1 event", _median_ms(lambda: log.append([_event(next(counter))], now), runs)))
        batch = EvidenceLog(
            Path(scratch) / "batch" / "events.jsonl", workspace_key="k", workspace_root_hash="r"
        )
        rows.append(
            ("append 50 events", _median_ms(lambda: batch.append([_event(i) for i in range(50)], now), runs))
        )
        over = EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE + 600
        line = EvidenceLog(
            Path(scratch) / "seed" / "events.jsonl", workspace_key="k", workspace_root_hash="r"
        )
        line.append([_event(i) for i in range(over)], now)  # (this append prunes to the bound)
        kept = line.path.read_bytes().splitlines(keepends=True)
        seed = b"".join(kept + kept[: over - len(kept)])
        assert seed.count(b"\n") == over
        target = Path(scratch) / "prune" / "events.jsonl"
        target.parent.mkdir()
        pruned = EvidenceLog(target, workspace_key="k", workspace_root_hash="r")

        def prune() -> None:
            target.write_bytes(seed)
            pruned.append([_event(-1)], now)  # over the bounds by the margin: this append prunes

        def reset_only() -> None:
            target.write_bytes(seed)

        rows.append((f"append that prunes a {over}-line log", _median_ms(prune, runs)))
        reset = _median_ms(reset_only, runs)[0]
    base = rows[0][1][0]
    lines = ["| operation | median ms | min ms | max ms | × append 1 event |", "|---|---:|---:|---:|---:|"]
    for label, (median, low, high) in rows:
        if label.startswith("append that prunes"):
            median, low, high = median - reset, low - reset, high - reset  # without re-seeding the file
        lines.append(f"| {label} | {median:.2f} | {low:.2f} | {high:.2f} | {median / base:.1f} |")
    return "\n".join(lines)


def _prose(path: Path, size: int, prefix: str = "", tail: str = "") -> Path:
    rng = random.Random(5)
    words = _WORDS.split()
    lines = [prefix + " ".join(rng.choice(words) for _ in range(14)) for _ in range(2000)]
    block = ("\n".join(lines) + "\n").encode()
    with open(path, "wb") as out:
        written = 0
        while written < size:
            out.write(block)
            written += len(block)
        out.write(tail.encode())
    return path


def large_table(runs: int) -> tuple[str, bool]:
    with tempfile.TemporaryDirectory(prefix="workmem-bench-") as scratch:
        base_dir = Path(scratch)
        home, root = base_dir / "home", base_dir / "project"
        root.mkdir()
        prompt = _prose(base_dir / "prompt.txt", LARGE_BYTES, tail="remember: always run the linter first\n")
        summary = base_dir / "summary.md"
        summary.write_bytes(b"Memory candidates:\n")
        with open(summary, "ab") as out:
            out.write(_prose(base_dir / "lines.md", LARGE_BYTES, prefix="- [project] ").read_bytes())
        env = _env(home, base_dir)
        workmem = cli_bench.workmem_command()
        base = [*workmem, "--workspace", str(root)]
        baseline = cli_bench.time_runs(
            "`python -c pass`", lambda _: [sys.executable, "-c", "pass"], runs, env
        )
        timings = [
            cli_bench.time_runs(
                "`workmem message -` (50 MB prompt)",
                lambda i: [*base, "message", "--session", f"m{i}", "-"],
                runs,
                env,
                stdin=prompt,
            ),
            cli_bench.time_runs(
                "`workmem compacted` (50 MB summary, 560k candidate lines)",
                lambda i: [*base, "compacted", "--session", f"c{i}", str(summary)],
                runs,
                env,
            ),
            cli_bench.time_runs(
                "`workmem tool --output -` (50 MB output)",
                lambda i: [*base, *_failed_bash(f"t{i}")],
                runs,
                env,
                stdin=prompt,
            ),
            cli_bench.time_runs(
                "`workmem remember -` (50 MB text)",
                lambda _: [*base, "remember", "-"],
                runs,
                env,
                stdin=prompt,
            ),
            cli_bench.time_runs(
                "`workmem check -` (50 MB text)", lambda _: [*base, "check", "-"], runs, env, stdin=prompt
            ),
        ]
    ok = all(t.median < LARGE_LIMIT_MS and max(t.samples) < LARGE_LIMIT_MS for t in timings)
    return cli_bench.table(timings, baseline), ok


def _failed_bash(session: str) -> list[str]:
    return [
        "tool",
        "--session",
        session,
        "--tool",
        "bash",
        "--args",
        '{"command": "npm test"}',
        "--exit-code",
        "1",
        "--output",
        "-",
    ]


def _env(home: Path, scratch: Path) -> dict[str, str]:
    repo = str(Path(__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "WORKMEM_HOME": str(home),
        "WORKMEM_NOW": cli_bench.NOW_ISO,
        "PYTHONPATH": os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p),
        "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
    }
    env.pop("WORKMEM_DEBUG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per benchmark (at least 3)")
    parser.add_argument("--only", choices=SECTIONS, nargs="+", default=list(SECTIONS))
    args = parser.parse_args(argv)
    runs = max(3, args.runs)
    status = 0
    write = sys.stdout.write
    write(f"workmem benchmarks: 1 warm-up, then {runs} runs each; {sys.executable}\n")
    if "core" in args.only:
        write("\n## Core: normalise + render by store size\n\n")
        sys.stdout.flush()
        status |= core_bench.main(["--rounds", str(max(5, runs))])
    if "hooks" in args.only:
        write("\n## Hook latency (whole process)\n\n")
        sys.stdout.flush()
        status |= cli_bench.main(["--runs", str(max(7, runs))])
    if "evidence" in args.only:
        write("\n## Evidence log\n\n" + evidence_table(max(7, runs)) + "\n")
    if "large" in args.only:
        table, ok = large_table(runs)
        write(f"\n## Large inputs (whole process, limit {LARGE_LIMIT_MS:g} ms)\n\n{table}\n")
        status |= 0 if ok else 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
