"""The row statuses of the diagnostics and the one rule that derives a memory's status from an
evidence event (docs/decisions.md#diagnostics, docs/decisions.md#diagnostics-explain-and-trace)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final, TypeAlias

from domain.consolidation.near_duplicates import NEAR_DUPLICATE
from domain.enums import EventType, MemorySource, Outcome
from domain.evidence import SELECTED_REASONS
from domain.host_instructions import IN_HOST_INSTRUCTIONS
from domain.limits import PromotionRetryLimits
from domain.model import EvidenceEvent, MemoryEntry
from domain.render import (
    REASON_ARCHIVED,
    REASON_CHAR_BUDGET,
    REASON_EMPTY_BUDGET,
    REASON_GLOBAL_CAP,
    REASON_SUPERSEDED,
    REASON_TYPE_CAP,
    OmissionReason,
)


class DiagnosticStatus(StrEnum):
    """A memory's status in ``health --json``, ``explain`` and ``trace``: rendered, omitted from the
    block with its one reason, waiting in the journal, or found only in a quarantined store."""

    RENDERED = "rendered"
    OMITTED_SUPERSEDED = "omitted_superseded"
    OMITTED_TYPE_CAP = "omitted_type_cap"
    OMITTED_GLOBAL_CAP = "omitted_global_cap"
    OMITTED_CHAR_BUDGET = "omitted_char_budget"
    OMITTED_ARCHIVED = "omitted_archived"
    OMITTED_ABSORBED_DUPLICATE = "omitted_absorbed_duplicate"
    #: past its valid_until (docs/decisions.md#d18)
    OMITTED_EXPIRED = "omitted_expired"
    PENDING_RETRY = "pending_retry"
    PENDING_REJECTED_CAPACITY = "pending_rejected_capacity"
    QUARANTINED_CORRUPT_STORE = "quarantined_corrupt_store"
    #: an id with no row and no event
    UNKNOWN = "unknown"


class LeftOut(StrEnum):
    """The statuses of a memory the block leaves out besides its caps (docs/decisions.md#d22): what
    the host's instruction files already say, the weaker of two near-duplicates."""

    OMITTED_IN_HOST_INSTRUCTIONS = "omitted_in_host_instructions"
    OMITTED_NEAR_DUPLICATE = "omitted_near_duplicate"


#: A row's status: a :class:`DiagnosticStatus` or :class:`LeftOut`, or, for an id known only from an
#: event the rule below does not name, that event's outcome as logged (log lines are read leniently,
#: so any string).
RowStatus: TypeAlias = DiagnosticStatus | LeftOut | str

_OMISSION_STATUS: Final[dict[str | None, DiagnosticStatus | LeftOut]] = {
    REASON_SUPERSEDED: DiagnosticStatus.OMITTED_SUPERSEDED,
    REASON_TYPE_CAP: DiagnosticStatus.OMITTED_TYPE_CAP,
    REASON_GLOBAL_CAP: DiagnosticStatus.OMITTED_GLOBAL_CAP,
    REASON_ARCHIVED: DiagnosticStatus.OMITTED_ARCHIVED,
    OmissionReason.EXPIRED: DiagnosticStatus.OMITTED_EXPIRED,
    IN_HOST_INSTRUCTIONS: LeftOut.OMITTED_IN_HOST_INSTRUCTIONS,
    NEAR_DUPLICATE: LeftOut.OMITTED_NEAR_DUPLICATE,
}


def status_from_omission(reason: str | None) -> DiagnosticStatus | LeftOut:
    """``superseded``/``type_cap``/``global_cap``/``archived``/``expired``/``in_host_instructions``/
    ``near_duplicate`` -> their status; anything else
    (``char_budget``, ``empty_render_budget``, unknown) -> ``omitted_char_budget``."""
    return _OMISSION_STATUS.get(reason, DiagnosticStatus.OMITTED_CHAR_BUDGET)


_STATUS_REASONS: Final[dict[str, tuple[str, ...]]] = {
    DiagnosticStatus.RENDERED: SELECTED_REASONS,
    DiagnosticStatus.OMITTED_SUPERSEDED: (REASON_SUPERSEDED,),
    DiagnosticStatus.OMITTED_TYPE_CAP: (REASON_TYPE_CAP,),
    DiagnosticStatus.OMITTED_GLOBAL_CAP: (REASON_GLOBAL_CAP,),
    DiagnosticStatus.OMITTED_ARCHIVED: (REASON_ARCHIVED,),
    DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE: ("absorbed_duplicate",),
    DiagnosticStatus.OMITTED_EXPIRED: (OmissionReason.EXPIRED.value,),
    LeftOut.OMITTED_IN_HOST_INSTRUCTIONS: (IN_HOST_INSTRUCTIONS,),
    LeftOut.OMITTED_NEAR_DUPLICATE: (NEAR_DUPLICATE,),
    DiagnosticStatus.PENDING_RETRY: ("retryable_capacity_rejection",),
    DiagnosticStatus.PENDING_REJECTED_CAPACITY: ("capacity_rejected", "max_attempts_reached"),
    DiagnosticStatus.QUARANTINED_CORRUPT_STORE: ("invalid_json",),
}


def status_reasons(status: RowStatus, omission: str | None = None) -> tuple[str, ...]:
    """The reason codes a row status implies."""
    if status == DiagnosticStatus.OMITTED_CHAR_BUDGET:
        return (REASON_EMPTY_BUDGET if omission == REASON_EMPTY_BUDGET else REASON_CHAR_BUDGET,)
    return _STATUS_REASONS.get(status, ())


def promotion_limit(source: MemorySource) -> int:
    if source == MemorySource.MANUAL:
        return PromotionRetryLimits.MAX_MANUAL_ATTEMPTS
    return PromotionRetryLimits.MAX_EXPLICIT_ATTEMPTS


def pending_status(entry: MemoryEntry) -> DiagnosticStatus:
    attempts = entry.promotion_attempts or 0
    if attempts >= promotion_limit(entry.source):
        return DiagnosticStatus.PENDING_REJECTED_CAPACITY
    return DiagnosticStatus.PENDING_RETRY


#: The status each event type implies (``render_omitted`` goes by its reason instead).
_EVENT_STATUS: Final[dict[str, DiagnosticStatus]] = {
    EventType.RENDER_SELECTED: DiagnosticStatus.RENDERED,
    EventType.PROMOTION_ABSORBED_EXACT: DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE,
    EventType.PROMOTION_ABSORBED_IDENTITY: DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE,
    EventType.MEMORY_ABSORBED: DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE,
    EventType.MEMORY_ARCHIVED: DiagnosticStatus.OMITTED_ARCHIVED,
    EventType.PROMOTION_RETRY_SCHEDULED: DiagnosticStatus.PENDING_RETRY,
    EventType.PROMOTION_REJECTED_CAPACITY: DiagnosticStatus.PENDING_REJECTED_CAPACITY,
    EventType.PROMOTION_RETRY_EXHAUSTED: DiagnosticStatus.PENDING_REJECTED_CAPACITY,
    EventType.STORAGE_CORRUPT_JSON_QUARANTINED: DiagnosticStatus.QUARANTINED_CORRUPT_STORE,
}


def status_from_trace_event(event: EvidenceEvent | None) -> RowStatus:
    """A memory's status judged from its last evidence event (when it has no current row): the
    status its type implies, ``omitted_superseded`` for a ``superseded`` outcome, else the event's
    own outcome."""
    if event is None:
        return DiagnosticStatus.UNKNOWN
    if event.type == EventType.RENDER_OMITTED:
        return status_from_omission(event.reason_codes[0] if event.reason_codes else None)
    implied = _EVENT_STATUS.get(event.type)
    if implied is not None:
        return implied
    if event.outcome == Outcome.SUPERSEDED:
        return DiagnosticStatus.OMITTED_SUPERSEDED
    return event.outcome
