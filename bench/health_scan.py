"""What ``workmem health`` pays for looking for stores of an old sub-directory (docs/decisions.md#d15):
it reads the store of every workspace of the data home to learn the root it was made for.

Two data homes, each holding the same repository workspace (``--entries`` memories): one with nothing
else, one with ``--others`` other workspaces (``--other-entries`` memories each, none inside the
repository). ``health`` runs against each as a fresh process, in turn (one warm-up round, then
``--runs`` rounds), beside a bare interpreter start; the table gives medians and the ratio to it.

    python -m bench.health_scan                       # prints a markdown table
    python -m bench.health_scan --others 500 --runs 15
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench.cli import NOW_ISO, Command, build_store, table, time_interleaved, use_checkout, workmem_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--others", type=int, default=200)
    parser.add_argument("--other-entries", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        repo = scratch / "repo"
        (repo / ".git").mkdir(parents=True)
        alone, crowded = scratch / "alone", scratch / "crowded"
        for home in (alone, crowded):
            build_store(home, str(repo), args.entries)
        for i in range(args.others):
            other = scratch / "elsewhere" / f"project-{i}"
            other.mkdir(parents=True)
            build_store(crowded, str(other), args.other_entries)
        env = dict(os.environ, WORKMEM_NOW=NOW_ISO)
        use_checkout(env, scratch)
        workmem = workmem_command()

        def health(home: Path) -> Command:
            return Command(
                f"health ({home.name})",
                lambda _: [*workmem, "--home", str(home), "--workspace", str(repo), "health"],
            )

        bare = Command("python -c pass", lambda _: [sys.executable, "-c", "pass"])
        timings = time_interleaved([bare, health(alone), health(crowded)], max(args.runs, 1), env)
    crowd = f"{args.others} other workspaces of {args.other_entries} memories"
    print(f"{args.entries} memories in the repository; crowded: {crowd}")
    print(table(timings[1:], timings[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
