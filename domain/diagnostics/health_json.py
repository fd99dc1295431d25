"""``health --json`` (docs/decisions.md#diagnostics-health): the workspace's numbers, its memories
with their statuses and the recent events, built from the diagnostics' snapshot; privacy-safe (previews
always redacted). The text form is :mod:`domain.diagnostics.health`."""

from __future__ import annotations

from typing import Any

from domain.diagnostics.bound import bound_json, pending_bound
from domain.diagnostics.common import DiagInput, file_name
from domain.diagnostics.snapshot import MemoryRow, RecentEvent, build_snapshot
from domain.diagnostics.words import left_out_counts
from domain.enums import EventType
from domain.ids import hash16
from domain.model import WorkspaceStore
from domain.pinning import PIN_MAX_CHARS, PIN_MAX_ENTRIES, pin_budget
from domain.timeutil import iso_from_ms


def _row_json(row: MemoryRow) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row.id, "type": row.type, "source": row.source, "status": row.status}
    if row.strength is not None:
        out["strength"] = row.strength
    out["reasonCodes"] = list(row.reason_codes)
    if row.text_preview is not None:
        out["textPreview"] = row.text_preview
    out["evidenceEventIds"] = list(row.evidence_event_ids)
    return out


def _recent_json(ev: RecentEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "eventId": ev.event_id,
        "type": ev.type,
        "outcome": ev.outcome,
        "createdAt": ev.created_at,
    }
    if ev.memory_id is not None:
        out["memoryId"] = ev.memory_id
    out["reasonCodes"] = list(ev.reason_codes)
    return out


def health_json(src: DiagInput, now_ms: int) -> dict[str, Any]:
    """``health --json`` (``MemoryDiagJSON``): privacy-safe, previews always redacted."""
    snap = build_snapshot(src, now_ms)
    s = snap.summary
    out: dict[str, Any] = {
        "version": 1,
        "workspace": {
            "rootHash": src.root_hash or hash16(snap.store.workspace.root or src.root),
            "key": snap.store.workspace.key or src.key,
        },
        "generatedAt": iso_from_ms(now_ms),
        "summary": {
            "storedActive": s.stored_active,
            "rendered": s.rendered,
            "pending": s.pending,
            "rejectedLast7Days": s.rejected_last_7_days,
            "corruptStoresQuarantinedLast30Days": s.corrupt_stores_quarantined_last_30_days,
            "compactionsWithoutSummary": sum(
                1 for ev in src.events if ev.type == EventType.COMPACTION_SUMMARY_MISSING
            ),
            **bound_json(pending_bound(src)),
            "pinned": _pinned_json(snap.store),
            "leftOut": {code: count for code, _, count in left_out_counts(snap)},  # docs/decisions.md#d22
        },
        "memories": [_row_json(row) for row in snap.memories],
        "recentEvents": [_recent_json(ev) for ev in snap.recent_events],
    }
    if src.quarantined_files:
        out["quarantinedFiles"] = [file_name(p) for p in src.quarantined_files]
    return out


def _pinned_json(store: WorkspaceStore) -> dict[str, Any]:
    found, limits = pin_budget(store), {"maxEntries": PIN_MAX_ENTRIES, "maxChars": PIN_MAX_CHARS}
    return {
        "entries": found.entries,
        "chars": found.chars,
        **limits,
        "overBudget": [e.id for e in found.over],
    }
