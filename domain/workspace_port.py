"""The port a pure operation's result is applied through (docs/architecture.md, "The workspace port").

An operation reads a :class:`~domain.operations.Snapshot` and returns an
:class:`~domain.operations.OpResult`; :func:`apply_result` is the one place that decides what of that
result is kept: the store, journal and session when they differ from the snapshot, the session's end,
the pruned sessions, the evidence, the archived entries, the migration audit and the rejection lines.
A shell implements :class:`WorkspacePort`: the file transaction (``adapters.transaction``) writes to
disk, an in-memory implementation (the property tests) keeps values. Nothing here does any I/O itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from domain.consolidation import MigrationAudit
    from domain.extraction import RejectionRecord
    from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
    from domain.operations import OpResult, Snapshot


class WorkspacePort(Protocol):
    """What a shell offers to keep the result of one operation on one workspace (a unit of work:
    nothing is final before the shell commits)."""

    def put_store(self, store: WorkspaceStore) -> None: ...

    def put_journal(self, journal: PendingJournal) -> None: ...

    def put_session(self, state: SessionState) -> None: ...

    def delete_session(self, session_id: str) -> None: ...

    def emit(self, events: Iterable[EvidenceInput]) -> None: ...

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None: ...

    def append_migration_audit(self, records: Iterable[MigrationAudit]) -> None: ...

    def append_rejections(self, records: Iterable[RejectionRecord]) -> None: ...


def apply_result(port: WorkspacePort, snap: Snapshot, session_id: str | None, result: OpResult) -> None:
    """Hand ``port`` what ``result`` changed relative to ``snap``, the snapshot it was computed from.
    ``session_id`` names the session the operation ran for (``None``: no session file may change)."""
    if result.store != snap.store:
        port.put_store(result.store)
    if result.journal != snap.journal:
        port.put_journal(result.journal)
    if session_id is not None:
        if result.delete_session:
            if snap.session is not None:
                port.delete_session(session_id)
        elif result.session is not None and result.session != snap.session:
            port.put_session(result.session)
    for pruned in result.pruned_sessions:
        port.delete_session(pruned)
    if result.events:
        port.emit(result.events)
    if result.archived:
        port.append_archive(result.archived)
    if result.audit:
        port.append_migration_audit(result.audit)
    if result.rejections:
        port.append_rejections(result.rejections)
