"""The per-entry steps of normalisation: redaction of text and rationale, the retention-clock backfill
and truncation to 260 code points (docs/decisions.md#normalisation-and-migrations), and the memo of
entries they leave unchanged, filed in the caller's cache (docs/decisions.md#d14)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from msgspec.structs import replace

from domain import evidence, safety
from domain.enums import MemoryStatus
from domain.limits import LongTermLimits
from domain.model import EvidenceInput, MemoryEntry
from domain.timeutil import parse_iso_ms

if TYPE_CHECKING:
    from domain.caches import Caches


@lru_cache(maxsize=65536)
def redact_stored(text: str) -> str:
    """``safety.redact``, memoised: every normalisation redacts every stored text again, and stored
    texts rarely change (docs/performance.md). A pure function of a plain string, so one memo serves
    every caller of the process (docs/decisions.md#d14)."""
    return safety.redact(text)


def redacted_entry(entry: MemoryEntry, now_iso: str) -> tuple[MemoryEntry, EvidenceInput | None]:
    """Redact text and rationale; an empty rationale is left as it is (docs/decisions.md#s16)."""
    text = redact_stored(entry.text)
    rationale = redact_stored(entry.rationale) if entry.rationale else entry.rationale
    if text == entry.text and rationale == entry.rationale:
        return entry, None
    fields = tuple(
        name
        for name, changed in (("text", text != entry.text), ("rationale", rationale != entry.rationale))
        if changed
    )
    updated = replace(entry, text=text, rationale=rationale, updated_at=now_iso)
    return updated, evidence.redacted(updated, fields)


def _valid_clock(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def backfill_retention_clock(entry: MemoryEntry, now_ms: int) -> MemoryEntry:
    """A missing, non-finite or negative ``retentionClock`` becomes ``createdAt``, else
    ``updatedAt``, else ``now`` (a negative clock counts as invalid, docs/decisions.md#s9)."""
    if _valid_clock(entry.retention_clock):
        return entry
    for stamp in (entry.created_at, entry.updated_at):
        parsed = parse_iso_ms(stamp) if isinstance(stamp, str) else None
        if parsed is not None and parsed >= 0:
            return replace(entry, retention_clock=parsed)
    return replace(entry, retention_clock=now_ms)


def truncated(entry: MemoryEntry) -> MemoryEntry:
    if entry.status is MemoryStatus.SUPERSEDED or len(entry.text) <= LongTermLimits.MAX_ENTRY_TEXT_CHARS:
        return entry
    return replace(entry, text=safety.stored_text(entry.text, LongTermLimits.MAX_ENTRY_TEXT_CHARS))


def cleaned_entry(entry: MemoryEntry, now_ms: int, caches: Caches) -> MemoryEntry:
    """Backfill and truncation of one entry (after redaction); files entries that all three steps
    leave unchanged in ``caches`` (docs/decisions.md#d14): every normalisation looks at every stored
    entry again, and being clean depends on the entry alone."""
    if entry in caches.clean:
        return entry
    result = truncated(backfill_retention_clock(entry, now_ms))
    if result is entry and redacted_entry(entry, "")[1] is None:
        caches.clean.put(entry, True)
    return result


def clean_copy(
    entry: MemoryEntry, now_ms: int, now_iso: str, events: list[EvidenceInput], caches: Caches
) -> MemoryEntry:
    """What the full pass makes of one entry before revival and dedupe: redaction (its event goes to
    ``events``), then backfill and truncation."""
    if entry in caches.clean:
        return entry
    cleaned, event = redacted_entry(entry, now_iso)
    if event is not None:
        events.append(event)
    return cleaned_entry(cleaned, now_ms, caches)


def is_clean(entry: MemoryEntry, caches: Caches) -> bool:
    """Redaction, backfill and truncation leave ``entry`` as it is (backfill leaves exactly the
    entries with a valid clock alone, whatever the instant)."""
    if entry in caches.clean:
        return True
    if not _valid_clock(entry.retention_clock):
        return False
    return cleaned_entry(entry, 0, caches) is entry and entry in caches.clean


def is_clean_as(entry: MemoryEntry, clean: MemoryEntry, caches: Caches) -> bool:
    """``entry`` is clean, knowing that ``clean`` is: with the same text, rationale and status, only
    the retention-clock backfill could change it (what re-stamping ``lastRenderedAt`` or reinforcing
    in place makes), else it is checked in full."""
    if entry in caches.clean:
        return True
    if (
        entry.text == clean.text
        and entry.rationale == clean.rationale
        and entry.status is clean.status
        and _valid_clock(entry.retention_clock)
    ):
        caches.clean.put(entry, True)
        return True
    return is_clean(entry, caches)
