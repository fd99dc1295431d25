"""The promotion step: :func:`promote` (:mod:`domain.promotion`)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from domain import consolidation
from domain.caches import Caches
from domain.emitted import Emits, events
from domain.key_index import stored_index
from domain.keys import exact_key, first_per_key, key_hash
from domain.model import (
    EvidenceInput,
    MemoryEntry,
    MemoryStatus,
    PendingJournal,
    WorkspaceStore,
)
from domain.pending import (
    clear_pending,
    is_request,
    journal_key,
    normalize_journal,
    owner_of,
    record_promoted_for_owners,
)
from domain.promotion.accounting import (
    EMPTY_ACCOUNTING,
    PromotionAccounting,
    PromotionReason,
    account_pending_promotions,
)
from domain.promotion.events import promotion_events, reinforced_event
from domain.retention import DEFAULT_TUNING, Tuning, reinforce, reinforcement_count

if TYPE_CHECKING:
    pass


class PromotionResult(Emits, frozen=True, kw_only=True):
    """The store and journal after a promotion, where each pending key went, and the keys the
    session must drop from its pending list."""

    store: WorkspaceStore
    journal: PendingJournal
    accounting: PromotionAccounting
    cleared_keys: frozenset[str]


def _as_stored(entry: MemoryEntry, now_ms: int) -> MemoryEntry:
    """A pending memory as a new store entry: its retention clock starts now unless it already has
    one, and the pending-only fields stay behind (docs/decisions.md#b15)."""
    return replace(
        entry,
        retention_clock=entry.retention_clock or now_ms,
        pending_owner_session_id=None,
        pending_message_id=None,
        promotion_attempts=None,
        last_promotion_attempt_at=None,
        last_promotion_failure_reason=None,
    )


def _merge_into_store(
    store: WorkspaceStore,
    pending: Sequence[MemoryEntry],
    session_id: str | None,
    now_ms: int,
    tuning: Tuning,
    caches: Caches,
) -> tuple[WorkspaceStore, list[EvidenceInput]]:
    """Reinforce exact duplicates of active entries (with evidence, docs/decisions.md#b14), append the
    rest (docs/decisions.md#b15)."""
    entries = list(store.entries)
    index = dict(stored_index(store.entries, caches).last_exact)  # the last active entry with each exact key
    found_events: list[EvidenceInput] = []
    for entry in pending:
        key = exact_key(entry)
        found = index.get(key)
        if found is None:
            entries.append(_as_stored(entry, now_ms))
            index[key] = len(entries) - 1
            continue
        existing = entries[found]
        reinforced = reinforce(existing, session_id or owner_of(entry), now_ms, tuning)
        if reinforcement_count(reinforced) > reinforcement_count(existing):
            entries[found] = reinforced
            found_events.append(reinforced_event(reinforced, entry))
    return replace(store, entries=tuple(entries)), found_events


def _lift_tombstones(
    store: WorkspaceStore, pending: Sequence[MemoryEntry], journal: PendingJournal
) -> WorkspaceStore:
    """An explicit or manual request for a memory overrides an earlier forget (docs/decisions.md#d10):
    its tombstone goes, whichever session's request it is (an adopted one too, docs/decisions.md#d7;
    one promoted early over the journal's bound too, docs/decisions.md#pending-journal-bound).
    Compaction candidates stay blocked, and so does a session's copy of a request whose journal
    entry is gone (another promotion took it): that request was made before, and a forget since
    then wins."""
    held = {journal_key(e) for e in journal.entries}
    wanted = {
        key_hash(exact_key(e))
        for e in pending
        if is_request(e) and (owner_of(e) is None or journal_key(e) in held)
    }
    if not wanted or not store.tombstones:
        return store
    kept = tuple(t for t in store.tombstones if t.key_hash not in wanted)
    return store if len(kept) == len(store.tombstones) else replace(store, tombstones=kept)


#: The record of an idle owner's entry another session's promotion took (docs/decisions.md#d7).
ADOPTED: Final = "adopted"


def _grouped(
    keys_: Iterable[str], reason_of: Mapping[str, PromotionReason]
) -> dict[PromotionReason, set[str]]:
    groups: dict[PromotionReason, set[str]] = {}
    for key in keys_:
        groups.setdefault(reason_of[key], set()).add(key)
    return groups


#: The reason a pending entry leaves the journal with, by its promotion reason.
CLEAR_REASON: Final[dict[PromotionReason, str]] = {
    PromotionReason.NEW_WORKSPACE_ENTRY: "promoted",
    PromotionReason.ARCHIVED: "promoted",
    PromotionReason.SAME_EXACT_KEY: "absorbed",
    PromotionReason.SAME_IDENTITY_KEY: "absorbed",
    PromotionReason.TOMBSTONED: "tombstoned",
    PromotionReason.NOT_ACTIVE: "not_active",
}


def promote(
    store: WorkspaceStore,
    journal: PendingJournal,
    session_pending: Sequence[MemoryEntry],
    now_ms: int,
    *,
    session_id: str | None,
    include_owned: bool,
    include_unowned: bool,
    idle_owner_ids: Collection[str] = (),
    archive: Mapping[str, MemoryEntry] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    cause: str | None = None,
    caches: Caches | None = None,
) -> PromotionResult:
    """Promote what is pending for ``session_id`` (:mod:`domain.promotion`). With nothing pending the
    store is only normalised, and only the journal's own normalisation is reported besides.

    The journal is touched only within the promotion's scope: entries owned by ``session_id``, by an
    adopted idle owner, and unowned entries when ``include_unowned``; other sessions' entries are
    never selected, counted or cleared. Events: journal normalisation, promotion-time reinforcement,
    store normalisation, one ``promotion_*`` per pending key (each with ``cause`` as a second reason
    code when one is given), then the journal removals; all carry ``session_id`` when one is given.
    The journal records the adopted owners' entries it clears (``promotedForOwners``,
    docs/decisions.md#pending-journal-bound). ``caches``: what earlier steps derived from the same
    entries (docs/decisions.md#d14; a fresh one when none is given)."""
    if caches is None:
        caches = Caches()
    journal, journal_events = normalize_journal(journal, now_ms)
    adopted = tuple(sorted({o for o in idle_owner_ids if o and o != session_id}))  # stable event order
    owners = ((session_id,) if session_id else ()) + adopted

    def selected(entry: MemoryEntry) -> bool:
        owner = owner_of(entry)
        if owner is None:
            return include_unowned
        return (include_owned and owner == session_id) or owner in adopted

    pending = first_per_key([*session_pending, *(e for e in journal.entries if selected(e))])
    if not pending:
        # Nothing to promote, but the store is still normalised: a store written elsewhere (an
        # imported reference store, a hand edit) must be redacted and deduped before it is shown.
        normalized = consolidation.normalize_store(
            store, now_ms, archive=archive, tuning=tuning, caches=caches
        )
        return PromotionResult(
            store=normalized.store,
            journal=journal,
            accounting=EMPTY_ACCOUNTING,
            cleared_keys=frozenset(),
            emitted=(events(journal_events) + normalized.emitted).with_session(session_id),
        )

    store = _lift_tombstones(store, pending, journal)
    tombstone_hashes = {t.key_hash for t in store.tombstones}
    tombstoned = {exact_key(e) for e in pending if key_hash(exact_key(e)) in tombstone_hashes}
    storable = [
        e for e in pending if exact_key(e) not in tombstoned and e.status is not MemoryStatus.SUPERSEDED
    ]
    merged, reinforce_events = _merge_into_store(store, storable, session_id, now_ms, tuning, caches)
    normalized = consolidation.normalize_store(
        merged, now_ms, archive=archive, tuning=tuning, base=store, caches=caches
    )
    after = normalized.store.entries
    accounting = account_pending_promotions(
        pending,
        store.entries,
        after,
        normalized.absorptions,
        archived=normalized.archived,
        tombstoned=tombstoned,
        caches=caches,
    )

    # (owner, unowned-only) pairs: this session's and the adopted owners' entries, then unowned ones
    scopes: list[tuple[str | None, bool]] = [(owner, False) for owner in owners]
    if include_unowned:
        scopes.append((None, True))
    removal_events: list[EvidenceInput] = []
    held = journal.entries
    for reason, group in _grouped(accounting.clearable, dict(accounting.reasons)).items():
        for owner, unowned in scopes:
            journal, found = clear_pending(
                journal, group, now_ms, owner=owner, clear_unowned=unowned, reason=CLEAR_REASON[reason]
            )
            removal_events.extend(found)
    if adopted:
        left = {e.id for e in journal.entries}
        taken = (e for e in held if e.id not in left and owner_of(e) in adopted)
        journal = record_promoted_for_owners(journal, taken, ADOPTED, now_ms)

    outcome_events = promotion_events(
        pending, after, normalized.absorptions, accounting, archived=normalized.archived, caches=caches
    )
    if cause is not None:
        outcome_events = tuple(replace(e, reason_codes=(*e.reason_codes, cause)) for e in outcome_events)
    emitted = (
        events(journal_events)
        + events(reinforce_events)
        + normalized.emitted
        + events(outcome_events)
        + events(removal_events)
    )
    return PromotionResult(
        store=normalized.store,
        journal=journal,
        accounting=accounting,
        cleared_keys=frozenset(accounting.clearable),
        emitted=emitted.with_session(session_id),
    )
