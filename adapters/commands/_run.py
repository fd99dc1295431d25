"""The one helper every mutating command uses: lock → read → pure operation → write → evidence.

``run_operation`` opens a workspace transaction, builds the :class:`~domain.operations.Snapshot` the
pure operation needs (the session, the other sessions for idle-owner adoption, the archive only when
the store has archive markers), calls the operation, writes back only the values that changed, and
appends the evidence, archive, migration-audit and rejection lines. Any exception before the end of
the ``with`` block leaves every file as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec.structs import replace

from adapters.paths import workspace_root_hash

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.operations import OpResult, Snapshot


def run_operation(
    ws: Workspace,
    now_ms: int,
    session_id: str | None,
    fn: Callable[[Snapshot], OpResult],
    *,
    with_others: bool = True,
    store_head: bool = False,
) -> OpResult:
    """Run the pure operation ``fn`` on a consistent snapshot of the workspace and persist its result.

    ``store_head``: try ``fn`` first on the store without its entries (for an operation that usually
    reads only the store's workspace and activity time, such as a message or a tool observation);
    when it changes the store, run it again on the full store — a pure operation gives the same
    result on the same values, so only the cheaper read differs."""
    from domain.operations import Snapshot

    with ws.transaction(now_ms) as tx:
        journal = tx.journal
        session = tx.session(session_id) if session_id is not None else None
        others = tuple(s for s in tx.sessions() if s.session_id != session_id) if with_others else ()
        head = tx.store_head() if store_head else None
        result = None
        if head is not None:
            snap = Snapshot(store=head, journal=journal, session=session, others=others)
            result = fn(snap)
            store = head
            if result.store is not head:
                result = None
        if result is None:
            store = tx.store
            archive = dict(tx.archive()) if store.archived else {}
            snap = Snapshot(store=store, journal=journal, session=session, others=others, archive=archive)
            result = fn(snap)
        if result.store != store:
            tx.put_store(result.store)
        if result.journal != journal:
            tx.put_journal(result.journal)
        if session_id is not None:
            if result.delete_session:
                if session is not None:
                    tx.delete_session(session_id)
            elif result.session is not None and result.session != session:
                tx.put_session(result.session)
        if result.events:
            tx.emit(result.events)
        if result.archived:
            tx.append_archive(result.archived)
        if result.audit:
            tx.append_migration_audit(result.audit)
        if result.rejections:
            root_hash = workspace_root_hash(ws.root)
            tx.append_rejections(
                replace(
                    r,
                    workspace_key=r.workspace_key or ws.key,
                    workspace_root_hash=r.workspace_root_hash or root_hash,
                )
                for r in result.rejections
            )
    return result
