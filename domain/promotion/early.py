"""Early promotion: the requests a person made that an append pushed over the journal's bound go to
the store at once, through :func:`~domain.promotion.step.promote` and with its evidence, instead of
leaving the journal unstored (docs/decisions.md#pending-journal-bound)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from msgspec.structs import replace

from domain.caches import Caches
from domain.emitted import events
from domain.keys import exact_key
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, WorkspaceStore
from domain.pending import cleared_event, over_bound, owner_of, record_promoted_for_owners
from domain.promotion.accounting import EMPTY_ACCOUNTING
from domain.promotion.step import CLEAR_REASON, PromotionResult, promote
from domain.retention import DEFAULT_TUNING, Tuning

#: The reason code an early promotion adds to its ``promotion_*`` and ``pending_memory_cleared``
#: events, and the reason of the journal's record of it.
EARLY_PROMOTION: Final = "journal_cap_early_promotion"


def promote_over_bound(
    store: WorkspaceStore,
    journal: PendingJournal,
    now_ms: int,
    *,
    session_id: str | None,
    archive: Mapping[str, MemoryEntry] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    caches: Caches | None = None,
) -> PromotionResult:
    """Promote the requests beyond the journal's 50 newest entries (:func:`domain.pending.over_bound`)
    and take them out of the journal; a journal within its bound is returned as it is, with the
    store, and nothing emitted.

    The promotion is :func:`promote` of exactly those entries, whoever owns them: a request lifts a
    tombstone of its key as any request does, an exact duplicate of a stored memory reinforces it.
    Its ``promotion_*`` events and the ``pending_memory_cleared`` event of each entry carry
    ``journal_cap_early_promotion`` after their reason. The journal records the entries of owners
    other than ``session_id`` (their sessions drop their copies); ``cleared_keys`` are the keys of
    ``session_id``'s own entries, which its pending list drops now."""
    overflow = over_bound(journal)
    if not overflow:
        return PromotionResult(
            store=store, journal=journal, accounting=EMPTY_ACCOUNTING, cleared_keys=frozenset()
        )
    promoted = promote(
        store,
        journal,
        overflow,
        now_ms,
        session_id=None,
        include_owned=False,
        include_unowned=False,
        archive=archive,
        tuning=tuning,
        cause=EARLY_PROMOTION,
        caches=caches,
    )
    reasons = dict(promoted.accounting.reasons)
    clearable = set(promoted.accounting.clearable)
    leaving = {e.id for e in overflow if exact_key(e) in clearable}
    kept: list[MemoryEntry] = []
    taken: list[MemoryEntry] = []
    removals: list[EvidenceInput] = []
    for entry in promoted.journal.entries:
        if entry.id not in leaving:
            kept.append(entry)
            continue
        taken.append(entry)
        removals.append(cleared_event(entry, (CLEAR_REASON[reasons[exact_key(entry)]], EARLY_PROMOTION)))
    journal = replace(promoted.journal, entries=tuple(kept))
    others = [e for e in taken if owner_of(e) != session_id]
    journal = record_promoted_for_owners(journal, others, EARLY_PROMOTION, now_ms)
    own = frozenset(exact_key(e) for e in taken if session_id is not None and owner_of(e) == session_id)
    return replace(promoted, journal=journal, cleared_keys=own, emitted=promoted.emitted + events(removals))
