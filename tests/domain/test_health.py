"""Diagnostics (docs/decisions.md#diagnostics and its sections): the reference's diagnostics tests 1-16
and T1-T11 (docs/decisions.md#parity-with-the-reference), ported as unit tests on the pure functions;
the stores, journals, events and rejection records are built in memory."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import StrEnum
from functools import partial
from typing import Any

import msgspec
import pytest
from returns.result import Failure, Success

from domain.diagnostics import (
    CoverageClass,
    DiagInput,
    DiagnosticStatus,
    FalsePositiveKind,
    QualityVerdict,
    RejectionOrigin,
    Risk,
    RiskCode,
    build_snapshot,
    clean_text,
    coverage_json,
    coverage_rows,
    disappearance_rows,
    disappearances_json,
    filter_rejections,
    format_coverage,
    format_details,
    format_disappearances,
    format_explain,
    format_health,
    format_quality,
    format_rejection_quality,
    format_rejections,
    format_trace,
    health_json,
    health_report,
    inspect,
    normalize_rejections,
    parse_since,
    quality_json,
    quality_report,
    redact_absolute_paths,
    rejection_quality,
    rejection_quality_json,
    retention_clock_counts,
    shorten,
    status_from_trace_event,
    to_fixed,
    trace_report,
    unique_rejections,
)
from domain.enums import Importance, MemorySource
from domain.extraction import RejectionRecord
from domain.ids import hash16
from domain.limits import DAY_MS
from domain.model import ArchiveMarker, DormantSpan, EvidenceEvent, MemoryEntry, StoreLimits
from domain.timeutil import iso_from_ms, parse_iso_ms
from tests.support.builders import KEY, NOW, NOW_ISO, ROOT, event as ev, journal, memory, ref, store

#: The reference tests' ``entry()``: an active compaction-style entry created now, confidence 0.75
#: whatever its source.
entry = partial(memory, confidence=0.75)


def diag(
    entries: list[MemoryEntry] | None = None,
    *,
    pending: list[MemoryEntry] | None = None,
    events: Sequence[EvidenceEvent] = (),
    rejections: Sequence[RejectionRecord] = (),
    last_activity: str | None = NOW_ISO,
    max_chars: int = 3600,
    **store_fields: Any,
) -> DiagInput:
    """The diagnostics' input for the workspace ``ROOT``: a store of ``entries`` (active now, unless
    ``last_activity`` says otherwise), a journal of ``pending``, the evidence and rejection logs."""
    limits = StoreLimits(max_rendered_chars=max_chars)
    return DiagInput(
        root=ROOT,
        key=KEY,
        store=store(*entries, last_activity_at=last_activity, limits=limits, **store_fields)
        if entries is not None
        else None,
        journal=journal(*pending) if pending is not None else None,
        events=tuple(events),
        rejections=tuple(rejections),
        memory_path=f"{ROOT}/.data/workspace-memory.json",
        pending_path=f"{ROOT}/.data/workspace-pending-journal.json",
    )


def health_text(src: DiagInput, **kwargs: Any) -> str:
    return format_health(health_report(src, NOW), **kwargs)


# ---------------------------------------------------------------------------------------------
# Tests 1-4: health (docs/decisions.md#diagnostics-health)
# ---------------------------------------------------------------------------------------------


def test_1_health_reports_stored_vs_rendered_counts() -> None:
    """The meaning of docs/decisions.md#d2: the 17 feedback stay stored; only 10 can be rendered."""
    entries = [
        entry(f"Unique feedback preference for memory health {i}", id=f"feedback-{i}", type="feedback")
        for i in range(17)
    ]
    entries += [
        entry(f"Unique durable decision for memory health {i}", id=f"decision-{i}", type="decision")
        for i in range(11)
    ]
    out = health_text(diag(entries))
    assert "Stored active memories: 28" in out
    assert "Rendered candidates: 20" in out
    assert re.search(r"feedback\s+stored=17\s+rendered=10", out)
    assert "  feedback  stored=17  rendered=10  typeCap=10 superseded=0" in out
    assert "  decision  stored=11  rendered=10  typeCap=10 superseded=0" in out
    assert "  type-capped entries: 8\n  global-cap overflow: 0" in out
    assert re.search(r"Top rendered candidates:\n\s+- strength=", out)


