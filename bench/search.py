"""Search speed (issue 20, docs/performance.md "Search"): in-process warm queries at 1k, 10k and 100k
memories, ``workmem search`` end to end at 10k (interpreter start included, against a bare ``python -c
pass`` in the same rounds), one write's index update and a full rebuild at 10k, the index's size per
1k memories, and what just-in-time recall adds to a prompt at 10k.

The memories are the labelled fixture's (``tests/data/search_fixture.json``) repeated with a batch
number, the queries its queries. "In-process" is one query as the service runs it once the store is
in memory: the index lookup (``adapters.search_index.postings``) and the core's search command with
what it found, top 10 with snippets (``domain.search.commands.run_search``: short numbers, strengths
of what may be shown, the ranking, the evidence event). One warm-up pass, then ``--rounds`` passes
over the queries; p50 and p95 of all of them.

    python -m bench.search                 # prints a markdown table
    python -m bench.search --sizes 1000 10000 --rounds 3
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
from functools import partial
from pathlib import Path

from adapters.paths import workspace_paths
from adapters.search_index import INDEX_FILE, postings, rebuild, update
from bench.cli import use_checkout, workmem_command
from domain.codec import encode_pretty
from domain.enums import MemorySource, MemoryStatus, MemoryType
from domain.model import MemoryEntry, WorkspaceRef, WorkspaceStore
from domain.operations.values import Snapshot
from domain.pending import empty_journal
from domain.search.commands import Search, run_search
from domain.search.tokens import query_terms
from domain.search.values import SearchAnswer
from domain.timeutil import iso_from_ms

NOW = 1_777_626_000_000
FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "search_fixture.json"


def _fixture() -> dict[str, list]:  # type: ignore[type-arg]
    data: dict[str, list] = json.loads(FIXTURE.read_text(encoding="utf-8"))  # type: ignore[type-arg]
    return data


def make_store(size: int, root: str = "/bench/project", key: str = "bench") -> WorkspaceStore:
    memories = _fixture()["memories"]
    stamp = iso_from_ms(NOW)
    entries = []
    for i in range(size):
        m = memories[i % len(memories)]
        batch = i // len(memories)
        entries.append(
            MemoryEntry(
                id=f"mem_{NOW}_{i:06d}",
                type=MemoryType(m["type"]),
                text=m["text"] if batch == 0 else f"{m['text']} (batch {batch})",
                source=MemorySource.MANUAL,
                confidence=1.0,
                status=MemoryStatus.ACTIVE,
                created_at=stamp,
                updated_at=stamp,
                short_id=i + 1,
            )
        )
    return WorkspaceStore(
        workspace=WorkspaceRef(root=root, key=key),
        entries=tuple(entries),
        updated_at=stamp,
        revision=1,
        last_short_id=size,
    )


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _timed(step: Callable[[], object]) -> float:
    started = time.perf_counter()
    step()
    return (time.perf_counter() - started) * 1000


def in_process(size: int, rounds: int, scratch: Path) -> dict[str, float]:
    store = make_store(size)
    path = scratch / f"index-{size}.sqlite3"
    build_ms = _timed(lambda: rebuild(path, store, 1))
    snap = Snapshot(store=store, journal=empty_journal(store.workspace.root, store.workspace.key, NOW))
    queries = [q["query"] for q in _fixture()["queries"]]

    def one(query: str) -> None:
        kept = postings(path, query_terms(query))
        assert kept is not None
        found, revision = kept
        answer = run_search(snap, Search(query=query, limit=10, found=found, revision=revision), NOW).answer
        assert isinstance(answer, SearchAnswer) and answer.indexed

    for query in queries:  # warm-up
        one(query)
    times = [_timed(partial(one, q)) for _ in range(rounds) for q in queries]
    return {
        "p50": statistics.median(times),
        "p95": percentile(times, 0.95),
        "rebuild_ms": build_ms,
        "size_kb_per_1k": path.stat().st_size / 1024 / (size / 1000),
    }


def one_write(size: int, scratch: Path) -> float:
    store = make_store(size)
    path = scratch / f"update-{size}.sqlite3"
    rebuild(path, store, 1)
    times = []
    for n in range(20):
        changed = list(store.entries)
        first = changed[n]
        changed[n] = MemoryEntry(
            **{**{f: getattr(first, f) for f in first.__struct_fields__}, "text": f"{first.text} edited {n}"}
        )
        after = WorkspaceStore(
            **{
                **{f: getattr(store, f) for f in store.__struct_fields__},
                "entries": tuple(changed),
                "revision": (store.revision or 0) + 1,
            }
        )
        times.append(_timed(lambda b=store, a=after, r=(store.revision or 0) + 1: update(path, b, a, r)))  # type: ignore[misc]
        store = after
    return statistics.median(times)


def end_to_end(size: int, rounds: int, scratch: Path) -> tuple[float, float, float]:
    """``workmem search`` p50, p95, and a bare interpreter's p50, at ``size`` memories."""
    home, root = scratch / "home", scratch / "project"
    root.mkdir(exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    layout = workspace_paths(home, str(root))
    layout.directory.mkdir(parents=True, exist_ok=True)
    layout.store.write_bytes(encode_pretty(make_store(size, str(root), layout.directory.name)))
    env = {**os.environ, "WORKMEM_HOME": str(home), "WORKMEM_HOOK_SERVER": "0"}
    use_checkout(env, scratch)
    workmem = workmem_command()
    queries = [q["query"] for q in _fixture()["queries"]][:10]

    def run(argv: list[str]) -> None:
        subprocess.run(argv, env=env, capture_output=True, check=True)

    run([*workmem, "--workspace", str(root), "search", "warm up"])  # builds the index
    assert (layout.directory / INDEX_FILE).exists()
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(rounds):
        for query in queries:
            ours.append(_timed(partial(run, [*workmem, "--workspace", str(root), "search", query])))
            bare.append(_timed(partial(run, [sys.executable, "-c", "pass"])))
    return statistics.median(ours), percentile(ours, 0.95), statistics.median(bare)


def recall_overhead(size: int, rounds: int, scratch: Path, *, warm: bool = True) -> tuple[float, float]:
    """Median time of a prompt through the API at ``size`` memories, recall on and off. ``warm``: with
    a decode cache, as the hook server runs a hook event (it keeps one for its life); without, as a
    one-shot process with the hook server off decodes the store again for each prompt."""
    from adapters.api import WorkingMemory
    from adapters.storage_io import SnapshotCache

    root = scratch / f"recall-project-{warm}"
    root.mkdir(exist_ok=True)
    home = scratch / f"recall-home-{warm}"
    layout = workspace_paths(home, str(root))
    layout.directory.mkdir(parents=True, exist_ok=True)
    layout.store.write_bytes(encode_pretty(make_store(size, str(root), layout.directory.name)))
    memory = WorkingMemory(root, home=home, cache=SnapshotCache() if warm else None)
    memory.remember("Benchmarks warm the index before they time anything", type="project")  # builds it
    memory.open_session("s1")
    prompts = [q["query"] for q in _fixture()["queries"]][:20]
    results: dict[str, list[float]] = {"on": [], "off": []}
    for n in range(rounds):
        for mode in ("on", "off"):
            os.environ["WORKMEM_RECALL"] = mode
            for k, prompt in enumerate(prompts):
                ask = partial(memory.user_message, "s1", f"please {prompt}", message_id=f"{mode}{n}-{k}")
                results[mode].append(_timed(ask))
    os.environ.pop("WORKMEM_RECALL", None)
    return statistics.median(results["on"]), statistics.median(results["off"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as where:
        scratch = Path(where)
        print("| memories | in-process p50 ms | in-process p95 ms | full rebuild ms | index KB per 1k |")
        print("|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            row = in_process(size, args.rounds, scratch)
            cells = (
                f"{row['p50']:.2f}",
                f"{row['p95']:.2f}",
                f"{row['rebuild_ms']:.0f}",
                f"{row['size_kb_per_1k']:.0f}",
            )
            print(f"| {size:,} | " + " | ".join(cells) + " |")
        print()
        print(f"one write's index update at 10,000: {one_write(10000, scratch):.2f} ms (median of 20)")
        p50, p95, bare = end_to_end(10000, args.rounds, scratch)
        print(
            f"`workmem search` at 10,000: p50 {p50:.0f} ms, p95 {p95:.0f} ms (bare interpreter {bare:.0f} ms)"
        )
        on, off = recall_overhead(10000, args.rounds, scratch)
        print(f"a prompt at 10,000 as the hook server runs it: {on:.1f} ms with recall, {off:.1f} ms without")
        on, off = recall_overhead(10000, args.rounds, scratch, warm=False)
        print(
            f"the same in a one-shot process (no decode cache): {on:.1f} ms with recall, {off:.1f} ms without"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
