"""The inspection model and two of its reports: ``coverage`` and ``disappearances``
(docs/decisions.md#diagnostics-coverage-disappearances-and-quality)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Final

import msgspec

from domain.diagnostics.common import DiagInput, clean_text, counts_object, format_details
from domain.diagnostics.rejections import NormalizedRejection, normalize_rejections
from domain.diagnostics.snapshot import DiagSnapshot, build_snapshot
from domain.enums import EventType, Phase
from domain.model import EvidenceEvent
from domain.render import REASON_TYPE_CAP
from domain.timeutil import iso_from_ms


class CoverageClass(StrEnum):
    """How much of a memory's life the evidence log shows (``coverage``); the last two are the
    classifications of ``disappearances``."""

    FULL_LIFECYCLE = "full_lifecycle"
    RENDER_ONLY = "render_only"
    NO_EVIDENCE = "no_evidence"
    HISTORICAL_ABSENT_WITH_REASON = "historical_absent_with_reason"
    HISTORICAL_ABSENT_UNKNOWN_REASON = "historical_absent_unknown_reason"


COVERAGE_CLASSES: Final[tuple[CoverageClass, ...]] = tuple(CoverageClass)
#: Event types after which a memory that is no longer stored is accounted for. workmem adds its own
#: absorption and archive events to the reference's four.
TERMINAL_TYPES: Final[frozenset[str]] = frozenset(
    {
        EventType.MEMORY_REMOVED_CAPACITY,
        EventType.PROMOTION_ABSORBED_EXACT,
        EventType.PROMOTION_ABSORBED_IDENTITY,
        EventType.PROMOTION_SUPERSEDED,
        EventType.MEMORY_ABSORBED,
        EventType.MEMORY_ARCHIVED,
    }
)


class Disappearance(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    classification: CoverageClass
    terminal_type: str
    reason_codes: tuple[str, ...]
    terminal: EvidenceEvent | None
    events: tuple[EvidenceEvent, ...]


class EventCounts(msgspec.Struct, frozen=True):
    total: int
    by_type: dict[str, int]
    by_phase: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "byType": dict(self.by_type), "byPhase": dict(self.by_phase)}


def event_counts(events: Sequence[EvidenceEvent]) -> EventCounts:
    return EventCounts(
        len(events), counts_object(e.type for e in events), counts_object(e.phase for e in events)
    )


class Inspection(msgspec.Struct, frozen=True, kw_only=True):
    snapshot: DiagSnapshot
    rejections: tuple[NormalizedRejection, ...]
    current_ids: frozenset[str]  # every stored entry, superseded included
    by_memory: dict[str, tuple[EvidenceEvent, ...]]
    #: entries still waiting in the pending journal: not stored yet, and not gone either
    pending_ids: frozenset[str] = frozenset()


def inspect(src: DiagInput, now_ms: int) -> Inspection:
    snap = build_snapshot(src, now_ms)
    return Inspection(
        snapshot=snap,
        rejections=normalize_rejections(src.rejections),
        current_ids=frozenset(e.id for e in snap.store.entries),
        by_memory=snap.by_memory,
        pending_ids=frozenset(e.id for e in snap.journal),
    )


def terminal_reason(memory_id: str, events: Sequence[EvidenceEvent]) -> Disappearance:
    """Why a memory that is no longer stored left: its last terminal event, else its last
    ``render_omitted``, else the ``pending_memory_cleared`` that took it out of the pending journal
    (a compaction candidate over the journal's bound, docs/decisions.md#pending-journal-bound, or
    past its TTL), else unknown."""
    terminal = next((e for e in reversed(events) if e.type in TERMINAL_TYPES), None)
    if terminal is None:
        terminal = next((e for e in reversed(events) if e.type == EventType.RENDER_OMITTED), None)
    if terminal is None:
        terminal = next((e for e in reversed(events) if e.type == EventType.PENDING_MEMORY_CLEARED), None)
    if terminal is None:
        return Disappearance(
            id=memory_id,
            classification=CoverageClass.HISTORICAL_ABSENT_UNKNOWN_REASON,
            terminal_type="unknown",
            reason_codes=(),
            terminal=None,
            events=tuple(events),
        )
    return Disappearance(
        id=memory_id,
        classification=CoverageClass.HISTORICAL_ABSENT_WITH_REASON,
        terminal_type=terminal.type,
        reason_codes=terminal.reason_codes,
        terminal=terminal,
        events=tuple(events),
    )


def disappearance_rows(model: Inspection) -> tuple[Disappearance, ...]:
    """Memory ids named by evidence but neither stored nor pending, by classification then id."""
    present = model.current_ids | model.pending_ids
    rows = [terminal_reason(i, evs) for i, evs in model.by_memory.items() if i not in present]
    return tuple(sorted(rows, key=lambda r: (r.classification, r.id)))


def coverage_class(model: Inspection, memory_id: str) -> CoverageClass:
    events = model.by_memory.get(memory_id, ())
    if memory_id not in model.current_ids:
        return terminal_reason(memory_id, events).classification
    if not events:
        return CoverageClass.NO_EVIDENCE
    if all(e.phase == Phase.RENDER for e in events):
        return CoverageClass.RENDER_ONLY
    return CoverageClass.FULL_LIFECYCLE


class CoverageRow(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    cls: CoverageClass
    current: bool
    type: str | None
    counts: EventCounts


def coverage_rows(model: Inspection, include_historical: bool = False) -> tuple[CoverageRow, ...]:
    ids = set(model.current_ids)
    if include_historical:
        ids |= set(model.by_memory)
    types = {e.id: e.type.value for e in model.snapshot.store.entries}
    rows = []
    for memory_id in sorted(ids):
        events = model.by_memory.get(memory_id, ())
        type_ = types.get(memory_id) or next(
            (e.memory.type for e in events if e.memory is not None and e.memory.memory_id == memory_id), None
        )
        rows.append(
            CoverageRow(
                id=memory_id,
                cls=coverage_class(model, memory_id),
                current=memory_id in model.current_ids,
                type=type_,
                counts=event_counts(events),
            )
        )
    return tuple(rows)


def coverage_json(rows: Sequence[CoverageRow], now_ms: int) -> dict[str, Any]:
    def row_json(row: CoverageRow) -> dict[str, Any]:
        out: dict[str, Any] = {"id": row.id, "class": row.cls, "current": row.current}
        if row.type is not None:
            out["type"] = row.type
        out["eventCounts"] = row.counts.to_json()
        return out

    return {
        "version": 1,
        "generatedAt": iso_from_ms(now_ms),
        "classCounts": counts_object(r.cls for r in rows),
        "memories": [row_json(r) for r in rows],
    }


def format_coverage(rows: Sequence[CoverageRow]) -> str:
    counts = Counter(r.cls for r in rows)
    out = ["Memory evidence coverage", "", "Class counts:"]
    out.extend(f"  {cls}: {counts.get(cls, 0)}" for cls in COVERAGE_CLASSES)
    out += ["", "Per-memory rows:"]
    if not rows:
        out.append("  (none)")
    for row in rows:
        phases = row.counts.by_phase
        out.append(
            f"  {row.id} {row.cls} current={'yes' if row.current else 'no'} total={row.counts.total}"
            f" extraction={phases.get(Phase.EXTRACTION, 0)} promotion={phases.get(Phase.PROMOTION, 0)}"
            f" render={phases.get(Phase.RENDER, 0)} storage={phases.get(Phase.STORAGE, 0)}"
        )
    return "\n".join(out)


def disappearances_json(
    rows: Sequence[Disappearance], now_ms: int, *, explain: bool = False
) -> dict[str, Any]:
    def row_json(row: Disappearance) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": row.id,
            "classification": row.classification,
            "terminalType": row.terminal_type,
            "reasonCodes": list(row.reason_codes),
            "eventCounts": event_counts(row.events).to_json(),
        }
        if explain and row.terminal is not None and row.terminal.details:
            out["details"] = dict(row.terminal.details)
        return out

    return {"version": 1, "generatedAt": iso_from_ms(now_ms), "disappearances": [row_json(r) for r in rows]}


def format_disappearances(rows: Sequence[Disappearance], *, explain: bool = False, raw: bool = False) -> str:
    out = ["Memory disappearances", ""]
    if not rows:
        out.append("No evidence-only memories found.")
        return "\n".join(out)
    for row in rows:
        reasons = ",".join(row.reason_codes) if row.reason_codes else "none"
        out.append(f"Memory {row.id}: {row.classification} terminal={row.terminal_type} reasons={reasons}")
        if not explain:
            continue
        out.append(f"  events: {', '.join(e.type for e in row.events)}")
        if row.terminal is not None and row.terminal.type == EventType.MEMORY_REMOVED_CAPACITY:
            out.append(
                f"  memory_removed_capacity details: {clean_text(format_details(row.terminal.details), raw)}"
            )
        observed = next(
            (
                e
                for e in row.events
                if e.type == EventType.RENDER_OMITTED and REASON_TYPE_CAP in e.reason_codes
            ),
            None,
        )
        if observed is not None:
            out.append(
                f"  render_omitted type-cap observation: reasons={','.join(observed.reason_codes)}"
                f" details={clean_text(format_details(observed.details), raw)}"
            )
    return "\n".join(out)
