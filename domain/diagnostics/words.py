"""``workmem explain ID`` in words (docs/decisions.md#diagnostics-explain-and-trace): is the memory
in the block, and why (one reason, never two that contradict each other); its strength against the
weakest shown memory of its type; the memories that outranked it; what the user can do. Pure: it
reads the diagnostics snapshot (:func:`domain.diagnostics.snapshot.build_snapshot`)."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec.structs import replace

from domain.diagnostics.common import DiagInput, clean_text, format_strength, shorten
from domain.diagnostics.snapshot import DiagSnapshot, Ranked, build_snapshot
from domain.diagnostics.status import DiagnosticStatus, LeftOut, RowStatus
from domain.enums import Importance, MemoryStatus
from domain.host_instructions import IN_HOST_INSTRUCTIONS
from domain.model import EvidenceInput, MemoryEntry
from domain.timeutil import parse_iso_ms

#: How many of the memories that outranked it are named.
OUTRANKED_SHOWN: Final = 3


class Outranker(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    text: str
    strength: float


class Explained(msgspec.Struct, frozen=True, kw_only=True):
    """One memory explained: ``sentence`` says it all; the other fields are its parts."""

    id: str
    text: str | None
    type: str
    status: RowStatus
    in_block: bool
    sentence: str
    strength: float | None = None
    weakest_shown: float | None = None
    outranked_by: tuple[Outranker, ...] = ()
    actions: tuple[str, ...] = ()
    forgotten_on: str | None = None
    #: how fresh the memory is when it is not fresh (docs/decisions.md#d18): grade, volatility,
    #: when it was last verified, and why it is stale
    freshness: str | None = None


def _date(iso: str | None) -> str:
    """The day of an ISO time (``2026-03-01``), or the text as it is when it is not one."""
    return iso[:10] if iso and parse_iso_ms(iso) is not None else (iso or "an unknown date")


def _quoted(text: str, raw: bool) -> str:
    return f"“{shorten(clean_text(text, raw), 160)}”"


def _row_status(snap: DiagSnapshot, memory_id: str) -> RowStatus | None:
    return next((row.status for row in snap.memories if row.id == memory_id), None)


def _forgotten_on(snap: DiagSnapshot, entry: MemoryEntry) -> str | None:
    """When the user forgot ``entry`` (its ``forgotten_by_user`` tombstone), else ``None``."""
    if entry.superseded_by:
        return None
    stone = next((t for t in snap.store.tombstones if t.memory_id == entry.id), None)
    if stone is None or stone.reason != "forgotten_by_user":
        return None
    return _date(stone.created_at)


def _ranked(snap: DiagSnapshot, entry: MemoryEntry) -> Ranked | None:
    return next((r for r in snap.ranked if r.entry.id == entry.id), None)


def _outrankers(items: list[Ranked], strength: float, raw: bool) -> tuple[Outranker, ...]:
    """The weakest of the shown ``items`` that are stronger than ``strength`` (the ones to beat)."""
    above = sorted((r for r in items if r.strength >= strength), key=lambda r: r.strength)
    return tuple(
        Outranker(id=r.entry.id, text=shorten(clean_text(r.entry.text, raw), 80), strength=r.strength)
        for r in above[:OUTRANKED_SHOWN]
    )


def _why_not(status: RowStatus, type_: str, cap: int) -> str:
    if status == DiagnosticStatus.OMITTED_TYPE_CAP:
        return f"the block shows at most {cap} {type_} memories and stronger ones took every place"
    if status == DiagnosticStatus.OMITTED_GLOBAL_CAP:
        return "the block shows at most 28 memories in all and stronger ones of every type filled it"
    return "the block's character budget was used up by stronger memories"


def _active(snap: DiagSnapshot, entry: MemoryEntry, status: RowStatus, raw: bool) -> Explained:
    found = _ranked(snap, entry)
    strength = found.strength if found is not None else 0.0
    shown_ids = {e.id for e in snap.render.rendered}
    shown = [r for r in snap.ranked if r.entry.id in shown_ids]
    same_type = [r for r in shown if r.entry.type is entry.type and r.entry.id != entry.id]
    weakest = min((r.strength for r in same_type), default=None)
    type_ = entry.type.value
    against = (
        f"its strength {format_strength(strength)} against {format_strength(weakest)} for the weakest "
        f"{type_} memory shown"
        if weakest is not None
        else f"its strength is {format_strength(strength)}; no other {type_} memory is shown"
    )
    pin = f"`workmem pin {entry.id}` keeps it in the block whatever comes later"
    explained = Explained(
        id=entry.id,
        text=entry.text,
        type=type_,
        status=status,
        in_block=True,
        sentence=f"In the block: {_quoted(entry.text, raw)} ({against}).",
        strength=strength,
        weakest_shown=weakest,
        actions=(pin,),
    )
    if status == DiagnosticStatus.RENDERED:
        return explained
    left = snap.left_out.get(entry.id)
    if left is not None:
        why, todo = _left_out(snap, entry, left, raw)
        sentence = f"Not in the block: {_quoted(entry.text, raw)}, because {why}."
        return replace(explained, in_block=False, sentence=sentence, actions=todo)
    cap = sum(1 for r in snap.shortlist if r.entry.type is entry.type)
    pool = same_type if status == DiagnosticStatus.OMITTED_TYPE_CAP else shown
    outranked = _outrankers(pool, strength, raw)
    names = "; ".join(f"{o.id} ({format_strength(o.strength)}) “{o.text}”" for o in outranked)
    actions = [pin]
    if entry.user_importance is not Importance.HIGH:
        again = f'workmem remember --importance high --type {type_} "{shorten(entry.text, 60)}"'
        actions.append(f"raise its importance: `workmem forget {entry.id}`, then `{again}`")
    tie = (
        " — a tie, settled by source, then the newer memory first"
        if weakest is not None and strength >= weakest
        else ""
    )
    sentence = (
        f"Not in the block: {_quoted(entry.text, raw)}, because {_why_not(status, type_, cap)} "
        f"({against}{tie})." + (f" Outranked by: {names}." if names else "")
    )
    return replace(
        explained, in_block=False, sentence=sentence, outranked_by=outranked, actions=tuple(actions)
    )


#: What ``health`` counts the block's omissions besides its caps as (docs/decisions.md#d22).
LEFT_OUT_COUNTED: Final = (
    (LeftOut.OMITTED_IN_HOST_INSTRUCTIONS, "already said in the host's instruction files"),
    (LeftOut.OMITTED_NEAR_DUPLICATE, "folded into a near-duplicate shown"),
)


def left_out_counts(snap: DiagSnapshot) -> tuple[tuple[str, str, int], ...]:
    """How many memories the block leaves out for each reason besides its caps: (status code, words,
    count)."""
    return tuple(
        (str(status), words, sum(1 for row in snap.memories if row.status == status))
        for status, words in LEFT_OUT_COUNTED
    )


def _left_out(
    snap: DiagSnapshot, entry: MemoryEntry, left: EvidenceInput, raw: bool
) -> tuple[str, tuple[str, ...]]:
    """Why the block leaves ``entry`` out besides its caps (docs/decisions.md#d22), and what to do."""
    details = left.details or {}
    if IN_HOST_INSTRUCTIONS in left.reason_codes:
        file = str(details.get("file") or "the host's instruction file")
        return (
            f"{file} already says it and the host reads that file into every session, so the block "
            "does not repeat it (it stays stored and ranked, and is shown again when the file no "
            "longer says it)"
        ), (f"edit {file} if it should not say this; the next session shows the memory",)
    into = str(details.get("foldedInto") or "")
    strong = next((e for e in snap.store.entries if e.id == into), None)
    partner = f"{into} {_quoted(strong.text, raw)}" if strong is not None else "a memory"
    return (
        f"it is folded into {partner}, which says the same and more and is shown (both stay stored; "
        "this one is shown again once that memory is gone)"
    ), (f"`workmem forget {entry.id}` if it adds nothing to {into or 'that memory'}",)


def _retired(snap: DiagSnapshot, entry: MemoryEntry, status: RowStatus, raw: bool) -> Explained:
    forgotten = _forgotten_on(snap, entry)
    restore = f"`workmem restore {entry.id}` brings it back"
    if forgotten is not None:
        lead = f"Not in the block: forgotten by you on {forgotten}"
    elif entry.superseded_by:
        lead = f"Not in the block: replaced by {entry.superseded_by} on {_date(entry.updated_at)}"
    else:
        lead = f"Not in the block: retired on {_date(entry.updated_at)}"
    return Explained(
        id=entry.id,
        text=entry.text,
        type=entry.type.value,
        status=status,
        in_block=False,
        sentence=f"{lead}: {_quoted(entry.text, raw)}. It is kept, not deleted.",
        actions=(restore,),
        forgotten_on=forgotten,
    )


def _pending(entry: MemoryEntry, status: RowStatus, raw: bool) -> Explained:
    owner = entry.pending_owner_session_id
    if status == DiagnosticStatus.PENDING_REJECTED_CAPACITY:
        lead = "Pending, not stored: the store was full each time it was tried"
        actions: tuple[str, ...] = ("forget memories you no longer need; it is tried again",)
    else:
        waits = f"session {owner}" if owner else "the next session"
        lead = f"Pending: it is stored when {waits} compacts or ends"
        actions = ()
    return Explained(
        id=entry.id,
        text=entry.text,
        type=entry.type.value,
        status=status,
        in_block=False,
        sentence=f"{lead}: {_quoted(entry.text, raw)}.",
        actions=actions,
    )


_ELSEWHERE: Final[dict[str, str]] = {
    DiagnosticStatus.OMITTED_ARCHIVED: "archived: it stayed weak for long and left the store (kept aside)",
    DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE: "merged into another memory with the same text",
    DiagnosticStatus.QUARANTINED_CORRUPT_STORE: "it was in a damaged store that was set aside",
    LeftOut.OMITTED_IN_HOST_INSTRUCTIONS: "the host's instruction files already said it",
    LeftOut.OMITTED_NEAR_DUPLICATE: "folded into a near-duplicate that was shown",
}


def explain_all(
    src: DiagInput, now_ms: int, memory_id: str | None = None, *, raw: bool = False
) -> tuple[Explained, ...]:
    """Every memory of the store and the journal explained (or only ``memory_id``; empty when
    nothing knows it). Texts are cleaned for display unless ``raw``."""
    snap = build_snapshot(src, now_ms)
    ids = [memory_id] if memory_id is not None else [row.id for row in snap.memories]
    fresh = {row.id: row.freshness for row in snap.memories}
    found = (explain_memory(snap, i, raw=raw) for i in ids)
    return tuple(
        replace(
            item,
            text=clean_text(item.text, raw) if item.text is not None else None,
            freshness=_unless_fresh(fresh.get(item.id)),
        )
        for item in found
        if item is not None
    )


def _unless_fresh(freshness: str | None) -> str | None:
    return None if freshness is None or freshness.startswith("fresh,") else freshness


def explain_memory(snap: DiagSnapshot, memory_id: str, *, raw: bool = False) -> Explained | None:
    """``memory_id`` explained; ``None`` when nothing (no store entry, no pending entry, no event)
    knows the id."""
    status = _row_status(snap, memory_id)
    entry = next((e for e in snap.store.entries if e.id == memory_id), None)
    if entry is not None and status is not None:
        if entry.status is MemoryStatus.SUPERSEDED:
            return _retired(snap, entry, status, raw)
        return _active(snap, entry, status, raw)
    pending = next((e for e in snap.journal if e.id == memory_id), None)
    if pending is not None and status is not None:
        return _pending(pending, status, raw)
    events = snap.by_memory.get(memory_id, ())
    if status is None and not events:
        return None
    shown = status if status is not None else (events[-1].outcome if events else DiagnosticStatus.UNKNOWN)
    what = _ELSEWHERE.get(shown, f"known only from its history (last: {events[-1].type})" if events else "")
    taker = next((e for e in snap.store.entries if memory_id in (e.absorbed_ids or ())), None)
    if shown == DiagnosticStatus.OMITTED_ABSORBED_DUPLICATE and taker is not None:
        what = f"merged into {taker.id} {_quoted(taker.text, raw)}, a memory with the same text"
    actions = [f"`workmem trace {memory_id}` shows its history"]
    if shown == DiagnosticStatus.OMITTED_ARCHIVED:
        actions.insert(0, f"`workmem restore {memory_id}` brings it back")
    return Explained(
        id=memory_id,
        text=None,
        type=next((r.type for r in snap.memories if r.id == memory_id), "unknown"),
        status=shown,
        in_block=False,
        sentence=f"Not in the block: {what}.",
        actions=tuple(actions),
    )


def format_explained(item: Explained) -> str:
    """``Memory ID: <sentence>`` and what the user can do, one line each."""
    lines = [f"Memory {item.id}: {item.sentence}"]
    if item.freshness is not None:
        lines.append(f"  - freshness: {item.freshness}")
    lines.extend(f"  - {action}" for action in item.actions)
    return "\n".join(lines)


def explained_json(item: Explained) -> dict[str, Any]:
    built: dict[str, Any] = msgspec.to_builtins(item)
    return {
        "id": built["id"],
        "text": built["text"],
        "type": built["type"],
        "status": str(item.status),
        "inBlock": item.in_block,
        "sentence": item.sentence,
        "strength": item.strength,
        "weakestShown": item.weakest_shown,
        "outrankedBy": built["outranked_by"],
        "actions": list(item.actions),
        "forgottenOn": item.forgotten_on,
        "freshness": item.freshness,
    }
