"""The user's own commands on memories: ``remember``, ``forget``, ``supersede`` and ``restore``
(docs/decisions.md#d10)."""

from __future__ import annotations

from typing import Final, Protocol

from msgspec.structs import replace
from returns.result import Failure, Success

from domain import evidence
from domain.consolidation import normalize_store
from domain.emitted import events
from domain.enums import Importance, MemorySource, MemoryStatus, MemoryType, Scope, Volatility
from domain.freshness import confirmed, with_freshness
from domain.ids import memory_id
from domain.keys import exact_key, key_hash
from domain.model import Citation, MemoryEntry
from domain.operations.pinning import pin_within_budget, set_pinned
from domain.operations.supersession import (
    link_replacement,
    resolve_survivor,
    retire_memory,
    supersede_entry,
    superseded_event,
)
from domain.operations.values import CommandOutcome, OpResult, Snapshot, operation, unchanged
from domain.pinning import PIN_BUDGET_FULL
from domain.projection.scopes import scope_of, stored_scope
from domain.promotion import PromotionClass, promote
from domain.safety import GateReason, Rejected, admit, is_prompt_injection, redact
from domain.timeutil import iso_from_ms

#: What ``remember`` reports, by the class of the memory's promotion.
_OUTCOME: Final[dict[PromotionClass, CommandOutcome]] = {
    PromotionClass.PROMOTED: CommandOutcome.PROMOTED,
    PromotionClass.ABSORBED: CommandOutcome.ABSORBED,
    PromotionClass.REJECTED: CommandOutcome.REJECTED,
}


class RememberOptions(Protocol):
    """What a ``remember`` command may say beside its text (``domain.commands.Remember``)."""

    @property
    def importance(self) -> Importance | None: ...
    @property
    def rationale(self) -> str | None: ...
    @property
    def scope(self) -> Scope | None: ...
    @property
    def volatility(self) -> Volatility | None: ...
    @property
    def valid_until(self) -> int | None: ...
    @property
    def cites(self) -> tuple[Citation, ...]: ...
    @property
    def pin(self) -> bool: ...
    @property
    def force(self) -> bool: ...


@operation
def remember(
    snap: Snapshot,
    text: str,
    type_: MemoryType,
    now_ms: int,
    *,
    importance: Importance | None = None,
    rationale: str | None = None,
    scope: Scope | None = None,
    pin: bool = False,
    force: bool = False,
    options: RememberOptions | None = None,
) -> OpResult:
    """A manual memory (source ``manual``): through the safety gate, its length and quality rules
    included, then straight into promotion. ``force`` keeps a memory those rules refuse, with a
    ``memory_gate_overridden`` event; ``pin`` pins it when the pinned budget has room
    (docs/decisions.md#d20). A rationale is shown in every future prompt too, so it passes the same
    injection check. A ``scope`` named here is the memory's, also when it was stored already
    (docs/decisions.md#d17). ``options`` (a command) says all of that and the memory's freshness
    (docs/decisions.md#d18); a memory remembered again is verified now."""
    if options is not None:
        importance, rationale, scope = options.importance, options.rationale, options.scope
        pin, force = options.pin, options.force
    gated = admit(type_, text, source=MemorySource.MANUAL, quality=True)
    overridden: tuple[str, ...] = ()
    if force and isinstance(gated, Failure) and _quality_only(gated.failure()):
        overridden = tuple(str(r) for r in gated.failure().reasons)
        gated = admit(type_, text, source=MemorySource.MANUAL)
    if isinstance(gated, Success) and rationale is not None and is_prompt_injection(rationale):
        gated = Failure(
            Rejected(text=redact(text), reasons=(GateReason.PROMPT_INJECTION,), from_quality_gate=False)
        )
    match gated:
        case Success(str() as body):
            pass
        case Failure(Rejected() as failure):
            ignored = evidence.explicit_ignored(failure.reasons, failure.text, preview_limit=80)
            return replace(
                unchanged(snap),
                emitted=events((ignored,)),
                outcome=CommandOutcome.REJECTED,
                reasons=failure.reasons,
            )
    stamp = iso_from_ms(now_ms)
    entry = MemoryEntry(
        id=memory_id(now_ms, "manual", body),
        type=type_,
        text=body,
        source=MemorySource.MANUAL,
        confidence=1.0,
        status=MemoryStatus.ACTIVE,
        created_at=stamp,
        updated_at=stamp,
        rationale=redact(rationale) if rationale else None,
        retention_clock=now_ms,
        user_importance=importance if importance is not Importance.NORMAL else None,
        stale_after_days=_stale_after_days(type_),
        scope=stored_scope(type_, scope),
    )
    if options is not None:
        entry = with_freshness(entry, options.volatility, options.valid_until, options.cites)
    result = promote(
        snap.store,
        snap.journal,
        (entry,),
        now_ms,
        session_id=None,
        include_owned=False,
        include_unowned=False,
        archive=snap.archive,
        tuning=snap.tuning,
        caches=snap.caches,
    )
    promoted_as = result.accounting.class_of(exact_key(entry)) or PromotionClass.REJECTED
    survivor = resolve_survivor(result.store, entry)
    store = result.store
    if scope is not None and survivor is not None and scope_of(survivor) is not scope:
        rescoped = replace(survivor, scope=stored_scope(survivor.type, scope))
        store = replace(store, entries=tuple(rescoped if e is survivor else e for e in store.entries))
        survivor = rescoped
    if survivor is not None and survivor.id != entry.id and options is not None:
        again = confirmed(survivor, now_ms, options.volatility, options.valid_until, options.cites)
        store = replace(store, entries=tuple(again if e is survivor else e for e in store.entries))
        survivor = again
    emitted = result.emitted
    if overridden and survivor is not None:
        emitted += events((evidence.gate_overridden(survivor, overridden),))
    done = OpResult(
        store=store,
        journal=result.journal,
        session=snap.session,
        emitted=emitted,
        outcome=_OUTCOME[promoted_as],
        memory_id=survivor.id if survivor is not None else entry.id,
        basis=snap,
    )
    if pin and survivor is not None and not survivor.pinned:
        pinned = done.then(lambda s: set_pinned(s, survivor.id, True, now_ms))
        return replace(pinned, outcome=done.outcome, memory_id=done.memory_id, reasons=pinned.reasons)
    return done