def test_2_health_dormancy_and_retention_monitoring() -> None:
    entries = [
        entry(
            f"Unique monitoring memory {i} for retention health",
            id=f"monitoring-{i}",
            type="feedback" if i % 2 == 0 else "decision",
            user_importance=Importance.HIGH if i < 4 else Importance.NORMAL,
            safety_critical=i < 6,
            reinforcement_count=6 if i < 2 else 0,
        )
        for i in range(10)
    ]
    out = health_text(diag(entries, last_activity=iso_from_ms(NOW - 19 * DAY_MS)))
    assert "Dormancy:" in out
    assert "wall days since activity: 19.0" in out
    assert "dormant discount active: yes" in out
    assert "dormant days past grace: 5.0" in out
    assert "  dormant multiplier: 0.25" in out
    assert re.search(r"high_importance_ratio: 40\.0% .* ALERT", out)
    assert re.search(r"safety_critical_count: 6 .*no longer set.* WARNING", out)
    assert "max_reinforced_count: 2 (20.0%, alert > 10%) ALERT" in out


def test_3_health_global_cap_overflow_is_separate_from_type_caps() -> None:
    entries = (
        [
            entry(f"Unique global feedback preference {i}", id=f"global-feedback-{i}", type="feedback")
            for i in range(10)
        ]
        + [
            entry(f"Unique global durable decision {i}", id=f"global-decision-{i}", type="decision")
            for i in range(10)
        ]
        + [
            entry(f"Unique global project fact {i}", id=f"global-project-{i}", type="project")
            for i in range(8)
        ]
        + [
            entry(f"Unique global reference fact {i}", id=f"global-reference-{i}", type="reference")
            for i in range(6)
        ]
    )
    out = health_text(diag(entries))
    assert "Rendered candidates: 28" in out
    assert "type-capped entries: 0" in out
    assert "global-cap overflow: 6" in out


def test_4_health_missing_dormancy_and_quiet_monitoring() -> None:
    out = health_text(diag([], last_activity=None))
    assert "lastActivityAt: (missing)" in out
    assert "wall days since activity: unknown" in out
    assert "dormant discount active: no" in out
    assert "dormant days past grace: 0.0" in out
    assert "high_importance_ratio: 0.0% (alert > 30%)\n" in out
    assert "safety_critical_count: 0 (no longer set)\n" in out
    assert "max_reinforced_count: 0 (alert > 10% active)" in out
    assert "Top rendered candidates:\n  (none)" in out
    assert out.endswith("Weakest active memories:\n  (none)")


def test_health_full_layout_and_redaction() -> None:
    entries = [
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
    out = health_text(diag(entries, pending=pending))
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
    raw = health_text(diag(entries, pending=pending), raw=True)
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
    marker = ArchiveMarker(
        memory_id="gone", key_hash="a" * 16, identity_key_hash="b" * 16, archived_at=NOW_ISO
    )
    entries = [
        entry(f"Durable decision number {i} that is fairly long", id=f"d{i}", type="decision")
        for i in range(5)
    ]
    report = health_report(diag(entries, archived=(marker,), max_chars=120), NOW)
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


# ---------------------------------------------------------------------------------------------
# Test 5: health --json
# ---------------------------------------------------------------------------------------------


def test_5_health_json_matches_human_counts_and_is_privacy_safe() -> None:
    rendered = entry("Prefer small focused changes", id="mem-rendered", type="feedback", source="explicit")
    secret = entry(
        "Use password: sushi only in test fixtures", id="mem-secret", type="decision", source="manual"
    )
    old = entry("Old decision that was superseded", id="mem-old", type="decision", status="superseded")
    pending = entry("Retry this pending memory later", id="mem-pending", type="project", promotion_attempts=1)
    events = [
        ev(
            "extraction_candidate_rejected",
            "extraction",
            "rejected",
            ["raw_secret"],
            memory=ref("mem-rejected", "feedback", "explicit"),
            preview="password: sushi should not leak",
        ),
        ev("storage_corrupt_json_quarantined", "storage", "quarantined", ["invalid_json"]),
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("mem-rendered", "feedback", "explicit", "active"),
        ),
        ev(
            "render_selected",
            "render",
            "rendered",
            ["within_caps", "within_char_budget"],
            memory=ref("mem-rendered", "feedback", "explicit", "active"),
        ),
    ]
    src = diag([rendered, secret, old], pending=[pending], events=events)
    human = health_text(src)
    data = health_json(src, NOW)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    assert data["version"] == 1
    assert list(data) == ["version", "workspace", "generatedAt", "summary", "memories", "recentEvents"]
    assert data["generatedAt"] == NOW_ISO
    summary = data["summary"]
    assert summary["storedActive"] == int(re.findall(r"Stored active memories: (\d+)", human)[0]) == 2
    assert summary["rendered"] == int(re.findall(r"Rendered candidates: (\d+)", human)[0]) == 2
    assert summary["pending"] == int(re.findall(r"Pending journal:\n\s+total: (\d+)", human)[0]) == 1
    assert summary["rejectedLast7Days"] == 1
    assert summary["corruptStoresQuarantinedLast30Days"] == 1
    assert any(
        e["eventId"]
        and e["type"] == "render_selected"
        and e["outcome"] == "rendered"
        and e["createdAt"]
        and "within_caps" in e["reasonCodes"]
        for e in data["recentEvents"]
    )
    rows = {m["id"]: m for m in data["memories"]}
    assert rows["mem-rendered"]["evidenceEventIds"]
    assert rows["mem-rendered"]["status"] == "rendered"
    assert rows["mem-old"]["status"] == "omitted_superseded"
    assert rows["mem-pending"]["status"] == "pending_retry"
    assert list(rows["mem-rendered"]) == [
        "id",
        "type",
        "source",
        "status",
        "strength",
        "reasonCodes",
        "textPreview",
        "evidenceEventIds",
    ]
    assert "sushi" not in text
    assert text.startswith("{") and text.endswith("}")
    quarantine = next(e for e in data["recentEvents"] if e["type"] == "storage_corrupt_json_quarantined")
    assert quarantine["reasonCodes"] == ["invalid_json", "quarantined_corrupt_store"]
    assert "memoryId" not in quarantine


