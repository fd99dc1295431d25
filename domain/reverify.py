"""Re-verification from the cited code (docs/decisions.md#d18).

At a session start the shell reads the files the memories cite (only those whose size or mtime
changed since it last looked) and hands the core what it saw, as :class:`Observed` values on a
:class:`Reverify` command batched before the session opens. The core compares each memory's
citations with what was seen:

- every citation unchanged: the memory is verified now (``verified`` moves to today; a reason it was
  stale for is cleared);
- a cited span whose text hash differs, or an identifier the memory names that is gone from its
  file: stale with ``code changed since verified: PATH[:LINES]``;
- a cited file that is gone: stale with ``cited file gone: PATH``;
- a citation the shell did not observe (over its budget): the memory is left as it is.

Nothing is deleted or superseded here. Each change of a memory's reason is an evidence event of its
own; the memories whose ``verified`` moved are counted in one event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec
from msgspec.structs import replace

from domain.emitted import events
from domain.enums import EventType, MemoryStatus, Outcome, Phase
from domain.evidence.build import event
from domain.freshness import cite_label
from domain.model import Citation, EvidenceInput, MemoryEntry, WorkspaceStore
from domain.operations.values import OpResult, Snapshot, operation, unchanged
from domain.timeutil import utc_day

CHANGED: Final = "code changed since verified"
GONE: Final = "cited file gone"

CiteKey = tuple[str, int | None, int | None]


class Observed(msgspec.Struct, frozen=True, kw_only=True):
    """What the shell saw of one citation: the file gone, the hash of the span now, or which of the
    identifiers asked about occur in the file now."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    gone: bool = False
    span_hash: str | None = None
    present: tuple[str, ...] = ()


def cite_key(cite: Citation | Observed) -> CiteKey:
    return (cite.path, cite.start_line, cite.end_line)


def _compare(cite: Citation, seen: Observed) -> tuple[str | None, Citation]:
    """The stale reason for ``cite`` given ``seen`` (``None``: unchanged) and the citation as it is
    kept (a span never hashed takes the hash it has now as its baseline)."""
    if seen.gone:
        return f"{GONE}: {cite_label(cite)}", cite
    if cite.start_line is not None:
        if cite.span_hash is None:
            return None, replace(cite, span_hash=seen.span_hash) if seen.span_hash else cite
        if seen.span_hash != cite.span_hash:
            return f"{CHANGED}: {cite_label(cite)}", cite
        return None, cite
    missing = [name for name in cite.identifiers if name not in seen.present]
    if missing:
        return f"{CHANGED}: {cite_label(cite)} ({missing[0]} gone)", cite
    return None, cite


def _checked(
    entry: MemoryEntry, seen: Mapping[CiteKey, Observed], now_ms: int
) -> tuple[MemoryEntry, EvidenceInput | None, bool]:
    """``entry`` after comparing its citations: the new entry, an event when its reason changed, and
    whether it was verified now."""
    cites = entry.cites or ()
    if not cites or entry.status is MemoryStatus.SUPERSEDED:
        return entry, None, False
    kept: list[Citation] = []
    reason: str | None = None
    for cite in cites:
        found = seen.get(cite_key(cite))
        if found is None:
            return entry, None, False  # not observed this time: nothing is concluded
        why, cite = _compare(cite, found)
        kept.append(cite)
        reason = reason or why
    cites_now = tuple(kept) if kept != list(cites) else entry.cites
    if reason is not None:
        if reason == entry.stale_reason and cites_now is entry.cites:
            return entry, None, False
        changed = replace(entry, stale_reason=reason, cites=cites_now)
        code = "cited_file_gone" if reason.startswith(GONE) else "cited_code_changed"
        note = _event(changed, Outcome.STALE, code, reason) if reason != entry.stale_reason else None
        return changed, note, False
    last = entry.verified
    moved = last is None or utc_day(float(last)) != utc_day(now_ms)
    if not moved and entry.stale_reason is None and cites_now is entry.cites:
        return entry, None, False
    stamp = now_ms if moved or entry.stale_reason else last  # clearing a reason is a verification now
    verified = replace(entry, verified=stamp, stale_reason=None, cites=cites_now)
    note = (
        _event(verified, Outcome.VERIFIED, "cited_code_unchanged", "code unchanged")
        if entry.stale_reason
        else None
    )
    return verified, note, moved


def _event(entry: MemoryEntry, outcome: Outcome, code: str, reason: str) -> EvidenceInput:
    return event(
        EventType.MEMORY_FRESHNESS_CHANGED,
        Phase.FRESHNESS,
        outcome,
        (code,),
        memory=entry,
        details={"reason": reason},
        text=entry.text,
    )


def reverify_store(
    store: WorkspaceStore, observed: tuple[Observed, ...], now_ms: int
) -> tuple[WorkspaceStore, tuple[EvidenceInput, ...]]:
    """Compare every memory's citations with ``observed`` (module docstring). Deterministic: the same
    store, observations and instant give the same store; it never removes an entry."""
    if not observed:
        return store, ()
    seen = {cite_key(o): o for o in observed}
    entries: list[MemoryEntry] = []
    notes: list[EvidenceInput] = []
    verified = 0
    for entry in store.entries:
        checked, note, moved = _checked(entry, seen, now_ms)
        entries.append(checked)
        verified += moved
        if note is not None:
            notes.append(note)
    if verified:
        notes.append(
            event(
                EventType.MEMORY_FRESHNESS_CHANGED,
                Phase.FRESHNESS,
                Outcome.VERIFIED,
                ("cited_code_unchanged",),
                details={"verified": verified},
            )
        )
    if all(a is b for a, b in zip(entries, store.entries, strict=True)):
        return store, tuple(notes)
    return replace(store, entries=tuple(entries)), tuple(notes)


class Reverify(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="reverify"):
    """What the shell saw of the cited files at a session start (batched before the session opens)."""

    observed: tuple[Observed, ...] = ()


@operation
def reverify(snap: Snapshot, observed: tuple[Observed, ...], now_ms: int) -> OpResult:
    store, notes = reverify_store(snap.store, observed, now_ms)
    if store is snap.store and not notes:
        return unchanged(snap)
    return replace(unchanged(snap), store=store, emitted=events(notes))
