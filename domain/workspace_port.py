"""The port a pure operation's result is applied through (docs/architecture.md, "The workspace port").

An operation reads a :class:`~domain.operations.Snapshot` and returns an
:class:`~domain.operations.OpResult`; :func:`apply_result` is the one place that decides what of that
result is kept: the store, journal and session when they differ from the snapshot, the session's end,
the pruned sessions, the evidence, the archived entries, the migration audit and the rejection lines.
A shell implements :class:`WorkspacePort`: the file transaction (``adapters.transaction``) writes to
disk; :class:`InMemoryWorkspace` keeps values (the simulator and the tests' shells extend it). Nothing
here does any I/O itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from domain.caches import Caches
from domain.commands import Command, footprint, handle
from domain.keys import exact_key, key_hash
from domain.operations.values import OpResult, Snapshot
from domain.retention import DEFAULT_TUNING, Tuning
from domain.search.disclosure import DEFAULT_DISCLOSURE

if TYPE_CHECKING:
    from domain.emitted import MigrationAudit
    from domain.extraction import RejectionRecord
    from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore


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


class InMemoryWorkspace:
    """A workspace held as values: what the files hold, in attributes and dictionaries. :meth:`execute`
    does what the service does around one command (snapshot, pure step, :func:`apply_result`). The archive is
    kept by marker key hash; evidence, migration audit and rejection records are dropped unless a
    subclass keeps them (override :meth:`emit` and the ``append_*`` methods). Each instance owns one
    :class:`~domain.caches.Caches` (``caches``), handed to every snapshot it makes
    (docs/decisions.md#d14)."""

    def __init__(
        self,
        store: WorkspaceStore,
        journal: PendingJournal,
        archive: dict[str, MemoryEntry] | None = None,
        *,
        workspace_root_hash: str | None = None,
        tuning: Tuning = DEFAULT_TUNING,
    ) -> None:
        self.store = store
        self.journal = journal
        self.sessions: dict[str, SessionState] = {}
        self.archive: dict[str, MemoryEntry] = archive if archive is not None else {}
        self.workspace_root_hash = workspace_root_hash
        self.tuning = tuning
        self.caches = Caches()
        #: the progressive-disclosure settings every snapshot carries (docs/decisions.md#d16)
        self.disclosure = DEFAULT_DISCLOSURE

    def snapshot(self, session_id: str | None) -> Snapshot:
        """What a step of ``session_id`` (``None``: a workspace command) reads: the store, the journal,
        its own state, every other session's state and the archive."""
        return Snapshot(
            store=self.store,
            journal=self.journal,
            session=self.sessions.get(session_id) if session_id is not None else None,
            others=tuple(state for other, state in self.sessions.items() if other != session_id),
            archive=self.archive,
            workspace_root_hash=self.workspace_root_hash,
            tuning=self.tuning,
            caches=self.caches,
            disclosure=self.disclosure,
        )

    def execute(self, command: Command, now_ms: int) -> OpResult | None:
        """One command, as the service runs it around a transaction: snapshot, the pure
        :func:`~domain.commands.handle`, its result kept through :func:`apply_result`. ``None`` for a
        command that reads and writes nothing (a sub-agent's event)."""
        reads = footprint(command)
        if reads is None:
            return None
        snap = self.snapshot(reads.session_id)
        result = handle(snap, command, now_ms)
        apply_result(self, snap, reads.session_id, result)
        return result

    # -- the port

    def put_store(self, store: WorkspaceStore) -> None:
        self.store = store

    def put_journal(self, journal: PendingJournal) -> None:
        self.journal = journal

    def put_session(self, state: SessionState) -> None:
        self.sessions[state.session_id] = state

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        """Evidence is not kept here."""

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        for entry in entries:
            self.archive[key_hash(exact_key(entry))] = entry

    def append_migration_audit(self, records: Iterable[MigrationAudit]) -> None:
        """Audit records are not kept here."""

    def append_rejections(self, records: Iterable[RejectionRecord]) -> None:
        """Rejection records are not kept here."""