def test_recent_events_are_the_50_newest() -> None:
    events = [
        ev("promotion_promoted", "promotion", "promoted", ["x"], memory=ref(f"m{i}")) for i in range(60)
    ]
    snap = build_snapshot(diag([], events=events), NOW)
    assert len(snap.recent_events) == 50
    assert snap.recent_events[0].event_id == events[-1].event_id
    assert snap.recent_events[-1].event_id == events[10].event_id


def test_rejected_and_quarantined_windows() -> None:
    old = iso_from_ms(NOW - 8 * DAY_MS)
    events = [
        ev("extraction_candidate_rejected", "extraction", "rejected", ["too_short"], created_at=old),
        ev("storage_corrupt_json_quarantined", "storage", "quarantined", ["invalid_json"], created_at=old),
        ev(
            "storage_corrupt_json_quarantined",
            "storage",
            "quarantined",
            ["invalid_json"],
            created_at=iso_from_ms(NOW - 31 * DAY_MS),
        ),
    ]
    summary = build_snapshot(diag([], events=events), NOW).summary
    assert summary.rejected_last_7_days == 0
    assert summary.corrupt_stores_quarantined_last_30_days == 1


# ---------------------------------------------------------------------------------------------
# Test 6: explain (docs/decisions.md#diagnostics-explain-and-trace)
# ---------------------------------------------------------------------------------------------


def explain_fixture() -> DiagInput:
    rendered = entry(
        "Rendered feedback wins the render set", id="mem-rendered", type="feedback", source="explicit"
    )
    superseded = entry(
        "Superseded memory is not rendered", id="mem-superseded", type="decision", status="superseded"
    )
    type_capped = [
        entry(f"Type cap feedback memory {i}", id=f"mem-type-{i}", type="feedback") for i in range(11)
    ]
    global_capped = (
        [
            entry(f"Global cap feedback memory {i}", id=f"mem-g-feedback-{i}", type="feedback")
            for i in range(10)
        ]
        + [
            entry(f"Global cap decision memory {i}", id=f"mem-g-decision-{i}", type="decision")
            for i in range(10)
        ]
        + [entry(f"Global cap project memory {i}", id=f"mem-g-project-{i}", type="project") for i in range(8)]
        + [
            entry(f"Global cap reference memory {i}", id=f"mem-g-reference-{i}", type="reference")
            for i in range(7)
        ]
    )
    char_budget = entry(
        "This active memory cannot fit the tiny character budget", id="mem-char-budget", type="project"
    )
    retry = entry(
        "Pending retry memory",
        id="mem-pending-retry",
        type="project",
        promotion_attempts=1,
        last_promotion_failure_reason="capacity_rejected",
    )
    exhausted = entry(
        "Pending capacity rejected memory",
        id="mem-pending-capacity",
        type="project",
        promotion_attempts=3,
        last_promotion_failure_reason="capacity_rejected",
    )
    events = [
        ev(
            "promotion_absorbed_exact",
            "promotion",
            "absorbed",
            ["same_exact_key"],
            memory=ref("mem-absorbed", "feedback", "explicit"),
        ),
        ev("storage_corrupt_json_quarantined", "storage", "quarantined", ["invalid_json"]),
    ]
    return diag(
        [rendered, superseded, *type_capped, *global_capped, char_budget],
        pending=[retry, exhausted],
        events=events,
        max_chars=100,
    )


