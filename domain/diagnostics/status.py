"""The row statuses of the diagnostics and the one rule that derives a memory's status from an
evidence event (docs/decisions.md#diagnostics, docs/decisions.md#diagnostics-explain-and-trace)."""

from __future__ import annotations

from typing import Final

from domain.model import EvidenceEvent, MemoryEntry, PromotionRetryLimits
from domain.render import REASON_ARCHIVED

STATUS_RENDERED: Final = "rendered"
STATUS_ABSORBED: Final = "omitted_absorbed_duplicate"
STATUS_ARCHIVED: Final = "omitted_archived"
STATUS_QUARANTINED: Final = "quarantined_corrupt_store"


def status_from_omission(reason: str | None) -> str:
    """``superseded``/``type_cap``/``global_cap``/``archived`` -> their status; anything else
    (``char_budget``, ``empty_render_budget``, unknown) -> ``omitted_char_budget``."""
    if reason == "superseded":
        return "omitted_superseded"
    if reason == "type_cap":
        return "omitted_type_cap"
    if reason == "global_cap":
        return "omitted_global_cap"
    if reason == REASON_ARCHIVED:
        return STATUS_ARCHIVED
    return "omitted_char_budget"


def status_reasons(status: str, omission: str | None = None) -> tuple[str, ...]:
    """The reason codes a row status implies."""
    table: dict[str, tuple[str, ...]] = {
        STATUS_RENDERED: ("within_caps", "within_char_budget"),
        "omitted_superseded": ("superseded",),
        "omitted_type_cap": ("type_cap",),
        "omitted_global_cap": ("global_cap",),
        "omitted_char_budget": (
            "empty_render_budget" if omission == "empty_render_budget" else "char_budget",
        ),
        STATUS_ARCHIVED: ("archived",),
        STATUS_ABSORBED: ("absorbed_duplicate",),
        "pending_retry": ("retryable_capacity_rejection",),
        "pending_rejected_capacity": ("capacity_rejected", "max_attempts_reached"),
        STATUS_QUARANTINED: ("invalid_json",),
    }
    return table.get(status, ())


def promotion_limit(source: str) -> int:
    if source == "manual":
        return PromotionRetryLimits.MAX_MANUAL_ATTEMPTS
    return PromotionRetryLimits.MAX_EXPLICIT_ATTEMPTS


def pending_status(entry: MemoryEntry) -> str:
    attempts = entry.promotion_attempts or 0
    return "pending_rejected_capacity" if attempts >= promotion_limit(entry.source.value) else "pending_retry"


def status_from_trace_event(event: EvidenceEvent | None) -> str:
    """A memory's status judged from its last evidence event (when it has no current row)."""
    if event is None:
        return "unknown"
    kind = event.type
    if kind == "render_selected":
        return STATUS_RENDERED
    if kind == "render_omitted":
        return status_from_omission(event.reason_codes[0] if event.reason_codes else None)
    if kind in ("promotion_absorbed_exact", "promotion_absorbed_identity", "memory_absorbed"):
        return STATUS_ABSORBED
    if kind == "memory_archived":
        return STATUS_ARCHIVED
    if kind == "promotion_retry_scheduled":
        return "pending_retry"
    if kind in ("promotion_rejected_capacity", "promotion_retry_exhausted"):
        return "pending_rejected_capacity"
    if kind == "storage_corrupt_json_quarantined":
        return STATUS_QUARANTINED
    if event.outcome == "superseded":
        return "omitted_superseded"
    return event.outcome
