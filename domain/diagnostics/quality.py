"""``quality``: caps, retention clocks, evidence coverage and rejection scoping in one verdict
(docs/decisions.md#diagnostics-coverage-disappearances-and-quality)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

import msgspec

from domain.diagnostics.common import TYPES
from domain.diagnostics.inspection import CoverageClass, Inspection, disappearance_rows
from domain.diagnostics.rejections import RejectionQuality, Risk, rejection_quality, rejection_quality_fields
from domain.enums import MemoryStatus
from domain.limits import RETENTION_TYPE_MAX
from domain.model import MemoryEntry
from domain.timeutil import iso_from_ms


class QualityVerdict(StrEnum):
    """The one-line verdict of ``quality``: ``degraded`` when a memory vanished without a reason or
    a retention clock is invalid, ``warning`` when the caps are full or the rejection log needs a look."""

    OK = "ok"
    WARNING = "warning"
    DEGRADED = "degraded"


class ClockCounts(msgspec.Struct, frozen=True):
    present: int
    missing: int
    invalid: int


def retention_clock_counts(entries: Iterable[MemoryEntry]) -> ClockCounts:
    """Missing: no ``retentionClock``; invalid: not a finite positive number (a numeric -1 counts as
    invalid here, as in the reference diagnostics); present: the rest."""
    present = missing = invalid = 0
    for entry in entries:
        clock = entry.retention_clock
        if clock is None:
            missing += 1
        elif isinstance(clock, bool) or not math.isfinite(clock) or clock <= 0:
            invalid += 1
        else:
            present += 1
    return ClockCounts(present, missing, invalid)


class QualityReport(msgspec.Struct, frozen=True, kw_only=True):
    status: QualityVerdict
    summary_text: str
    active: int
    pending: int
    superseded: int
    max_entries: int
    rendered: int
    type_capped: int
    global_capped: int
    type_counts: dict[str, int]
    caps_full: bool
    clocks: ClockCounts
    current_with_evidence: int
    evidence_memory_ids: int
    disappearances: int
    unknown_disappearances: int
    rejections: RejectionQuality


def quality_report(model: Inspection) -> QualityReport:
    snap = model.snapshot
    store = snap.store
    active = [e for e in store.entries if e.status != MemoryStatus.SUPERSEDED]
    clocks = retention_clock_counts(active)
    rows = disappearance_rows(model)
    unknown = sum(1 for r in rows if r.classification is CoverageClass.HISTORICAL_ABSENT_UNKNOWN_REASON)
    covered = sum(1 for e in active if model.by_memory.get(e.id))
    rejections = rejection_quality(model.rejections)
    type_counts = {t.value: sum(1 for e in active if e.type == t) for t in TYPES}
    caps_full = len(active) >= store.limits.max_entries or any(
        type_counts[t.value] >= RETENTION_TYPE_MAX[t] for t in TYPES
    )
    if unknown > 0 or clocks.invalid > 0:
        status = QualityVerdict.DEGRADED
    elif caps_full or rejections.legacy_unscoped_count > 0 or rejections.false_positive_risk is Risk.HIGH:
        status = QualityVerdict.WARNING
    else:
        status = QualityVerdict.OK
    summary = (
        f"Summary: Workspace memory quality is {status}: {len(active)} active memories, "
        f"{covered}/{len(active)} with evidence, "
        f"{len(rows)} evidence-only disappearances ({unknown} unknown), "
        f"{clocks.invalid} invalid retention clocks, and {rejections.legacy_unscoped_count} legacy unscoped "
        "rejection records."
    )
    return QualityReport(
        status=status,
        summary_text=summary,
        active=len(active),
        pending=len(snap.journal),
        superseded=len(store.entries) - len(active),
        max_entries=store.limits.max_entries,
        rendered=len(snap.shortlist),
        type_capped=snap.type_capped,
        global_capped=snap.global_capped,
        type_counts=type_counts,
        caps_full=caps_full,
        clocks=clocks,
        current_with_evidence=covered,
        evidence_memory_ids=len(model.by_memory),
        disappearances=len(rows),
        unknown_disappearances=unknown,
        rejections=rejections,
    )


def quality_json(report: QualityReport, now_ms: int) -> dict[str, Any]:
    q = report
    return {
        "version": 1,
        "generatedAt": iso_from_ms(now_ms),
        "status": q.status,
        "summaryText": q.summary_text,
        "store": {"active": q.active, "pending": q.pending, "superseded": q.superseded},
        "caps": {
            "active": q.active,
            "maxEntries": q.max_entries,
            "rendered": q.rendered,
            "typeCapped": q.type_capped,
            "globalCapped": q.global_capped,
            "typeCounts": dict(q.type_counts),
            "capsFull": q.caps_full,
        },
        "retention": {"present": q.clocks.present, "missing": q.clocks.missing, "invalid": q.clocks.invalid},
        "evidence": {
            "currentWithEvidence": q.current_with_evidence,
            "currentWithoutEvidence": q.active - q.current_with_evidence,
            "evidenceMemoryIds": q.evidence_memory_ids,
            "disappearances": q.disappearances,
            "unknownDisappearances": q.unknown_disappearances,
            "withTerminalReason": q.disappearances - q.unknown_disappearances,
        },
        "rejections": {
            **rejection_quality_fields(q.rejections),
            "falsePositiveRisk": q.rejections.false_positive_risk,
        },
    }


def format_quality(report: QualityReport) -> str:
    q = report
    out = [
        "Memory quality inspection",
        "",
        q.summary_text,
        "",
        "Caps:",
        f"  active: {q.active} / {q.max_entries}",
    ]
    for t in TYPES:
        count, cap = q.type_counts[t.value], RETENTION_TYPE_MAX[t]
        out.append(f"  {t.value}: {count} / {cap}{' FULL' if count >= cap else ''}")
    out += [
        f"  rendered: {q.rendered}",
        f"  type-capped entries: {q.type_capped}",
        f"  global-cap overflow: {q.global_capped}",
        f"  caps full: {'yes' if q.caps_full else 'no'}",
        "",
        "Retention clocks:",
        f"  present: {q.clocks.present}",
        f"  missing: {q.clocks.missing}",
        f"  invalid: {q.clocks.invalid}",
        "",
        "Evidence:",
        f"  current with evidence: {q.current_with_evidence}",
        f"  current without evidence: {q.active - q.current_with_evidence}",
        f"  evidence memory ids: {q.evidence_memory_ids}",
        f"  disappearances: {q.disappearances}",
        f"  unknown disappearances: {q.unknown_disappearances}",
        "",
        "Rejection scoping:",
        f"  total records: {q.rejections.total_records}",
        f"  workspace scoped: {q.rejections.workspace_scoped_count}",
        f"  legacy unscoped: {q.rejections.legacy_unscoped_count}",
        f"  false-positive risk: {q.rejections.false_positive_risk}",
    ]
    return "\n".join(out)