def test_6_explain_statuses_reasons_and_evidence() -> None:
    out = format_explain(explain_fixture(), NOW)
    assert out.startswith("Workspace memory explainability\n\n")
    assert "Memory mem-rendered: rendered" in out
    assert "Memory mem-superseded: omitted_superseded" in out
    assert "omitted_type_cap" in out
    assert "omitted_global_cap" in out
    assert "omitted_char_budget" in out
    assert "Memory mem-pending-retry: pending_retry" in out
    assert "Memory mem-pending-capacity: pending_rejected_capacity" in out
    assert "Memory mem-absorbed: omitted_absorbed_duplicate" in out
    assert "quarantined_corrupt_store" in out
    assert re.search(r"- strength=\d+\.\d{3}, type=feedback, source=explicit", out)
    assert re.search(r"- evidence: .*promotion_absorbed_exact", out)
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


def test_6_explain_render_arithmetic() -> None:
    """Derived T6 numbers: the block is exactly 100 characters; omissions 1/14/6/27."""
    snap = build_snapshot(explain_fixture(), NOW)
    assert (
        snap.render.text == "Workspace memory (cross-session, verify if stale):\nfeedback:\n"
        "- Rendered feedback wins the render set"
    )
    assert len(snap.render.text) == 100
    reasons: list[str] = [o.reason for o in snap.render.omitted]
    assert (
        reasons.count("superseded"),
        reasons.count("type_cap"),
        reasons.count("global_cap"),
        reasons.count("char_budget"),
    ) == (1, 14, 6, 27)
    row = next(r for r in snap.memories if r.id == "mem-rendered")
    assert to_fixed(row.strength or 0, 3) == "4.500"


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
    marker = ArchiveMarker(
        memory_id="mem-arch", key_hash="a" * 16, identity_key_hash="b" * 16, archived_at=NOW_ISO
    )
    events = [
        ev(
            "memory_archived",
            "consolidation",
            "archived",
            ["archive_weakest"],
            memory=ref("mem-arch", "decision", "compaction"),
        )
    ]
    out = format_explain(diag([], archived=(marker,), events=events), NOW)
    assert "Memory mem-arch: omitted_archived\n- strength=n/a, type=decision, source=compaction\n" in out
    assert "- reasons: archived, archive_weakest" in out


# ---------------------------------------------------------------------------------------------
# Tests 7-8: trace (docs/decisions.md#diagnostics-explain-and-trace)
# ---------------------------------------------------------------------------------------------


def trace_fixture() -> DiagInput:
    life = ref("mem-life", "decision", "compaction")
    events = [
        ev(
            "extraction_candidate_accepted",
            "extraction",
            "accepted",
            ["quality_gate_passed"],
            memory=life,
            preview="password: sushi",
        ),
        ev(
            "pending_memory_appended",
            "pending_journal",
            "accepted",
            ["pending_journal_append"],
            memory=life,
            relations=[("pending", "mem-life")],
        ),
        ev("promotion_promoted", "promotion", "promoted", ["new_workspace_entry"], memory=life),
        ev(
            "memory_reinforced",
            "reinforcement",
            "reinforced",
            ["duplicate_exact"],
            memory=life,
            relations=[("reinforced_by", "mem-duplicate")],
        ),
        ev(
            "promotion_superseded",
            "promotion",
            "superseded",
            ["superseded_existing"],
            memory=life,
            relations=[("superseded_by", "mem-new")],
        ),
        ev(
            "render_omitted",
            "render",
            "omitted",
            ["superseded"],
            memory=life,
            relations=[("omitted", "mem-life")],
        ),
    ]
    return diag(
        [
            entry(
                "Old token password: sushi should be redacted",
                id="mem-life",
                type="decision",
                status="superseded",
            ),
            entry("Replacement memory", id="mem-new", type="decision"),
        ],
        events=events,
    )


def test_7_trace_prints_lifecycle_relations_without_text() -> None:
    out = format_trace(trace_report(trace_fixture(), "mem-life", NOW))
    assert out.startswith("Memory mem-life: omitted_superseded\n\nLifecycle:\n")
    assert "extraction_candidate_accepted: accepted; reasons=quality_gate_passed" in out
    assert "pending_memory_appended: accepted; reasons=pending_journal_append" in out
    assert re.search(
        r"promotion_superseded: superseded; reasons=superseded_existing; .*superseded_by=mem-new", out
    )
    assert re.search(
        r"memory_reinforced: reinforced; reasons=duplicate_exact; .*reinforced_by=mem-duplicate", out
    )
    assert "Superseded by:\n- mem-new" in out
    assert "Reinforced by:\n- mem-duplicate" in out
    assert "sushi" not in out
    lines = [line for line in out.split("\n") if line.startswith("- ")][:-2]  # the relations after
    assert len(lines) == 6
    assert all(
        re.match(r"- (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC|\(no time\)|\S+)  evt_", line) for line in lines
    )


