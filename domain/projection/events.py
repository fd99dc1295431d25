"""The evidence of an import (docs/decisions.md#d17): one event per projection file that changed the
store, was turned down, or was set aside. ``details.file`` is the file's path inside ``.workmem/``
(never an absolute path) and ``details.line`` the line a person should look at."""

from __future__ import annotations

from collections.abc import Iterable

from domain.enums import EventType, Outcome, Phase
from domain.evidence import event
from domain.model import EvidenceInput, MemoryEntry
from domain.projection.document import Diagnostic
from domain.projection.reasons import message_for
from domain.safety import preview


def imported(entry: MemoryEntry, path: str, changes: Iterable[str]) -> EvidenceInput:
    """``path`` changed the memory ``entry`` (``changes``: ``new``, ``text``, ``status``, ...)."""
    return event(
        EventType.PROJECTION_FILE_IMPORTED,
        Phase.PROJECTION,
        Outcome.IMPORTED,
        tuple(changes),
        memory=entry,
        details={"file": path},
    )


def rejected(path: str, line: int, reasons: Iterable[str], text: str) -> EvidenceInput:
    """``path`` reads, but the gate turns down what it says (``text``: previewed redacted)."""
    codes = tuple(reasons)
    return event(
        EventType.PROJECTION_FILE_REJECTED,
        Phase.PROJECTION,
        Outcome.REJECTED,
        codes,
        details={"file": path, "line": line, "message": message_for(codes)},
        text=text,
        preview_limit=160,
    )


def quarantined(diagnostic: Diagnostic) -> EvidenceInput:
    """``diagnostic.path`` cannot be read as a memory: it is left as it is and not imported."""
    return event(
        EventType.PROJECTION_FILE_QUARANTINED,
        Phase.PROJECTION,
        Outcome.QUARANTINED,
        (diagnostic.reason,),
        details={
            "file": diagnostic.path,
            "line": diagnostic.line,
            "message": preview(diagnostic.message, 160),
        },
    )
