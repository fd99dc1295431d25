"""Steps the operations share: activity stamps and dormancy, the session a step works on, idle owners
and prunable sessions, tombstones lifted by an explicit request, the frozen block of a cache epoch,
and the text a host injects (docs/decisions.md#host-events, docs/decisions.md#cache-epochs)."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from domain import evidence
from domain.caches import Caches
from domain.emitted import NOTHING, Emitted, events
from domain.enums import MemoryStatus
from domain.host_instructions import HostContext, covered_among, instruction_index
from domain.leave_out import render_leaving_out
from domain.limits import CacheLimits, PendingJournalLimits, SessionFileLimits
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.operations.use import record_cues
from domain.operations.values import Snapshot
from domain.pending import is_request, journal_key, promoted_for, without_records_of
from domain.render import RenderResult, number_block
from domain.retention import DEFAULT_TUNING, Tuning, mark_activity
from domain.search.disclosure import tagged_block
from domain.session import empty_session, render_hot_state
from domain.timeutil import iso_from_ms, parse_iso_ms


def touch(session: SessionState, now_ms: int) -> SessionState:
    return replace(session, last_activity_ms=now_ms, updated_at=iso_from_ms(now_ms))


#: Message and tool observations refresh ``lastActivityAt`` at most this often, so a busy session
#: does not rewrite the workspace store on every tool call.
ACTIVITY_STAMP_INTERVAL_MS = 86_400_000


def note_activity(
    store: WorkspaceStore, now_ms: int, *, always: bool = True, tuning: Tuning = DEFAULT_TUNING
) -> tuple[WorkspaceStore, Emitted]:
    """Record activity at ``now_ms``; a dormant stretch that just ended is kept first
    (docs/decisions.md#d3), with its event. ``always=False``: at most once a day."""
    if not always:
        last = parse_iso_ms(store.last_activity_at) if store.last_activity_at else None
        if last is not None and now_ms - last < ACTIVITY_STAMP_INTERVAL_MS:
            return store, NOTHING
    stamped, span = mark_activity(store, now_ms, tuning)
    if span is None:
        return stamped, NOTHING
    return stamped, events((evidence.dormancy_recorded(span.start, span.end),))


def session_and_journal(snap: Snapshot, session_id: str, now_ms: int) -> tuple[SessionState, PendingJournal]:
    """The session's state and the journal this operation starts from.

    The session drops its copies of the requests that another promotion took out of the journal —
    adopted from it while it was idle (docs/decisions.md#d7) or promoted early over the journal's
    bound (docs/decisions.md#pending-journal-bound) — which the journal records; the journal then
    forgets this session's records. A copy whose journal entry is gone without such a record is
    kept (docs/decisions.md#pending-journal-bound): it is all that is left of the request, and the
    session's end promotes it. A session that dropped copies ends its cache epoch, so that its next
    start renders the block that now holds them (docs/decisions.md#d22)."""
    journal = without_records_of(snap.journal, session_id)
    if snap.session is None:
        return empty_session(session_id, now_ms), journal
    session = snap.session
    promoted = promoted_for(snap.journal, session_id) if session.pending_memories else frozenset()
    if not promoted:
        return session, journal
    in_journal = {journal_key(e) for e in snap.journal.entries}
    kept = tuple(m for m in session.pending_memories if m.id not in promoted or journal_key(m) in in_journal)
    if len(kept) == len(session.pending_memories):
        return session, journal
    return replace(session, pending_memories=kept, frozen_at_ms=None), journal


def _last_activity(session: SessionState) -> float:
    seen = session.last_activity_ms
    if seen is None:
        parsed = parse_iso_ms(session.updated_at)
        seen = parsed if parsed is not None else 0
    return float(seen)


def prunable_sessions(
    journal: PendingJournal, others: Sequence[SessionState], session_id: str | None, now_ms: int
) -> tuple[tuple[str, ...], tuple[EvidenceInput, ...]]:
    """Sessions that never ended: idle for a week and with nothing left in the journal (their
    pending memories were adopted after 24 hours, docs/decisions.md#d7). Their files would otherwise
    accumulate forever; each one pruned gets a ``session_pruned`` event."""
    limit = SessionFileLimits.PRUNE_IDLE_AFTER_MS
    owners = {e.pending_owner_session_id for e in journal.entries}
    pruned = tuple(
        sorted(
            other.session_id
            for other in others
            if other.session_id != session_id
            and other.session_id not in owners
            and now_ms - _last_activity(other) > limit
        )
    )
    found = tuple(
        evidence.session_pruned(other.session_id, len(other.pending_memories))
        for other in others
        if other.session_id in pruned
    )
    return pruned, found


def idle_owner_ids(
    journal: PendingJournal,
    others: Sequence[SessionState],
    session_id: str | None,
    now_ms: int,
    *,
    limit: int = PendingJournalLimits.ORPHAN_ADOPT_AFTER_MS,
    requests_only: bool = False,
) -> tuple[str, ...]:
    """Owners of journal entries whose sessions have been idle for more than ``limit`` (24 hours,
    docs/decisions.md#d7). ``requests_only``: only owners whose every entry is a request a person
    made (the shorter limit of a session start, docs/decisions.md#d22).

    A session's last activity is its ``lastActivityMs`` (else its ``updatedAt``); an owner without a
    session file counts from the newest of its entries' timestamps."""
    known = {other.session_id: _last_activity(other) for other in others}
    latest_entry: dict[str, float] = {}
    not_requests: set[str] = set()
    for entry in journal.entries:
        owner = entry.pending_owner_session_id
        if owner is None or owner == session_id:
            continue
        if not is_request(entry):
            not_requests.add(owner)
        stamp = parse_iso_ms(entry.updated_at) or parse_iso_ms(entry.created_at) or 0
        latest_entry[owner] = max(latest_entry.get(owner, 0.0), float(stamp))
    idle = [
        owner
        for owner, newest in latest_entry.items()
        if now_ms - known.get(owner, newest) > limit and not (requests_only and owner in not_requests)
    ]
    return tuple(sorted(idle))


def adoptable_owner_ids(
    journal: PendingJournal, others: Sequence[SessionState], session_id: str | None, now_ms: int
) -> tuple[str, ...]:
    """The owners a session start adopts (docs/decisions.md#d22): any owner idle for 24 hours, and an
    owner of explicit requests only, idle for :attr:`PendingJournalLimits.REQUEST_ADOPT_AFTER_MS`."""
    day = idle_owner_ids(journal, others, session_id, now_ms)
    soon = idle_owner_ids(
        journal,
        others,
        session_id,
        now_ms,
        limit=PendingJournalLimits.REQUEST_ADOPT_AFTER_MS,
        requests_only=True,
    )
    return tuple(sorted({*day, *soon}))


def taken_from(session: SessionState | None, journal: PendingJournal) -> bool:
    """Whether another promotion took one of ``session``'s pending requests into the store (adopted,
    or promoted early over the journal's bound): its block must be rendered again to show it
    (docs/decisions.md#d22)."""
    if session is None or not session.pending_memories:
        return False
    promoted = promoted_for(journal, session.session_id)
    return bool(promoted) and any(m.id in promoted for m in session.pending_memories)


def stamp_rendered(store: WorkspaceStore, rendered: Sequence[MemoryEntry], now_ms: int) -> WorkspaceStore:
    """Remember when each entry was last shown (the archive rule of docs/decisions.md#d2 looks at it)."""
    ids = {e.id for e in rendered}
    if not ids:
        return store
    entries = list(store.entries)
    positions = [i for i, e in enumerate(entries) if e.id in ids and e.last_rendered_at != now_ms]
    for i in positions:
        entries[i] = replace(entries[i], last_rendered_at=now_ms)
    return replace(store, entries=tuple(entries))


def render_block(
    store: WorkspaceStore,
    now_ms: int,
    tuning: Tuning = DEFAULT_TUNING,
    caches: Caches | None = None,
    host: HostContext | None = None,
) -> RenderResult:
    """The block a new cache epoch shows: the store's render, without what the host's instruction
    files already say and without the weaker of two near-duplicates (docs/decisions.md#d22), with a
    ``render_omitted`` event for each memory left out."""
    index = instruction_index(host)
    result, left_out = render_leaving_out(
        store, now_ms, lambda shown: covered_among(shown, index), tuning, caches
    )
    return replace(result, emitted=result.emitted + events(left_out)) if left_out else result


def freeze(
    store: WorkspaceStore,
    session: SessionState,
    now_ms: int,
    tuning: Tuning,
    caches: Caches,
    shared: Sequence[MemoryEntry] = (),
    host: HostContext | None = None,
    *,
    tags: bool = True,
) -> tuple[WorkspaceStore, SessionState, RenderResult]:
    """Start a new cache epoch: render the block once and keep it, byte for byte, with the session.
    ``shared`` (the user's own memories) compete for the block too, except where the workspace holds
    the same memory itself (docs/decisions.md#d17); what the host's instruction files already say is
    left out, and a near-duplicate shows once (docs/decisions.md#d22). ``tags``: each entry with its
    short id and a closing line (docs/decisions.md#d16), else the reference's block."""
    result = render_block(with_shared(store, shared), now_ms, tuning, caches, host)
    frozen = replace(
        session,
        epoch=session.epoch + 1,
        frozen_block=tagged_block(result, store, now_ms) if tags else result.text,
        numbered_block=number_block(result, now_ms),
        block_ids=tuple(e.id for e in result.rendered),
        frozen_at_ms=now_ms,
    )
    frozen = record_cues(frozen, result.rendered, store.entries)  # what use looks for (docs/decisions.md#d19)
    return stamp_rendered(store, result.rendered, now_ms), frozen, result


def with_shared(store: WorkspaceStore, shared: Sequence[MemoryEntry]) -> WorkspaceStore:
    """``store`` with the active ``shared`` memories whose exact key it does not hold (in any status:
    a user memory forgotten in this workspace stays forgotten here)."""
    if not shared:
        return store
    from domain.keys import exact_key

    held = {exact_key(e) for e in store.entries}
    extra = tuple(e for e in shared if e.status is MemoryStatus.ACTIVE and exact_key(e) not in held)
    return replace(store, entries=store.entries + extra) if extra else store


def epoch_is_fresh(session: SessionState | None, now_ms: int) -> bool:
    if session is None or session.frozen_at_ms is None or session.frozen_block is None:
        return False
    return now_ms - session.frozen_at_ms <= CacheLimits.FROZEN_TTL_MS


def append_processed(session: SessionState, message_id: str) -> SessionState:
    ids = (*session.processed_message_ids, message_id)
    return replace(session, processed_message_ids=ids[-CacheLimits.MAX_PROCESSED_MESSAGES_PER_SESSION :])


def context_text(session: SessionState | None, workspace_root: str) -> str:
    """What a host injects: the frozen workspace block first, then the current hot state."""
    if session is None or session.parent_session_id is not None:
        return ""
    parts = [session.frozen_block or "", render_hot_state(session, workspace_root)]
    return "\n\n".join(p for p in parts if p)


def compaction_prompt(session: SessionState | None, workspace_root: str, other_context: str = "") -> str:
    """The prompt a host sends for compaction: the fixed instructions, then the background context —
    other plugins' context, the block with ``[M1]``-style labels (docs/decisions.md#d10), and the hot
    state."""
    block = ""
    hot = ""
    if session is not None and session.parent_session_id is None:
        block = session.numbered_block or session.frozen_block or ""
        hot = render_hot_state(session, workspace_root)
    from domain.extraction import build_compaction_prompt

    return build_compaction_prompt("\n\n".join(p for p in (other_context, block, hot) if p))