def test_8_trace_of_an_unknown_id() -> None:
    out = format_trace(trace_report(trace_fixture(), "missing-memory", NOW))
    assert out == "Memory missing-memory: unknown\n\nLifecycle:\n(none)"


def test_the_diagnostic_vocabularies_keep_their_codes() -> None:
    """Renaming a member is a type error; its code, what the reports print, stays as it is."""
    pinned: dict[type[StrEnum], str] = {
        DiagnosticStatus: "rendered omitted_superseded omitted_type_cap omitted_global_cap"
        " omitted_char_budget omitted_archived omitted_absorbed_duplicate omitted_expired pending_retry"
        " pending_rejected_capacity quarantined_corrupt_store unknown",
        CoverageClass: "full_lifecycle render_only no_evidence historical_absent_with_reason"
        " historical_absent_unknown_reason",
        QualityVerdict: "ok warning degraded",
        FalsePositiveKind: "architecture_like_possible_false_positive clearly_garbage ambiguous",
        Risk: "high low",
        RiskCode: "missing_or_empty_hardReasons soft_reasons_without_hardReasons user_preference_marker"
        " durable_rule_marker feedback_or_decision_path_heavy_only",
    }
    for vocabulary, codes in pinned.items():
        assert [member.value for member in vocabulary] == codes.split(), vocabulary
    assert isinstance(status_from_trace_event(ev("memory_archived", "x", "archived", [])), DiagnosticStatus)
    fallback = status_from_trace_event(ev("promotion_promoted", "x", "promoted", []))
    assert fallback == "promoted" and not isinstance(fallback, DiagnosticStatus)


def test_trace_status_from_last_event_when_not_stored() -> None:
    def last(type_: str, outcome: str, reasons: list[str]) -> str:
        return status_from_trace_event(ev(type_, "x", outcome, reasons))

    assert last("render_selected", "rendered", []) == "rendered"
    assert last("render_omitted", "omitted", ["global_cap"]) == "omitted_global_cap"
    assert last("render_omitted", "omitted", ["empty_render_budget"]) == "omitted_char_budget"
    assert last("promotion_absorbed_identity", "absorbed", []) == "omitted_absorbed_duplicate"
    assert last("memory_absorbed", "absorbed", []) == "omitted_absorbed_duplicate"
    assert last("memory_archived", "archived", []) == "omitted_archived"
    assert last("promotion_retry_scheduled", "retried", []) == "pending_retry"
    assert last("promotion_retry_exhausted", "exhausted", []) == "pending_rejected_capacity"
    assert last("storage_corrupt_json_quarantined", "quarantined", []) == "quarantined_corrupt_store"
    assert last("memory_superseded", "superseded", []) == "omitted_superseded"
    assert last("promotion_promoted", "promoted", []) == "promoted"
    assert status_from_trace_event(None) == "unknown"
    events = [
        ev("promotion_promoted", "promotion", "promoted", ["x"], memory=ref("gone")),
        ev(
            "memory_absorbed",
            "consolidation",
            "absorbed",
            ["absorbed_exact"],
            memory=ref("gone"),
            relations=[("absorbed", "gone"), ("retained", "keeper")],
        ),
    ]
    report = trace_report(diag([], events=events), "gone", NOW)
    assert report.status == "omitted_absorbed_duplicate"


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


# ---------------------------------------------------------------------------------------------
# Tests 9-10: quality (docs/decisions.md#diagnostics-coverage-disappearances-and-quality)
# ---------------------------------------------------------------------------------------------


def quality_fixture() -> DiagInput:
    entries = [
        entry(
            f"Quality fixture memory {i}",
            id=f"quality-{i}",
            type="feedback" if i % 2 == 0 else "decision",
            retention_clock=-1 if i == 0 else NOW,
        )
        for i in range(28)
    ]
    events = [
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("quality-1", "decision", "compaction"),
        ),
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("quality-historical", "reference", "compaction"),
        ),
    ]
    records = [
        RejectionRecord(
            timestamp=NOW_ISO,
            type="decision",
            source=MemorySource.COMPACTION,
            text="Implemented phase 2 and updated tests",
            reasons=("bad_decision",),
            workspace_key=KEY,
            workspace_root_hash="hash",
        ),
        RejectionRecord(
            timestamp=NOW_ISO,
            type="feedback",
            source=MemorySource.COMPACTION,
            text="Wave 1 completed successfully",
            reasons=("progress_snapshot", "bad_feedback"),
        ),
    ]
    return diag(entries, events=events, rejections=records)


