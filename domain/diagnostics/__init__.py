"""Read-only diagnostics over a workspace: health, explain, trace, coverage, disappearances, quality,
the extraction-rejection summaries and the migration audit (docs/decisions.md#diagnostics).

Everything here is a pure function of values the shell has already loaded: the store and journal
snapshots (``None`` when the file was missing or unreadable), the evidence events in log order, the
extraction-rejection records, the decoded migration audit records and ``now_ms``. Nothing here returns
a modified store.

Each report comes in three layers:

* a computation (``build_snapshot``, ``health_report``, ``trace_report``, ``inspect``, ...) that
  returns frozen values;
* a text formatter (``format_health``, ``format_explain``, ...) producing the human output, one
  line per ``\\n`` and no trailing newline;
* a ``*_json`` function returning the JSON-ready ``dict`` that ``--json`` prints.

Memory text is redacted by default (credentials via ``safety.redact``, then absolute paths become
``<path>``); ``raw=True`` shows it unredacted (paths included). JSON text previews are always
redacted.

workmem meanings (docs/decisions.md#d2, docs/decisions.md#d3): "stored" counts what is in the store
(caps never delete), and "rendered" is the real render selection (``domain.render``), ranked by the
same total retention order with dormancy applied, so the counts here are the ones the agent actually
sees.

One module per report (``health``, ``explain`` with ``trace``, ``rejections``, ``inspection`` with
``coverage`` and ``disappearances``, ``quality``, ``audit``) on top of ``common`` (input, formatting,
scrubbing), ``status`` (row statuses, the status-from-event rule) and ``snapshot``; this package
re-exports their public names.
"""

from __future__ import annotations

from domain.diagnostics.common import (
    SOURCES,
    TYPES,
    DiagInput,
    RejectionLike,
    clean_path,
    clean_text,
    counts_object,
    effective_store,
    event_memory_ids,
    file_name,
    first_memory_id,
    format_details,
    format_percent,
    format_strength,
    group_by_memory_id,
    journal_entries,
    js_value,
    json_string,
    redact_absolute_paths,
    shorten,
    sorted_counts,
    to_fixed,
    unique,
    within_days,
    workspace_identity,
)
from domain.diagnostics.explain import (
    TraceReport,
    explain_rows,
    format_explain,
    format_trace,
    format_trace_event,
    trace_report,
)
from domain.diagnostics.health import (
    SUSPICIOUS_REASONS,
    HealthReport,
    QualityFailure,
    TypeRow,
    format_health,
    health_json,
    health_report,
)
from domain.diagnostics.inspection import (
    COVERAGE_CLASSES,
    TERMINAL_TYPES,
    CoverageRow,
    Disappearance,
    EventCounts,
    Inspection,
    coverage_class,
    coverage_json,
    coverage_rows,
    disappearance_rows,
    disappearances_json,
    event_counts,
    format_coverage,
    format_disappearances,
    inspect,
    terminal_reason,
)
from domain.diagnostics.quality import (
    ClockCounts,
    QualityReport,
    format_quality,
    quality_json,
    quality_report,
    retention_clock_counts,
)
from domain.diagnostics.rejections import (
    FALSE_POSITIVE_GROUPS,
    ORIGINS,
    FalsePositiveGroup,
    NormalizedRejection,
    RejectionQuality,
    filter_rejections,
    format_rejection_quality,
    format_rejections,
    has_soft_reason,
    is_scoped,
    normalize_rejections,
    parse_since,
    rejection_quality,
    rejection_quality_fields,
    rejection_quality_json,
    unique_rejections,
)
from domain.diagnostics.snapshot import (
    RECENT_EVENT_LIMIT,
    DiagSnapshot,
    DiagSummary,
    MemoryRow,
    Ranked,
    RecentEvent,
    build_snapshot,
    evidence_summary,
    type_source_from_events,
)
from domain.diagnostics.status import (
    STATUS_ABSORBED,
    STATUS_ARCHIVED,
    STATUS_QUARANTINED,
    STATUS_RENDERED,
    pending_status,
    promotion_limit,
    status_from_omission,
    status_from_trace_event,
    status_reasons,
)

__all__ = [
    "COVERAGE_CLASSES",
    "FALSE_POSITIVE_GROUPS",
    "ORIGINS",
    "RECENT_EVENT_LIMIT",
    "SOURCES",
    "STATUS_ABSORBED",
    "STATUS_ARCHIVED",
    "STATUS_QUARANTINED",
    "STATUS_RENDERED",
    "SUSPICIOUS_REASONS",
    "TERMINAL_TYPES",
    "TYPES",
    "ClockCounts",
    "CoverageRow",
    "DiagInput",
    "DiagSnapshot",
    "DiagSummary",
    "Disappearance",
    "EventCounts",
    "FalsePositiveGroup",
    "HealthReport",
    "Inspection",
    "MemoryRow",
    "NormalizedRejection",
    "QualityFailure",
    "QualityReport",
    "Ranked",
    "RecentEvent",
    "RejectionLike",
    "RejectionQuality",
    "TraceReport",
    "TypeRow",
    "build_snapshot",
    "clean_path",
    "clean_text",
    "counts_object",
    "coverage_class",
    "coverage_json",
    "coverage_rows",
    "disappearance_rows",
    "disappearances_json",
    "effective_store",
    "event_counts",
    "event_memory_ids",
    "evidence_summary",
    "explain_rows",
    "file_name",
    "filter_rejections",
    "first_memory_id",
    "format_coverage",
    "format_details",
    "format_disappearances",
    "format_explain",
    "format_health",
    "format_percent",
    "format_quality",
    "format_rejection_quality",
    "format_rejections",
    "format_strength",
    "format_trace",
    "format_trace_event",
    "group_by_memory_id",
    "has_soft_reason",
    "health_json",
    "health_report",
    "inspect",
    "is_scoped",
    "journal_entries",
    "js_value",
    "json_string",
    "normalize_rejections",
    "parse_since",
    "pending_status",
    "promotion_limit",
    "quality_json",
    "quality_report",
    "redact_absolute_paths",
    "rejection_quality",
    "rejection_quality_fields",
    "rejection_quality_json",
    "retention_clock_counts",
    "shorten",
    "sorted_counts",
    "status_from_omission",
    "status_from_trace_event",
    "status_reasons",
    "terminal_reason",
    "to_fixed",
    "trace_report",
    "type_source_from_events",
    "unique",
    "unique_rejections",
    "within_days",
    "workspace_identity",
]
