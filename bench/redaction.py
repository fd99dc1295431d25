"""CPU cost of redaction in a fresh process (docs/performance.md, "Redaction with the rule corpus").

Each sample is a new interpreter that imports ``domain.safety`` and then times, in CPU time
(``time.process_time``): the first ``redact`` of a text with a label (what compiles the passes), the
first ``redact`` of a CJK text after it, and 1,000 stored texts without a credential. The table shows
the medians of ``--runs`` samples. The samples import the checkout of the current directory: to
compare two checkouts, run it from each, alternating.

    python -m bench.redaction --runs 5
    cd /path/to/other/checkout && python /path/to/this/bench/redaction.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence

_SAMPLE = r"""
import json, time
import domain.safety
from domain.safety import redact
texts = [f"Benchmark memory number {i}: keep module {i % 37} independent of module {i % 41}"
         for i in range(1000)]
t0 = time.process_time()
redact("password: Zq7xW3vN5mK8pL2rT9yB and more text here")
t1 = time.process_time()
redact("我们决定使用 pnpm，密码为 Zq7xW3vN5mK8")
t2 = time.process_time()
for text in texts:
    redact(text)
t3 = time.process_time()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""
_LABELS = (
    "the first redact of a text with a label",
    "the first redact of a CJK text after that",
    "1,000 stored texts without a credential",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.redaction", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes to sample (at least 3)")
    args = parser.parse_args(argv)
    samples: list[list[float]] = []
    for _ in range(max(3, args.runs)):
        done = subprocess.run([sys.executable, "-c", _SAMPLE], capture_output=True, text=True, check=True)
        samples.append(json.loads(done.stdout))
    print(f"redaction CPU time in a fresh process, median of {len(samples)} ({sys.executable})\n")
    print("| what | CPU ms |\n|---|---:|")
    for i, label in enumerate(_LABELS):
        print(f"| {label} | {1e3 * statistics.median(s[i] for s in samples):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