def test_9_quality_human_output() -> None:
    out = format_quality(quality_report(inspect(quality_fixture(), NOW)))
    assert out.startswith("Memory quality inspection\n\nSummary: memory quality is degraded:")
    assert "\n  all types: 28 stored, at most 28 shown\n" in out
    assert "decision: 14 stored, at most 10 shown (full)" in out
    assert "feedback: 14 stored, at most 10 shown (full)" in out
    assert "  project: 0 stored, at most 8 shown\n" in out
    assert "Retention clocks:\n  present: 27\n  missing: 0\n  invalid: 1" in out
    assert "Evidence:\n  current with evidence: 1\n  current without evidence: 27" in out
    assert "workspace scoped: 1\n  from before records named their workspace: 1" in out
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


# ---------------------------------------------------------------------------------------------
# Tests 11-14: coverage and disappearances (docs/decisions.md#diagnostics-coverage-disappearances-and-quality)
# ---------------------------------------------------------------------------------------------


def test_11_coverage_human_output() -> None:
    events = [
        ev(
            "extraction_candidate_accepted",
            "extraction",
            "accepted",
            ["quality_gate_passed"],
            memory=ref("mem-full", "feedback", "compaction"),
        ),
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("mem-full", "feedback", "compaction"),
        ),
        ev(
            "render_selected",
            "render",
            "rendered",
            ["within_caps"],
            memory=ref("mem-render-only", "decision", "compaction"),
        ),
    ]
    src = diag(
        [
            entry("Full lifecycle memory", id="mem-full", type="feedback"),
            entry("Render only memory", id="mem-render-only", type="decision"),
            entry("No evidence memory", id="mem-no-evidence", type="project"),
        ],
        events=events,
    )
    out = format_coverage(coverage_rows(inspect(src, NOW)))
    assert "Class counts:" in out
    assert "full_lifecycle: 1" in out and "render_only: 1" in out and "no_evidence: 1" in out
    assert "  historical_absent_unknown_reason: 0" in out
    assert "Per-memory rows:" in out
    assert re.search(r"mem-full full_lifecycle .*extraction=1 promotion=1", out)
    assert re.search(r"mem-render-only render_only .*render=1", out)
    assert re.search(r"mem-no-evidence no_evidence .*total=0", out)
    assert "  mem-full full_lifecycle current=yes total=2 extraction=1 promotion=1 render=0 storage=0" in out


def test_12_coverage_json_event_counts() -> None:
    events = [
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("mem-full", "feedback", "compaction"),
        )
    ]
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
    events = [
        ev("promotion_promoted", "promotion", "promoted", ["x"], memory=ref("old", "decision", "compaction"))
    ]
    model = inspect(diag([entry("Current", id="cur", type="feedback")], events=events), NOW)
    assert [r.id for r in coverage_rows(model)] == ["cur"]
    rows = coverage_rows(model, include_historical=True)
    assert [(r.id, r.cls, r.current, r.type) for r in rows] == [
        ("cur", "no_evidence", True, "feedback"),
        ("old", "historical_absent_unknown_reason", False, "decision"),
    ]
    assert format_coverage(()).endswith("Per-memory rows:\n  (none)")


def test_13_disappearance_without_terminal_event_is_unknown() -> None:
    events = [
        ev(
            "promotion_promoted",
            "promotion",
            "promoted",
            ["new_workspace_entry"],
            memory=ref("historical-unknown", "decision", "compaction"),
        )
    ]
    rows = disappearance_rows(
        inspect(diag([entry("Current memory", id="current", type="feedback")], events=events), NOW)
    )
    out = format_disappearances(rows)
    assert "Memory historical-unknown: historical_absent_unknown_reason terminal=unknown" in out
    assert out == (
        "Memory disappearances\n\n"
        "Memory historical-unknown: historical_absent_unknown_reason terminal=unknown reasons=none"
    )


def test_14_disappearances_explain_capacity_details_and_type_cap_observation() -> None:
    events = [
        ev(
            "memory_removed_capacity",
            "storage",
            "removed",
            ["type_cap"],
            memory=ref("capacity-loser", "decision", "compaction", "active"),
            relations=[("removed", "capacity-loser")],
            details={"type": "decision", "globalCap": 28, "typeCap": 10, "source": "compaction"},
        ),
        ev(
            "render_omitted",
            "render",
            "omitted",
            ["type_cap"],
            memory=ref("render-loser", "feedback", "compaction"),
        ),
    ]
    rows = disappearance_rows(
        inspect(diag([entry("Current memory", id="current", type="feedback")], events=events), NOW)
    )
    out = format_disappearances(rows, explain=True)
    assert (
        "capacity-loser: historical_absent_with_reason terminal=memory_removed_capacity reasons=type_cap"
        in out
    )
    assert re.search(r"memory_removed_capacity details: .*globalCap=28 .*typeCap=10", out)
    assert "  memory_removed_capacity details: type=decision globalCap=28 typeCap=10 source=compaction" in out
    assert "render-loser: historical_absent_with_reason terminal=render_omitted reasons=type_cap" in out
    assert "render_omitted type-cap observation: reasons=type_cap" in out
    data = disappearances_json(rows, NOW, explain=True)
    assert data["disappearances"][0]["details"]["typeCap"] == 10
    assert "details" not in disappearances_json(rows, NOW)["disappearances"][0]


