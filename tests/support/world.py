"""The shell in memory, for tests that drive the core operations: host events as values (:class:`Op`
and its subclasses) and :class:`World`, the in-memory :class:`~domain.workspace_port.WorkspacePort`
that runs them one at a time and keeps everything they produced."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from domain.commands import (
    Command,
    Compacted,
    EndSession,
    Forget as ForgetCommand,
    OpenSession,
    Remember as RememberCommand,
    Restore as RestoreCommand,
    Supersede as SupersedeCommand,
    ToolResult,
    UserMessage,
)
from domain.emitted import MigrationAudit
from domain.enums import MemoryType
from domain.extraction import RejectionRecord
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore
from domain.operations import OpResult
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
    :class:`~domain.workspace_port.WorkspacePort`, so what a command changed reaches it through
    :func:`~domain.workspace_port.apply_result`, as it reaches the files through the service
    (``adapters/service.py``)."""

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

    def execute(self, command: Command, now_ms: int) -> OpResult | None:
        """The command run as the service runs it (snapshot, :func:`~domain.commands.handle`, result
        applied); the output is kept too."""
        result = super().execute(command, now_ms)
        if result is not None and result.output:
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
        return self.execute(self.command(op), self.now)

    def command(self, op: Op) -> Command:
        """The command a host event (or a user command) is at every door."""
        if isinstance(op, Open):
            return OpenSession(session=op.sid)
        if isinstance(op, Say):
            self.messages += 1
            return UserMessage(session=op.sid, message_id=f"msg-{self.messages}", text=op.text)
        if isinstance(op, Tool):
            return ToolResult(session=op.sid, event=op.event)
        if isinstance(op, Compact):
            return Compacted(session=op.sid, summary=op.summary)
        if isinstance(op, End):
            return EndSession(session=op.sid)
        if isinstance(op, Remember):
            return RememberCommand(text=op.text, type=op.memory_type)
        if isinstance(op, Forget):
            return ForgetCommand(memory_id=op.memory_id)
        if isinstance(op, Supersede):
            return SupersedeCommand(memory_id=op.memory_id, text=op.text)
        if isinstance(op, Restore):
            return RestoreCommand(memory_id=op.memory_id)
        raise AssertionError(op)  # pragma: no cover - every Op subclass is handled above


def names(event: EvidenceInput) -> set[str]:
    """Memory ids an event is about."""
    found = {event.memory.memory_id} if event.memory is not None and event.memory.memory_id else set()
    found.update(r.memory.memory_id for r in event.relations if r.memory is not None and r.memory.memory_id)
    return found
