"""Whole-process timings of the ``workmem`` command line and of every host hook event.

Each command runs as a fresh process (what a host hook pays on every event). One warm-up round, then
``--runs`` rounds (at least 10) that run every command once, in turn, so that a load that comes and
goes on the machine touches them alike; the table shows the median, the fastest and the slowest run,
and the median as a multiple of a bare interpreter start (``python -c pass``) timed in the same rounds.
Everything runs against a workspace whose store holds ``--entries`` active memories (1,000 by
default). ``context`` and the hook ``SessionStart`` use a new session id every round (a full session
start: promotion, render, freeze, write); ``message`` and ``UserPromptSubmit`` send a new explicit
memory request; ``PostCompact`` a summary with a new candidate.

By default the checkout is timed with its byte code cached in a scratch directory, as an installed
package has it. ``--installed`` times the package installed next to this interpreter as it is (run it
from a virtual environment with a non-editable ``pip install .``); ``--no-bytecode`` sets
``PYTHONDONTWRITEBYTECODE=1`` for the timed commands.

    python -m bench.cli                          # prints a markdown table
    python -m bench.cli --runs 15 --entries 1000
    /path/to/venv/bin/python -m bench.cli --installed --hooks-only
"""

from __future__ import annotations

import argparse
import json
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
from domain.enums import MemorySource, MemoryStatus, MemoryType
from domain.limits import DAY_MS
from domain.model import MemoryEntry, WorkspaceRef, WorkspaceStore
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


def use_checkout(env: dict[str, str], scratch: Path) -> None:
    """Time this checkout, with byte code cached as an installed package has it (in ``scratch``, so
    the source tree stays untouched); a warm-up round fills that cache."""
    repo = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else every run compiles every module again


def build_store(
    home: Path,
    root: str,
    entries: int,
    *,
    types: Sequence[MemoryType] = TYPES,
    sources: Sequence[MemorySource] = SOURCES,
    revision: int | None = None,
) -> WorkspaceStore:
    """A workspace store with ``entries`` distinct active memories created over the last 20 days
    (types and sources in turn), written as the workspace's store."""
    stamp = iso_from_ms(NOW)
    items = []
    for i in range(entries):
        created = iso_from_ms(NOW - (i % 20) * DAY_MS)
        items.append(
            MemoryEntry(
                id=f"mem_{NOW}_{i:06d}",
                type=types[i % len(types)],
                text=f"Benchmark memory number {i}: keep module {i % 37} independent of module {i % 41}",
                source=sources[i % len(sources)],
                confidence=0.75,
                status=MemoryStatus.ACTIVE,
                created_at=created,
                updated_at=created,
                retention_clock=NOW - (i % 20) * DAY_MS,
            )
        )
    layout = workspace_paths(home, root)
    layout.directory.mkdir(parents=True, exist_ok=True)
    store = WorkspaceStore(
        workspace=WorkspaceRef(root=root, key=layout.directory.name),
        entries=tuple(items),
        updated_at=stamp,
        last_activity_at=stamp,
        revision=revision,
    )
    layout.store.write_bytes(encode_pretty(store))
    return store


class Command(NamedTuple):
    label: str
    argv: Callable[[int], Sequence[str]]
    stdin: Callable[[int], bytes] | None = None


def time_interleaved(commands: Sequence[Command], runs: int, env: dict[str, str]) -> list[Timing]:
    """One warm-up round, then ``runs`` rounds that run every command once, in turn: a load that
    comes and goes on the machine touches every command alike. A failing run aborts the benchmark."""
    samples: list[list[float]] = [[] for _ in commands]
    for round_ in range(runs + 1):
        for index, command in enumerate(commands):
            argv = list(command.argv(round_))
            stdin = command.stdin(round_) if command.stdin is not None else None
            started = time.perf_counter()
            done = subprocess.run(argv, env=env, input=stdin, capture_output=True, check=False)
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode != 0 or (command.stdin is not None and done.stderr):
                raise SystemExit(
                    f"{command.label}: exit {done.returncode}: {done.stderr.decode(errors='replace').strip()}"
                )
            if round_ > 0:
                samples[index].append(elapsed)
    return [Timing(c.label, tuple(s)) for c, s in zip(commands, samples, strict=True)]


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


#: one new session per round: SessionStart opens it (a full session start), SessionEnd ends it
START = "bench-start-{i}"


def hook_payload(root: str, event: str, session: str, **fields: object) -> bytes:
    payload = {"session_id": session, "cwd": root, "hook_event_name": event, **fields}
    return json.dumps(payload).encode()


