"""Coverage and disappearances (docs/decisions.md#diagnostics-coverage-disappearances-and-quality):
the reference's diagnostics tests 11-14 (docs/decisions.md#parity-with-the-reference) on
:mod:`domain.diagnostics.inspection`, with the stores and events built in memory
(tests/support/diagnostics.py)."""

from __future__ import annotations

from domain.diagnostics import (
    coverage_json,
    coverage_rows,
    disappearance_rows,
    disappearances_json,
    format_coverage,
    format_disappearances,
    inspect,
)
from tests.support.builders import NOW, event as ev, ref
from tests.support.diagnostics import (
    absorbed,
    archived,
    capacity_disappearance_fixture,
    coverage_fixture,
    diag,
    entry,
    promoted,
    unknown_disappearance_fixture,
)
from tests.support.diagnostics_checks import check_capacity_disappearances, check_coverage

# ---------------------------------------------------------------------------------------------
# Tests 11-12: coverage
# ---------------------------------------------------------------------------------------------


def test_11_coverage_human_output() -> None:
    out = format_coverage(coverage_rows(inspect(coverage_fixture(), NOW)))
    check_coverage(out)
    assert "  historical_absent_unknown_reason: 0" in out
    assert "  mem-full full_lifecycle current=yes total=2 extraction=1 promotion=1 render=0 storage=0" in out


def test_12_coverage_json_event_counts() -> None:
    events = [promoted(ref("mem-full", "feedback", "compaction"))]
    model = inspect(
        diag([entry("Full lifecycle memory", id="mem-full", type="feedback")], events=events), NOW
    )
    data = coverage_json(coverage_rows(model), NOW)
    row = next(m for m in data["memories"] if m["id"] == "mem-full")
    assert row["eventCounts"]["total"] == 1
    assert row["eventCounts"]["byType"]["promotion_promoted"] == 1
    assert row == {
        "id": "mem-full",
        "class": "full_lifecycle",
        "current": True,
        "type": "feedback",
        "eventCounts": {"total": 1, "byType": {"promotion_promoted": 1}, "byPhase": {"promotion": 1}},
    }
    assert data["classCounts"] == {"full_lifecycle": 1}


def test_coverage_include_historical() -> None:
    events = [promoted(ref("old", "decision", "compaction"), "x")]
    model = inspect(diag([entry("Current", id="cur", type="feedback")], events=events), NOW)
    assert [r.id for r in coverage_rows(model)] == ["cur"]
    rows = coverage_rows(model, include_historical=True)
    assert [(r.id, r.cls, r.current, r.type) for r in rows] == [
        ("cur", "no_evidence", True, "feedback"),
        ("old", "historical_absent_unknown_reason", False, "decision"),
    ]
    assert format_coverage(()).endswith("Per-memory rows:\n  (none)")


# ---------------------------------------------------------------------------------------------
# Tests 13-14: disappearances
# ---------------------------------------------------------------------------------------------


def test_13_disappearance_without_terminal_event_is_unknown() -> None:
    rows = disappearance_rows(inspect(unknown_disappearance_fixture(), NOW))
    out = format_disappearances(rows)
    assert "Memory historical-unknown: historical_absent_unknown_reason terminal=unknown" in out
    assert out == (
        "Memory disappearances\n\n"
        "Memory historical-unknown: historical_absent_unknown_reason terminal=unknown reasons=none"
    )


def test_14_disappearances_explain_capacity_details_and_type_cap_observation() -> None:
    rows = disappearance_rows(inspect(capacity_disappearance_fixture(), NOW))
    out = format_disappearances(rows, explain=True)
    check_capacity_disappearances(out)
    assert "  memory_removed_capacity details: type=decision globalCap=28 typeCap=10 source=compaction" in out
    data = disappearances_json(rows, NOW, explain=True)
    assert data["disappearances"][0]["details"]["typeCap"] == 10
    assert "details" not in disappearances_json(rows, NOW)["disappearances"][0]


def test_disappearances_workmem_terminal_events() -> None:
    """workmem's own absorption and archive events account for a memory that left the store."""
    events = [
        absorbed(ref("dup", "decision"), "keeper"),
        archived(ref("arch", "decision")),
        ev("render_omitted", "render", "omitted", ["global_cap"], memory=ref("arch", "decision")),
    ]
    rows = disappearance_rows(
        inspect(diag([entry("Keeper", id="keeper", type="decision")], events=events), NOW)
    )
    assert [(r.id, r.terminal_type) for r in rows] == [
        ("arch", "memory_archived"),
        ("dup", "memory_absorbed"),
    ]
    assert format_disappearances(()) == "Memory disappearances\n\nGone from the store: none."
