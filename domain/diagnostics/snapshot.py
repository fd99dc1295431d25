"""The shared snapshot every report starts from: the render, one row per memory, the recent events
(docs/decisions.md#diagnostics)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import msgspec
from msgspec.structs import replace

from domain import evidence
from domain.consolidation.near_duplicates import NEAR_DUPLICATE
from domain.diagnostics.common import (
    DiagInput,
    clean_text,
    effective_store,
    first_memory_id,
    group_by_memory_id,
    journal_entries,
    shorten,
    unique,
    within_days,
)
from domain.diagnostics.status import (
    DiagnosticStatus,
    RowStatus,
    pending_status,
    status_from_omission,
    status_reasons,
)
from domain.enums import EventType, MemoryStatus, Outcome
from domain.evidence import SELECTED_REASONS
from domain.freshness import describe
from domain.host_instructions import IN_HOST_INSTRUCTIONS
from domain.leave_out import render_leaving_out
from domain.model import EvidenceEvent, EvidenceInput, MemoryEntry, WorkspaceStore
from domain.render import (
    REASON_SUPERSEDED,
    OmissionReason,
    RenderResult,
    select_candidates,
)
from domain.retention import dormancy_at, strength

RECENT_EVENT_LIMIT: Final = 50

#: The reason codes of render events: a row's reasons take the render's verdict from its status only.
_RENDER_CODES: Final = frozenset(
    (*SELECTED_REASONS, *(str(reason) for reason in OmissionReason), IN_HOST_INSTRUCTIONS, NEAR_DUPLICATE)
)
_RENDER_EVENTS: Final = frozenset((EventType.RENDER_SELECTED, EventType.RENDER_OMITTED))


class MemoryRow(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    type: str
    source: str
    status: RowStatus
    strength: float | None = None
    reason_codes: tuple[str, ...] = ()
    text_preview: str | None = None
    evidence_event_ids: tuple[str, ...] = ()
    #: grade, volatility, age of the last verification, expiry, stale reason (docs/decisions.md#d18)
    freshness: str | None = None


class RecentEvent(msgspec.Struct, frozen=True, kw_only=True):
    event_id: str
    type: str
    outcome: str
    created_at: str
    memory_id: str | None
    reason_codes: tuple[str, ...]


class DiagSummary(msgspec.Struct, frozen=True, kw_only=True):
    stored_active: int
    rendered: int  # entries within the caps (the render shortlist)
    pending: int
    rejected_last_7_days: int
    corrupt_stores_quarantined_last_30_days: int


class Ranked(msgspec.Struct, frozen=True):
    entry: MemoryEntry
    strength: float


class DiagSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    store: WorkspaceStore
    journal: tuple[MemoryEntry, ...]
    render: RenderResult
    ranked: tuple[Ranked, ...]  # active entries, strongest first
    shortlist: tuple[Ranked, ...]  # within the caps, strongest first
    type_capped: int
    global_capped: int
    memories: tuple[MemoryRow, ...]
    recent_events: tuple[RecentEvent, ...]
    events: tuple[EvidenceEvent, ...]
    by_memory: dict[str, tuple[EvidenceEvent, ...]]
    summary: DiagSummary
    #: what the block leaves out besides its caps, by id, with its ``render_omitted`` event
    #: (``in_host_instructions``, ``near_duplicate``; docs/decisions.md#d22)
    left_out: dict[str, EvidenceInput] = msgspec.field(default_factory=dict)


def evidence_summary(events: Sequence[EvidenceEvent]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(reason codes in first-seen order, event ids) of a memory's events."""
    return unique(code for ev in events for code in ev.reason_codes), tuple(ev.event_id for ev in events)


def type_source_from_events(events: Sequence[EvidenceEvent], memory_id: str) -> tuple[str, str]:
    type_, source = "unknown", "unknown"
    for ev in events:
        if ev.memory is not None and ev.memory.memory_id == memory_id:
            type_ = ev.memory.type or type_
            source = ev.memory.source or source
    return type_, source


