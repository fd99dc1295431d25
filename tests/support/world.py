"""The shell in memory, for tests that drive the core operations: host events as values (:class:`Op`
and its subclasses) and :class:`World`, the in-memory :class:`~domain.workspace_port.WorkspacePort`
that runs them one at a time and keeps everything they produced."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from domain.consolidation import MigrationAudit
from domain.extraction import RejectionRecord
from domain.model import EvidenceInput, MemoryEntry, MemoryType, WorkspaceStore
from domain.operations import (
    OpResult,
    Snapshot,
    end_session,
    forget,
    observe_compaction,
    observe_tool_result,
    observe_user_message,
    open_session,
    remember,
    restore,
    supersede,
)
from domain.pending import empty_journal
from domain.session import ToolEvent
from domain.workspace_port import InMemoryWorkspace
from tests.support import builders
from tests.support.builders import KEY, ROOT


class Op(msgspec.Struct, frozen=True, tag=True):
    #: credentials embedded in this event's text (none may survive anywhere)
    secrets: tuple[str, ...] = ()


class Open(Op, frozen=True):
    sid: str = ""


class Say(Op, frozen=True):
    sid: str = ""
    text: str = ""


class Tool(Op, frozen=True):
    sid: str = ""
    event: ToolEvent = ToolEvent(tool="noop")


class Compact(Op, frozen=True):
    sid: str = ""
    summary: str = ""


class End(Op, frozen=True):
    sid: str = ""


class Wait(Op, frozen=True):
    ms: int = 0


# The user's own commands (no session: they run against the workspace).


class Remember(Op, frozen=True):
    text: str = ""
    memory_type: MemoryType = MemoryType.FEEDBACK


class OnMemory(Op, frozen=True):
    """A command about one stored memory."""

    memory_id: str = ""


class Forget(OnMemory, frozen=True):
    pass


class Supersede(OnMemory, frozen=True):
    text: str = ""


class Restore(OnMemory, frozen=True):
    pass


class World(InMemoryWorkspace):
    """The shell, in memory, keeping everything an operation produced: the shared in-memory
    :class:`~domain.workspace_port.WorkspacePort`, so what an operation changed reaches it through
    :func:`~domain.workspace_port.apply_result`, as it reaches the files through
    ``adapters.commands._run.run_operation``."""

    def __init__(self, now: int, store: WorkspaceStore | None = None) -> None:
        super().__init__(store or builders.store(at=now), empty_journal(ROOT, KEY, now))
        self.now = now
        self.events: list[EvidenceInput] = []
        self.outputs: list[str] = []
        self.extras: list[object] = []  # rejection records, audit records, archived entries
        self.messages = 0

    # ---- what the port is handed, kept --------------------------------------------------------

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        self.events.extend(events)

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        kept = tuple(entries)
        super().append_archive(kept)
        self.extras.extend(kept)

    def append_migration_audit(self, records: Iterable[MigrationAudit]) -> None:
        self.extras.extend(records)

    def append_rejections(self, records: Iterable[RejectionRecord]) -> None:
        self.extras.extend(records)

    # ---- one operation ----------------------------------------------------------------------------

    def run(self, session_id: str | None, step: Callable[[Snapshot], OpResult]) -> OpResult:
        """Snapshot, pure step, result applied (what ``run_operation`` does around a transaction);
        the output is kept too."""
        result = super().run(session_id, step)
        if result.output:
            self.outputs.append(result.output)
        return result

    def apply(self, op: Op) -> OpResult | None:
        """Run one host event; ``None`` for a clock step."""
        if isinstance(op, Wait):
            self.now += op.ms
            return None
        # Host events never share a millisecond. (Memory ids are derived from the time and the text,
        # so the same request made by two sessions in one millisecond would give two journal entries
        # one id, and the evidence could not tell them apart.)
        self.now += 1
        return self.run(getattr(op, "sid", None), lambda snap: self.step(op, snap))

    def step(self, op: Op, snap: Snapshot) -> OpResult:
        """The core operation a host event (or a user command) calls."""
        if isinstance(op, Open):
            return open_session(snap, op.sid, self.now)
        if isinstance(op, Say):
            self.messages += 1
            return observe_user_message(snap, op.sid, f"msg-{self.messages}", op.text, self.now)
        if isinstance(op, Tool):
            return observe_tool_result(snap, op.sid, op.event, self.now)
        if isinstance(op, Compact):
            return observe_compaction(snap, op.sid, op.summary, self.now)
        if isinstance(op, End):
            return end_session(snap, op.sid, self.now)
        if isinstance(op, Remember):
            return remember(snap, op.text, op.memory_type, self.now)
        if isinstance(op, Forget):
            return forget(snap, op.memory_id, self.now)
        if isinstance(op, Supersede):
            return supersede(snap, op.memory_id, op.text, self.now)
        if isinstance(op, Restore):
            return restore(snap, op.memory_id, self.now)
        raise AssertionError(op)  # pragma: no cover - every Op subclass is handled above


def names(event: EvidenceInput) -> set[str]:
    """Memory ids an event is about."""
    found = {event.memory.memory_id} if event.memory is not None and event.memory.memory_id else set()
    found.update(r.memory.memory_id for r in event.relations if r.memory is not None and r.memory.memory_id)
    return found
