"""Explain and trace (docs/decisions.md#diagnostics-explain-and-trace): the reference's diagnostics
tests 6-8 (docs/decisions.md#parity-with-the-reference) on :mod:`domain.diagnostics.explain`, with the
stores and events built in memory (tests/support/diagnostics.py)."""

from __future__ import annotations

import re

from domain.diagnostics import format_explain, format_trace, trace_report
from tests.support.builders import NOW, event as ev, ref
from tests.support.diagnostics import archive_marker, archived, diag, entry, explain_fixture, trace_fixture
from tests.support.diagnostics_checks import check_explain, check_mem_life_trace

# ---------------------------------------------------------------------------------------------
# Test 6: explain
# ---------------------------------------------------------------------------------------------


def test_6_explain_statuses_reasons_and_evidence() -> None:
    out = format_explain(explain_fixture(), NOW)
    assert out.startswith("Workspace memory explainability\n\n")
    check_explain(out)
    assert "Memory mem-pending-retry: pending_retry\n- strength=" in out
    assert "- reasons: retryable_capacity_rejection, capacity_rejected\n" in out
    assert "- reasons: capacity_rejected, max_attempts_reached\n" in out
    assert (
        "- strength=n/a, type=feedback, source=explicit\n- reasons: absorbed_duplicate, same_exact_key" in out
    )
    assert re.search(
        r"\nQuarantined stores:\n- quarantined_corrupt_store: evt_\S+ storage_corrupt_json_quarantined; "
        r"reasons=invalid_json,quarantined_corrupt_store$",
        out,
    )


def test_explain_one_memory_by_id() -> None:
    out = format_explain(explain_fixture(), NOW, "mem-pending-retry")
    assert out == (
        "Workspace memory explainability\n\n"
        "Memory mem-pending-retry: pending_retry\n"
        "- strength=1.250, type=project, source=compaction\n"
        "- freshness: fresh, normal, verified 0 d ago\n"
        "- reasons: retryable_capacity_rejection, capacity_rejected\n"
        "- evidence: (none)"
    )
    gone = format_explain(trace_fixture(), NOW, "mem-duplicate")
    assert "Memory mem-duplicate: reinforced\n- strength=n/a, type=unknown, source=unknown" in gone
    assert "- reasons: duplicate_exact\n- evidence: evt_" in gone
    nothing = format_explain(diag([]), NOW, "nope")
    assert nothing.endswith(
        "Memory nope: unknown\n- strength=n/a, type=unknown, source=unknown\n"
        "- reasons: (none)\n- evidence: (none)"
    )


def test_explain_with_no_memories() -> None:
    assert format_explain(diag([]), NOW) == "Workspace memory explainability\n\nNo memories found."


def test_explain_lists_archived_memories_d2() -> None:
    events = [archived(ref("mem-arch", "decision", "compaction"))]
    out = format_explain(diag([], archived=(archive_marker("mem-arch"),), events=events), NOW)
    assert "Memory mem-arch: omitted_archived\n- strength=n/a, type=decision, source=compaction\n" in out
    assert "- reasons: archived, archive_weakest" in out


# ---------------------------------------------------------------------------------------------
# Tests 7-8: trace
# ---------------------------------------------------------------------------------------------


def test_7_trace_prints_lifecycle_relations_without_text() -> None:
    out = format_trace(trace_report(trace_fixture(), "mem-life", NOW))
    assert out.startswith("Memory mem-life: omitted_superseded\n\nLifecycle:\n")
    check_mem_life_trace(out)
    lines = [line for line in out.split("\n") if line.startswith("- ")][:-2]  # the relations after
    assert len(lines) == 6
    assert all(
        re.match(r"- (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC|\(no time\)|\S+)  evt_", line) for line in lines
    )


def test_8_trace_of_an_unknown_id() -> None:
    out = format_trace(trace_report(trace_fixture(), "missing-memory", NOW))
    assert out == "Memory missing-memory: unknown\n\nLifecycle:\n(none)"


def test_trace_of_a_journal_memory_is_pending_b11() -> None:
    """docs/decisions.md#b11: a journal append has the outcome ``accepted``; the journal row gives the
    pending status."""
    pending = entry("Use the staging cluster for load tests", id="mem-p", type="project", source="explicit")
    events = [
        ev("explicit_memory_detected", "explicit", "accepted", [], memory=ref("mem-p")),
        ev("pending_memory_appended", "pending_journal", "accepted", [], memory=ref("mem-p")),
    ]
    report = trace_report(diag([], pending=[pending], events=events), "mem-p", NOW)
    assert report.status == "pending_retry"
    assert len(report.events) == 2
