"""In-process benchmark of the hot path of a session start: normalise the store, then render the block.

Usage (from the repository root)::

    .venv/bin/python -m bench.core                 # 100 / 1,000 / 10,000 active entries, 7 rounds
    .venv/bin/python -m bench.core --rounds 9 --sizes 100 1000 10000 --profile 10000

Each size gets its own store of realistic mixed memories (all four types and three sources, paths,
URLs, rationales, stale markers, reinforced entries and a few exact and identity duplicates). All
entries were rendered recently, so the D2 archive rule moves nothing and the render really ranks every
entry: this is the worst case for ranking. One warm-up round is discarded; the table reports the
median of the timed rounds, the ratio to the 100-entry run, and an n·log n growth check (the measured
ratio must stay within twice the n·log n ratio).
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Final

from msgspec.structs import replace

from domain.caches import Caches
from domain.consolidation import (
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    normalize_store,
)
from domain.enums import Importance, MemorySource, MemoryStatus, MemoryType
from domain.ids import memory_id
from domain.limits import DAY_MS
from domain.model import MemoryEntry, StoreLimits, WorkspaceRef, WorkspaceStore
from domain.render import render_workspace_block
from domain.text import canonical_text
from domain.timeutil import iso_from_ms, parse_iso_ms

NOW_MS: Final = 1_780_000_000_000  # 2026-05-28T20:26:40Z
TARGETS_MS: Final = {1_000: 20.0, 10_000: 250.0}

_SUBJECTS: Final = (
    "the release pipeline", "the storage layer", "the CLI entry point", "error handling", "the test suite",
    "the evidence log", "session hand-off", "the config loader", "database migrations", "the render module",
    "the API client", "background jobs", "the cache", "logging", "the build", "documentation",
)  # fmt: skip
_TEMPLATES: Final = {
    MemoryType.FEEDBACK: (
        "User prefers short answers about {s} with the code first (variant {n})",
        "Always explain trade-offs before changing {s}; the user asked for this, note {n}",
        "Never rewrite {s} without asking first, rule {n}",
    ),
    MemoryType.DECISION: (
        "Use msgspec structs for {s} instead of dataclasses (decision {n})",
        "Keep {s} free of global state so it can be tested in isolation, item {n}",
        "Adopt a lock-read-write cycle for {s}; choice {n}",
    ),
    MemoryType.PROJECT: (
        "The code for {s} lives in src/module_{n}/core.py and is covered by tests",
        "{s} is configured through config/settings_{n}.toml at start-up",
        "Builds of {s} run on the 2-core CI runner, job number {n}",
    ),
    MemoryType.REFERENCE: (
        "Docs for {s} are at https://docs.example.com/guide/{n}/",
        "Design notes on {s}: docs/design/note_{n}.md",
        "Issue tracker label for {s} is area-{n}",
    ),
}
_TYPES: Final = (MemoryType.FEEDBACK, MemoryType.DECISION, MemoryType.PROJECT, MemoryType.REFERENCE)
_SOURCES: Final = (
    MemorySource.COMPACTION,
    MemorySource.COMPACTION,
    MemorySource.EXPLICIT,
    MemorySource.MANUAL,
)
_STALE_DAYS: Final = {
    MemoryType.FEEDBACK: None,
    MemoryType.DECISION: 45,
    MemoryType.PROJECT: 60,
    MemoryType.REFERENCE: 90,
}


def make_entry(index: int, now_ms: int = NOW_MS) -> MemoryEntry:
    """A deterministic, realistic memory; the index picks type, source, wording and age."""
    type_ = _TYPES[index % 4]
    template = _TEMPLATES[type_][(index // 4) % 3]
    text = template.format(s=_SUBJECTS[(index * 7) % len(_SUBJECTS)], n=index)
    age_days = (index * 37) % 400
    created_ms = now_ms - age_days * DAY_MS - (index % 1000) * 1000
    created = iso_from_ms(created_ms)
    reinforced = index % 9 == 0
    return MemoryEntry(
        id=memory_id(created_ms, index, text),
        type=type_,
        text=text,
        source=_SOURCES[(index // 3) % 4],
        confidence=0.75,
        status=MemoryStatus.ACTIVE,
        created_at=created,
        updated_at=created,
        rationale="it keeps reviews small and predictable" if index % 5 == 0 else None,
        stale_after_days=_STALE_DAYS[type_],
        retention_clock=created_ms + (age_days // 2) * DAY_MS if reinforced else created_ms,
        reinforcement_count=(index % 4) + 1 if reinforced else None,
        last_reinforced_at=created_ms + (age_days // 2) * DAY_MS if reinforced else None,
        user_importance=Importance.HIGH if index % 97 == 0 else None,
        last_rendered_at=now_ms - (index % 20) * DAY_MS,
    )


def make_store(active: int, now_ms: int = NOW_MS) -> WorkspaceStore:
    """``active`` distinct active memories plus about 1% exact and 0.5% identity duplicates and a few
    superseded entries. The store has been normalised before (all migration ids are recorded)."""
    entries = [make_entry(i, now_ms) for i in range(active)]
    extras: list[MemoryEntry] = []
    for i in range(0, active, 100):  # exact duplicates: the same text in other case and punctuation
        original = entries[i]
        text = original.text.upper().replace(",", "").replace(";", "") + "!"
        extras.append(replace(original, id=original.id + "x", text=text, source=MemorySource.COMPACTION))
    for i in range(2, active, 200):  # identity duplicates: the same path or URL in other words
        original = entries[i]
        if original.type in (MemoryType.PROJECT, MemoryType.REFERENCE):
            words = original.text.split()
            extras.append(replace(original, id=original.id + "y", text="See " + " ".join(reversed(words))))
    superseded = [
        replace(entries[i], id=entries[i].id + "s", status=MemoryStatus.SUPERSEDED)
        for i in range(0, active, 250)
    ]
    return WorkspaceStore(
        workspace=WorkspaceRef(root="/srv/project", key="0123456789abcdef"),
        limits=StoreLimits(),
        entries=tuple(entries + extras + superseded),
        migrations=(
            QUALITY_CLEANUP_MIGRATION_ID,
            P0_CLEANUP_MIGRATION_ID,
            RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
        ),
        updated_at=iso_from_ms(NOW_MS - DAY_MS),
        last_activity_at=iso_from_ms(NOW_MS - DAY_MS),
    )


def clear_caches(caches: Caches) -> None:
    """Forget every memo of the core (a fresh process): the string memos of the process (canonical
    texts, parsed timestamps, keys, key hashes and identities, redacted texts, previews, render
    events) and the speed state the steps share (``caches``: the per-object memos of normalisation,
    the retention sort and render, docs/decisions.md#d14)."""
    from domain import consolidation, evidence, keys, safety, text

    canonical_text.cache_clear()
    parse_iso_ms.cache_clear()
    text.memory_key.cache_clear()
    keys.concrete_identity.cache_clear()
    keys.key_hash.cache_clear()
    consolidation.redact_stored.cache_clear()
    evidence.flow._entry_event.cache_clear()
    safety.preview_memo.cache_clear()
    caches.clear()


def _median_ms(step: Callable[[], object], rounds: int, cold: bool, caches: Caches) -> float:
    """Median CPU time of ``step`` in ms over ``rounds`` timed rounds after one warm-up round.

    CPU time of this process (``time.process_time``) rather than wall time, so that other work on a
    shared machine does not inflate the numbers; for this single-threaded code they coincide on an
    idle machine. ``cold`` clears the memos (``caches`` among them) before every round (a fresh hook
    process)."""
    step()
    samples = []
    for _ in range(rounds):
        if cold:
            clear_caches(caches)
        start = time.process_time()
        step()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


class Row:
    def __init__(self, size: int, normalize_ms: float, render_ms: float, total_ms: float, shown: int) -> None:
        self.size, self.normalize_ms, self.render_ms, self.total_ms, self.shown = (
            size, normalize_ms, render_ms, total_ms, shown
        )  # fmt: skip


def measure(size: int, rounds: int, cold: bool = False) -> Row:
    """One size; every step shares one cache, as a long-lived owner's steps do (docs/decisions.md#d14)."""
    store = make_store(size)
    caches = Caches()
    normalised = normalize_store(store, NOW_MS, caches=caches).store
    active = sum(1 for e in normalised.entries if e.status == MemoryStatus.ACTIVE)
    assert active >= size * 0.98, f"normalisation unexpectedly removed entries ({active} of {size})"

    def both() -> object:
        return render_workspace_block(
            normalize_store(store, NOW_MS, caches=caches).store, NOW_MS, caches=caches
        )

    return Row(
        size,
        _median_ms(lambda: normalize_store(store, NOW_MS, caches=caches), rounds, cold, caches),
        _median_ms(lambda: render_workspace_block(normalised, NOW_MS, caches=caches), rounds, cold, caches),
        _median_ms(both, rounds, cold, caches),
        len(render_workspace_block(normalised, NOW_MS, caches=caches).rendered),
    )


def table(rows: Sequence[Row]) -> str:
    base = rows[0]
    lines = [
        "| active entries | normalise (CPU ms) | render (CPU ms) | normalise + render (CPU ms) | ratio to "
        f"{base.size:,} | n·log n ratio | growth | target |",
        "|---:|---:|---:|---:|---:|---:|:---:|:---:|",
    ]
    for row in rows:
        ratio = row.total_ms / base.total_ms if base.total_ms else math.nan
        nlogn = (row.size * math.log(row.size)) / (base.size * math.log(base.size))
        growth = "ok" if ratio <= 2 * nlogn else "super-n·log n"
        target = TARGETS_MS.get(row.size)
        verdict = (
            "—" if target is None else ("met" if row.total_ms <= target else "MISSED") + f" (≤ {target:g})"
        )
        lines.append(
            f"| {row.size:,} | {row.normalize_ms:.1f} | {row.render_ms:.1f} | {row.total_ms:.1f} | "
            f"{ratio:.1f}× | {nlogn:.1f}× | {growth} | {verdict} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per size (at least 5)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--profile", type=int, default=None, help="profile normalise+render at this size")
    parser.add_argument("--cold", action="store_true", help="clear the memo caches before every round")
    args = parser.parse_args(argv)
    rounds = max(5, args.rounds)
    if args.profile:
        store = make_store(args.profile)
        profiler = cProfile.Profile()
        profiler.enable()
        render_workspace_block(normalize_store(store, NOW_MS).store, NOW_MS)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return 0
    rows = [measure(size, rounds, args.cold) for size in sorted(args.sizes)]
    print(table(rows))
    caches = "caches cleared before every round" if args.cold else "warm caches"
    print(
        f"\nCPU ms, median of {rounds} rounds after one warm-up ({caches}); entries shown: {rows[-1].shown}"
    )
    return 0 if all(r.total_ms <= TARGETS_MS.get(r.size, math.inf) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
