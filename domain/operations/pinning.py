"""``pin`` and ``unpin`` (docs/decisions.md#d20): the user's commands on the pinned budget of
:mod:`domain.pinning`."""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec.structs import replace

from domain.emitted import events
from domain.enums import EventType, MemoryStatus, Outcome, Phase
from domain.evidence import event
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore
from domain.operations.values import CommandOutcome, OpResult, Snapshot, operation, unchanged
from domain.pinning import PIN_BUDGET_FULL, fits
from domain.timeutil import iso_from_ms


class Pin(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="pin"):
    """Pin a stored memory: always shown first, never archived (docs/decisions.md#d20)."""

    memory_id: str


class Unpin(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="unpin"):
    """Rank a pinned memory as usual again."""

    memory_id: str


_PINNED: Final = (EventType.MEMORY_PINNED, Phase.LIFECYCLE, Outcome.ACCEPTED)
_UNPINNED: Final = (EventType.MEMORY_UNPINNED, Phase.LIFECYCLE, Outcome.ACCEPTED)
_REFUSED: Final = (EventType.MEMORY_PINNED, Phase.LIFECYCLE, Outcome.REJECTED)


def pin_within_budget(store: WorkspaceStore, entry: MemoryEntry) -> tuple[MemoryEntry, EvidenceInput | None]:
    """``entry`` as it may come back into ``store`` (a ``restore``): a pin that does not fit the
    budget beside the store's other pinned memories is dropped, with a ``memory_unpinned`` event
    (:data:`PIN_BUDGET_FULL`), so that a restore never leaves more pins than the budget allows
    (docs/decisions.md#d20)."""
    if not entry.pinned or fits(store, entry):
        return entry, None
    unpinned = replace(entry, pinned=False)
    return unpinned, event(*_UNPINNED, (PIN_BUDGET_FULL,), memory=unpinned, text=unpinned.text)


@operation
def set_pinned(snap: Snapshot, memory_id: str, pinned: bool, now_ms: int) -> OpResult:
    """Pin (``pinned``) or unpin the active memory ``memory_id``. Outcomes: ``pinned``,
    ``unpinned``, ``unchanged`` (it already was), ``rejected`` with :data:`PIN_BUDGET_FULL` (a pin
    past the budget; nothing changes) or ``unknown``."""
    store = snap.store
    entry = next((e for e in store.entries if e.id == memory_id and e.status is MemoryStatus.ACTIVE), None)
    if entry is None:
        return replace(unchanged(snap), outcome=CommandOutcome.UNKNOWN, memory_id=memory_id)
    if entry.pinned == pinned:
        return replace(unchanged(snap), outcome=CommandOutcome.UNCHANGED, memory_id=memory_id)
    if pinned and not fits(store, entry):
        refused = event(*_REFUSED, (PIN_BUDGET_FULL,), memory=entry, text=entry.text)
        return replace(
            unchanged(snap).emitting(events((refused,))),
            outcome=CommandOutcome.REJECTED,
            reasons=(PIN_BUDGET_FULL,),
            memory_id=memory_id,
        )
    changed = replace(entry, pinned=pinned, updated_at=iso_from_ms(now_ms))
    store = replace(
        store,
        entries=tuple(changed if e is entry else e for e in store.entries),
        updated_at=iso_from_ms(now_ms),
    )
    reason = "pinned_by_user" if pinned else "unpinned_by_user"
    done = event(*(_PINNED if pinned else _UNPINNED), (reason,), memory=changed, text=changed.text)
    return replace(
        unchanged(snap).emitting(events((done,))),
        store=store,
        outcome=CommandOutcome.PINNED if pinned else CommandOutcome.UNPINNED,
        memory_id=memory_id,
    )
