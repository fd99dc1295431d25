"""The evidence of a promotion: exactly one ``promotion_*`` outcome event per distinct pending key,
naming the stored memory it ended up in (docs/decisions.md#promotion, with docs/decisions.md#b16
fixed)."""

from __future__ import annotations

from collections.abc import Sequence

from domain import evidence
from domain.caches import Caches
from domain.consolidation import Absorption
from domain.key_index import stored_index
from domain.keys import exact_key
from domain.model import EvidenceInput, MemoryEntry
from domain.promotion.accounting import (
    PromotionAccounting,
    PromotionClass,
    PromotionReason,
    candidate_identities,
    candidate_keys,
    terminal_for,
    terminals,
)


def _retained(
    entry: MemoryEntry,
    terminal: Absorption | None,
    after: Sequence[MemoryEntry],
    archived: Sequence[MemoryEntry],
    caches: Caches | None,
) -> MemoryEntry | None:
    """The stored memory a pending one ended up in: the terminal's survivor, else the first active
    ``after`` entry (then archived entry) with the same exact or identity key."""
    index = stored_index(after, caches)
    if terminal is not None and terminal.survivor_id:
        position = index.first_id.get(terminal.survivor_id)
        if position is not None:
            return after[position]
        for candidate in archived:
            if candidate.id == terminal.survivor_id:
                return candidate
    exact = set(candidate_keys(entry))
    found = [p for k in exact if (p := index.first_exact.get(k)) is not None]
    found.extend(p for k in candidate_identities(entry) if (p := index.first_identity.get(k)) is not None)
    if found:
        return after[min(found)]  # the first active entry with one of the keys
    for candidate in archived:
        if exact_key(candidate) in exact:
            return candidate
    return None


def promotion_events(
    pending: Sequence[MemoryEntry],
    after: Sequence[MemoryEntry],
    absorptions: Sequence[Absorption],
    accounting: PromotionAccounting,
    *,
    archived: Sequence[MemoryEntry] = (),
    caches: Caches | None = None,
) -> tuple[EvidenceInput, ...]:
    """Exactly one ``promotion_*`` outcome event per distinct pending key, in pending order."""
    absorbed = terminals(absorptions)
    reasons = dict(accounting.reasons)
    out: list[EvidenceInput] = []
    seen: set[str] = set()
    for entry in pending:
        key = exact_key(entry)
        if key in seen:
            continue
        seen.add(key)
        cls = accounting.class_of(key)
        reason = reasons.get(key, PromotionReason.NOT_IN_STORE)
        retained = _retained(entry, terminal_for(candidate_keys(entry), absorbed), after, archived, caches)
        if cls is PromotionClass.PROMOTED:
            codes: tuple[str, ...] = (PromotionReason.NEW_WORKSPACE_ENTRY,)
            if reason is PromotionReason.ARCHIVED:
                codes = (*codes, PromotionReason.ARCHIVED)
            out.append(evidence.promoted(entry, retained or entry, codes))
        elif cls is PromotionClass.ABSORBED:
            identity = reason is PromotionReason.SAME_IDENTITY_KEY
            out.append(evidence.promotion_absorbed(entry, retained, reason, identity=identity))
        elif cls is PromotionClass.REJECTED:
            out.append(evidence.promotion_rejected(entry, reason))
    return tuple(out)


def reinforced_event(reinforced: MemoryEntry, by: MemoryEntry) -> EvidenceInput:
    """An exact duplicate of a stored memory reinforced it at promotion (docs/decisions.md#b14)."""
    return evidence.reinforced(reinforced, by, "duplicate_exact", path="promotion")
