"""Re-verification at a session start (docs/decisions.md#d18, docs/performance.md, "Freshness").

A workspace whose store holds ``--entries`` memories, each citing code: half a span of lines, half a
whole file with the identifiers it names, over ``entries / 4`` files of a generated source tree.
Measured in-process, one warm-up and ``--runs`` timed runs each, interleaved round by round with the
baseline (a bare ``os.stat`` of every cited file, the least any check of the files costs):

* **warm**: ``adapters.freshness_steps.before`` on a session start when no file changed (every file
  is stat'ed, none is read, the cache is not written) — the goal is ≤ 20 ms at 1k memories;
* **cold**: the same with the stat cache gone (files are read again, at most ``MAX_READS``);
* **one changed**: one cited file edited since the last look (one file read, the cache written);
* **core**: the pure comparison (``domain.reverify.reverify_store``) of every memory with what was
  observed, at the first session start of a day (every memory's ``verified`` moves: the most it does).

    python -m bench.freshness                       # markdown table on stdout, 1k and 10k
    python -m bench.freshness --entries 1000 --runs 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from msgspec.structs import replace

from adapters import freshness_steps
from adapters.filestore import Workspace
from bench import cli as cli_bench
from domain.commands import Batch, OpenSession
from domain.model import Citation, WorkspaceStore
from domain.reverify import Reverify, reverify_store

NOW = cli_bench.NOW


def _tree(root: Path, files: int) -> list[str]:
    paths = []
    for i in range(files):
        rel = f"src/pkg{i % 20}/module_{i}.py"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def handler_{i}_{n}(value):\n    return value + {n}\n\n" for n in range(40))
        (root / rel).write_text(body, encoding="utf-8")
        paths.append(rel)
    return paths


def build(home: Path, root: Path, entries: int) -> tuple[Workspace, WorkspaceStore]:
    """The store, its files and a warm stat cache."""
    paths = _tree(root, max(1, entries // 4))
    store = cli_bench.build_store(home, str(root), entries, revision=1)
    cited = []
    for i, entry in enumerate(store.entries):
        path = paths[i % len(paths)]
        if i % 2:
            cite = Citation(path=path, start_line=1 + i % 30, end_line=3 + i % 30, span_hash="0")
        else:
            cite = Citation(path=path, identifiers=(f"handler_{i % len(paths)}_{i % 40}",))
        cited.append(replace(entry, cites=(cite,)))
    store = replace(store, entries=tuple(cited))
    ws = Workspace(home, str(root))
    freshness_steps.record_cites(ws, store)
    # each session start reads at most MAX_READS files: look until every cited file was read once
    for _ in range(len(paths) // freshness_steps.MAX_READS + 1):
        freshness_steps.before(ws, OpenSession(session="warm-up"), NOW)
    return ws, store


def _observed(ws: Workspace) -> Reverify:
    command = freshness_steps.before(ws, OpenSession(session="s"), NOW)
    assert isinstance(command, Batch) and isinstance(command.steps[0], Reverify)
    return command.steps[0]


def measure(entries: int, runs: int) -> list[tuple[str, list[float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "project"
        root.mkdir()
        ws, store = build(home, root, entries)
        cited = sorted({c.path for e in store.entries for c in e.cites or ()})
        observed = _observed(ws).observed
        cache_file = freshness_steps.cache_path(ws)
        saved = cache_file.read_bytes()
        without_stats = json.dumps({**json.loads(saved), "files": {}}).encode()
        changed = root / cited[0]
        original = os.stat(changed)

        def stat_floor() -> None:
            for rel in cited:
                os.stat(root / rel)

        def warm() -> None:
            freshness_steps.before(ws, OpenSession(session="s"), NOW)

        def cold() -> None:
            cache_file.write_bytes(without_stats)
            freshness_steps.before(ws, OpenSession(session="s"), NOW)

        def one_changed() -> None:
            cache_file.write_bytes(saved)
            os.utime(changed, ns=(time.time_ns(), time.time_ns()))
            freshness_steps.before(ws, OpenSession(session="s"), NOW)

        def core() -> None:
            reverify_store(store, observed, NOW)

        cases: list[tuple[str, Callable[[], None]]] = [
            ("baseline: os.stat of every cited file", stat_floor),
            ("warm: nothing changed", warm),
            ("cold: no stat cache", cold),
            ("one cited file changed", one_changed),
            ("core: reverify_store", core),
        ]
        samples: list[list[float]] = [[] for _ in cases]
        for round_ in range(runs + 1):
            for index, (_, run) in enumerate(cases):
                started = time.perf_counter()
                run()
                if round_:
                    samples[index].append((time.perf_counter() - started) * 1000)
            cache_file.write_bytes(saved)  # every round starts from the same warm cache
            os.utime(changed, ns=(original.st_atime_ns, original.st_mtime_ns))
        labels = [label for label, _ in cases]
        labels[0] += f" ({len(cited)} files)"
        return list(zip(labels, samples, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, action="append", help="memories (default: 1000 and 10000)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    for entries in args.entries or [1000, 10000]:
        rows = measure(entries, args.runs)
        base = statistics.median(rows[0][1])
        print(f"\n{entries:,} memories, {args.runs} runs after one warm-up\n")
        print("| step | median ms | min ms | max ms | × baseline |")
        print("|---|---:|---:|---:|---:|")
        for label, s in rows:
            median = statistics.median(s)
            print(f"| {label} | {median:.2f} | {min(s):.2f} | {max(s):.2f} | {median / base:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