def _quality_only(rejected: Rejected) -> bool:
    """Whether only the length and quality rules refused a memory (never a prompt injection or an
    empty text: ``force`` cannot keep those)."""
    return rejected.from_quality_gate or rejected.reasons == (GateReason.TOO_SHORT,)


def _stale_after_days(type_: MemoryType) -> int | None:
    from domain.extraction import stale_after_days_for

    return stale_after_days_for(type_)


@operation
def forget(snap: Snapshot, target_id: str, now_ms: int) -> OpResult:
    """Stop using a memory without deleting it; a hash-only tombstone keeps extraction from
    bringing it back. Undo with :func:`restore`."""
    store, found = supersede_entry(snap.store, target_id, None, now_ms, "forgotten_by_user")
    return replace(
        unchanged(snap),
        store=store,
        emitted=events(found),
        outcome=CommandOutcome.FORGOTTEN if found else CommandOutcome.UNKNOWN,
        memory_id=target_id,
    )


@operation
def supersede(
    snap: Snapshot, target_id: str, new_text: str, now_ms: int, *, type_: MemoryType | None = None
) -> OpResult:
    """Replace a memory with a new manual one; the old one is kept, marked superseded.

    The old entry is retired *before* the new one is promoted, so that dedupe cannot merge the two
    when they name the same path or URL; if the new text is rejected nothing changes. The replacement
    of a pinned memory is pinned (docs/decisions.md#d20)."""
    store, old = retire_memory(snap.store, target_id, now_ms, "superseded_by_user")
    if old is None:
        return replace(unchanged(snap), outcome=CommandOutcome.UNKNOWN, memory_id=target_id)
    retired = replace(unchanged(snap), store=store)
    added = retired.then(lambda s: remember(s, new_text, type_ or old.type, now_ms, pin=old.pinned))
    if added.outcome is CommandOutcome.REJECTED:
        return replace(added, store=snap.store)
    survivor_id = added.memory_id
    if survivor_id is None or survivor_id == target_id:
        return replace(unchanged(snap), outcome=CommandOutcome.UNCHANGED, memory_id=target_id)
    store = link_replacement(added.store, target_id, survivor_id)
    event = superseded_event(store, target_id, survivor_id, "superseded_by_user")
    return replace(added, store=store, outcome=CommandOutcome.SUPERSEDED).emitting(events((event,)))


@operation
def restore(snap: Snapshot, target_id: str, now_ms: int) -> OpResult:
    """Undo ``forget`` / ``supersede``: the memory is active again and its tombstone is lifted.
    An archived memory is brought back from the archive. A pin that no longer fits the pinned budget
    is dropped (reason ``pin_budget_full``; docs/decisions.md#d20)."""
    store = snap.store
    entry = next((e for e in store.entries if e.id == target_id), None)
    marker = next((m for m in store.archived if m.memory_id == target_id), None)
    if entry is None and marker is not None and marker.key_hash in snap.archive:
        entry = snap.archive[marker.key_hash]
        store = replace(
            store,
            entries=(*store.entries, entry),
            archived=tuple(m for m in store.archived if m.memory_id != target_id),
        )
    if entry is None:
        return replace(unchanged(snap), outcome=CommandOutcome.UNKNOWN, memory_id=target_id)
    revived, unpinned = pin_within_budget(
        store,
        replace(
            entry,
            status=MemoryStatus.ACTIVE,
            superseded_by=None,
            updated_at=iso_from_ms(now_ms),
            retention_clock=now_ms,
        ),
    )
    key = key_hash(exact_key(entry))
    store = replace(
        store,
        entries=tuple(revived if e.id == target_id else e for e in store.entries),
        tombstones=tuple(t for t in store.tombstones if t.key_hash != key),
        updated_at=iso_from_ms(now_ms),
    )
    normalized = normalize_store(store, now_ms, archive=snap.archive, tuning=snap.tuning, caches=snap.caches)
    return OpResult(
        store=normalized.store,
        journal=snap.journal,
        session=snap.session,
        emitted=events((evidence.restored(revived), *((unpinned,) if unpinned else ()))) + normalized.emitted,
        outcome=CommandOutcome.RESTORED,
        memory_id=target_id,
        reasons=(PIN_BUDGET_FULL,) if unpinned else (),
    )
