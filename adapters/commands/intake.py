"""``check`` (the intake demo, no storage) and ``remember`` (a manual memory)."""

from __future__ import annotations

import argparse
import re
from typing import Final

import msgspec

from adapters.clock import now_ms
from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    context,
    memory,
    text_arg,
    write,
    write_json,
)
from adapters.commands.pinning import not_pinned, refusal, remembered_lines
from domain.enums import EventType
from domain.extraction import ExtractionResult, extract_explicit, parse_compaction_candidates
from domain.text import one_line

_BLOCK_HEADER: Final = re.compile(r"memory[ \t]+candidates", re.IGNORECASE)
_CANDIDATE_LINE: Final = re.compile(
    r"^[ \t]*[-*][ \t]*\[?(?:feedback|project|decision|reference)\]?[ \t]", re.IGNORECASE | re.MULTILINE
)
_ACCEPTED: Final = frozenset({EventType.EXPLICIT_MEMORY_DETECTED, EventType.EXTRACTION_CANDIDATE_ACCEPTED})
_REJECTED: Final = frozenset({EventType.EXPLICIT_MEMORY_IGNORED, EventType.EXTRACTION_CANDIDATE_REJECTED})


def analyse(text: str, now_ms: int) -> ExtractionResult:
    """A compaction summary (a ``Memory candidates:`` block, or bare ``- [type] …`` lines) goes
    through candidate parsing; anything else is a user message for the explicit extractor."""
    if _BLOCK_HEADER.search(text):
        return parse_compaction_candidates(text, now_ms)
    if _CANDIDATE_LINE.search(text):
        return parse_compaction_candidates("Memory candidates:\n" + text, now_ms)
    return extract_explicit(text, now_ms)


def decision_lines(result: ExtractionResult) -> list[str]:
    """One line per decision, in the order the extractor made them."""
    by_id = {e.id: e for e in result.entries}
    lines: list[str] = []
    shown: set[str] = set()
    for ev in result.events:
        if ev.type in _ACCEPTED:
            entry = by_id.get(ev.memory.memory_id or "") if ev.memory is not None else None
            if entry is not None and entry.id not in shown:
                shown.add(entry.id)
                lines.append(f"accept [{entry.type.value}] {one_line(entry.text)}")
        elif ev.type in _REJECTED:
            reasons = ",".join(ev.reason_codes) or "rejected"
            lines.append(f"reject {reasons}: {one_line(ev.text_preview or '')}".rstrip())
    for entry in result.entries:  # an accepted entry without its event is still shown
        if entry.id not in shown:
            lines.append(f"accept [{entry.type.value}] {one_line(entry.text)}")
    return lines


def check(args: argparse.Namespace) -> int:

    result = analyse(text_arg(args.text), now_ms())
    lines = decision_lines(result)
    if args.json:
        kept = [{"type": e.type.value, "text": e.text} for e in result.entries]
        write_json({"kept": kept, "decisions": lines})
    else:
        write("\n".join(lines) if lines else "nothing to remember")
    return EXIT_OK if result.entries else EXIT_REJECTED


def remember(args: argparse.Namespace) -> int:
    """Store a manual memory and repeat back what was stored (docs/decisions.md#d20): exit 3 when
    the gate refused it, or when ``--pin`` found the pinned budget full (the memory is stored)."""

    text = text_arg(args.text)
    ctx = context(args)
    result = memory(ctx).remember(
        text,
        type=args.type,
        importance=args.importance,
        scope=getattr(args, "scope", None),
        pin=getattr(args, "pin", False),
        force=getattr(args, "force", False),
        volatility=getattr(args, "volatility", None),
        valid_until=getattr(args, "valid_until", None),
        cite=getattr(args, "cite", None) or (),
    )
    rejected = result.outcome == "rejected"
    unpinned = "pin_budget_full" in result.reasons
    if args.json:
        write_json(msgspec.to_builtins(result))
    elif rejected:
        write(refusal(result.reasons))
    else:
        write("\n".join(remembered_lines(result)))
    if unpinned:
        raise not_pinned(args, "stored")
    return EXIT_REJECTED if rejected else EXIT_OK
