"""What a step emits besides its value (docs/architecture.md, "One result shape").

Every step of the core returns its value (a store, a journal, a session, a block) and one
:class:`Emitted` record: the evidence events it caused, the migration audit records, the entries it
moved to the archive and the rejection-log records. Records add up with ``+`` in the order the steps
ran, so an operation made of several steps hands the shell one record, and the shell writes each
part to its own file (``domain.workspace_port.apply_result``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from domain.evidence import with_session
from domain.model import EvidenceInput, MemoryEntry

if TYPE_CHECKING:
    from domain.extraction.results import RejectionRecord


class MigrationAudit(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One line of ``migration-logs/<migration id>.jsonl``. It names the workspace by its key only,
    never by its absolute root (docs/decisions.md#s17)."""

    migration_id: str
    timestamp: str
    workspace_key: str
    entry_id: str
    type: str
    source: str
    text: str
    reasons: tuple[str, ...]
    hard_reasons: tuple[str, ...]
    before_status: str
    after_status: str


class Emitted(msgspec.Struct, frozen=True, kw_only=True):
    """Evidence, migration audit, archived entries and rejection records, each in emission order."""

    events: tuple[EvidenceInput, ...] = ()
    audit: tuple[MigrationAudit, ...] = ()
    archived: tuple[MemoryEntry, ...] = ()
    rejections: tuple[RejectionRecord, ...] = ()

    def __add__(self, other: Emitted) -> Emitted:
        if not other:
            return self
        if not self:
            return other
        return Emitted(
            events=self.events + other.events,
            audit=self.audit + other.audit,
            archived=self.archived + other.archived,
            rejections=self.rejections + other.rejections,
        )

    def __bool__(self) -> bool:
        return bool(self.events or self.audit or self.archived or self.rejections)

    def with_session(self, session_id: str | None) -> Emitted:
        """The same record with ``session_id`` stamped on the events that name no session."""
        if session_id is None or not self.events:
            return self
        return msgspec.structs.replace(self, events=with_session(self.events, session_id))


NOTHING: Emitted = Emitted()


class Emits(msgspec.Struct, frozen=True, kw_only=True):
    """The base of every step's result: the subclass declares the step's values, and ``emitted``
    is what the step emitted; its parts read as attributes of the result."""

    emitted: Emitted = NOTHING

    @property
    def events(self) -> tuple[EvidenceInput, ...]:
        return self.emitted.events

    @property
    def audit(self) -> tuple[MigrationAudit, ...]:
        return self.emitted.audit

    @property
    def archived(self) -> tuple[MemoryEntry, ...]:
        return self.emitted.archived

    @property
    def rejections(self) -> tuple[RejectionRecord, ...]:
        return self.emitted.rejections


def events(found: Iterable[EvidenceInput]) -> Emitted:
    """A record of evidence events only."""
    return Emitted(events=tuple(found))
