"""The pending journal: a workspace-level scratchpad for memories that have not been promoted yet
(docs/decisions.md#pending-journal, docs/decisions.md#d6, docs/decisions.md#d7).

An entry is a :class:`MemoryEntry` carrying the pending-only fields. An *owned* entry names the session
that created it (``pendingOwnerSessionID``: explicit memories); an *unowned* one does not (compaction
candidates and legacy entries). The same text owned by two sessions is two entries.

Every operation returns the new journal plus the evidence it caused. Unlike the reference, nothing
leaves the journal silently: each removal (retention, clear) yields one
``pending_memory_cleared`` event naming the entry and the reason (docs/decisions.md#b26).

The journal's bound never removes a request a person made (docs/decisions.md#pending-journal-bound):
retention clears only compaction candidates beyond the 50 newest entries and keeps requests over the
bound (:func:`over_bound`) for an operation to promote early. The journal also remembers which
requests a promotion other than their owner's took out (``promotedForOwners``), so that the owner's
session can tell such a request from one whose journal entry went missing otherwise.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Final

from msgspec.structs import replace

from domain import evidence, keys
from domain.enums import MemorySource
from domain.limits import DAY_MS, PendingJournalLimits
from domain.model import (
    EvidenceInput,
    MemoryEntry,
    PendingJournal,
    PromotedForOwner,
    SessionState,
    WorkspaceRef,
)
from domain.retention import source_priority
from domain.timeutil import iso_from_ms, parse_iso_ms

# Reason codes of ``pending_memory_cleared`` events raised by the journal itself.
REASON_INVALID_TIMESTAMP: Final = "invalid_timestamp"
REASON_DUPLICATE: Final = "duplicate"
REASON_TTL: Final = "journal_ttl"
REASON_CAP: Final = "journal_cap"

APPEND_REASON: Final = "pending_journal_append"

_MAX_AGE_MS: Final = PendingJournalLimits.MAX_AGE_DAYS * DAY_MS


# ---------------------------------------------------------------------------------------------
# Keys and small helpers
# ---------------------------------------------------------------------------------------------


def owner_of(entry: MemoryEntry) -> str | None:
    """The owning session id, or ``None`` for an unowned entry (an empty owner counts as none)."""
    return entry.pending_owner_session_id or None


def journal_key(entry: MemoryEntry) -> str:
    """The journal's dedupe key: the exact memory key, a NUL, and the owner (empty when unowned)."""
    return f"{keys.exact_key(entry)}\x00{owner_of(entry) or ''}"


def entry_time(entry: MemoryEntry) -> int | None:
    """When the entry was last touched: ``updatedAt`` if it parses, else ``createdAt``, else ``None``
    (both invalid, which the journal treats as corruption)."""
    for value in (entry.updated_at, entry.created_at):
        if value:
            parsed = parse_iso_ms(value)
            if parsed is not None:
                return parsed
    return None


def _sort_key(entry: MemoryEntry) -> tuple[int, str]:
    time = entry_time(entry)
    return (time if time is not None else 0, entry.id)