def test_disappearances_workmem_terminal_events() -> None:
    """workmem's own absorption and archive events account for a memory that left the store."""
    events = [
        ev(
            "memory_absorbed",
            "consolidation",
            "absorbed",
            ["absorbed_exact"],
            memory=ref("dup", "decision"),
            relations=[("absorbed", "dup"), ("retained", "keeper")],
        ),
        ev(
            "memory_archived",
            "consolidation",
            "archived",
            ["archive_weakest"],
            memory=ref("arch", "decision"),
        ),
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


# ---------------------------------------------------------------------------------------------
# Tests 15-16: rejections (docs/decisions.md#diagnostics-rejections)
# ---------------------------------------------------------------------------------------------


def test_15_rejection_quality_groups_heuristically() -> None:
    records = normalize_rejections(
        [
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                workspace_key=KEY,
                text="Retention scoring model uses evidence caps to avoid normalization drift",
                reasons=("bad_decision",),
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                workspace_key=KEY,
                text="Implemented phase 2 and updated tests",
                reasons=("bad_decision",),
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                text="Maybe useful",
                reasons=("bad_decision",),
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                workspace_key="otherkey",
                text="Foreign workspace record",
                reasons=("bad_decision",),
            ),
        ]
    )
    filtered = filter_rejections(records, workspace_key=KEY, reason="bad_decision")
    assert len(filtered) == 3
    summary = rejection_quality(unique_rejections(filtered))
    out = format_rejection_quality(summary, log_path="/home/dev/.local/share/x/extraction-rejections.jsonl")
    assert "Possible false-positive grouping is heuristic, not deterministic truth" in out
    assert "architecture_like_possible_false_positive: 1" in out
    assert "clearly_garbage: 1" in out
    assert "ambiguous: 1" in out
    assert not re.search(r"deterministic truth\s*:", out)
    assert "logPath=<path>" in out
    assert '    - "Maybe useful"' in out


def test_16_rejection_quality_json() -> None:
    records = normalize_rejections(
        [
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                workspace_key=KEY,
                workspace_root_hash="hash",
                text="Memory system schema boundary should remain stable",
                reasons=("bad_decision",),
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="feedback",
                source=MemorySource.COMPACTION,
                text="Wave 1 completed successfully",
                reasons=("progress_snapshot", "bad_feedback"),
            ),
        ]
    )
    data = rejection_quality_json(rejection_quality(filter_rejections(records, workspace_key=KEY)), NOW)
    assert data["workspaceScopedCount"] == 1
    assert data["legacyUnscopedCount"] == 1
    assert data["uniqueReasonDistribution"]["bad_decision"] == 1
    assert data["possibleFalsePositiveGroups"]["architecture_like_possible_false_positive"]["count"] == 1
    assert list(data)[:2] == ["version", "generatedAt"]


def test_plain_rejections_summary() -> None:
    records = normalize_rejections(
        [
            RejectionRecord(
                timestamp=iso_from_ms(NOW - DAY_MS),
                type="feedback",
                source=MemorySource.EXPLICIT,
                text="Remember password: hunter2 please",
                reasons=("bad_feedback",),
                workspace_key=KEY,
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="decision",
                source=MemorySource.COMPACTION,
                text="Wave 3 completed",
                reasons=("progress_snapshot",),
            ),
            RejectionRecord(timestamp="", type="decision", text="", reasons=("empty",)),
        ]
    )
    assert len(records) == 2  # the record without text is dropped
    out = format_rejections(records, invalid_lines=2)
    assert "Invalid JSONL lines skipped: 2" in out
    assert "Total rejected: 2" in out
    assert "By reason:\n  bad_feedback             1\n  progress_snapshot        1\n" in out
    assert "By origin:\n  compaction_candidate     1\n  explicit_trigger         1\n" in out
    assert 'Rejected after an explicit request ("remember ..."):\n  bad_feedback             1\n' in out
    assert '  - [feedback] "Remember password: [REDACTED] please"\n    reasons: bad_feedback\n' in out
    assert f"    origin: explicit_trigger (workspaceKey={KEY})" in out
    assert "hunter2" not in out
    assert "hunter2" in format_rejections(records, raw=True)
    empty = format_rejections(())
    assert "By reason:\n  (none)" in empty and empty.endswith("Recent suspicious soft rejects:\n  (none)")


