"""The five core operations every host shares, plus the user's own commands on memories.

Each operation is a pure function ``(snapshot, input, now_ms) -> OpResult``: it receives the workspace
store, the pending journal and the session state as values, and returns the new values, the evidence
events it caused and, where there is one, the text to hand back to the host. The shell writes what
changed and appends the events (docs/architecture.md, "Data flow of one host event"; the operations
are described in docs/decisions.md#host-events).

1. ``open_session``     — closes a dormant stretch (docs/decisions.md#d3), promotes the unowned
                           backlog and the owned entries of idle sessions (docs/decisions.md#d7), and
                           freezes the workspace block for this session's cache epoch;
2. ``observe_user_message`` — explicit triggers → session pending + owned journal entries;
3. ``observe_tool_result``  — hot session state;
4. ``observe_compaction``   — candidates, promotion, ``(supersedes Mn)`` lines (docs/decisions.md#d10)
                              and a new epoch;
5. ``end_session``          — promotes the session's own pending memories and drops its state.

Sub-agent sessions (a session with a parent) get no injection and cause no writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace
from returns.result import Failure, Success

from domain import evidence
from domain.consolidation import MigrationAudit, normalize_store, restamped
from domain.ids import memory_id
from domain.keys import exact_key, key_hash
from domain.model import (
    CacheLimits,
    DecisionSource,
    EventType,
    EvidenceInput,
    Importance,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    Outcome,
    PendingJournal,
    PendingJournalLimits,
    Phase,
    RelationRole,
    SessionFileLimits,
    SessionState,
    Tombstone,
    WorkspaceStore,
)
from domain.pending import append_pending, journal_key
from domain.promotion import PromotionResult, promote
from domain.render import RenderResult, number_block, render_workspace_block
from domain.retention import DEFAULT_TUNING, Tuning, mark_activity
from domain.safety import GateReason, Rejected, admit, is_prompt_injection, redact
from domain.session import (
    ToolEvent,
    add_pending_memories,
    add_recent_decision,
    empty_session,
    observe_tool,
    remove_pending_memories,
    render_hot_state,
)
from domain.text import may_hold_memory_request
from domain.timeutil import iso_from_ms, parse_iso_ms

if TYPE_CHECKING:
    from domain.extraction import RejectionRecord

# ``domain.extraction`` compiles many patterns at import; only the operations that read user text or
# a compaction summary import it, so the frequent tool-result hook starts faster.

# ---------------------------------------------------------------------------------------------
# Values in and out
# ---------------------------------------------------------------------------------------------


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """What one operation may read. ``others`` are the other sessions of the workspace (used to find
    idle owners, docs/decisions.md#d7); ``archive`` maps archive-marker key hashes to archived entries
    (docs/decisions.md#d2)."""

    store: WorkspaceStore
    journal: PendingJournal
    session: SessionState | None = None
    others: tuple[SessionState, ...] = ()
    archive: dict[str, MemoryEntry] = msgspec.field(default_factory=dict)
    #: the shell's ``workspaceRootHash`` (it resolves the real path); labels rejection records.
    workspace_root_hash: str | None = None
    #: the retention and render parameters; hosts always use the defaults, the simulator varies them.
    tuning: Tuning = DEFAULT_TUNING


class OpResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one operation produced. ``session is None`` with ``delete_session`` means the session
    ends; the shell writes a value only when it differs from what it read."""

    store: WorkspaceStore
    journal: PendingJournal
    session: SessionState | None
    delete_session: bool = False
    #: other sessions whose files the shell deletes (idle for a week, nothing left pending)
    pruned_sessions: tuple[str, ...] = ()
    events: tuple[EvidenceInput, ...] = ()
    audit: tuple[MigrationAudit, ...] = ()
    archived: tuple[MemoryEntry, ...] = ()
    rejections: tuple[RejectionRecord, ...] = ()
    output: str = ""
    #: for user commands: "promoted", "absorbed", "rejected", "superseded", "forgotten", "restored", ...
    outcome: str = ""
    memory_id: str | None = None
    reasons: tuple[str, ...] = ()


def _unchanged(snap: Snapshot, output: str = "") -> OpResult:
    return OpResult(store=snap.store, journal=snap.journal, session=snap.session, output=output)


def is_sub_agent(session: SessionState | None, parent_session_id: str | None) -> bool:
    return parent_session_id is not None or (session is not None and session.parent_session_id is not None)


def _touch(session: SessionState, now_ms: int) -> SessionState:
    return replace(session, last_activity_ms=now_ms, updated_at=iso_from_ms(now_ms))


#: Message and tool observations refresh ``lastActivityAt`` at most this often, so a busy session
#: does not rewrite the workspace store on every tool call.
ACTIVITY_STAMP_INTERVAL_MS = 86_400_000


def _note_activity(
    store: WorkspaceStore,
    now_ms: int,
    events: list[EvidenceInput],
    *,
    always: bool = True,
    tuning: Tuning = DEFAULT_TUNING,
) -> WorkspaceStore:
    """Record activity at ``now_ms``; a dormant stretch that just ended is kept first
    (docs/decisions.md#d3)."""
    if not always:
        last = parse_iso_ms(store.last_activity_at) if store.last_activity_at else None
        if last is not None and now_ms - last < ACTIVITY_STAMP_INTERVAL_MS:
            return store
    stamped, span = mark_activity(store, now_ms, tuning)
    if span is not None:
        events.append(
            evidence.event(
                EventType.WORKSPACE_DORMANCY_RECORDED,
                Phase.STORAGE,
                Outcome.RECORDED,
                ("dormant_span_recorded",),
                details={"dormantDays": round((span.end - span.start) / 86_400_000, 3)},
            )
        )
    return stamped


def _session_or_new(snap: Snapshot, session_id: str, now_ms: int) -> SessionState:
    """The session's state, with pending memories that another session has meanwhile promoted
    (adoption of an idle owner, docs/decisions.md#d7) dropped: a pending memory lives on only while
    its owned journal copy does."""
    if snap.session is None:
        return empty_session(session_id, now_ms)
    session = snap.session
    if not session.pending_memories:
        return session
    in_journal = {journal_key(e) for e in snap.journal.entries}
    kept = tuple(
        m
        for m in session.pending_memories
        if m.pending_owner_session_id != session_id or journal_key(m) in in_journal
    )
    return session if len(kept) == len(session.pending_memories) else replace(session, pending_memories=kept)


# ---------------------------------------------------------------------------------------------
# Helpers shared by the operations
# ---------------------------------------------------------------------------------------------


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
    events = tuple(
        evidence.event(
            EventType.SESSION_PRUNED,
            Phase.LIFECYCLE,
            Outcome.REMOVED,
            ("idle_session_pruned",),
            details={"pendingAdopted": len(other.pending_memories)},
            session_id=other.session_id,
        )
        for other in others
        if other.session_id in pruned
    )
    return pruned, events


def idle_owner_ids(
    journal: PendingJournal, others: Sequence[SessionState], session_id: str | None, now_ms: int
) -> tuple[str, ...]:
    """Owners of journal entries whose sessions have been idle for more than 24 hours
    (docs/decisions.md#d7).

    A session's last activity is its ``lastActivityMs`` (else its ``updatedAt``); an owner without a
    session file counts from the newest of its entries' timestamps."""
    limit = PendingJournalLimits.ORPHAN_ADOPT_AFTER_MS
    known = {other.session_id: _last_activity(other) for other in others}
    latest_entry: dict[str, float] = {}
    for entry in journal.entries:
        owner = entry.pending_owner_session_id
        if owner is None or owner == session_id:
            continue
        stamp = parse_iso_ms(entry.updated_at) or parse_iso_ms(entry.created_at) or 0
        latest_entry[owner] = max(latest_entry.get(owner, 0.0), float(stamp))
    idle = [owner for owner, newest in latest_entry.items() if now_ms - known.get(owner, newest) > limit]
    return tuple(sorted(idle))


def _lift_tombstones(store: WorkspaceStore, entries: Sequence[MemoryEntry]) -> WorkspaceStore:
    """An explicit or manual request for a memory overrides an earlier forget (docs/decisions.md#d10):
    its tombstone goes. Compaction candidates stay blocked."""
    wanted = {
        key_hash(exact_key(e)) for e in entries if e.source in (MemorySource.EXPLICIT, MemorySource.MANUAL)
    }
    if not wanted or not store.tombstones:
        return store
    kept = tuple(t for t in store.tombstones if t.key_hash not in wanted)
    return store if len(kept) == len(store.tombstones) else replace(store, tombstones=kept)


def _stamp_rendered(store: WorkspaceStore, rendered: Sequence[MemoryEntry], now_ms: int) -> WorkspaceStore:
    """Remember when each entry was last shown (the archive rule of docs/decisions.md#d2 looks at it)."""
    ids = {e.id for e in rendered}
    if not ids:
        return store
    entries = list(store.entries)
    positions = [i for i, e in enumerate(entries) if e.id in ids and e.last_rendered_at != now_ms]
    for i in positions:
        entries[i] = replace(entries[i], last_rendered_at=now_ms)
    return restamped(store, replace(store, entries=tuple(entries)), positions)


def _freeze(
    store: WorkspaceStore, session: SessionState, now_ms: int, tuning: Tuning
) -> tuple[WorkspaceStore, SessionState, RenderResult]:
    """Start a new cache epoch: render the block once and keep it, byte for byte, with the session."""
    result = render_workspace_block(store, now_ms, tuning)
    frozen = replace(
        session,
        epoch=session.epoch + 1,
        frozen_block=result.text,
        numbered_block=number_block(result, now_ms),
        block_ids=tuple(e.id for e in result.rendered),
        frozen_at_ms=now_ms,
    )
    return _stamp_rendered(store, result.rendered, now_ms), frozen, result


def _epoch_is_fresh(session: SessionState | None, now_ms: int) -> bool:
    if session is None or session.frozen_at_ms is None or session.frozen_block is None:
        return False
    return now_ms - session.frozen_at_ms <= CacheLimits.FROZEN_TTL_MS


def _append_processed(session: SessionState, message_id: str) -> SessionState:
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


# ---------------------------------------------------------------------------------------------
# 1. open_session
# ---------------------------------------------------------------------------------------------


def _resume(
    session: SessionState | None, now_ms: int
) -> tuple[SessionState | None, tuple[EvidenceInput, ...]]:
    """A session that ended with its hot state kept (``end_session(keep_hot_state=True)``) is live
    again. Within the resume window its active files, open errors and recent decisions come back as
    they were; past it they are dropped, with an event."""
    if session is None or session.ended_at_ms is None:
        return session, ()
    if now_ms - session.ended_at_ms <= CacheLimits.RESUME_HOT_STATE_TTL_MS:
        return replace(session, ended_at_ms=None), ()
    expired = evidence.event(
        EventType.SESSION_HOT_STATE_EXPIRED,
        Phase.LIFECYCLE,
        Outcome.REMOVED,
        ("resume_window_passed",),
        details={
            "activeFiles": len(session.active_files),
            "openErrors": len(session.open_errors),
            "endedDaysAgo": round((now_ms - session.ended_at_ms) / 86_400_000, 3),
        },
    )
    dropped = replace(session, ended_at_ms=None, active_files=(), open_errors=(), recent_decisions=())
    return dropped, (expired,)


def open_session(
    snap: Snapshot, session_id: str, now_ms: int, *, parent_session_id: str | None = None
) -> OpResult:
    """Open (or refresh) a session's cache epoch and return the context to inject.

    Within a fresh epoch this is a no-op that returns the frozen text again, byte for byte."""
    if is_sub_agent(snap.session, parent_session_id):
        return _unchanged(snap)
    root = snap.store.workspace.root
    resumed, resume_events = _resume(snap.session, now_ms)
    # a session that comes back after its end starts a new epoch: its end promoted what it owned
    was_ended = snap.session is not None and snap.session.ended_at_ms is not None
    snap = replace(snap, session=resumed)
    if not was_ended and _epoch_is_fresh(snap.session, now_ms):
        unchanged = _unchanged(snap, context_text(snap.session, root))
        return replace(unchanged, events=evidence.with_session(resume_events, session_id))
    events: list[EvidenceInput] = list(resume_events)
    store = _note_activity(snap.store, now_ms, events, tuning=snap.tuning)
    idle = idle_owner_ids(snap.journal, snap.others, session_id, now_ms)
    promoted = promote(
        store,
        snap.journal,
        (),
        now_ms,
        session_id=None,
        include_owned=False,
        include_unowned=True,
        idle_owner_ids=idle,
        archive=snap.archive,
        tuning=snap.tuning,
    )
    events.extend(promoted.events)
    session = _touch(_session_or_new(snap, session_id, now_ms), now_ms)
    store, session, rendered = _freeze(promoted.store, session, now_ms, snap.tuning)
    events.extend(rendered.events)
    pruned, pruned_events = prunable_sessions(promoted.journal, snap.others, session_id, now_ms)
    return OpResult(
        store=store,
        journal=promoted.journal,
        session=session,
        pruned_sessions=pruned,
        events=(*evidence.with_session(events, session_id), *pruned_events),
        audit=promoted.audit,
        archived=promoted.archived,
        output=context_text(session, root),
    )


# ---------------------------------------------------------------------------------------------
# 2. observe_user_message
# ---------------------------------------------------------------------------------------------


def observe_user_message(
    snap: Snapshot,
    session_id: str,
    message_id: str,
    text: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
) -> OpResult:
    """Explicit memory requests become pending memories owned by this session; the same message id
    twice is a no-op."""
    if is_sub_agent(snap.session, parent_session_id):
        return _unchanged(snap)
    if snap.session is not None and message_id in snap.session.processed_message_ids:
        return _unchanged(snap)
    session = _touch(_session_or_new(snap, session_id, now_ms), now_ms)
    activity: list[EvidenceInput] = []
    store = _note_activity(snap.store, now_ms, activity, always=False, tuning=snap.tuning)
    found: tuple[MemoryEntry, ...] = ()
    noted: tuple[EvidenceInput, ...] = ()
    if may_hold_memory_request(text):  # else nothing to extract, and no trigger pattern to compile
        from domain.extraction import extract_explicit

        extracted = extract_explicit(text, now_ms, id_seed=f"{session_id}\x1f{message_id}")
        found, noted = extracted.entries, extracted.events
    owned = tuple(
        replace(e, pending_owner_session_id=session_id, pending_message_id=message_id) for e in found
    )
    events: list[EvidenceInput] = [*activity, *(replace(e, message_hash=message_id) for e in noted)]
    journal = snap.journal
    if owned:
        journal, appended = append_pending(journal, owned, now_ms, session_id=session_id)
        events.extend(replace(e, message_hash=e.message_hash or message_id) for e in appended)
        session = add_pending_memories(session, owned)
        for entry in owned:
            if entry.type is MemoryType.DECISION:
                session = add_recent_decision(session, entry.text, DecisionSource.USER, now_ms)
    session = _append_processed(session, message_id)
    return OpResult(
        store=store,
        journal=journal,
        session=session,
        events=evidence.with_session(events, session_id),
    )


# ---------------------------------------------------------------------------------------------
# 3. observe_tool_result
# ---------------------------------------------------------------------------------------------


def observe_tool_result(
    snap: Snapshot,
    session_id: str,
    tool_event: ToolEvent,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
) -> OpResult:
    """Active files and open errors follow the agent's tool calls."""
    if is_sub_agent(snap.session, parent_session_id):
        return _unchanged(snap)
    session = _session_or_new(snap, session_id, now_ms)
    session = _touch(observe_tool(session, tool_event, snap.store.workspace.root, now_ms), now_ms)
    events: list[EvidenceInput] = []
    store = _note_activity(snap.store, now_ms, events, always=False, tuning=snap.tuning)
    return OpResult(
        store=store,
        journal=snap.journal,
        session=session,
        events=evidence.with_session(events, session_id),
    )


# ---------------------------------------------------------------------------------------------
# 4. observe_compaction
# ---------------------------------------------------------------------------------------------


def _resolve_survivor(store: WorkspaceStore, entry: MemoryEntry) -> MemoryEntry | None:
    """The active store entry that now carries ``entry`` (itself, or the survivor that absorbed it)."""
    key = exact_key(entry)
    for candidate in store.entries:
        if candidate.status is MemoryStatus.SUPERSEDED:
            continue
        if candidate.id == entry.id or exact_key(candidate) == key:
            return candidate
        if candidate.absorbed_ids and entry.id in candidate.absorbed_ids:
            return candidate
    return None


def _retire(
    store: WorkspaceStore, old_id: str, now_ms: int, reason: str
) -> tuple[WorkspaceStore, MemoryEntry | None]:
    """Mark the active entry ``old_id`` superseded and tombstone its key, so that dedupe ignores it
    and extraction cannot bring it back (docs/decisions.md#d10). Returns the new store and the entry
    as it was (``None`` when there is no such active entry)."""
    old = next((e for e in store.entries if e.id == old_id), None)
    if old is None or old.status is MemoryStatus.SUPERSEDED:
        return store, None
    retired = replace(old, status=MemoryStatus.SUPERSEDED, updated_at=iso_from_ms(now_ms))
    tombstone = Tombstone(
        key_hash=key_hash(exact_key(old)),
        memory_id=old.id,
        reason=reason,
        created_at=iso_from_ms(now_ms),
    )
    tombstones = (*(t for t in store.tombstones if t.key_hash != tombstone.key_hash), tombstone)
    entries = tuple(retired if e.id == old_id else e for e in store.entries)
    return replace(store, entries=entries, tombstones=tombstones, updated_at=iso_from_ms(now_ms)), old


def _unretire(store: WorkspaceStore, old: MemoryEntry) -> WorkspaceStore:
    """Undo :func:`_retire` (the replacement did not make it into the store)."""
    entries = tuple(old if e.id == old.id else e for e in store.entries)
    gone = key_hash(exact_key(old))
    tombstones = tuple(t for t in store.tombstones if not (t.key_hash == gone and t.memory_id == old.id))
    return replace(store, entries=entries, tombstones=tombstones)


def _link_replacement(store: WorkspaceStore, old_id: str, new_id: str) -> WorkspaceStore:
    entries = tuple(replace(e, superseded_by=new_id) if e.id == old_id else e for e in store.entries)
    return replace(store, entries=entries)


def _superseded_event(store: WorkspaceStore, old_id: str, new_id: str, reason: str) -> EvidenceInput:
    old = next(e for e in store.entries if e.id == old_id)
    new = next((e for e in store.entries if e.id == new_id), None)
    return evidence.event(
        EventType.MEMORY_SUPERSEDED,
        Phase.LIFECYCLE,
        Outcome.SUPERSEDED,
        (reason,),
        memory=old,
        relations=(
            evidence.relation(RelationRole.SUPERSEDED, old),
            evidence.relation(RelationRole.SUPERSEDED_BY, new),
        ),
        text=old.text,
    )


def supersede_entry(
    store: WorkspaceStore, old_id: str, new_id: str | None, now_ms: int, reason: str
) -> tuple[WorkspaceStore, tuple[EvidenceInput, ...]]:
    """Mark ``old_id`` superseded by ``new_id`` (already in the store), or forgotten when ``None``;
    its key is tombstoned and the event recorded (docs/decisions.md#d10)."""
    store, old = _retire(store, old_id, now_ms, reason)
    if old is None:
        return store, ()
    if new_id is not None:
        store = _link_replacement(store, old_id, new_id)
        return store, (_superseded_event(store, old_id, new_id, reason),)
    forgotten = next(e for e in store.entries if e.id == old_id)
    return store, (
        evidence.event(
            EventType.MEMORY_FORGOTTEN,
            Phase.LIFECYCLE,
            Outcome.FORGOTTEN,
            (reason,),
            memory=forgotten,
            relations=(evidence.relation(RelationRole.REMOVED, forgotten),),
            text=old.text,
        ),
    )


def _supersede_rejected(entry: MemoryEntry, label: str, reason: str) -> EvidenceInput:
    return evidence.event(
        EventType.MEMORY_SUPERSEDED,
        Phase.LIFECYCLE,
        Outcome.REJECTED,
        (reason,),
        memory=entry,
        details={"label": label},
        text=entry.text,
    )


class _Retirement(msgspec.Struct, frozen=True):
    replacement: MemoryEntry  # the new candidate, as parsed
    label: str
    old: MemoryEntry  # the superseded entry as it was


def _retire_for_requests(
    store: WorkspaceStore,
    session: SessionState,
    requests: Sequence[tuple[MemoryEntry, str]],
    now_ms: int,
) -> tuple[WorkspaceStore, list[_Retirement], list[EvidenceInput]]:
    """Before promotion: retire every memory a ``(supersedes Mn)`` line names in the block this
    session was shown, so that its replacement is stored as a new memory, not merged into it."""
    retired: list[_Retirement] = []
    events: list[EvidenceInput] = []
    for new_entry, label in requests:
        index = int(label[1:]) - 1 if label[1:].isdigit() else -1
        old_id = session.block_ids[index] if 0 <= index < len(session.block_ids) else None
        if old_id is None:
            events.append(_supersede_rejected(new_entry, label, "unknown_block_label"))
            continue
        store, old = _retire(store, old_id, now_ms, "superseded_by_compaction")
        if old is None:
            events.append(_supersede_rejected(new_entry, label, "not_active"))
            continue
        retired.append(_Retirement(replacement=new_entry, label=label, old=old))
    return store, retired, events


def _link_retirements(
    store: WorkspaceStore, retired: Sequence[_Retirement]
) -> tuple[WorkspaceStore, list[EvidenceInput]]:
    """After promotion: point each retired memory at the entry that now carries its replacement,
    or bring it back when the replacement was not stored."""
    events: list[EvidenceInput] = []
    for item in retired:
        survivor = _resolve_survivor(store, item.replacement)
        if survivor is None or survivor.id == item.old.id:
            store = _unretire(store, item.old)
            events.append(_supersede_rejected(item.replacement, item.label, "replacement_not_stored"))
            continue
        store = _link_replacement(store, item.old.id, survivor.id)
        events.append(_superseded_event(store, item.old.id, survivor.id, "superseded_by_compaction"))
    return store, events


def observe_compaction(
    snap: Snapshot,
    session_id: str,
    summary: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
    summary_id: str | None = None,
) -> OpResult:
    """Candidates from the host's compaction summary join the journal (unowned), everything pending
    for this session is promoted, and a new cache epoch starts even when nothing was pending
    (docs/decisions.md#b13).

    ``summary_id`` (a host's id for this summary, or a hash of it) makes a second observation of the
    same summary a no-op. An empty summary still promotes and opens an epoch, and leaves a
    ``compaction_summary_missing`` event: a compaction whose candidates could not be read is never
    a silent loss."""
    if is_sub_agent(snap.session, parent_session_id):
        return _unchanged(snap)
    seen = snap.session.processed_message_ids if snap.session is not None else ()
    if summary_id is not None and summary_id in seen:
        return _unchanged(snap)
    session = _touch(_session_or_new(snap, session_id, now_ms), now_ms)
    if summary_id is not None:
        session = _append_processed(session, summary_id)
    from domain.extraction import parse_compaction_candidates

    parsed = parse_compaction_candidates(
        summary,
        now_ms,
        workspace_key=snap.store.workspace.key,
        workspace_root_hash=snap.workspace_root_hash,
    )
    events: list[EvidenceInput] = list(parsed.events)
    if not summary.strip():
        events.append(
            evidence.event(
                EventType.COMPACTION_SUMMARY_MISSING,
                Phase.EXTRACTION,
                Outcome.FAILED,
                ("summary_missing",),
            )
        )
    journal = snap.journal
    if parsed.entries:
        journal, appended = append_pending(journal, parsed.entries, now_ms)
        events.extend(appended)
    store = _note_activity(
        _lift_tombstones(snap.store, session.pending_memories), now_ms, events, tuning=snap.tuning
    )
    by_id = {e.id: e for e in parsed.entries}
    requests = [(by_id[r.memory_id], r.label) for r in parsed.supersede_requests if r.memory_id in by_id]
    store, retired, supersede_events = _retire_for_requests(store, session, requests, now_ms)
    promoted: PromotionResult = promote(
        store,
        journal,
        session.pending_memories,
        now_ms,
        session_id=session_id,
        include_owned=True,
        include_unowned=True,
        idle_owner_ids=idle_owner_ids(journal, snap.others, session_id, now_ms),
        archive=snap.archive,
        tuning=snap.tuning,
    )
    events.extend(promoted.events)
    session = remove_pending_memories(session, promoted.cleared_keys)
    store, linked = _link_retirements(promoted.store, retired)
    events.extend(supersede_events)
    events.extend(linked)
    store, session, rendered = _freeze(store, session, now_ms, snap.tuning)
    events.extend(rendered.events)
    return OpResult(
        store=store,
        journal=promoted.journal,
        session=session,
        events=evidence.with_session(events, session_id),
        audit=promoted.audit,
        archived=promoted.archived,
        rejections=parsed.rejections,
    )


# ---------------------------------------------------------------------------------------------
# 5. end_session
# ---------------------------------------------------------------------------------------------


def end_session(
    snap: Snapshot,
    session_id: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
    keep_hot_state: bool = False,
) -> OpResult:
    """Promote what this session still owns (nothing is orphaned, docs/decisions.md#d7), then drop its
    state.

    With ``keep_hot_state`` (a host whose sessions can be resumed under the same id) the state stays,
    marked ended, with its pending memories gone (promoted here, or recorded as not promoted): a
    resume within :attr:`CacheLimits.RESUME_HOT_STATE_TTL_MS` shows its hot state again (with a new
    epoch, so the block shows what the end promoted)."""
    if is_sub_agent(snap.session, parent_session_id):
        return _unchanged(snap)
    if keep_hot_state and snap.session is not None:
        return _suspend(snap, snap.session, session_id, now_ms)
    pending = snap.session.pending_memories if snap.session is not None else ()
    events: list[EvidenceInput] = []
    store = _note_activity(_lift_tombstones(snap.store, pending), now_ms, events, tuning=snap.tuning)
    promoted = promote(
        store,
        snap.journal,
        pending,
        now_ms,
        session_id=session_id,
        include_owned=True,
        include_unowned=False,
        archive=snap.archive,
        tuning=snap.tuning,
    )
    return OpResult(
        store=promoted.store,
        journal=promoted.journal,
        session=None,
        delete_session=True,
        events=evidence.with_session((*events, *promoted.events), session_id),
        audit=promoted.audit,
        archived=promoted.archived,
    )


def _suspend(snap: Snapshot, session: SessionState, session_id: str, now_ms: int) -> OpResult:
    ended = end_session(snap, session_id, now_ms)
    kept = _touch(replace(session, pending_memories=(), ended_at_ms=now_ms), now_ms)
    suspended = evidence.event(
        EventType.SESSION_SUSPENDED,
        Phase.LIFECYCLE,
        Outcome.RECORDED,
        ("hot_state_kept_for_resume",),
        details={"activeFiles": len(kept.active_files), "openErrors": len(kept.open_errors)},
        session_id=session_id,
    )
    return replace(ended, session=kept, delete_session=False, events=(*ended.events, suspended))


# ---------------------------------------------------------------------------------------------
# The user's own commands: remember, forget, supersede, restore
# ---------------------------------------------------------------------------------------------


def _classify_outcome(result: PromotionResult, key: str) -> str:
    accounting = result.accounting
    for name, keys in (
        ("promoted", accounting.promoted),
        ("absorbed", accounting.absorbed),
        ("superseded", accounting.superseded),
        ("rejected", accounting.rejected),
    ):
        if key in keys:
            return name
    return "rejected"


def remember(
    snap: Snapshot,
    text: str,
    type_: MemoryType,
    now_ms: int,
    *,
    importance: Importance | None = None,
    rationale: str | None = None,
) -> OpResult:
    """A manual memory (source ``manual``): through the safety gate, then straight into promotion.
    A rationale is shown in every future prompt too, so it passes the same injection check."""
    gated = admit(type_, text, source=MemorySource.MANUAL)
    if isinstance(gated, Success) and rationale is not None and is_prompt_injection(rationale):
        gated = Failure(
            Rejected(text=redact(text), reasons=(GateReason.PROMPT_INJECTION,), from_quality_gate=False)
        )
    match gated:
        case Success(str() as body):
            pass
        case Failure(Rejected() as failure):
            return OpResult(
                store=snap.store,
                journal=snap.journal,
                session=snap.session,
                events=(
                    evidence.event(
                        EventType.EXPLICIT_MEMORY_IGNORED,
                        Phase.EXPLICIT,
                        Outcome.REJECTED,
                        failure.reasons,
                        text=failure.text,
                        preview_limit=80,
                    ),
                ),
                outcome="rejected",
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
    )
    store = _lift_tombstones(snap.store, (entry,))
    result = promote(
        store,
        snap.journal,
        (entry,),
        now_ms,
        session_id=None,
        include_owned=False,
        include_unowned=False,
        archive=snap.archive,
        tuning=snap.tuning,
    )
    outcome = _classify_outcome(result, exact_key(entry))
    survivor = _resolve_survivor(result.store, entry)
    return OpResult(
        store=result.store,
        journal=result.journal,
        session=snap.session,
        events=result.events,
        audit=result.audit,
        archived=result.archived,
        outcome=outcome,
        memory_id=survivor.id if survivor is not None else entry.id,
    )


def _stale_after_days(type_: MemoryType) -> int | None:
    from domain.extraction import stale_after_days_for

    return stale_after_days_for(type_)


def forget(snap: Snapshot, target_id: str, now_ms: int) -> OpResult:
    """Stop using a memory without deleting it; a hash-only tombstone keeps extraction from
    bringing it back. Undo with :func:`restore`."""
    store, events = supersede_entry(snap.store, target_id, None, now_ms, "forgotten_by_user")
    return OpResult(
        store=store,
        journal=snap.journal,
        session=snap.session,
        events=events,
        outcome="forgotten" if events else "unknown",
        memory_id=target_id,
    )


def supersede(
    snap: Snapshot, target_id: str, new_text: str, now_ms: int, *, type_: MemoryType | None = None
) -> OpResult:
    """Replace a memory with a new manual one; the old one is kept, marked superseded.

    The old entry is retired *before* the new one is promoted, so that dedupe cannot merge the two
    when they name the same path or URL; if the new text is rejected nothing changes."""
    store, old = _retire(snap.store, target_id, now_ms, "superseded_by_user")
    if old is None:
        return replace(_unchanged(snap), outcome="unknown", memory_id=target_id)
    added = remember(replace(snap, store=store), new_text, type_ or old.type, now_ms)
    if added.outcome == "rejected":
        return replace(added, store=snap.store)
    survivor_id = added.memory_id
    if survivor_id is None or survivor_id == target_id:
        return replace(_unchanged(snap), outcome="unchanged", memory_id=target_id)
    store = _link_replacement(added.store, target_id, survivor_id)
    event = _superseded_event(store, target_id, survivor_id, "superseded_by_user")
    return replace(added, store=store, events=(*added.events, event), outcome="superseded")


def restore(snap: Snapshot, target_id: str, now_ms: int) -> OpResult:
    """Undo ``forget`` / ``supersede``: the memory is active again and its tombstone is lifted.
    An archived memory is brought back from the archive."""
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
        return replace(_unchanged(snap), outcome="unknown", memory_id=target_id)
    revived = replace(
        entry,
        status=MemoryStatus.ACTIVE,
        superseded_by=None,
        updated_at=iso_from_ms(now_ms),
        retention_clock=now_ms,
    )
    key = key_hash(exact_key(entry))
    store = replace(
        store,
        entries=tuple(revived if e.id == target_id else e for e in store.entries),
        tombstones=tuple(t for t in store.tombstones if t.key_hash != key),
        updated_at=iso_from_ms(now_ms),
    )
    normalized = normalize_store(store, now_ms, archive=snap.archive, tuning=snap.tuning)
    event = evidence.event(
        EventType.MEMORY_RESTORED,
        Phase.LIFECYCLE,
        Outcome.RESTORED,
        ("restored_by_user",),
        memory=revived,
        text=revived.text,
    )
    return OpResult(
        store=normalized.store,
        journal=snap.journal,
        session=snap.session,
        events=(event, *normalized.events),
        audit=normalized.audit,
        archived=normalized.archived,
        outcome="restored",
        memory_id=target_id,
    )
