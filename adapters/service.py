"""The one service every door calls (docs/decisions.md#d13): ``execute(workspace, command, now_ms)``.

The CLI, the Python API, ``workmem serve``, the MCP server, the host hooks and the hook server each
turn their input into a :data:`domain.commands.Command` and call :func:`execute`; nothing else opens a
workspace transaction (``tests/adapters/test_service.py`` checks it). One call is one transaction:
lock → read what the command reads (:func:`domain.commands.footprint`) → the pure
:func:`domain.commands.handle` → write what changed (:func:`domain.workspace_port.apply_result`) →
evidence → unlock. Any exception before the end of the transaction leaves every file as it was.

The speed state of the core (:class:`domain.caches.Caches`, docs/decisions.md#d14) is the caller's:
a long-lived caller passes the one it keeps for the workspace (``WorkingMemory`` keeps one per
instance; the hook server one per workspace, through :class:`CachesByWorkspace`), a one-shot caller
passes none and gets a fresh one. It is used only inside the transaction, so the workspace lock,
which serialises every transaction on one workspace (the threads of one process too: each takes
``flock`` on a descriptor of its own), is what makes sharing it between threads safe.

Around the transaction the service keeps what is derived from the store current
(docs/architecture.md, "Derived state"): the steps of :data:`BEFORE` may widen a command before it
runs (a session start imports what changed in the shared projection first, and carries what the
host's instruction files say, docs/decisions.md#d22), and the updaters of
:data:`AFTER_COMMIT` run, in order, once it is committed (the projection's export, the hand-over of
``user`` memories). A derived step that fails never undoes or fails the command: it leaves one
warning, and the next sync catches up. Where a workspace shares nothing each step costs a ``stat``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from adapters import (
    freshness_steps,
    host_instructions,
    projection_steps,
    recall_lookup,
    search_index,
    user_scope,
)
from adapters.evidence_log import describe_os_error, warn
from adapters.paths import workspace_root_hash
from adapters.storage_io import KIND_JOURNAL, LazyArchive
from domain.caches import Caches
from domain.commands import Batch, Command, Compacted, OpenSession, footprint, handle
from domain.operations import OpResult, Snapshot
from domain.pending import rebuild_from_sessions
from domain.search.shortids import numbered
from domain.workspace_port import apply_result

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from adapters.transaction import Transaction
    from domain.model import MemoryEntry, PendingJournal

#: Steps that may widen a command before its transaction, in order.
BEFORE: Final[tuple[Callable[[Workspace, Command, int], Command], ...]] = (
    projection_steps.before,
    search_index.narrowed,
    recall_lookup.recalling,
    freshness_steps.before,
    host_instructions.before,
)

#: A command a derived step asks the service to run after the commit, and the workspace to run it on.
FollowUp = tuple["Workspace", Command]
#: Brings something derived from the store up to date after a commit; may ask for follow-up commands
#: (the hand-over of a ``user`` memory is a ``Remember`` in the user's store), which the service runs
#: itself, so no derived step calls the service back.
AfterCommit = Callable[["Workspace", Command, OpResult, int], "Sequence[FollowUp] | None"]

#: What is derived from the store, brought up to date after each commit, in order.
AFTER_COMMIT: Final[tuple[AfterCommit, ...]] = (
    projection_steps.after,
    search_index.after,
    user_scope.handover,
    freshness_steps.after,
)


def execute(ws: Workspace, command: Command, now_ms: int, caches: Caches | None = None) -> OpResult | None:
    """Run ``command`` on ``ws`` at ``now_ms`` in one transaction and keep what it changed. ``None``
    when the command reads and writes nothing (a sub-agent's event): no file is opened. ``caches``:
    the caller's speed state for this workspace (module docstring), else a fresh one.

    A ``user`` memory is kept in the user's own store, and an edit of an id the workspace does not
    know is tried there (docs/decisions.md#d17)."""
    if footprint(command) is None:
        return None
    ws = user_scope.routed(ws, command)
    for step in BEFORE:
        command = step(ws, command, now_ms)
    result = _transaction(ws, command, now_ms, caches)
    follow_ups = [f for update in AFTER_COMMIT for f in _derived(update, ws, command, result, now_ms)]
    for where, follow_up in follow_ups:
        execute(where, follow_up, now_ms)
    if user_scope.retry_in_user_store(ws, command, result):
        return execute(user_scope.user_workspace(ws), command, now_ms)
    return result


def preview(ws: Workspace, command: Command, now_ms: int, caches: Caches | None = None) -> OpResult | None:
    """What ``command`` would do, kept nowhere (a ``--dry-run``): the same pure step on what the files
    hold now, read without the lock; nothing is written and no derived step runs. ``None`` as for
    :func:`execute`."""
    reads = footprint(command)
    if reads is None:
        return None
    ws = user_scope.routed(ws, command)
    store = ws.read_store(now_ms).value
    snap = Snapshot(
        store=store,
        journal=ws.read_journal(now_ms).value,
        session=ws.read_session(reads.session_id).value if reads.session_id is not None else None,
        archive=LazyArchive(ws.read_archive, ws.paths.archive) if store.archived else {},
        caches=caches if caches is not None else Caches(),
    )
    return handle(snap, command, now_ms)


def _derived(
    update: AfterCommit,
    ws: Workspace,
    command: Command,
    result: OpResult,
    now_ms: int,
) -> Sequence[FollowUp]:
    """One derived update and the follow-ups it asks for; a failure is a warning, never the command's
    failure."""
    try:
        return update(ws, command, result, now_ms) or ()
    except Exception as exc:
        warn(f"derived state not updated ({describe_os_error(exc)}); `workmem sync` catches up")
        return ()


def _shows_block(command: Command) -> bool:
    steps = command.steps if isinstance(command, Batch) else (command,)
    return any(isinstance(c, OpenSession | Compacted) for c in steps)


def _transaction(ws: Workspace, command: Command, now_ms: int, caches: Caches | None) -> OpResult:
    """One transaction around :func:`domain.commands.handle`.

    A command that usually reads only the store's workspace and activity time (a message, a tool
    result) runs first on the store without its entries; when it changes the store it runs again on
    the full store — a pure step gives the same result on the same values, so only the read differs."""
    reads = footprint(command)
    assert reads is not None  # checked by execute; a widened command reads at least as much
    if caches is None:
        caches = Caches()
    shared: tuple[MemoryEntry, ...] = user_scope.shared_entries(ws, now_ms) if _shows_block(command) else ()
    settings = search_index.disclosure()
    with ws.transaction(now_ms) as tx:
        journal = _journal(tx, now_ms)
        session = tx.session(reads.session_id) if reads.session_id is not None else None
        others = (
            tuple(s for s in tx.sessions() if s.session_id != reads.session_id)
            if reads.other_sessions
            else ()
        )
        result: OpResult | None = None
        head = tx.store_head() if reads.store_head else None
        if head is not None:
            snap = Snapshot(
                store=head,
                journal=journal,
                session=session,
                others=others,
                caches=caches,
                shared=shared,
                disclosure=settings,
            )
            result = handle(snap, command, now_ms)
            if result.store is not head:
                result = None
        if result is None:
            store = tx.store
            archive = LazyArchive(tx.archive, ws.paths.archive) if store.archived else {}
            snap = Snapshot(
                store=store,
                journal=journal,
                session=session,
                others=others,
                archive=archive,
                caches=caches,
                shared=shared,
                disclosure=settings,
            )
            result = handle(snap, command, now_ms)
        result = _numbered(snap, result)
        apply_result(tx, snap, reads.session_id, _labelled(ws, result))
    return result


def _numbered(snap: Snapshot, result: OpResult) -> OpResult:
    """A store the command changed is written with every memory's short number
    (docs/decisions.md#d16)."""
    if result.store is snap.store:
        return result
    store = numbered(result.store)
    return result if store is result.store else replace(result, store=store)


def _journal(tx: Transaction, now_ms: int) -> PendingJournal:
    """The pending journal; a damaged one gets back what the sessions still hold as pending, so the
    damage never silently drops a pending memory."""
    journal = tx.journal
    if KIND_JOURNAL in tx.damaged:
        journal, rebuilt = rebuild_from_sessions(journal, tx.sessions(), now_ms)
        tx.put_journal(journal)
        tx.emit(rebuilt)
    return journal


def _labelled(ws: Workspace, result: OpResult) -> OpResult:
    """Rejection lines name the workspace as the shell knows it (its key and root hash)."""
    if not result.rejections:
        return result
    root_hash = workspace_root_hash(ws.root)
    labelled = tuple(
        replace(
            r,
            workspace_key=r.workspace_key or ws.key,
            workspace_root_hash=r.workspace_root_hash or root_hash,
        )
        for r in result.rejections
    )
    return replace(result, emitted=replace(result.emitted, rejections=labelled))


#: How many workspaces a :class:`CachesByWorkspace` keeps a cache for (the least recently used one goes).
MAX_CACHED_WORKSPACES: Final = 16


class CachesByWorkspace:
    """One :class:`~domain.caches.Caches` per workspace, for a long-lived process that serves several
    (the hook server). Looking one up is thread-safe; using it is safe only inside that workspace's
    transaction, which :func:`execute` does (module docstring)."""

    def __init__(self, limit: int = MAX_CACHED_WORKSPACES) -> None:
        # start-up time: only the long-lived hook server keeps caches per workspace (docs/performance.md)
        import threading

        self._limit = max(1, limit)
        self._lock = threading.Lock()
        self._by_key: OrderedDict[str, Caches] = OrderedDict()

    def of(self, ws: Workspace) -> Caches:
        """The cache of ``ws`` (by its directory: data home and workspace key), made on first use."""
        where = str(ws.paths.directory)
        with self._lock:
            found = self._by_key.get(where)
            if found is None:
                found = self._by_key[where] = Caches()
                while len(self._by_key) > self._limit:
                    self._by_key.popitem(last=False)
            else:
                self._by_key.move_to_end(where)
            return found
