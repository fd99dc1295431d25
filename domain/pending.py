"""The pending journal: a workspace-level scratchpad for memories that have not been promoted yet
(docs/decisions.md#pending-journal, docs/decisions.md#d6, docs/decisions.md#d7).

An entry is a :class:`MemoryEntry` carrying the pending-only fields. An *owned* entry names the session
that created it (``pendingOwnerSessionID``: explicit memories); an *unowned* one does not (compaction
candidates and legacy entries). The same text owned by two sessions is two entries.

Every operation returns the new journal plus the evidence it caused. Unlike the reference, nothing
leaves the journal silently: each removal (retention, clear) yields one
``pending_memory_cleared`` event naming the entry and the reason (docs/decisions.md#b26).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Final

from msgspec.structs import replace

from domain import evidence, keys
from domain.model import (
    DAY_MS,
    EvidenceInput,
    MemoryEntry,
    MemorySource,
    PendingJournal,
    PendingJournalLimits,
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
    4. the 50 newest stay (newest = later entry time, ties by id), stored oldest first.
    """
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
    newest_first = sorted(fresh, key=lambda e: (-_sort_key(e)[0], e.id))
    kept = newest_first[:cap]
    events.extend(cleared_event(entry, (REASON_CAP,)) for entry in newest_first[cap:])
    return tuple(sorted(kept, key=_sort_key)), tuple(events)


def empty_journal(root: str, key: str, now_ms: int) -> PendingJournal:
    """A journal with no entries for the workspace ``root`` (whose hashed key is ``key``)."""
    return PendingJournal(workspace=WorkspaceRef(root=root, key=key), updated_at=iso_from_ms(now_ms))


def normalize_journal(
    journal: PendingJournal, now_ms: int
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """Apply the retention rules; ``updatedAt`` becomes ``now``. Idempotent: a second call removes
    nothing and emits nothing."""
    entries, events = _retain(journal.entries, now_ms)
    return replace(journal, version=1, entries=entries, updated_at=iso_from_ms(now_ms)), events


def append_pending(
    journal: PendingJournal,
    entries: Sequence[MemoryEntry],
    now_ms: int,
    *,
    session_id: str | None = None,
) -> tuple[PendingJournal, tuple[EvidenceInput, ...]]:
    """Add ``entries`` and re-apply retention. Emits ``pending_memory_appended`` for each entry, then
    a ``pending_memory_cleared`` for each entry retention removed (a new duplicate, an entry pushed
    out by the cap, ...). Appending nothing changes nothing."""
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
    that the damage does not silently drop it. Emits ``pending_memory_appended`` for each one (and
    whatever retention then clears); a journal that lacks nothing is returned unchanged."""
    present = {journal_key(e) for e in journal.entries}
    missing: list[MemoryEntry] = []
    for session in sessions:
        for memory in session.pending_memories:
            owner = owner_of(memory) or session.session_id
            owned = replace(memory, pending_owner_session_id=owner)
            key = journal_key(owned)
            if key not in present:
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
