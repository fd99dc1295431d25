"""The shared projection at size (docs/decisions.md#d17, docs/performance.md, "Shared projection").

A workspace whose store holds ``--entries`` team memories (10,000 by default: decisions, project facts
and references, every one with a file). Measured, each with one warm-up and ``--runs`` timed runs:

* **full export**, in-process: every file written into an empty ``.workmem/`` (render, write, the
  manifest) — the goal is ≤ 1 s at 10k;
* **start-up check**, in-process: what a session start in a sharing workspace adds when nothing
  changed — the stat of every file against the manifest (``adapters.projection_steps.before``) —
  the goal is ≤ 50 ms at 10k;
* whole processes, interleaved with ``python -c pass`` in the same rounds: ``workmem sync`` into an
  empty folder (the full export, with the start of Python and the read of the store) and
  ``workmem sync`` with nothing changed.

    python -m bench.projection                 # markdown tables on stdout
    python -m bench.projection --entries 1000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from adapters import projection, projection_export, projection_steps
from adapters.filestore import Workspace
from bench import cli as cli_bench
from bench.cli import Command, Timing, table, time_interleaved, use_checkout, workmem_command
from domain.commands import OpenSession
from domain.enums import MemorySource, MemoryType
from domain.model import WorkspaceStore
from domain.projection.view import wanted_files
from domain.timeutil import iso_from_ms, parse_iso_ms

NOW = parse_iso_ms("2026-05-01T09:00:00.000Z") or 0
TYPES = (MemoryType.PROJECT, MemoryType.DECISION, MemoryType.REFERENCE)


def build_store(home: Path, root: str, entries: int) -> WorkspaceStore:
    """``entries`` distinct active team memories (manual decisions, project facts and references),
    written by workmem (revision 1) as the workspace's store."""
    return cli_bench.build_store(home, root, entries, types=TYPES, sources=(MemorySource.MANUAL,), revision=1)


def _files_floor(folder: Path, texts: list[tuple[str, bytes]]) -> None:
    """What creating the same files costs with nothing but ``os.open`` and ``os.write``."""
    for sub in {rel.rsplit("/", 1)[0] for rel, _ in texts}:
        os.makedirs(folder / sub, exist_ok=True)
    for rel, data in texts:
        fd = os.open(folder / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, data)
        os.close(fd)


def in_process(home: Path, root: Path, store: WorkspaceStore, runs: int) -> list[Timing]:
    """The full export into a new, empty folder each run (no deletion between runs touches the
    disk's journal), interleaved with the floor: the same files created with bare ``os.open``."""
    ws = Workspace(home, str(root))
    layout = projection.layout_of(ws)
    texts = [
        (rel, wanted.text.encode())
        for rel, wanted in wanted_files(store.entries, store, layout.projected).items()
    ]
    exports: list[float] = []
    floors: list[float] = []
    for i in range(runs + 1):
        target = layout._replace(
            directory=root.parent / f"export-{i}" / ".workmem", manifest=root.parent / f"manifest-{i}.json"
        )
        projection.create(target)
        started = time.perf_counter()
        with projection.locked(target) as manifest:
            projection_export.export(target, manifest, store)
        if i:
            exports.append((time.perf_counter() - started) * 1000)
        assert sum(1 for _ in projection.memory_files(target.directory)) == len(store.entries)
        started = time.perf_counter()
        _files_floor(root.parent / f"floor-{i}", texts)
        if i:
            floors.append((time.perf_counter() - started) * 1000)
    projection.create(layout)
    with projection.locked(layout) as manifest:
        projection_export.export(layout, manifest, store)
    opened = OpenSession(session="bench")
    checks: list[float] = []
    for i in range(max(runs, 15) + 1):
        started = time.perf_counter()
        same = projection_steps.before(ws, opened, NOW)
        if i:
            checks.append((time.perf_counter() - started) * 1000)
        assert same is opened  # nothing changed: nothing imported
    return [
        Timing("full export into an empty .workmem/", tuple(exports)),
        Timing("floor: the same files, bare os.open + os.write", tuple(floors)),
        Timing("start-up check, nothing changed", tuple(checks)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home, root = base / "home", base / "project"
        root.mkdir()
        store = build_store(home, str(root), args.entries)
        steps = in_process(home, root, store, args.runs)
        print(f"### {args.entries:,} team memories, in-process ({args.runs} runs, median)\n")
        print("| step | median ms | min ms | max ms |\n|---|---:|---:|---:|")
        for t in steps:
            print(f"| {t.label} | {t.median:.1f} | {min(t.samples):.1f} | {max(t.samples):.1f} |")
        env = {**os.environ, "WORKMEM_HOME": str(home), "WORKMEM_NOW": iso_from_ms(NOW)}
        use_checkout(env, base)
        workmem = [*workmem_command(), "--workspace", str(root)]

        def fresh_sync(i: int) -> list[str]:
            # a new data home and workspace each round: nothing deleted right before the run
            fresh_home, fresh_root = base / f"sync-home-{i}", base / f"sync-{i}"
            fresh_root.mkdir()
            build_store(fresh_home, str(fresh_root), args.entries)
            return [*workmem_command(), "--home", str(fresh_home), "--workspace", str(fresh_root), "sync"]

        timings = time_interleaved(
            [
                Command("python -c pass", lambda _: [sys.executable, "-c", "pass"]),
                Command("`workmem sync` into an empty .workmem/", fresh_sync),
                Command("`workmem sync`, nothing changed", lambda _: [*workmem, "sync"]),
            ],
            args.runs,
            env,
        )
        print(f"\n### Whole processes ({args.runs} rounds, interleaved)\n")
        print(table(timings[1:], timings[0]))
        print(f"\nfull export: {steps[0].median:.0f} ms; start-up check: {steps[2].median:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
