"""In-process cost of forget/correct and of use reinforcement (docs/decisions.md#d19), next to the
session start they ride on.

For each size, on the store of ``bench/core.py``: the session start's normalise + render (the
baseline), recording the use cues of the rendered block (what a frozen block adds), matching one
correction against every active memory (what a "forget that …" message adds), and reading one shell
command for use (what a tool result adds). One warm-up round, then the median CPU time of the timed
rounds (``time.process_time``; the string memos are cleared before every round, as in a fresh hook
process).

    python -m bench.use --rounds 7 --sizes 1000 10000
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.core import NOW_MS, _median_ms, make_store
from domain.caches import Caches
from domain.consolidation import normalize_store
from domain.enums import MemoryStatus
from domain.matching import match_memory
from domain.model import SessionState
from domain.operations.use import record_cues, use_signals
from domain.render import render_workspace_block


def measure(size: int, rounds: int) -> str:
    store = make_store(size)
    caches = Caches()
    normalised = normalize_store(store, NOW_MS, caches=caches).store
    rendered = render_workspace_block(normalised, NOW_MS, caches=caches).rendered
    active = tuple(e for e in normalised.entries if e.status is MemoryStatus.ACTIVE)
    session = SessionState(session_id="bench", updated_at="2026-05-20T12:00:00.000Z")
    cued = record_cues(session, rendered, active)
    target = rendered[0].text[:40]

    def start() -> object:
        return render_workspace_block(
            normalize_store(store, NOW_MS, caches=caches).store, NOW_MS, caches=caches
        )

    base = _median_ms(start, rounds, True, caches)
    cues = _median_ms(lambda: record_cues(session, rendered, active), rounds, True, caches)
    match = _median_ms(lambda: match_memory(target, active), rounds, True, caches)
    command = "make check-all && pytest -q tests/test_orders.py && scripts/deploy.sh --env staging"
    use = _median_ms(lambda: use_signals(cued, command, writing=True), rounds, True, caches)
    return (
        f"| {size:,} | {base:.1f} | {cues:.1f} ({cues / base:.0%}) | {match:.1f} ({match / base:.0%}) "
        f"| {use:.2f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.use", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args(argv)
    head = (
        "active memories",
        "normalise + render ms",
        "use cues ms (share)",
        "match one correction ms (share)",
        "use signals of one command ms",
    )
    print("| " + " | ".join(head) + " |")
    print("|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        print(measure(size, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
