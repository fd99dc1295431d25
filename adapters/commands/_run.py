"""The one helper every mutating command uses: lock → read → pure operation → write → evidence.

``run_operation`` opens a workspace transaction, builds the :class:`~domain.operations.Snapshot` the
pure operation needs (the session, the other sessions for idle-owner adoption, the archive only when
the store has archive markers), calls the operation, labels its rejection lines with the workspace,
and hands the result to :func:`domain.workspace_port.apply_result` with the transaction as the port:
only the values that changed are written back, with the evidence, archive, migration-audit and
rejection lines. Any exception before the end of the ``with`` block leaves every file as it was.
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
    from adapters.filestore import KIND_JOURNAL
    from domain.operations import Snapshot
    from domain.pending import rebuild_from_sessions
    from domain.workspace_port import apply_result

    with ws.transaction(now_ms) as tx:
        journal = tx.journal
        if KIND_JOURNAL in tx.damaged:
            # a damaged journal must not silently drop what the sessions still hold as pending
            journal, rebuilt = rebuild_from_sessions(journal, tx.sessions(), now_ms)
            tx.put_journal(journal)
            tx.emit(rebuilt)
        session = tx.session(session_id) if session_id is not None else None
        others = tuple(s for s in tx.sessions() if s.session_id != session_id) if with_others else ()
        head = tx.store_head() if store_head else None
        result = None
        if head is not None:
            snap = Snapshot(store=head, journal=journal, session=session, others=others)
            result = fn(snap)
            if result.store is not head:
                result = None
        if result is None:
            store = tx.store
            archive = dict(tx.archive()) if store.archived else {}
            snap = Snapshot(store=store, journal=journal, session=session, others=others, archive=archive)
            result = fn(snap)
        applied = result
        if result.rejections:
            # rejection lines name the workspace as the shell knows it (its key and root hash)
            root_hash = workspace_root_hash(ws.root)
            labelled = tuple(
                replace(
                    r,
                    workspace_key=r.workspace_key or ws.key,
                    workspace_root_hash=r.workspace_root_hash or root_hash,
                )
                for r in result.rejections
            )
            applied = replace(result, emitted=replace(result.emitted, rejections=labelled))
        apply_result(tx, snap, session_id, applied)
    return result
