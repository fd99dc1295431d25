"""The in-memory unit of work of a simulation (docs/simulation.md, "How a run works").

:class:`Workspace` is the shared in-memory workspace (``domain.workspace_port.InMemoryWorkspace``):
it holds what the file store holds on disk, as values, and runs an operation as the shell does
(``adapters/commands/_run.py``): snapshot, pure step, result kept through ``apply_result``, the
write-back the file transaction and the tests' shells use too. It adds the count of the gate's
rejections, read from the evidence. Nothing is written anywhere. A run has one workspace, so one
speed cache (``caches``, docs/decisions.md#d14), which the day-end probe renders with too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Final

from domain.enums import EventType
from domain.limits import DAY_MS
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, WorkspaceRef, WorkspaceStore
from domain.retention import Tuning
from domain.timeutil import iso_from_ms
from domain.workspace_port import InMemoryWorkspace

#: Where a simulated workspace says it lives (a label only: nothing is read or written there).
SIM_ROOT: Final = "/projects/simulated"
SIM_KEY: Final = "simulated-workspace"

_REJECTION_EVENTS: Final = frozenset(
    {EventType.EXTRACTION_CANDIDATE_REJECTED, EventType.EXPLICIT_MEMORY_IGNORED}
)
_EPOCH: Final = dt.date(1970, 1, 1).toordinal()


class Workspace(InMemoryWorkspace):
    """A workspace held in memory, counting the gate's rejections from the evidence it is handed."""

    def __init__(
        self,
        store: WorkspaceStore,
        journal: PendingJournal,
        archive: dict[str, MemoryEntry],
        tuning: Tuning,
    ) -> None:
        super().__init__(store, journal, archive, workspace_root_hash=SIM_KEY, tuning=tuning)
        self.rejected: dict[str, int] = {}
        self.rejected_total = 0
        #: freshness (domain.simulation.freshness): the version of each changed file of the simulated
        #: code, the memories already given their freshness, the reinforcements from use
        self.versions: dict[str, int] = {}
        self.stamped: set[str] = set()
        self.use_reinforcements = 0

    def emit(self, events: Iterable[EvidenceInput]) -> None:
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
