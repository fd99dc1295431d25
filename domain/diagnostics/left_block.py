"""Memories that left the block but are still stored: what a user means by "disappeared" when a
memory they saw in the prompt is no longer there (``workmem disappearances``). A memory left the
block when it was shown once (a ``lastRenderedAt`` time, or a ``render_selected`` event) and is not
shown now. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from domain.diagnostics.common import clean_text, shorten
from domain.diagnostics.snapshot import DiagSnapshot
from domain.diagnostics.status import DiagnosticStatus, LeftOut, RowStatus
from domain.enums import EventType, MemoryStatus
from domain.timeutil import iso_from_ms

_WHY: Final[dict[str, str]] = {
    DiagnosticStatus.OMITTED_TYPE_CAP: "stronger memories of its type took every place",
    DiagnosticStatus.OMITTED_GLOBAL_CAP: "the block was full with stronger memories",
    DiagnosticStatus.OMITTED_CHAR_BUDGET: "the block's character budget was used up",
    LeftOut.OMITTED_IN_HOST_INSTRUCTIONS: "the host's instruction files already say it",
    LeftOut.OMITTED_NEAR_DUPLICATE: "folded into a near-duplicate that is shown",
}


class LeftBlock(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    type: str
    text: str
    status: RowStatus
    last_shown: str | None


def left_block_rows(snap: DiagSnapshot) -> tuple[LeftBlock, ...]:
    """The active memories not shown now that were shown before, most recently shown first."""
    shown = {e.id for e in snap.render.rendered}
    status = {row.id: row.status for row in snap.memories}
    rows: list[tuple[float, LeftBlock]] = []
    for entry in snap.store.entries:
        if entry.status is not MemoryStatus.ACTIVE or entry.id in shown:
            continue
        selected = [e for e in snap.by_memory.get(entry.id, ()) if e.type == EventType.RENDER_SELECTED]
        if entry.last_rendered_at is None and not selected:
            continue
        when = (
            iso_from_ms(entry.last_rendered_at)
            if entry.last_rendered_at is not None
            else selected[-1].created_at
        )
        rows.append(
            (
                float(entry.last_rendered_at or 0),
                LeftBlock(
                    id=entry.id,
                    type=entry.type.value,
                    text=entry.text,
                    status=status.get(entry.id, DiagnosticStatus.OMITTED_CHAR_BUDGET),
                    last_shown=when,
                ),
            )
        )
    return tuple(row for _, row in sorted(rows, key=lambda pair: -pair[0]))


def format_left_block(rows: Sequence[LeftBlock], *, raw: bool = False) -> str:
    if not rows:
        return "Left the block: none (every memory shown before is still shown)."
    out = ["Left the block (still stored; `workmem explain ID` says what brings it back):"]
    for row in rows:
        why = _WHY.get(row.status, "it is no longer shown")
        since = f", last shown {row.last_shown[:10]}" if row.last_shown else ""
        out.append(f"  {row.id} [{row.type}] {shorten(clean_text(row.text, raw), 80)}: {why}{since}")
    return "\n".join(out)


def left_block_json(rows: Sequence[LeftBlock], *, raw: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "id": row.id,
            "type": row.type,
            "text": shorten(clean_text(row.text, raw), 120),
            "status": str(row.status),
            "lastShown": row.last_shown,
        }
        for row in rows
    ]