def hook_commands(workmem: Sequence[str], root: str, rollout: str, entries: int) -> list[Command]:
    """Every hook event workmem handles, as a host sends it, against the big store."""
    claude = [*workmem, "hook", "claude-code"]
    codex = [*workmem, "hook", "codex"]
    edit: dict[str, object] = {
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{root}/src/app.py", "old_string": "a", "new_string": "b"},
    }
    summary = "<summary>\n1. Primary Request:\n   keep going\n</summary>\nMemory candidates:\n"

    def at(event: str, session: str | None = None, **fields: object) -> Callable[[int], bytes]:
        return lambda i: hook_payload(root, event, (session or "bench-hooks").format(i=i), **fields)

    def compacted(i: int) -> bytes:
        text = summary + f"- [decision] Benchmark rule {i}: retry module {i} with backoff"
        return hook_payload(root, "PostCompact", "bench-hooks", trigger="auto", compact_summary=text)

    def prompt(i: int) -> bytes:
        text = f"Remember this: benchmark hook rule {i} holds"
        return hook_payload(root, "UserPromptSubmit", "bench-hooks", prompt=text, prompt_id=f"p{i}")

    failure: dict[str, object] = {
        "tool_name": "Bash",
        "tool_input": {"command": "npm test"},
        "error": "Exit code 1\nFAIL x",
    }
    n = f"({entries} entries)"
    return [
        Command(f"hook SessionStart {n}", lambda _: claude, at("SessionStart", START, source="startup")),
        Command(f"hook UserPromptSubmit {n}", lambda _: claude, prompt),
        Command(f"hook PostToolUse Edit {n}", lambda _: claude, at("PostToolUse", None, **edit)),
        Command(f"hook PostToolUseFailure {n}", lambda _: claude, at("PostToolUseFailure", None, **failure)),
        Command(f"hook PreCompact {n}", lambda _: claude, at("PreCompact", trigger="auto")),
        Command(f"hook PostCompact {n}", lambda _: claude, compacted),
        Command(f"hook Stop (unused) {n}", lambda _: claude, at("Stop")),
        Command(f"hook SessionEnd {n}", lambda _: claude, at("SessionEnd", START, reason="other")),
        Command(
            f"hook codex PostToolUse Bash {n}",
            lambda _: codex,
            at("PostToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_response="ok",
               tool_use_id="call_1", transcript_path=rollout),
        ),
        Command(
            f"hook codex PostCompact {n}",
            lambda _: codex,
            at("PostCompact", trigger="auto", transcript_path=rollout),
        ),
    ]  # fmt: skip


def write_rollout(path: Path) -> None:
    """A Codex rollout with a compaction record and a finished shell call, as Codex writes them."""
    records = [
        {"type": "event_msg", "payload": {"type": "item_completed",
         "item": {"type": "CommandExecution", "id": "call_1", "exit_code": 0, "status": "completed"}}},
        {"type": "compacted", "payload": {"message": "Summary:\nMemory candidates:\n"
                                          "- [decision] Deploys use blue-green switching via src/deploy.sh"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cli", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed rounds (at least 10)")
    parser.add_argument("--entries", type=int, default=1000, help="active memories in the store")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="time the installed package as it is (its own byte code), not this checkout",
    )
    parser.add_argument(
        "--no-bytecode", action="store_true", help="set PYTHONDONTWRITEBYTECODE=1 for the timed commands"
    )
    parser.add_argument("--hooks-only", action="store_true", help="only the hook events and the baseline")
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="every hook call handles its event itself (WORKMEM_HOOK_SERVER=0), no hook server",
    )
    args = parser.parse_args(argv)
    runs = max(10, args.runs)
    workmem = workmem_command()
    with tempfile.TemporaryDirectory(prefix="workmem-bench-") as scratch:
        home = Path(scratch) / "home"
        root = Path(scratch) / "project"
        root.mkdir()
        build_store(home, str(root), args.entries)
        rollout = Path(scratch) / "rollout.jsonl"
        write_rollout(rollout)
        env = {**os.environ, "WORKMEM_HOME": str(home), "WORKMEM_NOW": NOW_ISO}
        env.pop("WORKMEM_DEBUG", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if not args.installed:
            use_checkout(env, Path(scratch))
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        # the hook server the first hook call starts (adapters/hook_server.py) ends soon after the run
        env["WORKMEM_HOOK_SERVER"] = "0" if args.no_server else "1"
        env["WORKMEM_HOOK_SERVER_IDLE_S"] = "20"
        base = [*workmem, "--workspace", str(root)]
        commands = [Command("`python -c pass`", lambda _: [sys.executable, "-c", "pass"])]
        if not args.hooks_only:
            commands += cli_commands(workmem, base, args.entries)
        commands += hook_commands(workmem, str(root), str(rollout), args.entries)
        timings = time_interleaved(commands, runs, env)
    mode = "installed package" if args.installed else "this checkout"
    bytecode = ", PYTHONDONTWRITEBYTECODE=1" if args.no_bytecode else ""
    bytecode += ", no hook server" if args.no_server else ", hook server"
    sys.stdout.write(
        f"workmem whole-process timings ({runs} interleaved rounds after 1 warm-up; {mode}{bytecode};"
        f" {sys.executable})\n\n"
    )
    sys.stdout.write(table(timings[1:], timings[0]) + "\n")
    return 0


def cli_commands(workmem: Sequence[str], base: Sequence[str], entries: int) -> list[Command]:
    n = f"({entries} entries)"
    return [
        Command("`workmem --version`", lambda _: [*workmem, "--version"]),
        Command(f"`workmem context` {n}", lambda i: [*base, "context", "--session", f"bench-session-{i}"]),
        Command(
            f"`workmem message` {n}",
            lambda i: [*base, "message", "--session", "bench", f"Remember this: benchmark rule {i} holds"],
        ),
        Command(
            f"`workmem tool` {n}",
            lambda i: [*base, "tool", "--session", "bench", "--tool", "edit", "--args",
                       f'{{"filePath": "src/module_{i}.ts"}}'],
        ),
        Command(f"`workmem list --json` {n}", lambda _: [*base, "list", "--json"]),
    ]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