def _newest_first(entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
    """Newest first: later entry time first, ties by id (the smaller id first)."""
    return sorted(entries, key=lambda e: (-_sort_key(e)[0], e.id))


#: Sources of what a person asked for: never cleared by the journal's bound or its TTL.
REQUEST_SOURCES: Final = frozenset({MemorySource.EXPLICIT, MemorySource.MANUAL})


def is_request(entry: MemoryEntry) -> bool:
    """Whether a person asked for ``entry`` (an explicit request or a manual memory)."""
    return entry.source in REQUEST_SOURCES


def cleared_event(
    entry: MemoryEntry,
    reasons: Sequence[str],
    *,
    survivor: MemoryEntry | None = None,
) -> EvidenceInput:
    """``pending_memory_cleared``: ``entry`` left the journal for ``reasons[0]``."""
    return evidence.pending_cleared(entry, reasons, owned=owner_of(entry) is not None, survivor=survivor)


def appended_event(entry: MemoryEntry, session_id: str | None) -> EvidenceInput:
    """``pending_memory_appended`` for one entry written to the journal."""
    return evidence.pending_appended(entry, session_id, APPEND_REASON)


# ---------------------------------------------------------------------------------------------
# Retention
# ---------------------------------------------------------------------------------------------


def _retain(
    entries: Iterable[MemoryEntry], now_ms: int
) -> tuple[tuple[MemoryEntry, ...], tuple[EvidenceInput, ...]]:
    """The journal retention rules, in order, with one event per entry removed:

    1. entries whose ``updatedAt`` and ``createdAt`` both fail to parse go (any source);
    2. dedupe on (exact key, owner): the first occurrence wins, except that a copy with a higher
       source priority (explicit > manual > compaction) replaces a lower one
       (docs/decisions.md#b29);
    3. compaction entries older than 30 days go; explicit and manual entries never age out;
    4. the bound: of the entries beyond the 50 newest (newest = later entry time, ties by id),
       compaction entries go and requests stay, over the bound until an operation promotes them
       early (:func:`over_bound`, docs/decisions.md#pending-journal-bound).

    What stays is stored oldest first."""
    events: list[EvidenceInput] = []

    valid: list[MemoryEntry] = []
    for entry in entries:
        if entry_time(entry) is None:
            events.append(cleared_event(entry, (REASON_INVALID_TIMESTAMP,)))
        else:
            valid.append(entry)

    chosen: dict[str, MemoryEntry] = {}
    for entry in valid:
        key = journal_key(entry)
        current = chosen.get(key)
        if current is None:
            chosen[key] = entry
        elif source_priority(entry) > source_priority(current):
            chosen[key] = entry
            events.append(cleared_event(current, (REASON_DUPLICATE,), survivor=entry))
        else:
            events.append(cleared_event(entry, (REASON_DUPLICATE,), survivor=current))

    fresh: list[MemoryEntry] = []
    for entry in chosen.values():
        time = entry_time(entry)
        if entry.source is MemorySource.COMPACTION and time is not None and now_ms - time > _MAX_AGE_MS:
            events.append(cleared_event(entry, (REASON_TTL,)))
        else:
            fresh.append(entry)

    cap = PendingJournalLimits.MAX_ENTRIES
    newest_first = _newest_first(fresh)
    beyond = newest_first[cap:]
    kept = newest_first[:cap] + [entry for entry in beyond if is_request(entry)]
    events.extend(cleared_event(entry, (REASON_CAP,)) for entry in beyond if not is_request(entry))
    return tuple(sorted(kept, key=_sort_key)), tuple(events)


def over_bound(journal: PendingJournal) -> tuple[MemoryEntry, ...]:
    """The requests beyond the journal's 50 newest entries, oldest first: retention keeps them, and
    the operation that put the journal over its bound promotes them early
    (docs/decisions.md#pending-journal-bound)."""
    beyond = _newest_first(journal.entries)[PendingJournalLimits.MAX_ENTRIES :]
    return tuple(sorted((e for e in beyond if is_request(e)), key=_sort_key))


# ---------------------------------------------------------------------------------------------
# Records of requests promoted for their owners
# ---------------------------------------------------------------------------------------------


def record_promoted_for_owners(
    journal: PendingJournal, entries: Iterable[MemoryEntry], reason: str, now_ms: int
) -> PendingJournal:
    """Remember that ``entries`` (the owned ones) left the journal through a promotion other than
    their owner's, for ``reason``."""
    stamp = iso_from_ms(now_ms)
    added = tuple(
        PromotedForOwner(memory_id=e.id, owner_session_id=owner, reason=reason, promoted_at=stamp)
        for e in entries
        if (owner := owner_of(e)) is not None
    )
    if not added:
        return journal
    return replace(journal, promoted_for_owners=(*journal.promoted_for_owners, *added))


def promoted_for(journal: PendingJournal, owner: str) -> frozenset[str]:
    """Ids of ``owner``'s requests that another promotion took out of the journal."""
    return frozenset(r.memory_id for r in journal.promoted_for_owners if r.owner_session_id == owner)


def without_records_of(journal: PendingJournal, owner: str) -> PendingJournal:
    """The journal without ``owner``'s records: its session has seen them (or has ended)."""
    kept = tuple(r for r in journal.promoted_for_owners if r.owner_session_id != owner)
    if len(kept) == len(journal.promoted_for_owners):
        return journal
    return replace(journal, promoted_for_owners=kept)


def _fresh_records(journal: PendingJournal, now_ms: int) -> tuple[PromotedForOwner, ...]:
    """The records younger than an idle session file may live: an older one is of no use to anyone
    (and losing one only means its owner's end promotes its copy again, finding it stored)."""
    limit = PendingJournalLimits.PROMOTED_RECORD_TTL_MS

    def fresh(record: PromotedForOwner) -> bool:
        at = parse_iso_ms(record.promoted_at)
        return at is not None and now_ms - at <= limit

    return tuple(r for r in journal.promoted_for_owners if fresh(r))


def empty_journal(root: str, key: str, now_ms: int) -> PendingJournal:
    """A journal with no entries for the workspace ``root`` (whose hashed key is ``key``)."""
    return PendingJournal(workspace=WorkspaceRef(root=root, key=key), updated_at=iso_from_ms(now_ms))


def normalize_journal(
    journal: PendingJournal, now_ms: int
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """Apply the retention rules (and forget records older than
    :attr:`PendingJournalLimits.PROMOTED_RECORD_TTL_MS`); ``updatedAt`` becomes ``now``. Idempotent:
    a second call removes nothing and emits nothing."""
    entries, events = _retain(journal.entries, now_ms)
    records = _fresh_records(journal, now_ms) if journal.promoted_for_owners else ()
    normalized = replace(
        journal, version=1, entries=entries, updated_at=iso_from_ms(now_ms), promoted_for_owners=records
    )
    return normalized, events


def append_pending(
    journal: PendingJournal,
    entries: Sequence[MemoryEntry],
    now_ms: int,
    *,
    session_id: str | None = None,
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """Add ``entries`` and re-apply retention. Emits ``pending_memory_appended`` for each entry, then
    a ``pending_memory_cleared`` for each entry retention removed (a new duplicate, a compaction
    candidate pushed out by the bound, ...). Requests pushed over the bound stay
    (:func:`over_bound`): the caller promotes them early. Appending nothing changes nothing."""
    if not entries:
        return journal, ()
    appended = tuple(appended_event(entry, session_id) for entry in entries)
    updated, events = normalize_journal(replace(journal, entries=(*journal.entries, *entries)), now_ms)
    return updated, appended + events


def rebuild_from_sessions(
    journal: PendingJournal, sessions: Iterable[SessionState], now_ms: int
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """The journal after it was found damaged (moved aside or only partly salvaged): every pending
    memory a session still holds and the journal lacks is appended again, owned by that session, so
    that the damage does not silently drop it (unless the journal records it as promoted for that
    session). Emits ``pending_memory_appended`` for each one (and whatever retention then clears); a
    journal that lacks nothing is returned unchanged."""
    present = {journal_key(e) for e in journal.entries}
    missing: list[MemoryEntry] = []
    for session in sessions:
        promoted = promoted_for(journal, session.session_id)
        for memory in session.pending_memories:
            owner = owner_of(memory) or session.session_id
            owned = replace(memory, pending_owner_session_id=owner)
            key = journal_key(owned)
            if key not in present and memory.id not in promoted:
                present.add(key)
                missing.append(owned)
    return append_pending(journal, missing, now_ms)


def _in_scope(entry: MemoryEntry, owner: str | None, clear_unowned: bool) -> bool:
    """The reference's owner filter for clearing one entry whose key matched."""
    entry_owner = owner_of(entry)
    if owner:
        return entry_owner == owner or (clear_unowned and entry_owner is None)
    if clear_unowned:
        return entry_owner is None
    return True


def clear_pending(
    journal: PendingJournal,
    keys_to_clear: Collection[str],
    now_ms: int,
    *,
    owner: str | None,
    clear_unowned: bool,
    reason: str,
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """Remove the entries whose exact key is in ``keys_to_clear``, scoped by owner:

    * ``owner`` given: that owner's entries, plus unowned ones when ``clear_unowned``; never another
      owner's entries;
    * no owner, ``clear_unowned``: unowned entries only;
    * neither: every entry with the key.

    An empty key set clears nothing (the reference cleared the whole journal, docs/decisions.md#b28).
    Each removal emits ``pending_memory_cleared`` with ``reason``."""
    normalized, events = normalize_journal(journal, now_ms)
    if not keys_to_clear:
        return normalized, events
    kept: list[MemoryEntry] = []
    cleared: list[EvidenceInput] = []
    for entry in normalized.entries:
        if keys.exact_key(entry) in keys_to_clear and _in_scope(entry, owner, clear_unowned):
            cleared.append(cleared_event(entry, (reason,)))
        else:
            kept.append(entry)
    return replace(normalized, entries=tuple(kept)), events + tuple(cleared)
