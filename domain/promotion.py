"""Promotion: pending memories (session pending plus selected journal entries) become workspace
memories, and every one of them is accounted for (docs/decisions.md#promotion).

One call of :func:`promote` is the reference's ``promotePendingMemories`` as a pure step:

1. choose what is pending: the session's pending list, then journal entries owned by the session
   (``include_owned``), unowned entries (``include_unowned``) and entries owned by sessions idle for
   more than a day (``idle_owner_ids``, docs/decisions.md#d7), first occurrence per exact key;
2. pending memories whose exact key is tombstoned (docs/decisions.md#d10) are rejected and cleared,
   never stored;
3. an exact duplicate of an active store entry reinforces it (with a ``memory_reinforced`` event,
   docs/decisions.md#b14); anything else is appended without its pending-only fields
   (docs/decisions.md#b15);
4. the store is normalised (:func:`domain.consolidation.normalize_store`) and each pending key is
   classified as promoted, absorbed, superseded or rejected (:func:`account_pending_promotions`);
5. rejected explicit/manual memories get an attempt counted in the journal on every path
   (docs/decisions.md#b20) and are dropped after three; everything clearable leaves the journal, each
   with an event.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Final

import msgspec
from msgspec.structs import replace

from domain import consolidation, evidence, safety
from domain.consolidation import ABSORBED_EXACT, ABSORBED_IDENTITY, Absorption, MigrationAudit
from domain.key_index import stored_index as _index
from domain.keys import exact_key, first_per_key, identity_key, key_hash
from domain.model import (
    EventType,
    EvidenceInput,
    LongTermLimits,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    Outcome,
    PendingJournal,
    Phase,
    RelationRole,
    WorkspaceStore,
)
from domain.pending import (
    CAPACITY_REJECTED,
    clear_pending,
    normalize_journal,
    owner_of,
    record_rejections,
)
from domain.retention import DEFAULT_TUNING, Tuning, reinforce, reinforcement_count
from domain.text import memory_key

#: Terminal reasons a consolidation step may report besides the two absorptions. workmem's
#: normalisation never produces them (docs/decisions.md#d2, docs/decisions.md#d10), but the accounting
#: keeps the reference's rules.
SUPERSEDED_EXISTING: Final = "superseded_existing"
REJECTED_CAPACITY: Final = "rejected_capacity"

# Per-key classification reasons (``PromotionAccounting.reasons``).
NEW_WORKSPACE_ENTRY: Final = "new_workspace_entry"
ARCHIVED: Final = "archived"
SAME_EXACT_KEY: Final = "same_exact_key"
SAME_IDENTITY_KEY: Final = "same_identity_key"
NOT_IN_STORE: Final = "not_in_store"
TOMBSTONED: Final = "tombstoned"

_RETRYABLE_SOURCES: Final = frozenset({MemorySource.EXPLICIT, MemorySource.MANUAL})


class PromotionAccounting(msgspec.Struct, frozen=True):
    """Where each pending exact key went. The four classes partition the pending keys; all tuples
    keep insertion order."""

    promoted: tuple[str, ...]
    absorbed: tuple[str, ...]
    superseded: tuple[str, ...]
    rejected: tuple[str, ...]
    #: keys that may leave the journal and the session's pending list
    clearable: tuple[str, ...]
    #: rejected explicit/manual keys that stay pending and are retried (at most 3 attempts)
    retryable: tuple[str, ...]
    #: (key, reason) for every pending key: ``new_workspace_entry``, ``archived``, ``same_exact_key``,
    #: ``same_identity_key``, ``superseded_existing``, ``capacity_rejected``, ``not_in_store`` or
    #: ``tombstoned``
    reasons: tuple[tuple[str, str], ...] = ()

    def reason_of(self, key: str) -> str | None:
        return dict(self.reasons).get(key)


EMPTY_ACCOUNTING: Final = PromotionAccounting((), (), (), (), (), ())


class PromotionResult(msgspec.Struct, frozen=True):
    store: WorkspaceStore
    journal: PendingJournal
    accounting: PromotionAccounting
    #: keys the session state must drop from its pending list (clearable plus exhausted)
    cleared_keys: frozenset[str]
    events: tuple[EvidenceInput, ...]
    audit: tuple[MigrationAudit, ...]
    archived: tuple[MemoryEntry, ...]


# ---------------------------------------------------------------------------------------------
# Accounting (docs/decisions.md#promotion, with docs/decisions.md#b16 fixed)
# ---------------------------------------------------------------------------------------------


def _stored_text(text: str) -> str:
    """The text a memory will have once stored: redacted, cut to 260 code points."""
    return safety.stored_text(text, LongTermLimits.MAX_ENTRY_TEXT_CHARS)


def _candidate_keys(entry: MemoryEntry) -> tuple[str, ...]:
    """The pending memory's exact key and, when storing changes its text, the stored form's key."""
    key = exact_key(entry)
    stored = memory_key(entry.type.value, _stored_text(entry.text))
    return (key,) if stored == key else (key, stored)


def _candidate_identities(entry: MemoryEntry) -> tuple[str, ...]:
    stored = _stored_text(entry.text)
    first = identity_key(entry)
    if stored == entry.text:
        return (first,)
    second = identity_key(replace(entry, text=stored))
    return (first,) if second == first else (first, second)


def _is_active(entry: MemoryEntry) -> bool:
    return entry.status is not MemoryStatus.SUPERSEDED




def _terminals(absorptions: Iterable[Absorption]) -> dict[str, Absorption]:
    """The last terminal event per exact key of the memory it is about."""
    return {exact_key(a.absorbed): a for a in absorptions}


def _terminal_for(keys_: Sequence[str], terminals: Mapping[str, Absorption]) -> Absorption | None:
    for key in keys_:
        found = terminals.get(key)
        if found is not None:
            return found
    return None


#: terminal reason -> (class, per-key reason)
_TERMINAL_CLASS: Final[dict[str, tuple[str, str]]] = {
    ABSORBED_EXACT: ("absorbed", SAME_EXACT_KEY),
    ABSORBED_IDENTITY: ("absorbed", SAME_IDENTITY_KEY),
    SUPERSEDED_EXISTING: ("superseded", SUPERSEDED_EXISTING),
    REJECTED_CAPACITY: ("rejected", CAPACITY_REJECTED),
    CAPACITY_REJECTED: ("rejected", CAPACITY_REJECTED),
}


def _classify(
    entry: MemoryEntry,
    *,
    before_exact: Collection[str],
    after_exact: Collection[str],
    after_identity: Collection[str],
    archived_exact: Collection[str],
    terminals: Mapping[str, Absorption],
    tombstoned: Collection[str],
) -> tuple[str, str]:
    """(class, reason) of one pending memory by the first matching rule."""
    candidates = _candidate_keys(entry)
    if candidates[0] in tombstoned:
        return "rejected", TOMBSTONED
    if any(k in before_exact for k in candidates):
        return "absorbed", SAME_EXACT_KEY
    if any(k in after_exact for k in candidates):
        return "promoted", NEW_WORKSPACE_ENTRY
    terminal = _terminal_for(candidates, terminals)
    if terminal is not None and terminal.reason in _TERMINAL_CLASS:
        return _TERMINAL_CLASS[terminal.reason]
    if any(k in after_identity for k in _candidate_identities(entry)):
        # The reference labelled this identity absorption as an exact one (docs/decisions.md#b16).
        return "absorbed", SAME_IDENTITY_KEY
    if any(k in archived_exact for k in candidates):
        # stored, then moved straight to the archive by the stored-active limit (docs/decisions.md#d2)
        return "promoted", ARCHIVED
    # The reference called this a capacity rejection although nothing was over capacity
    # (docs/decisions.md#b16).
    return "rejected", NOT_IN_STORE


def account_pending_promotions(
    pending: Sequence[MemoryEntry],
    before: Sequence[MemoryEntry],
    after: Sequence[MemoryEntry],
    absorptions: Sequence[Absorption] = (),
    *,
    archived: Sequence[MemoryEntry] = (),
    tombstoned: Collection[str] = (),
) -> PromotionAccounting:
    """Classify every pending key, first matching rule wins:

    0. its exact key is tombstoned (``tombstoned``, exact keys) → rejected, and clearable;
    1. an active ``before`` entry has its exact key → absorbed (exact);
    2. an active ``after`` entry has its exact key → promoted;
    3. a terminal absorption for its key: exact/identity → absorbed, ``superseded_existing`` →
       superseded, ``rejected_capacity`` → rejected (capacity);
    4. an active ``after`` entry has its identity key → absorbed (identity);
    5. it was archived in this step → promoted (then archived);
    6. otherwise → rejected (``not_in_store``).

    A key's "exact key" also matches in its stored form (redacted, cut to 260 code points).
    Clearable: promoted, absorbed, superseded, compaction keys rejected for capacity, tombstoned keys.
    Retryable: the other rejected keys whose source is explicit or manual."""
    before_exact = _index(before).first_exact
    after_index = _index(after)
    after_exact = after_index.first_exact
    after_identity = after_index.first_identity
    archived_exact = {exact_key(e) for e in archived}
    terminals = _terminals(absorptions)

    classes: dict[str, dict[str, None]] = {
        "promoted": {},
        "absorbed": {},
        "superseded": {},
        "rejected": {},
    }
    reasons: dict[str, str] = {}
    for entry in pending:
        key = exact_key(entry)
        if key in reasons:
            continue
        cls, reason = _classify(
            entry,
            before_exact=before_exact,
            after_exact=after_exact,
            after_identity=after_identity,
            archived_exact=archived_exact,
            terminals=terminals,
            tombstoned=tombstoned,
        )
        classes[cls][key] = None
        reasons[key] = reason

    clearable: dict[str, None] = {}
    for cls in ("promoted", "absorbed", "superseded"):
        clearable.update(classes[cls])
    for entry in pending:
        key = exact_key(entry)
        reason = reasons[key]
        if reason == CAPACITY_REJECTED and entry.source is MemorySource.COMPACTION:
            clearable[key] = None
    for entry in pending:
        key = exact_key(entry)
        if reasons[key] == TOMBSTONED:
            clearable[key] = None

    retryable: dict[str, None] = {}
    for entry in pending:
        key = exact_key(entry)
        if key in classes["rejected"] and key not in clearable and entry.source in _RETRYABLE_SOURCES:
            retryable[key] = None

    return PromotionAccounting(
        promoted=tuple(classes["promoted"]),
        absorbed=tuple(classes["absorbed"]),
        superseded=tuple(classes["superseded"]),
        rejected=tuple(classes["rejected"]),
        clearable=tuple(clearable),
        retryable=tuple(retryable),
        reasons=tuple(reasons.items()),
    )


# ---------------------------------------------------------------------------------------------
# Evidence (docs/decisions.md#promotion, with docs/decisions.md#b16 fixed)
# ---------------------------------------------------------------------------------------------


def _retained(
    entry: MemoryEntry,
    terminal: Absorption | None,
    after: Sequence[MemoryEntry],
    archived: Sequence[MemoryEntry],
) -> MemoryEntry | None:
    """The stored memory a pending one ended up in: the terminal's survivor, else the first active
    ``after`` entry (then archived entry) with the same exact or identity key."""
    index = _index(after)
    if terminal is not None and terminal.survivor_id:
        position = index.first_id.get(terminal.survivor_id)
        if position is not None:
            return after[position]
        for candidate in archived:
            if candidate.id == terminal.survivor_id:
                return candidate
    exact = set(_candidate_keys(entry))
    found = [p for k in exact if (p := index.first_exact.get(k)) is not None]
    found.extend(p for k in _candidate_identities(entry) if (p := index.first_identity.get(k)) is not None)
    if found:
        return after[min(found)]  # the first active entry with one of the keys
    for candidate in archived:
        if exact_key(candidate) in exact:
            return candidate
    return None


def _promotion_event(
    type_: EventType,
    outcome: Outcome,
    entry: MemoryEntry,
    reasons: Sequence[str],
    relations: Iterable[tuple[RelationRole, MemoryEntry | None]] = (),
) -> EvidenceInput:
    return evidence.event(
        type_,
        Phase.PROMOTION,
        outcome,
        reasons,
        memory=entry,
        relations=[evidence.relation(role, m) for role, m in relations if m is not None],
        text=entry.text,
    )


def promotion_events(
    pending: Sequence[MemoryEntry],
    after: Sequence[MemoryEntry],
    absorptions: Sequence[Absorption],
    accounting: PromotionAccounting,
    exhausted: Collection[str] = (),
    *,
    archived: Sequence[MemoryEntry] = (),
) -> tuple[EvidenceInput, ...]:
    """Exactly one ``promotion_*`` outcome event per distinct pending key, in pending order, plus a
    retry event after each retryable key (``promotion_retry_exhausted`` when its last attempt was
    used up, else ``promotion_retry_scheduled``)."""
    terminals = _terminals(absorptions)
    reasons = dict(accounting.reasons)
    promoted, absorbed = set(accounting.promoted), set(accounting.absorbed)
    superseded, rejected = set(accounting.superseded), set(accounting.rejected)
    retryable = set(accounting.retryable)
    out: list[EvidenceInput] = []
    seen: set[str] = set()
    for entry in pending:
        key = exact_key(entry)
        if key in seen:
            continue
        seen.add(key)
        terminal = _terminal_for(_candidate_keys(entry), terminals)
        reason = reasons.get(key)
        if reason is None and terminal is not None and terminal.reason in _TERMINAL_CLASS:
            reason = _TERMINAL_CLASS[terminal.reason][1]  # accounting built without reasons
        retained = _retained(entry, terminal, after, archived)
        if key in promoted:
            codes = (NEW_WORKSPACE_ENTRY, ARCHIVED) if reason == ARCHIVED else (NEW_WORKSPACE_ENTRY,)
            out.append(
                _promotion_event(
                    EventType.PROMOTION_PROMOTED,
                    Outcome.PROMOTED,
                    entry,
                    codes,
                    [(RelationRole.PROMOTED, retained or entry)],
                )
            )
        elif key in absorbed:
            identity = reason == SAME_IDENTITY_KEY
            out.append(
                _promotion_event(
                    EventType.PROMOTION_ABSORBED_IDENTITY if identity else EventType.PROMOTION_ABSORBED_EXACT,
                    Outcome.ABSORBED,
                    entry,
                    (SAME_IDENTITY_KEY if identity else SAME_EXACT_KEY,),
                    [(RelationRole.ABSORBED, entry), (RelationRole.RETAINED, retained)],
                )
            )
        elif key in superseded:
            out.append(
                _promotion_event(
                    EventType.PROMOTION_SUPERSEDED,
                    Outcome.SUPERSEDED,
                    entry,
                    (SUPERSEDED_EXISTING,),
                    [(RelationRole.SUPERSEDED, entry), (RelationRole.SUPERSEDED_BY, retained)],
                )
            )
        elif key in rejected:
            capacity = reason == CAPACITY_REJECTED
            out.append(
                _promotion_event(
                    EventType.PROMOTION_REJECTED_CAPACITY if capacity else EventType.PROMOTION_REJECTED,
                    Outcome.REJECTED,
                    entry,
                    (reason or NOT_IN_STORE,),
                )
            )
            if key in retryable:
                if key in exhausted:
                    out.append(
                        _promotion_event(
                            EventType.PROMOTION_RETRY_EXHAUSTED,
                            Outcome.EXHAUSTED,
                            entry,
                            ("max_attempts_reached",),
                        )
                    )
                else:
                    codes = (
                        ("retryable_capacity_rejection",)
                        if capacity
                        else ("retryable_rejection", reason or "")
                    )
                    out.append(
                        _promotion_event(EventType.PROMOTION_RETRY_SCHEDULED, Outcome.RETRIED, entry, codes)
                    )
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# The promotion step
# ---------------------------------------------------------------------------------------------


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


def _reinforced_event(reinforced: MemoryEntry, by: MemoryEntry) -> EvidenceInput:
    return evidence.event(
        EventType.MEMORY_REINFORCED,
        Phase.REINFORCEMENT,
        Outcome.REINFORCED,
        ("duplicate_exact", "reinforcement_window_allowed"),
        memory=reinforced,
        relations=(
            evidence.relation(RelationRole.REINFORCED, reinforced),
            evidence.relation(RelationRole.REINFORCED_BY, by),
        ),
        details={"path": "promotion"},
        text=reinforced.text,
    )


def _merge_into_store(
    store: WorkspaceStore,
    pending: Sequence[MemoryEntry],
    session_id: str | None,
    now_ms: int,
    tuning: Tuning,
) -> tuple[WorkspaceStore, list[EvidenceInput]]:
    """Reinforce exact duplicates of active entries (with evidence, docs/decisions.md#b14), append the
    rest (docs/decisions.md#b15)."""
    entries = list(store.entries)
    index = dict(_index(store.entries).last_exact)  # the last active entry with each exact key
    events: list[EvidenceInput] = []
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
            events.append(_reinforced_event(reinforced, entry))
    return replace(store, entries=tuple(entries)), events


def _grouped(keys_: Iterable[str], reason_of: Mapping[str, str]) -> dict[str, set[str]]:
    groups: dict[str, set[str]] = {}
    for key in keys_:
        groups.setdefault(reason_of[key], set()).add(key)
    return groups


_CLEAR_REASON: Final = {
    NEW_WORKSPACE_ENTRY: "promoted",
    ARCHIVED: "promoted",
    SAME_EXACT_KEY: "absorbed",
    SAME_IDENTITY_KEY: "absorbed",
    SUPERSEDED_EXISTING: "superseded",
    CAPACITY_REJECTED: CAPACITY_REJECTED,
    TOMBSTONED: TOMBSTONED,
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
) -> PromotionResult:
    """Promote what is pending for ``session_id`` (module docstring). With nothing pending the store
    is returned untouched and only the journal's own normalisation is reported.

    The journal is touched only within the promotion's scope: entries owned by ``session_id``, by an
    adopted idle owner, and unowned entries when ``include_unowned``; other sessions' entries are
    never selected, counted or cleared. Events: journal normalisation, promotion-time reinforcement,
    store normalisation, one ``promotion_*`` per pending key (plus retry events), then the journal
    removals; all carry ``session_id`` when one is given."""
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
        normalized = consolidation.normalize_store(store, now_ms, archive=archive, tuning=tuning)
        return PromotionResult(
            store=normalized.store,
            journal=journal,
            accounting=EMPTY_ACCOUNTING,
            cleared_keys=frozenset(),
            events=evidence.with_session((*journal_events, *normalized.events), session_id),
            audit=normalized.audit,
            archived=normalized.archived,
        )

    tombstone_hashes = {t.key_hash for t in store.tombstones}
    tombstoned = {exact_key(e) for e in pending if key_hash(exact_key(e)) in tombstone_hashes}
    merged, reinforce_events = _merge_into_store(
        store, [e for e in pending if exact_key(e) not in tombstoned], session_id, now_ms, tuning
    )
    normalized = consolidation.normalize_store(merged, now_ms, archive=archive, tuning=tuning, base=store)
    after = normalized.store.entries
    accounting = account_pending_promotions(
        pending,
        store.entries,
        after,
        normalized.absorptions,
        archived=normalized.archived,
        tombstoned=tombstoned,
    )
    reason_of = dict(accounting.reasons)

    # (owner, unowned-only) pairs: this session's and the adopted owners' entries, then unowned ones
    scopes: list[tuple[str | None, bool]] = [(owner, False) for owner in owners]
    if include_unowned:
        scopes.append((None, True))

    removal_events: list[EvidenceInput] = []
    exhausted: set[str] = set()
    for reason, group in _grouped(accounting.retryable, reason_of).items():
        for owner, unowned_only in scopes:
            journal, gone, found = record_rejections(
                journal, group, reason, now_ms, owner=owner, include_unowned_only=unowned_only
            )
            exhausted |= gone
            removal_events.extend(found)

    for reason, group in _grouped(accounting.clearable, reason_of).items():
        for owner, unowned in scopes:
            journal, found = clear_pending(
                journal, group, now_ms, owner=owner, clear_unowned=unowned, reason=_CLEAR_REASON[reason]
            )
            removal_events.extend(found)

    outcome_events = promotion_events(
        pending, after, normalized.absorptions, accounting, exhausted, archived=normalized.archived
    )
    events = (
        *journal_events,
        *reinforce_events,
        *normalized.events,
        *outcome_events,
        *removal_events,
    )
    return PromotionResult(
        store=normalized.store,
        journal=journal,
        accounting=accounting,
        cleared_keys=frozenset(accounting.clearable) | exhausted,
        events=evidence.with_session(events, session_id),
        audit=normalized.audit,
        archived=normalized.archived,
    )
