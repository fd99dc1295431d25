"""The five core operations every host shares (:mod:`domain.operations`): ``open_session``,
``observe_user_message``, ``observe_tool_result``, ``observe_compaction`` and ``end_session``."""

from __future__ import annotations

from msgspec.structs import replace

from domain import evidence
from domain.emitted import NOTHING, Emitted, events
from domain.enums import DecisionSource, MemoryType
from domain.host_instructions import HostContext
from domain.limits import DAY_MS, CacheLimits
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.operations.common import (
    adoptable_owner_ids,
    append_processed,
    context_text,
    epoch_is_fresh,
    freeze,
    idle_owner_ids,
    note_activity,
    prunable_sessions,
    session_and_journal,
    taken_from,
    touch,
)
from domain.operations.supersession import link_retirements, retire_for_requests
from domain.operations.use import WRITING_TOOLS, reinforce_from_use, tool_input, use_signals
from domain.operations.values import OpResult, Snapshot, is_sub_agent, operation, unchanged
from domain.pending import append_pending, without_records_of
from domain.promotion import PromotionResult, promote, promote_over_bound
from domain.session import (
    ToolEvent,
    add_pending_memories,
    add_recent_decision,
    observe_tool,
    remove_pending_memories,
)
from domain.text import may_hold_memory_request

# ``domain.extraction`` compiles many patterns at import; only the operations that read user text or
# a compaction summary import it, so the frequent tool-result hook starts faster.


def _resume(session: SessionState | None, now_ms: int) -> tuple[SessionState | None, Emitted]:
    """A session that ended with its hot state kept (``end_session(keep_hot_state=True)``) is live
    again. Within the resume window its active files, open errors and recent decisions come back as
    they were; past it they are dropped, with an event."""
    if session is None or session.ended_at_ms is None:
        return session, NOTHING
    if now_ms - session.ended_at_ms <= CacheLimits.RESUME_HOT_STATE_TTL_MS:
        return replace(session, ended_at_ms=None), NOTHING
    expired = evidence.hot_state_expired(
        len(session.active_files), len(session.open_errors), round((now_ms - session.ended_at_ms) / DAY_MS, 3)
    )
    dropped = replace(session, ended_at_ms=None, active_files=(), open_errors=(), recent_decisions=())
    return dropped, events((expired,))


@operation
def open_session(
    snap: Snapshot,
    session_id: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
    host: HostContext | None = None,
) -> OpResult:
    """Open (or refresh) a session's cache epoch and return the context to inject. The block leaves
    out what the host's instruction files already say (``host``, docs/decisions.md#d22).

    Within a fresh epoch this is a no-op that returns the frozen text again, byte for byte."""
    if is_sub_agent(snap.session, parent_session_id):
        return unchanged(snap)
    root = snap.store.workspace.root
    resumed, resume = _resume(snap.session, now_ms)
    # a session that comes back after its end starts a new epoch: its end promoted what it owned
    was_ended = snap.session is not None and snap.session.ended_at_ms is not None
    opened = replace(snap, session=resumed)
    # a session whose requests another promotion took renders its block again, to show them
    if (
        not was_ended
        and epoch_is_fresh(opened.session, now_ms)
        and not taken_from(opened.session, snap.journal)
    ):
        return replace(
            unchanged(opened, context_text(opened.session, root)), emitted=resume.with_session(session_id)
        )
    session, journal = session_and_journal(opened, session_id, now_ms)
    store, activity = note_activity(opened.store, now_ms, tuning=opened.tuning)
    promoted = promote(
        store,
        journal,
        (),
        now_ms,
        session_id=None,
        include_owned=False,
        include_unowned=True,
        idle_owner_ids=adoptable_owner_ids(journal, opened.others, session_id, now_ms),
        archive=opened.archive,
        tuning=opened.tuning,
        caches=opened.caches,
    )
    # a journal rebuilt from the sessions may be over its bound (docs/decisions.md#pending-journal-bound)
    early = _promote_over_bound(opened, promoted.store, promoted.journal, session_id, now_ms)
    session = touch(remove_pending_memories(session, early.cleared_keys), now_ms)
    store, session, rendered = freeze(
        early.store,
        session,
        now_ms,
        opened.tuning,
        opened.caches,
        opened.shared,
        host,
        tags=opened.disclosure.tags,
    )
    journal = early.journal
    pruned, pruned_events = prunable_sessions(journal, opened.others, session_id, now_ms)
    for gone in pruned:
        journal = without_records_of(journal, gone)
    emitted = resume + activity + promoted.emitted + early.emitted + rendered.emitted
    return OpResult(
        store=store,
        journal=journal,
        session=session,
        pruned_sessions=pruned,
        emitted=emitted.with_session(session_id) + events(pruned_events),
        output=context_text(session, root),
    )


