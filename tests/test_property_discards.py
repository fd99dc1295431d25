"""Property tests build valid inputs instead of throwing them away: the properties that used to
discard the most (up to two thirds of their examples, docs/architecture.md "Property tests") stay
under 10% invalid examples.

The count is hypothesis' own, read from its documented ``--hypothesis-show-statistics`` report of a
run on the ``ci`` profile (derandomized, so the same examples every time), and counts both kinds of
invalid example: ones an ``assume``/``filter`` rejected and overruns (an example hypothesis cut
short, see property_tests/shapes.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 0.10

#: Formerly the worst (their share of invalid examples before: 67%, 53%, 35%, 35%, 28%, 18%, 17%).
PROPERTIES = (
    "property_tests/test_extraction_properties.py::test_anchored_triggers_need_the_line_start",
    "property_tests/test_session_properties.py::test_upserting_the_same_error_twice_keeps_one_and_counts_it",
    "property_tests/test_extraction_properties.py::test_plain_entry_text_is_part_of_the_message",
    "property_tests/test_extraction_properties.py::test_context_independence",
    "property_tests/test_extraction_properties.py::test_negated_requests_never_yield_an_entry",
    "property_tests/test_retention_properties.py::test_reinforcement_count_never_exceeds_six",
    "property_tests/test_safety_properties.py::test_no_secret_passes_the_gate",
)

_HEADER = re.compile(r"^(property_tests/\S+::\S+):$")
_COUNTS = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid test cases")


def invalid_shares(report: str) -> dict[str, float]:
    """Each test's invalid examples over its passing and invalid ones, over all phases."""
    counts: dict[str, list[int]] = {}
    current: str | None = None
    for line in report.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            current = header.group(1)
            counts[current] = [0, 0]
            continue
        found = _COUNTS.search(line)
        if found and current is not None:
            counts[current][0] += int(found.group(1))
            counts[current][1] += int(found.group(3))
    return {name: invalid / (valid + invalid) for name, (valid, invalid) in counts.items() if valid + invalid}


def test_invalid_shares_reads_the_statistics_report() -> None:
    report = """
property_tests/test_a.py::test_x:

  - during reuse phase (0.00 seconds):
    - 1 passing, 0 failing, and 1 invalid test cases

  - during generate phase (0.10 seconds):
    - 59 passing, 0 failing, and 9 invalid test cases
    - Events:
      * 12.00%, gave up because: failed to satisfy assume()

property_tests/test_a.py::test_y:

  - during generate phase (0.10 seconds):
    - 60 passing, 0 failing, and 0 invalid test cases
"""
    assert invalid_shares(report) == {
        "property_tests/test_a.py::test_x": 10 / 70,
        "property_tests/test_a.py::test_y": 0.0,
    }


def test_the_formerly_worst_properties_discard_under_ten_percent() -> None:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "ci"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics"]
    run = subprocess.run(
        [*command, *PROPERTIES], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    shares = invalid_shares(run.stdout)
    assert set(shares) == set(PROPERTIES), run.stdout[-3000:]
    over = {name: round(share, 3) for name, share in shares.items() if share >= LIMIT}
    assert over == {}
