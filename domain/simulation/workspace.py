"""The in-memory unit of work of a simulation (docs/simulation.md, "How a run works").

:class:`Workspace` holds what the file store holds on disk, as values, and does what the shell does
around one operation (``adapters/commands/_run.py``): build the :class:`~domain.operations.Snapshot`
(the session, the other sessions, the archive), call the pure operation, and keep its result through
``domain.workspace_port.apply_result``, the write-back the file transaction and the property tests'
in-memory world use too (it is a :class:`~domain.workspace_port.WorkspacePort`). Nothing is written
anywhere.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final

from domain.keys import exact_key, key_hash
from domain.model import (
    DAY_MS,
    EventType,
    EvidenceInput,
    MemoryEntry,
    PendingJournal,
    SessionState,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.operations import OpResult, Snapshot
from domain.retention import Tuning
from domain.workspace_port import apply_result

if TYPE_CHECKING:
    from domain.consolidation import MigrationAudit
    from domain.extraction import RejectionRecord
from domain.timeutil import iso_from_ms

#: Where a simulated workspace says it lives (a label only: nothing is read or written there).
SIM_ROOT: Final = "/projects/simulated"
SIM_KEY: Final = "simulated-workspace"

_REJECTION_EVENTS: Final = frozenset(
    {EventType.EXTRACTION_CANDIDATE_REJECTED, EventType.EXPLICIT_MEMORY_IGNORED}
)
_EPOCH: Final = dt.date(1970, 1, 1).toordinal()


class Workspace:
    """A workspace held in memory: what the file store holds on disk, as values."""

    def __init__(
        self,
        store: WorkspaceStore,
        journal: PendingJournal,
        archive: dict[str, MemoryEntry],
        tuning: Tuning,
    ) -> None:
        self.store = store
        self.journal = journal
        self.sessions: dict[str, SessionState] = {}
        self.archive = archive
        self.tuning = tuning
        self.rejected: dict[str, int] = {}
        self.rejected_total = 0

    def run(self, session_id: str | None, op: Callable[[Snapshot], OpResult]) -> OpResult:
        """One operation: snapshot, pure step, then what it returned kept through the one write-back
        of every shell (``domain.workspace_port.apply_result``)."""
        session = self.sessions.get(session_id) if session_id is not None else None
        others = tuple(s for sid, s in self.sessions.items() if sid != session_id)
        snap = Snapshot(
            store=self.store,
            journal=self.journal,
            session=session,
            others=others,
            archive=self.archive,
            workspace_root_hash=SIM_KEY,
            tuning=self.tuning,
        )
        result = op(snap)
        apply_result(self, snap, session_id, result)
        return result

    # -- the workspace port (domain.workspace_port): what the file transaction writes, kept here

    def put_store(self, store: WorkspaceStore) -> None:
        self.store = store

    def put_journal(self, journal: PendingJournal) -> None:
        self.journal = journal

    def put_session(self, state: SessionState) -> None:
        self.sessions[state.session_id] = state

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        self._count_rejections(events)

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        for entry in entries:
            self.archive[key_hash(exact_key(entry))] = entry

    def append_migration_audit(self, records: Iterable[MigrationAudit]) -> None:
        """Audit records are not kept: a simulated store starts with every migration recorded."""

    def append_rejections(self, records: Iterable[RejectionRecord]) -> None:
        """The rejection log is not kept; the rejections are counted from the evidence."""

    def _count_rejections(self, events: Iterable[EvidenceInput]) -> None:
        for event in events:
            if event.type in _REJECTION_EVENTS:
                self.rejected_total += 1
                for reason in event.reason_codes:
                    self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def block_entries(self, session_id: str) -> list[MemoryEntry]:
        """The memories of the block frozen for ``session_id``, in block order."""
        session = self.sessions.get(session_id)
        if session is None:
            return []
        by_id = {e.id: e for e in self.store.entries}
        return [by_id[i] for i in session.block_ids if i in by_id]


def empty_workspace(now_ms: int) -> tuple[WorkspaceStore, PendingJournal]:
    ref = WorkspaceRef(root=SIM_ROOT, key=SIM_KEY)
    stamp = iso_from_ms(now_ms)
    return WorkspaceStore(workspace=ref, updated_at=stamp), PendingJournal(workspace=ref, updated_at=stamp)


def date_ms(day: dt.date) -> int:
    """Midnight UTC of ``day`` in epoch milliseconds."""
    return (day.toordinal() - _EPOCH) * DAY_MS
