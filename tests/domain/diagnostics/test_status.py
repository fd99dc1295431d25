"""The diagnostic statuses and the other report vocabularies (:mod:`domain.diagnostics.status`): the
codes the reports print, and the status a trace reads from a memory's last event
(docs/decisions.md#diagnostics-explain-and-trace)."""

from __future__ import annotations

from enum import StrEnum

from domain.diagnostics import (
    CoverageClass,
    DiagnosticStatus,
    FalsePositiveKind,
    QualityVerdict,
    Risk,
    RiskCode,
    status_from_trace_event,
    trace_report,
)
from tests.support.builders import NOW, event as ev, ref
from tests.support.diagnostics import absorbed, diag, promoted


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
        promoted(ref("gone"), "x"),
        absorbed(ref("gone"), "keeper"),
    ]
    report = trace_report(diag([], events=events), "gone", NOW)
    assert report.status == "omitted_absorbed_duplicate"
