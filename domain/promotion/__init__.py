"""Promotion: pending memories (session pending plus selected journal entries) become workspace
memories, and every one of them is accounted for (docs/decisions.md#promotion).

One call of :func:`promote` is the reference's ``promotePendingMemories`` as a pure step:

1. choose what is pending: the session's pending list, then journal entries owned by the session
   (``include_owned``), unowned entries (``include_unowned``) and entries owned by sessions idle for
   more than a day (``idle_owner_ids``, docs/decisions.md#d7), first occurrence per exact key;
2. pending memories whose exact key is tombstoned (docs/decisions.md#d10), or that are marked
   superseded, are rejected and cleared, never stored;
3. an exact duplicate of an active store entry reinforces it (with a ``memory_reinforced`` event,
   docs/decisions.md#b14); anything else is appended without its pending-only fields
   (docs/decisions.md#b15);
4. the store is normalised (:func:`domain.consolidation.normalize_store`, from the store it was
   merged into) and each pending key is classified as promoted, absorbed or rejected
   (:func:`account_pending_promotions`);
5. everything clearable leaves the journal, each with an event; the adopted owners' entries leave a
   record in the journal, so that their sessions drop their copies.

:func:`promote_over_bound` runs the same step on the requests an append pushed over the journal's
bound: they are promoted early instead of leaving the journal unstored
(docs/decisions.md#pending-journal-bound).

The reference also rejected memories for capacity and retried explicit ones three times; workmem's
normalisation keeps every memory (docs/decisions.md#d2), so neither can happen and neither is here
(docs/decisions.md#b20).

The package: :mod:`~domain.promotion.accounting`, :mod:`~domain.promotion.events`,
:mod:`~domain.promotion.step` and :mod:`~domain.promotion.early`; every name is importable from here.
"""

from domain.promotion.accounting import (
    EMPTY_ACCOUNTING,
    PromotionAccounting,
    PromotionClass,
    PromotionReason,
    account_pending_promotions,
)
from domain.promotion.early import EARLY_PROMOTION, promote_over_bound
from domain.promotion.events import promotion_events
from domain.promotion.step import PromotionResult, promote

__all__ = [
    "EARLY_PROMOTION",
    "EMPTY_ACCOUNTING",
    "PromotionAccounting",
    "PromotionClass",
    "PromotionReason",
    "PromotionResult",
    "account_pending_promotions",
    "promote",
    "promote_over_bound",
    "promotion_events",
]
