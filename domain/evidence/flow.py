"""Events of a memory's way in and out of the block: explicit requests and compaction candidates at
intake, the pending journal, promotion, and the render of the workspace block
(docs/decisions.md#evidence-log-records)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Final

from domain.enums import EventType, MemorySource, MemoryStatus, MemoryType, Outcome, Phase, RelationRole
from domain.evidence.build import event, memory_ref, relation
from domain.keys import entry_keys
from domain.limits import EvidenceLogLimits
from domain.model import EvidenceInput, MemoryEntry, MemoryRef, Relation

#: Preview lengths of accepted and rejected intake (docs/decisions.md#evidence-log-records).
PREVIEW_ACCEPTED: Final = EvidenceLogLimits.MAX_PREVIEW_CHARS
PREVIEW_REJECTED: Final = EvidenceLogLimits.MAX_REJECTED_PREVIEW_CHARS
#: Reason codes of an entry shown in the block.
SELECTED_REASONS: Final = ("within_caps", "within_char_budget")

# --- intake ------------------------------------------------------------------------------------


def explicit_detected(entry: MemoryEntry, reason: str) -> EvidenceInput:
    """An explicit request became a pending memory."""
    return event(
        EventType.EXPLICIT_MEMORY_DETECTED,
        Phase.EXPLICIT,
        Outcome.ACCEPTED,
        (reason,),
        memory=memory_ref(entry, with_keys=False),
        text=entry.text,
        preview_limit=PREVIEW_ACCEPTED,
    )


def explicit_ignored(
    reasons: Iterable[str], text: str, *, preview_limit: int = PREVIEW_REJECTED
) -> EvidenceInput:
    """An explicit request (or a manual ``remember``) was turned down for ``reasons``."""
    return event(
        EventType.EXPLICIT_MEMORY_IGNORED,
        Phase.EXPLICIT,
        Outcome.REJECTED,
        reasons,
        text=text,
        preview_limit=preview_limit,
    )


def candidate_accepted(entry: MemoryEntry, reasons: Iterable[str]) -> EvidenceInput:
    """A compaction candidate became a pending memory."""
    return event(
        EventType.EXTRACTION_CANDIDATE_ACCEPTED,
        Phase.EXTRACTION,
        Outcome.ACCEPTED,
        reasons,
        memory=memory_ref(entry, with_keys=False),
        text=entry.text,
        preview_limit=PREVIEW_ACCEPTED,
    )


def candidate_rejected(type_: MemoryType, reasons: Iterable[str], text: str) -> EvidenceInput:
    """A compaction candidate of type ``type_`` was turned down for ``reasons``."""
    return event(
        EventType.EXTRACTION_CANDIDATE_REJECTED,
        Phase.EXTRACTION,
        Outcome.REJECTED,
        reasons,
        memory=MemoryRef(type=type_.value, source=MemorySource.COMPACTION.value),
        text=text,
        preview_limit=PREVIEW_REJECTED,
    )


def skipped(type_: EventType, phase: Phase, reason: str, details: Mapping[str, int]) -> EvidenceInput:
    """How much of a large input was not examined."""
    return event(type_, phase, Outcome.REJECTED, (reason,), details=details)


# --- the pending journal -----------------------------------------------------------------------


def pending_appended(entry: MemoryEntry, session_id: str | None, reason: str) -> EvidenceInput:
    """``pending_memory_appended`` for one entry written to the journal."""
    return event(
        EventType.PENDING_MEMORY_APPENDED,
        Phase.PENDING_JOURNAL,
        Outcome.ACCEPTED,
        (reason,),
        memory=entry,
        relations=(relation(RelationRole.PENDING, entry),),
        text=entry.text,
        session_id=session_id,
    )


def pending_cleared(
    entry: MemoryEntry, reasons: Sequence[str], *, owned: bool, survivor: MemoryEntry | None = None
) -> EvidenceInput:
    """``pending_memory_cleared``: ``entry`` left the journal for ``reasons[0]``. The owner is only
    reported as a flag: raw session ids never go into details."""
    relations = [relation(RelationRole.PENDING, entry)]
    if survivor is not None:
        relations.append(relation(RelationRole.RETAINED, survivor))
    details: dict[str, str | int | bool | None] = {"source": entry.source.value, "owned": owned}
    if entry.promotion_attempts is not None:
        details["promotionAttempts"] = entry.promotion_attempts
    return event(
        EventType.PENDING_MEMORY_CLEARED,
        Phase.PENDING_JOURNAL,
        Outcome.CLEARED,
        reasons,
        memory=entry,
        relations=relations,
        details=details,
        text=entry.text,
    )


# --- promotion ---------------------------------------------------------------------------------


def _promotion(
    type_: EventType,
    outcome: Outcome,
    entry: MemoryEntry,
    reasons: Sequence[str],
    relations: Iterable[tuple[RelationRole, MemoryEntry | None]] = (),
) -> EvidenceInput:
    return event(
        type_,
        Phase.PROMOTION,
        outcome,
        reasons,
        memory=entry,
        relations=[relation(role, m) for role, m in relations if m is not None],
        text=entry.text,
    )


def promoted(entry: MemoryEntry, stored: MemoryEntry, reasons: Sequence[str]) -> EvidenceInput:
    """The pending ``entry`` is now the stored memory ``stored``."""
    return _promotion(
        EventType.PROMOTION_PROMOTED, Outcome.PROMOTED, entry, reasons, [(RelationRole.PROMOTED, stored)]
    )


def promotion_absorbed(
    entry: MemoryEntry, retained: MemoryEntry | None, reason: str, *, identity: bool
) -> EvidenceInput:
    """The pending ``entry`` was already stored as ``retained`` (the same exact key, or identity)."""
    return _promotion(
        EventType.PROMOTION_ABSORBED_IDENTITY if identity else EventType.PROMOTION_ABSORBED_EXACT,
        Outcome.ABSORBED,
        entry,
        (reason,),
        [(RelationRole.ABSORBED, entry), (RelationRole.RETAINED, retained)],
    )


def promotion_rejected(entry: MemoryEntry, reason: str) -> EvidenceInput:
    """The pending ``entry`` was not stored."""
    return _promotion(EventType.PROMOTION_REJECTED, Outcome.REJECTED, entry, (reason,))


# --- the workspace block -----------------------------------------------------------------------


def rendered(entry: MemoryEntry) -> EvidenceInput:
    """``entry`` is in the block."""
    return _render_event(entry, None)


def omitted(entry: MemoryEntry, reason: str) -> EvidenceInput:
    """``entry`` was in the most recent block and is left out of this one for ``reason``."""
    return _render_event(entry, reason)


def omissions(counts: Mapping[str, int]) -> EvidenceInput:
    """Every other omission of one render, counted per reason."""
    return event(
        EventType.RENDER_OMITTED,
        Phase.RENDER,
        Outcome.OMITTED,
        tuple(counts),
        details={f"{reason}Count": count for reason, count in counts.items()},
    )


def _render_event(entry: MemoryEntry, reason: str | None) -> EvidenceInput:
    exact, identity = entry_keys(entry)  # raw keys: the log hashes them
    return _entry_event(entry.id, exact, identity, entry.type, entry.source, entry.status, entry.text, reason)


@lru_cache(maxsize=4096)
def _entry_event(
    memory_id: str,
    exact: str,
    identity: str,
    type_: MemoryType,
    source: MemorySource,
    status: MemoryStatus,
    text: str,
    reason: str | None,
) -> EvidenceInput:
    """The render event of one entry, from the fields it shows. Memoised (docs/performance.md): every
    render makes one for each block entry, and re-stamping ``lastRenderedAt`` gives the entries new
    objects but not new events. Its reference is shared by the event and its relation. The memo takes
    plain strings alone (the vocabulary members are strings), so it may serve every caller of the
    process (docs/decisions.md#d14)."""
    ref = MemoryRef(
        memory_id=memory_id,
        memory_key_hash=exact,
        identity_key_hash=identity,
        type=type_.value,
        source=source.value,
        status=status.value,
    )
    if reason is None:
        kind, outcome, role = EventType.RENDER_SELECTED, Outcome.RENDERED, RelationRole.RENDERED
        reasons: tuple[str, ...] = SELECTED_REASONS
    else:
        kind, outcome, role = EventType.RENDER_OMITTED, Outcome.OMITTED, RelationRole.OMITTED
        reasons = (reason,)
    return event(
        kind,
        Phase.RENDER,
        outcome,
        reasons,
        memory=ref,
        relations=(Relation(role=role, memory=ref),),
        text=text,
    )
