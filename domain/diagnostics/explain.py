"""``explain`` and ``trace`` (docs/decisions.md#diagnostics-explain-and-trace): both read the
snapshot rows and the events grouped by memory id; an id without a row gets its status from
:func:`domain.diagnostics.status.status_from_trace_event`."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from domain.diagnostics.common import DiagInput, file_name, format_strength, unique
from domain.diagnostics.snapshot import MemoryRow, build_snapshot, evidence_summary, type_source_from_events
from domain.diagnostics.status import DiagnosticStatus, RowStatus, status_from_trace_event, status_reasons
from domain.enums import EventType, RelationRole
from domain.model import EvidenceEvent
from domain.timeutil import iso_from_ms, parse_iso_ms


def explain_rows(src: DiagInput, now_ms: int, memory_id: str | None = None) -> tuple[MemoryRow, ...]:
    """The snapshot rows, or only the row of ``memory_id``. An id with no row is judged from its
    evidence alone (status from its last event, ``unknown`` without any)."""
    snap = build_snapshot(src, now_ms)
    if memory_id is None:
        return snap.memories
    rows = tuple(r for r in snap.memories if r.id == memory_id)
    if rows:
        return rows
    events = snap.by_memory.get(memory_id, ())
    type_, source = type_source_from_events(events, memory_id)
    codes, ids = evidence_summary(events)
    status = status_from_trace_event(events[-1] if events else None)
    reasons = unique((*status_reasons(status), *codes))
    return (
        MemoryRow(
            id=memory_id,
            type=type_,
            source=source,
            status=status,
            reason_codes=reasons,
            evidence_event_ids=ids,
        ),
    )


def format_explain(src: DiagInput, now_ms: int, memory_id: str | None = None) -> str:
    """Per memory (or only ``memory_id``): status, strength/type/source, reasons and evidence."""
    snap = build_snapshot(src, now_ms)
    rows = explain_rows(src, now_ms, memory_id)
    by_id = {ev.event_id: ev for ev in snap.events}
    out = ["Workspace memory explainability", ""]
    if not rows:
        out.append("No memories found.")
    for row in rows:
        shown_strength = format_strength(row.strength) if row.strength is not None else "n/a"
        refs = [f"{by_id[i].event_id} {by_id[i].type}" if i in by_id else i for i in row.evidence_event_ids]
        out.append(f"Memory {row.id}: {row.status}")
        out.append(f"- strength={shown_strength}, type={row.type}, source={row.source}")
        if row.freshness is not None:
            out.append(f"- freshness: {row.freshness}")
        out.append(f"- reasons: {', '.join(row.reason_codes) if row.reason_codes else '(none)'}")
        out.append(f"- evidence: {', '.join(refs) if refs else '(none)'}")
        out.append("")
    quarantines = [ev for ev in snap.recent_events if ev.type == EventType.STORAGE_CORRUPT_JSON_QUARANTINED]
    if quarantines and memory_id is None:
        out.append("Quarantined stores:")
        status = DiagnosticStatus.QUARANTINED_CORRUPT_STORE
        out.extend(
            f"- {status}: {ev.event_id} {ev.type}; reasons={','.join(ev.reason_codes)}" for ev in quarantines
        )
    if src.quarantined_files and memory_id is None:
        out.append("Quarantined files:")
        out.extend(f"- {file_name(p)}" for p in src.quarantined_files)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


class TraceReport(msgspec.Struct, frozen=True, kw_only=True):
    memory_id: str
    status: RowStatus
    events: tuple[EvidenceEvent, ...]
    superseded_by: tuple[str, ...]
    reinforced_by: tuple[str, ...]


def _related_ids(events: Iterable[EvidenceEvent], role: RelationRole) -> tuple[str, ...]:
    return unique(
        rel.memory.memory_id
        for ev in events
        for rel in ev.relations
        if rel.role == role and rel.memory is not None
    )


def trace_report(src: DiagInput, memory_id: str, now_ms: int) -> TraceReport:
    """The lifecycle of one memory id: every event naming it (as memory or relation), in log order."""
    snap = build_snapshot(src, now_ms)
    events = snap.by_memory.get(memory_id, ())
    row = next((r for r in snap.memories if r.id == memory_id), None)
    status = row.status if row is not None else status_from_trace_event(events[-1] if events else None)
    return TraceReport(
        memory_id=memory_id,
        status=status,
        events=events,
        superseded_by=_related_ids(events, RelationRole.SUPERSEDED_BY),
        reinforced_by=_related_ids(events, RelationRole.REINFORCED_BY),
    )


def readable_time(iso: str) -> str:
    """An event's ISO time as people read it (``2026-03-01 14:05:09 UTC``); the text as logged when it
    is not a valid time."""
    ms = parse_iso_ms(iso)
    if ms is None:
        return iso or "(no time)"
    stamp = iso_from_ms(ms)
    return f"{stamp[:10]} {stamp[11:19]} UTC"


def format_trace_event(event: EvidenceEvent) -> str:
    reasons = ",".join(event.reason_codes) if event.reason_codes else "none"
    related = [
        f"{r.role}={r.memory.memory_id}"
        for r in event.relations
        if r.memory is not None and r.memory.memory_id
    ]
    suffix = f"; {', '.join(related)}" if related else ""
    when = readable_time(event.created_at)
    return f"- {when}  {event.event_id} {event.type}: {event.outcome}; reasons={reasons}{suffix}"


def format_trace(report: TraceReport) -> str:
    """``trace --memory ID``. Text previews are never printed."""
    out = [f"Memory {report.memory_id}: {report.status}", "", "Lifecycle:"]
    if not report.events:
        out.append("(none)")
        return "\n".join(out)
    out.extend(format_trace_event(ev) for ev in report.events)
    if report.superseded_by:
        out += ["", "Superseded by:", *(f"- {i}" for i in report.superseded_by)]
    if report.reinforced_by:
        out += ["", "Reinforced by:", *(f"- {i}" for i in report.reinforced_by)]
    return "\n".join(out)
