"""Start-up of ``workmem mcp``: from starting the process to the answers a host waits for.

Each round starts fresh ``workmem mcp`` processes and writes, as a host does, ``initialize``, the
``notifications/initialized`` notification, ``tools/list`` and one ``tools/call`` (``list``); a
sample is the wall time from starting the process to reading each answer. Three kinds of start
are timed in every round, in turn, so that a load that comes and goes on the machine touches them
alike, after one untimed warm-up round:

- handshake kept: the data home already holds the handshake answers of an earlier start
  (``mcp-handshake.json``, adapters/mcp_start.py) — every start after the first;
- first start: a new, empty data home each round — the first start after an install or upgrade;
- ``python -c pass``: a bare interpreter start, the baseline of the ratios.

The tool call is answered by the MCP SDK in both kinds of start, so it shows what the SDK's own
start-up costs. By default the checkout is timed with its byte code cached in a scratch directory, as
an installed package has it; ``--installed`` times the package installed next to this interpreter.

    python -m bench.mcp                 # prints a markdown table
    python -m bench.mcp --runs 15
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.cli import NOW_ISO, Timing, table, use_checkout, workmem_command

#: what a host sends first: the handshake, then a tool call (tests/adapters/test_mcp_server.py sends it too)
MESSAGES = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {}}},
)
STEPS = {1: "initialize", 2: "tools/list", 3: "first tool call"}


def start(argv: Sequence[str], env: dict[str, str]) -> dict[int, float]:
    """Milliseconds from starting ``argv`` to each answer (by request id); a failure aborts."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in MESSAGES))
    process.stdin.flush()
    answered: dict[int, float] = {}
    while len(answered) < len(STEPS):
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"workmem mcp stopped after answering {sorted(answered)}")
        message = json.loads(line)
        if "error" in message:
            raise SystemExit(f"workmem mcp: {message['error']}")
        if message.get("id") in STEPS:
            answered[message["id"]] = (time.perf_counter() - started) * 1000
    process.stdin.close()
    process.stdout.read()
    if process.wait(timeout=60) != 0:
        raise SystemExit(f"workmem mcp exited {process.returncode}")
    return answered


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed rounds (at least 5)")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="time the installed package as it is (its own byte code), not this checkout",
    )
    args = parser.parse_args(argv)
    runs = max(5, args.runs)
    with tempfile.TemporaryDirectory(prefix="workmem-bench-mcp-") as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        env = {**os.environ, "WORKMEM_NOW": NOW_ISO}
        env.pop("WORKMEM_DEBUG", None)
        if not args.installed:
            use_checkout(env, Path(scratch))
        command = [*workmem_command(), "--workspace", str(root), "mcp"]
        kept_home = str(Path(scratch) / "kept")
        baseline: list[float] = []
        samples: dict[str, list[float]] = {}
        for round_ in range(runs + 1):
            fresh_home = str(Path(scratch) / f"fresh-{round_}")
            timed = {
                "handshake kept": start(command, {**env, "WORKMEM_HOME": kept_home}),
                "first start": start(command, {**env, "WORKMEM_HOME": fresh_home}),
            }
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            if round_ == 0:
                continue  # the warm-up: byte code compiled, the kept data home filled
            baseline.append((time.perf_counter() - began) * 1000)
            for kind, answers in timed.items():
                for ident, step in STEPS.items():
                    samples.setdefault(f"`workmem mcp` {step} ({kind})", []).append(answers[ident])
    mode = "installed package" if args.installed else "this checkout"
    sys.stdout.write(
        f"workmem mcp start-up, ms from process start to each answer ({runs} interleaved rounds after"
        f" 1 warm-up; {mode}; {sys.executable})\n\n"
    )
    timings = [Timing(label, tuple(values)) for label, values in samples.items()]
    sys.stdout.write(table(timings, Timing("`python -c pass`", tuple(baseline))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
