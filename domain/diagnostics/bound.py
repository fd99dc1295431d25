"""The pending journal against its bound, for ``health`` (docs/decisions.md#pending-journal-bound,
docs/decisions.md#diagnostics-health): how full the journal is, what waits to be promoted early, and
what the bound did so far according to the evidence log."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.diagnostics.common import DiagInput
from domain.enums import EventType
from domain.limits import PendingJournalLimits
from domain.pending import REASON_CAP, over_bound
from domain.promotion import EARLY_PROMOTION


class PendingBound(msgspec.Struct, frozen=True, kw_only=True):
    """The pending journal against its bound (docs/decisions.md#pending-journal-bound): how full it
    is, what waits to be promoted early, and what the bound did so far (from the evidence log)."""

    bound: int = PendingJournalLimits.MAX_ENTRIES
    owned: int = 0  # entries owned by a session (explicit requests waiting for its promotion)
    over_bound: int = 0  # requests beyond the bound, promoted early by the next operation
    early_promotions: int = 0  # requests that left the journal by an early promotion
    cleared_by_bound: int = 0  # compaction candidates the bound cleared (``journal_cap``)


def pending_bound(src: DiagInput) -> PendingBound:
    """The counts of ``src``'s journal and evidence."""
    entries = src.journal.entries if src.journal is not None else ()
    cleared = [ev for ev in src.events if ev.type == EventType.PENDING_MEMORY_CLEARED]
    return PendingBound(
        owned=sum(1 for e in entries if e.pending_owner_session_id),
        over_bound=len(over_bound(src.journal)) if src.journal is not None else 0,
        early_promotions=sum(1 for ev in cleared if EARLY_PROMOTION in ev.reason_codes),
        cleared_by_bound=sum(1 for ev in cleared if ev.reason_codes[:1] == (REASON_CAP,)),
    )


def bound_json(counts: PendingBound) -> dict[str, Any]:
    """The keys ``health --json`` adds to its ``summary`` (after ``pending``, the journal's total)."""
    return {
        "pendingBound": counts.bound,
        "pendingOverBound": counts.over_bound,
        "pendingOwned": counts.owned,
        "earlyPromotions": counts.early_promotions,
        "pendingClearedByBound": counts.cleared_by_bound,
    }
