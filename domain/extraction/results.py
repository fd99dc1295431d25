"""The values the two parsers produce, and the pieces both build them from (the stored entry, the
skipped-input event, the preview limits, the reason codes of their own)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import msgspec

from domain.enums import MemorySource, MemoryStatus, MemoryType
from domain.evidence import PREVIEW_ACCEPTED, PREVIEW_REJECTED
from domain.ids import memory_id
from domain.model import EvidenceInput, MemoryEntry
from domain.timeutil import iso_from_ms

__all__ = [
    "EMPTY",
    "PREVIEW_ACCEPTED",
    "PREVIEW_REJECTED",
    "ExtractionReason",
    "ExtractionResult",
    "RejectionRecord",
    "SupersedeRequest",
    "new_entry",
    "stale_after_days_for",
]


class ExtractionReason(StrEnum):
    """The reason codes the parsers give themselves, beside the safety gate's
    (:class:`domain.safety.GateReason`, :class:`domain.safety.QualityReason`): why an input was set
    aside before the gate (docs/decisions.md#explicit-requests,
    docs/decisions.md#compaction-candidates), and what an accepted one matched."""

    DEFERRAL = "deferral"
    HEDGE_ONLY = "hedge_only"
    #: an explicit request too short to be one (the gate's own ``too_short`` is the same code)
    TOO_SHORT = "too_short"
    NEGATED_REQUEST = "negated_request"
    DUPLICATE_IN_MESSAGE = "duplicate_in_message"
    DUPLICATE_IN_SUMMARY = "duplicate_in_summary"
    #: how much of a large input was not examined (``domain.evidence.skipped``)
    INPUT_WINDOW = "input_window"
    REQUEST_LIMIT = "request_limit"
    CANDIDATE_LIMIT = "candidate_limit"
    #: an accepted explicit request, an accepted compaction candidate
    EXPLICIT_TRIGGER_MATCHED = "explicit_trigger_matched"
    VALID_CANDIDATE_FORMAT = "valid_candidate_format"


def _compaction_source() -> MemorySource:
    # A factory rather than a plain default so that ``omit_defaults`` still writes the field:
    # every rejection-log line carries ``"source":"compaction"`` as the reference writes it.
    return MemorySource.COMPACTION


class RejectionRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One line of the global extraction-rejection log (a candidate the quality gate turned down).

    Field order is the order of the JSON line. ``text`` is redacted, trimmed and not truncated."""

    timestamp: str
    type: str
    text: str
    reasons: tuple[str, ...]
    #: the door the rejected memory came through (only the compaction parser writes records)
    source: MemorySource = msgspec.field(default_factory=_compaction_source)
    workspace_key: str | None = None
    workspace_root_hash: str | None = None


class SupersedeRequest(msgspec.Struct, frozen=True):
    """A candidate line asked to replace a memory of the numbered block (docs/decisions.md#d10)."""

    memory_id: str
    """id of the new (replacing) entry produced by this parse"""
    label: str
    """the block label it names, for example ``"M3"``"""


class ExtractionResult(msgspec.Struct, frozen=True):
    entries: tuple[MemoryEntry, ...]
    events: tuple[EvidenceInput, ...]
    rejections: tuple[RejectionRecord, ...] = ()
    """quality-gate rejections only (they go to the rejection log)"""
    supersede_requests: tuple[SupersedeRequest, ...] = ()


EMPTY: Final = ExtractionResult(entries=(), events=())
#: How much of an accepted and of a rejected text an event previews.


def stale_after_days_for(type_: MemoryType) -> int | None:
    """Days after which a memory of this type is marked for verification (``None``: never)."""
    if type_ == MemoryType.FEEDBACK:
        return None
    if type_ == MemoryType.DECISION:
        return 45
    if type_ == MemoryType.PROJECT:
        return 60
    return 90


def new_entry(
    now_ms: int,
    seq: int,
    type_: MemoryType,
    text: str,
    source: MemorySource,
    confidence: float,
    id_seed: str = "",
) -> MemoryEntry:
    """A new active entry found by a parse: ``seq`` (its place among the parse's entries) and
    ``id_seed`` keep the ids of equal texts apart."""
    stamp = iso_from_ms(now_ms)
    parts: tuple[object, ...] = (seq, text, source.value, id_seed) if id_seed else (seq, text, source.value)
    return MemoryEntry(
        id=memory_id(now_ms, *parts),
        type=type_,
        text=text,
        source=source,
        confidence=confidence,
        status=MemoryStatus.ACTIVE,
        created_at=stamp,
        updated_at=stamp,
        retention_clock=now_ms,
        stale_after_days=stale_after_days_for(type_),
    )