def test_rejection_origins_and_the_record_source_keep_their_codes() -> None:
    codes = "explicit_trigger compaction_candidate manual migration_check unknown"
    assert [o.value for o in RejectionOrigin] == codes.split()
    record = RejectionRecord(timestamp="t", type="project", text="x", reasons=("empty",))
    line = b'{"timestamp":"t","type":"project","text":"x","reasons":["empty"],"source":"compaction"}'
    assert msgspec.json.encode(record) == line
    assert msgspec.json.encode(msgspec.structs.replace(record, source=MemorySource.COMPACTION)) == line
    variants = [msgspec.structs.replace(record, source=s) for s in MemorySource]
    origins = [r.origin for r in normalize_rejections(variants)]
    assert origins == ["explicit_trigger", "compaction_candidate", "manual"]


def test_rejection_filters() -> None:
    records = normalize_rejections(
        [
            RejectionRecord(
                timestamp=iso_from_ms(NOW - 20 * DAY_MS),
                type="decision",
                source=MemorySource.COMPACTION,
                text="Old progress",
                reasons=("progress_snapshot",),
            ),
            RejectionRecord(
                timestamp=NOW_ISO,
                type="feedback",
                source=MemorySource.EXPLICIT,
                text="Recent soft",
                reasons=("bad_feedback",),
            ),
            RejectionRecord(
                timestamp="garbage",
                type="feedback",
                source=MemorySource.MANUAL,
                text="Bad time",
                reasons=("bad_feedback",),
            ),
        ]
    )
    since = parse_since("14d", NOW)
    assert since == Success(NOW - 14 * DAY_MS)
    assert [r.text for r in filter_rejections(records, since_ms=NOW - 14 * DAY_MS)] == ["Recent soft"]
    assert [r.text for r in filter_rejections(records, soft_only=True)] == ["Recent soft", "Bad time"]
    assert [r.text for r in filter_rejections(records, trigger_only=True)] == ["Recent soft"]
    assert parse_since("6H", NOW) == Success(NOW - 6 * 3_600_000)
    assert parse_since("30m", NOW) == Success(NOW - 30 * 60_000)
    assert parse_since("2026-05-01", NOW) == Success(parse_iso_ms("2026-05-01"))
    assert parse_since("yesterday", NOW) == Failure("Invalid --since value: yesterday")


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (19.0, 1, "19.0"),
        (6.25, 1, "6.3"),
        (0.125, 2, "0.13"),
        (4.5, 3, "4.500"),
        (1.0005, 3, "1.000"),
        (-0.04, 1, "-0.0"),
        (-0.0, 1, "0.0"),
        (0.0, 1, "0.0"),
        (40.0, 1, "40.0"),
    ],
)
def test_to_fixed_matches_javascript(value: float, digits: int, expected: str) -> None:
    """JS rounds the exact binary value half away from zero (6.25 -> 6.3; 1.0005 is below the tie)."""
    assert to_fixed(value, digits) == expected


def test_redact_absolute_paths() -> None:
    assert redact_absolute_paths("Config at /home/dev/app/config.ts now") == "Config at <path> now"
    assert redact_absolute_paths("/Users/me/x") == "<path>"
    assert redact_absolute_paths('path="/var/log/app.log",') == 'path="<path>",'
    assert redact_absolute_paths("see (/opt/tool/bin) and /a/b /c/d") == "see (<path>) and <path> <path>"
    assert redact_absolute_paths("use src/app.ts and ~/.config/x and /single") == (
        "use src/app.ts and ~/.config/x and /single"
    )
    assert clean_text("password: sushi at /tmp/x/y") == "password: [REDACTED] at <path>"
    assert clean_text("password: sushi at /tmp/x/y", raw=True) == "password: sushi at /tmp/x/y"


def test_shorten_and_details() -> None:
    assert shorten("  a \n b  ") == "a b"
    assert shorten("x" * 130) == "x" * 119 + "…"
    assert shorten("x" * 120) == "x" * 120
    assert format_details({}) == "none"
    assert format_details({"a": True, "b": None, "c": 2.0, "d": ["x", "y"], "e": 1.5}) == (
        "a=true b=null c=2 d=x|y e=1.5"
    )


def test_diagnostics_never_return_a_modified_store() -> None:
    src = explain_fixture()
    before = src.store
    build_snapshot(src, NOW)
    health_report(src, NOW)
    quality_report(inspect(src, NOW))
    assert src.store is before and src.store == before
