"""Where each pending memory went: the accounting of one promotion (docs/decisions.md#promotion,
with docs/decisions.md#b16 fixed).

Every distinct pending exact key gets one class — promoted, absorbed or rejected — and one reason,
by the first rule that matches (:func:`account_pending_promotions`). The keys that may leave the
journal and the session's pending list are the clearable ones.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Final

import msgspec
from msgspec.structs import replace

from domain import safety
from domain.caches import Caches
from domain.consolidation import Absorption, AbsorptionReason
from domain.enums import MemoryStatus
from domain.key_index import stored_index
from domain.keys import exact_key, identity_key
from domain.limits import LongTermLimits
from domain.model import MemoryEntry
from domain.text import memory_key


class PromotionClass(StrEnum):
    """What became of a pending memory."""

    PROMOTED = "promoted"
    ABSORBED = "absorbed"
    REJECTED = "rejected"


class PromotionReason(StrEnum):
    """Why, per pending key (the reason code of its ``promotion_*`` event)."""

    NEW_WORKSPACE_ENTRY = "new_workspace_entry"
    #: stored, then moved straight to the archive by the stored-active limit (docs/decisions.md#d2)
    ARCHIVED = "archived"
    SAME_EXACT_KEY = "same_exact_key"
    SAME_IDENTITY_KEY = "same_identity_key"
    #: a forgotten memory's key (docs/decisions.md#d10)
    TOMBSTONED = "tombstoned"
    #: a pending entry marked superseded (only a hand-edited journal has one): never stored
    NOT_ACTIVE = "not_active"
    #: not found in the store after the step: the reference called this a capacity rejection
    #: (docs/decisions.md#b16); workmem's normalisation keeps every memory, so nothing reaches it
    NOT_IN_STORE = "not_in_store"


#: Rejections that clear the pending entry: it can never be stored.
_CLEARED_REJECTIONS: Final = frozenset({PromotionReason.TOMBSTONED, PromotionReason.NOT_ACTIVE})

_TERMINAL: Final[dict[AbsorptionReason, PromotionReason]] = {
    AbsorptionReason.EXACT: PromotionReason.SAME_EXACT_KEY,
    AbsorptionReason.IDENTITY: PromotionReason.SAME_IDENTITY_KEY,
}


class PromotionAccounting(msgspec.Struct, frozen=True):
    """Where each pending exact key went. The three classes partition the pending keys; all tuples
    keep insertion order."""

    promoted: tuple[str, ...]
    absorbed: tuple[str, ...]
    rejected: tuple[str, ...]
    #: keys that may leave the journal and the session's pending list
    clearable: tuple[str, ...]
    #: (key, reason) for every pending key
    reasons: tuple[tuple[str, PromotionReason], ...] = ()

    def reason_of(self, key: str) -> PromotionReason | None:
        return dict(self.reasons).get(key)

    def class_of(self, key: str) -> PromotionClass | None:
        for cls, keys in (
            (PromotionClass.PROMOTED, self.promoted),
            (PromotionClass.ABSORBED, self.absorbed),
            (PromotionClass.REJECTED, self.rejected),
        ):
            if key in keys:
                return cls
        return None


EMPTY_ACCOUNTING: Final = PromotionAccounting((), (), (), ())


def _stored_text(text: str) -> str:
    """The text a memory will have once stored: redacted, cut to 260 code points."""
    return safety.stored_text(text, LongTermLimits.MAX_ENTRY_TEXT_CHARS)


def candidate_keys(entry: MemoryEntry) -> tuple[str, ...]:
    """The pending memory's exact key and, when storing changes its text, the stored form's key."""
    key = exact_key(entry)
    stored = memory_key(entry.type.value, _stored_text(entry.text))
    return (key,) if stored == key else (key, stored)


def candidate_identities(entry: MemoryEntry) -> tuple[str, ...]:
    stored = _stored_text(entry.text)
    first = identity_key(entry)
    if stored == entry.text:
        return (first,)
    second = identity_key(replace(entry, text=stored))
    return (first,) if second == first else (first, second)


def terminals(absorptions: Iterable[Absorption]) -> dict[str, Absorption]:
    """The last terminal event per exact key of the memory it is about."""
    return {exact_key(a.absorbed): a for a in absorptions}


def terminal_for(keys_: Sequence[str], found: Mapping[str, Absorption]) -> Absorption | None:
    for key in keys_:
        hit = found.get(key)
        if hit is not None:
            return hit
    return None


def _classify(
    entry: MemoryEntry,
    *,
    before_exact: Collection[str],
    after_exact: Collection[str],
    after_identity: Collection[str],
    archived_exact: Collection[str],
    absorbed: Mapping[str, Absorption],
    tombstoned: Collection[str],
) -> tuple[PromotionClass, PromotionReason]:
    """(class, reason) of one pending memory by the first matching rule."""
    candidates = candidate_keys(entry)
    if candidates[0] in tombstoned:
        return PromotionClass.REJECTED, PromotionReason.TOMBSTONED
    if entry.status is MemoryStatus.SUPERSEDED:
        return PromotionClass.REJECTED, PromotionReason.NOT_ACTIVE
    if any(k in before_exact for k in candidates):
        return PromotionClass.ABSORBED, PromotionReason.SAME_EXACT_KEY
    if any(k in after_exact for k in candidates):
        return PromotionClass.PROMOTED, PromotionReason.NEW_WORKSPACE_ENTRY
    terminal = terminal_for(candidates, absorbed)
    if terminal is not None:
        return PromotionClass.ABSORBED, _TERMINAL[terminal.reason]
    if any(k in after_identity for k in candidate_identities(entry)):
        # The reference labelled this identity absorption as an exact one (docs/decisions.md#b16).
        return PromotionClass.ABSORBED, PromotionReason.SAME_IDENTITY_KEY
    if any(k in archived_exact for k in candidates):
        return PromotionClass.PROMOTED, PromotionReason.ARCHIVED
    return PromotionClass.REJECTED, PromotionReason.NOT_IN_STORE


def account_pending_promotions(
    pending: Sequence[MemoryEntry],
    before: Sequence[MemoryEntry],
    after: Sequence[MemoryEntry],
    absorptions: Sequence[Absorption] = (),
    *,
    archived: Sequence[MemoryEntry] = (),
    tombstoned: Collection[str] = (),
    caches: Caches | None = None,
) -> PromotionAccounting:
    """Classify every pending key, first matching rule wins:

    0. its exact key is tombstoned (``tombstoned``, exact keys) → rejected (``tombstoned``);
       the pending entry is marked superseded → rejected (``not_active``);
    1. an active ``before`` entry has its exact key → absorbed (exact);
    2. an active ``after`` entry has its exact key → promoted;
    3. dedupe absorbed it (a terminal absorption for its key) → absorbed (exact or identity);
    4. an active ``after`` entry has its identity key → absorbed (identity);
    5. it was archived in this step → promoted (then archived);
    6. otherwise → rejected (``not_in_store``).

    A key's "exact key" also matches in its stored form (redacted, cut to 260 code points).
    Clearable: the promoted and absorbed keys, and the rejected ones that can never be stored
    (tombstoned, not active). A ``not_in_store`` key stays pending, as in the reference; it leaves
    the journal through its retention limits."""
    before_exact = stored_index(before, caches).first_exact
    after_index = stored_index(after, caches)
    archived_exact = {exact_key(e) for e in archived}
    absorbed = terminals(absorptions)
    classes: dict[PromotionClass, dict[str, None]] = {cls: {} for cls in PromotionClass}
    reasons: dict[str, PromotionReason] = {}
    for entry in pending:
        key = exact_key(entry)
        if key in reasons:
            continue
        cls, reason = _classify(
            entry,
            before_exact=before_exact,
            after_exact=after_index.first_exact,
            after_identity=after_index.first_identity,
            archived_exact=archived_exact,
            absorbed=absorbed,
            tombstoned=tombstoned,
        )
        classes[cls][key] = None
        reasons[key] = reason
    clearable = {**classes[PromotionClass.PROMOTED], **classes[PromotionClass.ABSORBED]}
    clearable.update((k, None) for k in classes[PromotionClass.REJECTED] if reasons[k] in _CLEARED_REJECTIONS)
    return PromotionAccounting(
        promoted=tuple(classes[PromotionClass.PROMOTED]),
        absorbed=tuple(classes[PromotionClass.ABSORBED]),
        rejected=tuple(classes[PromotionClass.REJECTED]),
        clearable=tuple(clearable),
        reasons=tuple(reasons.items()),
    )
