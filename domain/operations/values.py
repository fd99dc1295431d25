"""What an operation reads (:class:`Snapshot`) and what it produces (:class:`OpResult`)
(docs/architecture.md, "Data flow of one host event")."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from domain.consolidation import MigrationAudit
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.retention import DEFAULT_TUNING, Tuning

if TYPE_CHECKING:
    from domain.extraction import RejectionRecord


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