def build_snapshot(src: DiagInput, now_ms: int) -> DiagSnapshot:
    """The shared view every report starts from: the render, the rows, the recent events."""
    store = effective_store(src)
    journal = journal_entries(src)
    dormancy = dormancy_at(store, now_ms)
    by_memory = group_by_memory_id(src.events)
    render, left = leave_out(store, now_ms, by_memory)
    selection = select_candidates(store, now_ms)

    def rank(entries: Iterable[MemoryEntry]) -> tuple[Ranked, ...]:
        return tuple(Ranked(e, strength(e, now_ms, dormancy)) for e in entries)

    rendered_ids = {e.id for e in render.rendered}
    omission_by_id: dict[str, str] = {o.memory_id: o.reason for o in render.omitted}
    omission_by_id.update((memory_id, event.reason_codes[0]) for memory_id, event in left.items())
    rows: list[MemoryRow] = []
    seen: set[str] = set()

    def entry_row(entry: MemoryEntry, status: RowStatus, implied: Iterable[str | None]) -> MemoryRow:
        codes, ids = evidence_summary(by_memory.get(entry.id, ()))
        # an earlier render's verdict ("within_caps" then, "type_cap" now) is history, not a reason
        codes = tuple(code for code in codes if code not in _RENDER_CODES)
        return MemoryRow(
            id=entry.id,
            type=entry.type.value,
            source=entry.source.value,
            status=status,
            strength=strength(entry, now_ms, dormancy),
            reason_codes=unique((*implied, *codes)),
            text_preview=shorten(clean_text(entry.text)),
            evidence_event_ids=ids,
            freshness=describe(entry, now_ms),
        )

    for entry in store.entries:
        omission = omission_by_id.get(entry.id)
        status: RowStatus
        if entry.id in rendered_ids:
            status = DiagnosticStatus.RENDERED
        else:
            fallback = REASON_SUPERSEDED if entry.status == MemoryStatus.SUPERSEDED else None
            status = status_from_omission(omission or fallback)
        rows.append(entry_row(entry, status, status_reasons(status, omission)))
        seen.add(entry.id)

    for marker in store.archived:
        if marker.memory_id in seen:
            continue
        events = by_memory.get(marker.memory_id, ())
        codes, ids = evidence_summary(events)
        type_, source = type_source_from_events(events, marker.memory_id)
        rows.append(
            MemoryRow(
                id=marker.memory_id,
                type=type_,
                source=source,
                status=DiagnosticStatus.OMITTED_ARCHIVED,
                reason_codes=unique((*status_reasons(DiagnosticStatus.OMITTED_ARCHIVED), *codes)),
                evidence_event_ids=ids,
            )
        )
        seen.add(marker.memory_id)

    for entry in journal:
        status = pending_status(entry)
        rows.append(entry_row(entry, status, (*status_reasons(status), entry.last_promotion_failure_reason)))
        seen.add(entry.id)

    for event in src.events:
        ref = event.memory
        if event.outcome != Outcome.ABSORBED or ref is None:
            continue
        if not (ref.memory_id and ref.type and ref.source) or ref.memory_id in seen:
            continue
        codes, ids = evidence_summary(by_memory.get(ref.memory_id, ()))
        rows.append(
            MemoryRow(
                id=ref.memory_id,
                type=ref.type,
                source=ref.source,
                status=DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE,
                reason_codes=unique((*status_reasons(DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE), *codes)),
                evidence_event_ids=ids or (event.event_id,),
            )
        )
        seen.add(ref.memory_id)

    recent = tuple(
        RecentEvent(
            event_id=ev.event_id,
            type=ev.type,
            outcome=ev.outcome,
            created_at=ev.created_at,
            memory_id=first_memory_id(ev),
            reason_codes=unique(
                (
                    *ev.reason_codes,
                    DiagnosticStatus.QUARANTINED_CORRUPT_STORE
                    if ev.type == EventType.STORAGE_CORRUPT_JSON_QUARANTINED
                    else None,
                )
            ),
        )
        for ev in list(reversed(src.events))[:RECENT_EVENT_LIMIT]
    )
    summary = DiagSummary(
        stored_active=sum(1 for e in store.entries if e.status != MemoryStatus.SUPERSEDED),
        rendered=len(selection.shortlist),
        pending=len(journal),
        rejected_last_7_days=sum(
            1 for ev in src.events if ev.outcome == Outcome.REJECTED and within_days(ev.created_at, 7, now_ms)
        ),
        corrupt_stores_quarantined_last_30_days=sum(
            1
            for ev in src.events
            if ev.type == EventType.STORAGE_CORRUPT_JSON_QUARANTINED
            and within_days(ev.created_at, 30, now_ms)
        ),
    )
    return DiagSnapshot(
        store=store,
        journal=journal,
        render=render,
        ranked=rank(selection.ranked),
        shortlist=rank(selection.shortlist),
        type_capped=len(selection.type_capped),
        global_capped=len(selection.global_capped),
        memories=tuple(rows),
        recent_events=recent,
        events=src.events,
        by_memory=by_memory,
        summary=summary,
        left_out=left,
    )


def leave_out(
    store: WorkspaceStore, now_ms: int, by_memory: dict[str, tuple[EvidenceEvent, ...]]
) -> tuple[RenderResult, dict[str, EvidenceInput]]:
    """The block as a session start renders it (docs/decisions.md#d22): without the weaker of two
    near-duplicates, and without a memory the host's instruction files said when it was last
    rendered (the diagnostics do not read the host's files: the last verdict stands until a later
    render shows the memory again). Also what was left out, by id."""
    said = {memory_id: last for memory_id, events in by_memory.items() if (last := _in_host_files(events))}

    def covered(shown: Sequence[MemoryEntry]) -> dict[str, EvidenceInput]:
        found = {e.id: evidence.omitted(e, IN_HOST_INSTRUCTIONS) for e in shown if e.id in said}
        return {i: replace(ev, details=dict(said[i].details or {})) for i, ev in found.items()}

    render, left_out = render_leaving_out(store, now_ms, covered)
    return render, {ev.memory.memory_id: ev for ev in left_out if ev.memory and ev.memory.memory_id}


def _in_host_files(events: Sequence[EvidenceEvent]) -> EvidenceEvent | None:
    """The memory's last render event when it left the memory out for the host's instruction files."""
    last = next((ev for ev in reversed(events) if ev.type in _RENDER_EVENTS), None)
    return last if last is not None and IN_HOST_INSTRUCTIONS in last.reason_codes else None
