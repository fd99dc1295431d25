"""Quality (docs/decisions.md#diagnostics-coverage-disappearances-and-quality): the reference's
diagnostics tests 9-10 (docs/decisions.md#parity-with-the-reference) on
:mod:`domain.diagnostics.quality`, with the stores, events and rejection records built in memory
(tests/support/diagnostics.py)."""

from __future__ import annotations

from domain.diagnostics import (
    format_quality,
    inspect,
    quality_json,
    quality_report,
    retention_clock_counts,
)
from tests.support.builders import NOW
from tests.support.diagnostics import diag, entry, quality_fixture
from tests.support.diagnostics_checks import check_quality

# ---------------------------------------------------------------------------------------------
# Tests 9-10: quality
# ---------------------------------------------------------------------------------------------


def test_9_quality_human_output() -> None:
    out = format_quality(quality_report(inspect(quality_fixture(), NOW)))
    assert out.startswith("Memory quality inspection\n\nSummary: memory quality is degraded:")
    assert "\n  all types: 28 stored, at most 28 shown\n" in out
    check_quality(out)
    assert "  project: 0 stored, at most 8 shown\n" in out
    assert (
        "Summary: memory quality is degraded: 28 memories stored, 1 of 28 with a recorded history, "
        "1 gone from the store (1 without a recorded reason), 1 with an unreadable retention clock, and "
        "1 rejection records from before records named their workspace."
    ) in out
    for internal in ("legacy unscoped", "active: 28 / 28", "Workspace memory quality"):
        assert internal not in out


def test_10_quality_json() -> None:
    data = quality_json(quality_report(inspect(quality_fixture(), NOW)), NOW)
    assert "degraded" in data["summaryText"]
    assert data["status"] == "degraded"
    assert data["caps"]["active"] == 28
    assert data["caps"]["capsFull"] is True
    assert data["caps"]["typeCounts"] == {"feedback": 14, "decision": 14, "project": 0, "reference": 0}
    assert data["retention"] == {"present": 27, "missing": 0, "invalid": 1}
    assert data["evidence"]["currentWithEvidence"] == 1
    assert data["evidence"]["unknownDisappearances"] == 1
    assert data["rejections"]["workspaceScopedCount"] == 1
    assert data["rejections"]["legacyUnscopedCount"] == 1
    assert data["rejections"]["falsePositiveRisk"] == "low"


def test_quality_status_ok_and_warning() -> None:
    ok = quality_report(
        inspect(diag([entry("A fine memory", id="a", type="decision", retention_clock=NOW)]), NOW)
    )
    assert ok.status == "ok"
    full = [entry(f"Feedback {i}", id=f"f{i}", type="feedback", retention_clock=NOW) for i in range(10)]
    assert quality_report(inspect(diag(full), NOW)).status == "warning"


def test_retention_clock_counts_reference_labels() -> None:
    clocks = retention_clock_counts(
        [
            entry("x", id="a", type="decision"),
            entry("x", id="b", type="decision", retention_clock=-1),
            entry("x", id="c", type="decision", retention_clock=0),
            entry("x", id="d", type="decision", retention_clock=NOW),
        ]
    )
    assert (clocks.present, clocks.missing, clocks.invalid) == (1, 1, 2)