def _promote_over_bound(
    snap: Snapshot, store: WorkspaceStore, journal: PendingJournal, session_id: str, now_ms: int
) -> PromotionResult:
    """The requests over the journal's bound promoted early (docs/decisions.md#pending-journal-bound)."""
    return promote_over_bound(
        store,
        journal,
        now_ms,
        session_id=session_id,
        archive=snap.archive,
        tuning=snap.tuning,
        caches=snap.caches,
    )


@operation
def observe_user_message(
    snap: Snapshot,
    session_id: str,
    message_id: str,
    text: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
) -> OpResult:
    """Explicit memory requests become pending memories owned by this session, and requests to forget
    or correct a stored memory are carried out (the output is the note about them,
    docs/decisions.md#d19); the same message id twice is a no-op. Requests pushed over the journal's
    bound are promoted early (docs/decisions.md#pending-journal-bound)."""
    if is_sub_agent(snap.session, parent_session_id):
        return unchanged(snap)
    if snap.session is not None and message_id in snap.session.processed_message_ids:
        return unchanged(snap)
    from domain.operations.conversation import correct_in_conversation

    corrected = correct_in_conversation(snap, text, now_ms)  # forget and correct (docs/decisions.md#d19)
    fixed = corrected.result
    snap, text = (
        replace(snap, store=fixed.store, journal=fixed.journal, session=fixed.session),
        corrected.text,
    )
    session, journal = session_and_journal(snap, session_id, now_ms)
    session = touch(session, now_ms)
    store, activity = note_activity(snap.store, now_ms, always=False, tuning=snap.tuning)
    activity = corrected.result.emitted + activity
    found: tuple[MemoryEntry, ...] = ()
    noted: tuple[EvidenceInput, ...] = ()
    if may_hold_memory_request(text):  # else nothing to extract, and no trigger pattern to compile
        from domain.extraction import extract_explicit

        extracted = extract_explicit(text, now_ms, id_seed=f"{session_id}\x1f{message_id}")
        found, noted = extracted.entries, extracted.events
    owned = tuple(
        replace(e, pending_owner_session_id=session_id, pending_message_id=message_id) for e in found
    )
    emitted = activity + events(replace(e, message_id=message_id) for e in noted)
    if owned:
        journal, appended = append_pending(journal, owned, now_ms, session_id=session_id)
        emitted += events(replace(e, message_id=e.message_id or message_id) for e in appended)
        session = add_pending_memories(session, owned)
        for entry in owned:
            if entry.type is MemoryType.DECISION:
                session = add_recent_decision(session, entry.text, DecisionSource.USER, now_ms)
    # what this request (or a journal rebuilt from the sessions) pushed over the journal's bound
    early = _promote_over_bound(snap, store, journal, session_id, now_ms)
    store, journal = early.store, early.journal
    session = remove_pending_memories(session, early.cleared_keys)
    emitted += early.emitted
    session = append_processed(session, message_id)
    return OpResult(
        store=store,
        journal=journal,
        session=session,
        emitted=emitted.with_session(session_id),
        output=corrected.note,
    )


@operation
def observe_tool_result(
    snap: Snapshot,
    session_id: str,
    tool_event: ToolEvent,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
) -> OpResult:
    """Active files and open errors follow the agent's tool calls, and a memory shown to the session
    that the call's input uses is reinforced (docs/decisions.md#d19)."""
    if is_sub_agent(snap.session, parent_session_id):
        return unchanged(snap)
    session, journal = session_and_journal(snap, session_id, now_ms)
    session = touch(observe_tool(session, tool_event, snap.store.workspace.root, now_ms), now_ms)
    store, activity = note_activity(snap.store, now_ms, always=False, tuning=snap.tuning)
    given = tool_input(tool_event)
    writing = tool_event.tool in WRITING_TOOLS
    uses = use_signals(session, given.acting if writing else given.whole, writing=writing, place=given.place)
    store, session, used = reinforce_from_use(
        store, session, uses, f"tool:{tool_event.tool}", now_ms, snap.tuning
    )
    emitted = (activity + events(used)).with_session(session_id)
    return OpResult(store=store, journal=journal, session=session, emitted=emitted)


