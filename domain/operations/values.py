"""What an operation reads (:class:`Snapshot`) and what it produces (:class:`OpResult`)
(docs/architecture.md, "Data flow of one host event")."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Concatenate, ParamSpec

import msgspec
from msgspec.structs import replace

from domain.caches import Caches
from domain.emitted import Emits, Emitted
from domain.keys import exact_key, key_hash
from domain.model import MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.retention import DEFAULT_TUNING, Tuning
from domain.search.disclosure import DEFAULT_DISCLOSURE, Disclosure

if TYPE_CHECKING:
    from domain.search.values import Answer


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """What one operation may read. ``others`` are the other sessions of the workspace (used to find
    idle owners, docs/decisions.md#d7); ``archive`` maps archive-marker key hashes to archived entries
    (docs/decisions.md#d2); ``caches`` is the speed state of the snapshot's owner
    (docs/decisions.md#d14), which no result depends on (two caches compare equal)."""

    store: WorkspaceStore
    journal: PendingJournal
    session: SessionState | None = None
    others: tuple[SessionState, ...] = ()
    archive: Mapping[str, MemoryEntry] = msgspec.field(default_factory=dict)
    #: the shell's ``workspaceRootHash`` (it resolves the real path); labels rejection records.
    workspace_root_hash: str | None = None
    #: the retention and render parameters; hosts always use the defaults, the simulator varies them.
    tuning: Tuning = DEFAULT_TUNING
    #: what earlier steps derived from the same objects; owned by the caller (a fresh one by default)
    caches: Caches = msgspec.field(default_factory=Caches)
    #: memories of the user's own store (scope ``user``), shown in the block beside the workspace's
    #: own (docs/decisions.md#d17); never written back through this snapshot.
    shared: tuple[MemoryEntry, ...] = ()
    #: the user's settings of progressive disclosure (docs/decisions.md#d16)
    disclosure: Disclosure = DEFAULT_DISCLOSURE


class CommandOutcome(StrEnum):
    """What a user command did to its memory."""

    PROMOTED = "promoted"  # stored as a new memory
    ABSORBED = "absorbed"  # the same memory was stored already: it was reinforced
    REJECTED = "rejected"  # the safety gate turned it down (``reasons`` say why)
    SUPERSEDED = "superseded"  # the old memory now points at its replacement
    FORGOTTEN = "forgotten"
    RESTORED = "restored"
    UNCHANGED = "unchanged"  # the replacement is the memory itself
    UNKNOWN = "unknown"  # no active memory with that id
    PINNED = "pinned"  # always shown first, never archived (docs/decisions.md#d20)
    UNPINNED = "unpinned"


class OpResult(Emits, frozen=True, kw_only=True):
    """What one operation produced. ``session is None`` with ``delete_session`` means the session
    ends; the shell writes a value only when it differs from what it read.

    ``emitted`` holds the evidence, migration audit, archived entries and rejection records;
    ``basis`` is the snapshot the result was computed from (set by every operation), so that
    :meth:`then` can run another operation on what this one left."""

    store: WorkspaceStore
    journal: PendingJournal
    session: SessionState | None
    delete_session: bool = False
    #: other sessions whose files the shell deletes (idle for a week, nothing left pending)
    pruned_sessions: tuple[str, ...] = ()
    output: str = ""
    #: for the user's commands: what became of the memory
    outcome: CommandOutcome | None = None
    memory_id: str | None = None
    reasons: tuple[str, ...] = ()
    basis: Snapshot | None = None
    #: what a read command (``search``, ``show``) answered (docs/decisions.md#d16)
    answer: Answer | None = None

    def emitting(self, more: Emitted) -> OpResult:
        """The same result with ``more`` emitted after what it emitted already."""
        return replace(self, emitted=self.emitted + more) if more else self

    def next_snapshot(self) -> Snapshot:
        """What a following operation reads: this result's store, journal and session over the
        snapshot it was computed from (the archive with what this result archived, without the
        sessions it pruned)."""
        if self.basis is None:
            raise ValueError("an OpResult made outside an operation has no snapshot to continue from")
        basis = self.basis
        archive = basis.archive
        if self.archived:
            archive = {**archive, **{key_hash(exact_key(e)): e for e in self.archived}}
        others = basis.others
        if self.pruned_sessions:
            others = tuple(s for s in others if s.session_id not in self.pruned_sessions)
        session = None if self.delete_session else self.session
        return replace(
            basis, store=self.store, journal=self.journal, session=session, archive=archive, others=others
        )

    def then(self, step: Callable[[Snapshot], OpResult]) -> OpResult:
        """This operation followed by ``step``, as one result: ``step`` reads what this one left
        (:meth:`next_snapshot`); the values, output and outcome are the last step's (its output
        when it has one, else this one's), the emitted records and the pruned sessions are both
        steps' in order, and the basis stays this result's, so that the shell compares with what it
        read. The session ends when the last step ends it, or when this one did and the last step
        left it ended."""
        following = step(self.next_snapshot())
        pruned = self.pruned_sessions + tuple(
            s for s in following.pruned_sessions if s not in self.pruned_sessions
        )
        return replace(
            following,
            delete_session=following.delete_session or (self.delete_session and following.session is None),
            pruned_sessions=pruned,
            emitted=self.emitted + following.emitted,
            output=following.output or self.output,
            outcome=following.outcome or self.outcome,
            memory_id=following.memory_id or self.memory_id,
            reasons=following.reasons or self.reasons,
            basis=self.basis,
        )


P = ParamSpec("P")


def operation(
    fn: Callable[Concatenate[Snapshot, P], OpResult],
) -> Callable[Concatenate[Snapshot, P], OpResult]:
    """Mark ``fn`` as an operation: its result remembers the snapshot it was computed from."""

    @functools.wraps(fn)
    def run(snap: Snapshot, /, *args: P.args, **kwargs: P.kwargs) -> OpResult:
        result = fn(snap, *args, **kwargs)
        return result if result.basis is snap else replace(result, basis=snap)

    return run


def unchanged(snap: Snapshot, output: str = "") -> OpResult:
    return OpResult(store=snap.store, journal=snap.journal, session=snap.session, output=output, basis=snap)


def is_sub_agent(session: SessionState | None, parent_session_id: str | None) -> bool:
    return parent_session_id is not None or (session is not None and session.parent_session_id is not None)
