"""Health (docs/decisions.md#diagnostics-health): the reference's diagnostics tests 1-4
(docs/decisions.md#parity-with-the-reference) on :mod:`domain.diagnostics.health`, with the stores,
journals and events built in memory (tests/support/diagnostics.py)."""

from __future__ import annotations

import re

from domain.diagnostics import DiagInput, format_health, health_report
from domain.ids import hash16
from domain.limits import DAY_MS
from domain.model import DormantSpan
from domain.timeutil import iso_from_ms
from tests.support.builders import KEY, NOW, ROOT
from tests.support.diagnostics import (
    archive_marker,
    diag,
    entry,
    global_cap_fixture,
    health_text,
    monitoring_fixture,
    type_cap_fixture,
)
from tests.support.diagnostics_checks import check_global_cap, check_monitoring, check_quiet_health

# ---------------------------------------------------------------------------------------------
# Tests 1-4: health (docs/decisions.md#diagnostics-health)
# ---------------------------------------------------------------------------------------------


def test_1_health_reports_stored_vs_rendered_counts() -> None:
    """The meaning of docs/decisions.md#d2: the 17 feedback stay stored; only 10 can be rendered."""
    out = health_text(type_cap_fixture())
    assert "Stored active memories: 28" in out
    assert "Rendered candidates: 20" in out
    assert re.search(r"feedback\s+stored=17\s+rendered=10", out)
    assert "  feedback  stored=17  rendered=10  typeCap=10 superseded=0" in out
    assert "  decision  stored=11  rendered=10  typeCap=10 superseded=0" in out
    assert "  type-capped entries: 8\n  global-cap overflow: 0" in out
    assert re.search(r"Top rendered candidates:\n\s+- strength=", out)


def test_2_health_dormancy_and_retention_monitoring() -> None:
    out = health_text(monitoring_fixture())
    check_monitoring(out)
    assert "  dormant multiplier: 0.25" in out


def test_3_health_global_cap_overflow_is_separate_from_type_caps() -> None:
    check_global_cap(health_text(global_cap_fixture()))


def test_4_health_missing_dormancy_and_quiet_monitoring() -> None:
    out = health_text(diag([], last_activity=None))
    check_quiet_health(out)
    assert "dormant days past grace: 0.0" in out
    assert "Top rendered candidates:\n  (none)" in out
    assert out.endswith("Weakest active memories:\n  (none)")


def test_health_full_layout_and_redaction() -> None:
    stored = [
        entry("Config lives in /home/dev/project/src/config.ts", id="a", type="project", stale_after_days=60),
        entry(
            "Use password: sushi for the fixture",
            id="b",
            type="decision",
            created_at=iso_from_ms(NOW - 100 * DAY_MS),
        ),
        entry("Wave 2 completed successfully", id="c", type="feedback"),
        entry("Old", id="d", type="decision", status="superseded"),
    ]
    pending = [
        entry("Pending explicit", id="p1", type="feedback", source="explicit", promotion_attempts=2),
        entry("Pending manual", id="p2", type="project", source="manual"),
    ]
    out = health_text(diag(stored, pending=pending))
    head = out.split("\n\nStored active")[0]
    assert head == (
        "Workspace memory health\n\n"
        f"workspaceKey={KEY} workspaceRootHash={hash16(ROOT)}\n"
        "memoryPath=<path>\npendingPath=<path>"
    )
    assert "workspaceRoot=" not in out and "/home/dev" not in out
    assert "sushi" not in out
    assert "Superseded memories: 1" in out
    assert "Archived memories: 0" in out
    assert "Pending journal:\n  total: 2\n  retryable: 2\n  near retry limit: 1\n  by source:\n" in out
    assert "    explicit: 1\n    manual: 1\n    compaction: 0" in out
    assert "  stale-marked: 0\n  freshness: fresh 3, aging 0, stale 0, expired 0\n  older than 30d: 1" in out
    assert "Active memories failing offline quality checks:" in out
    assert '  - [feedback] reasons=progress_snapshot,bad_feedback "Wave 2 completed successfully"' in out
    assert "Config lives in <path>" in out
    raw = health_text(diag(stored, pending=pending), raw=True)
    assert (
        f"workspaceRoot={ROOT}" in raw and "memoryPath=/home/dev/project/.data/workspace-memory.json" in raw
    )
    assert "sushi" in raw


def test_health_missing_files_and_all_mode_without_title() -> None:
    src = DiagInput(root=ROOT, key=KEY)
    out = format_health(health_report(src, NOW), include_title=False)
    assert out.startswith(f"workspaceKey={KEY} workspaceRootHash=")
    assert "memory store: missing or unreadable (treated as empty)" in out
    assert "pending journal: missing (treated as empty)" in out
    assert "Stored active memories: 0" in out


def test_health_d3_reports_recorded_dormant_spans() -> None:
    spans = (
        DormantSpan(start=NOW - 40 * DAY_MS, end=NOW - 30 * DAY_MS),
        DormantSpan(start=NOW - 9 * DAY_MS, end=NOW - 4 * DAY_MS),
    )
    out = health_text(diag([entry("Some memory text here", id="a", type="decision")], dormant_spans=spans))
    assert "  recorded dormant spans: 2 (15.0 days)" in out


def test_health_d2_counts_archived_markers_and_char_budget_omissions() -> None:
    stored = [
        entry(f"Durable decision number {i} that is fairly long", id=f"d{i}", type="decision")
        for i in range(5)
    ]
    report = health_report(diag(stored, archived=(archive_marker("gone"),), max_chars=120), NOW)
    assert report.archived == 1
    assert report.rendered_candidates == 5
    assert report.rendered_in_block == 1
    assert report.char_budget_omitted == 4
    out = format_health(report)
    assert "Archived memories: 1" in out and "Rendered in block: 1" in out
    assert "  over character budget: 4" in out


def test_health_dormancy_changes_strength_order_d3() -> None:
    old_explicit = entry(
        "Old explicit reference",
        id="r-old",
        type="reference",
        source="explicit",
        created_at=iso_from_ms(NOW - 90 * DAY_MS),
        retention_clock=NOW - 90 * DAY_MS,
    )
    recent = entry(
        "Recent reference",
        id="r-new",
        type="reference",
        created_at=iso_from_ms(NOW - 20 * DAY_MS),
        retention_clock=NOW - 20 * DAY_MS,
    )
    awake = health_report(diag([old_explicit, recent]), NOW)
    idle = health_report(diag([old_explicit, recent], last_activity=iso_from_ms(NOW - 74 * DAY_MS)), NOW)
    assert [r.entry.id for r in awake.strongest] == ["r-new", "r-old"]
    assert [r.entry.id for r in idle.strongest] == ["r-old", "r-new"]
    assert [r.entry.id for r in idle.weakest] == ["r-new", "r-old"]