@operation
def observe_compaction(
    snap: Snapshot,
    session_id: str,
    summary: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
    summary_id: str | None = None,
    host: HostContext | None = None,
) -> OpResult:
    """Candidates from the host's compaction summary join the journal (unowned), everything pending
    for this session is promoted (and other sessions' requests over the journal's bound,
    docs/decisions.md#pending-journal-bound), and a new cache epoch starts even when nothing was
    pending (docs/decisions.md#b13).

    ``summary_id`` (a host's id for this summary, or a hash of it) makes a second observation of the
    same summary a no-op. An empty summary still promotes and opens an epoch, and leaves a
    ``compaction_summary_missing`` event: a compaction whose candidates could not be read is never
    a silent loss."""
    if is_sub_agent(snap.session, parent_session_id):
        return unchanged(snap)
    seen = snap.session.processed_message_ids if snap.session is not None else ()
    if summary_id is not None and summary_id in seen:
        return unchanged(snap)
    session, journal = session_and_journal(snap, session_id, now_ms)
    session = touch(session, now_ms)
    if summary_id is not None:
        session = append_processed(session, summary_id)
    from domain.extraction import parse_compaction_candidates

    parsed = parse_compaction_candidates(
        summary,
        now_ms,
        workspace_key=snap.store.workspace.key,
        workspace_root_hash=snap.workspace_root_hash,
    )
    emitted = Emitted(events=parsed.events, rejections=parsed.rejections)
    if not summary.strip():
        emitted += events((evidence.summary_missing(),))
    if parsed.entries:
        journal, appended = append_pending(journal, parsed.entries, now_ms)
        emitted += events(appended)
    store, activity = note_activity(snap.store, now_ms, tuning=snap.tuning)
    by_id = {e.id: e for e in parsed.entries}
    requests = [(by_id[r.memory_id], r.label) for r in parsed.supersede_requests if r.memory_id in by_id]
    store, retired, refused = retire_for_requests(store, session, requests, now_ms)
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
        caches=snap.caches,
    )
    session = remove_pending_memories(session, promoted.cleared_keys)
    store, linked = link_retirements(promoted.store, retired)
    early = _promote_over_bound(snap, store, promoted.journal, session_id, now_ms)
    session = remove_pending_memories(session, early.cleared_keys)
    store, session, rendered = freeze(
        early.store, session, now_ms, snap.tuning, snap.caches, snap.shared, host, tags=snap.disclosure.tags
    )
    emitted += activity + promoted.emitted + events(refused) + events(linked)
    emitted += early.emitted + rendered.emitted
    return OpResult(
        store=store, journal=early.journal, session=session, emitted=emitted.with_session(session_id)
    )


@operation
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
        return unchanged(snap)
    if keep_hot_state and snap.session is not None:
        return _suspend(snap, snap.session, session_id, now_ms)
    pending = snap.session.pending_memories if snap.session is not None else ()
    store, activity = note_activity(snap.store, now_ms, tuning=snap.tuning)
    promoted = promote(
        store,
        without_records_of(snap.journal, session_id),
        pending,
        now_ms,
        session_id=session_id,
        include_owned=True,
        include_unowned=False,
        archive=snap.archive,
        tuning=snap.tuning,
        caches=snap.caches,
    )
    return OpResult(
        store=promoted.store,
        journal=promoted.journal,
        session=None,
        delete_session=True,
        emitted=(activity + promoted.emitted).with_session(session_id),
    )


def _suspend(snap: Snapshot, session: SessionState, session_id: str, now_ms: int) -> OpResult:
    ended = end_session(snap, session_id, now_ms)
    kept = touch(replace(session, pending_memories=(), ended_at_ms=now_ms), now_ms)
    suspended = evidence.session_suspended(session_id, len(kept.active_files), len(kept.open_errors))
    return replace(ended, session=kept, delete_session=False).emitting(events((suspended,)))
