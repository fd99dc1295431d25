"""Compaction candidates: :func:`parse_compaction_candidates` reads the ``Memory candidates:`` block
of a compaction summary and turns each ``- [type] text`` line into a ``compaction`` entry, or an
``extraction_candidate_rejected`` event with the gate's reason codes (docs/decisions.md#d4,
docs/decisions.md#d10)."""

from __future__ import annotations

import re
from itertools import islice
from typing import Final

import msgspec
from returns.result import Failure, Success

from domain import evidence, safety
from domain.bounds import MAX_COMPACTION_CANDIDATES, SUMMARY_BLOCK_CHARS
from domain.enums import EventType, MemorySource, MemoryType, Phase
from domain.extraction.results import (
    EMPTY,
    ExtractionReason,
    ExtractionResult,
    RejectionRecord,
    SupersedeRequest,
    new_entry,
)
from domain.extraction.triggers import NEG_EN, NEG_VERB, NEG_ZH, SEP, is_bare_hedge, request_phrases
from domain.jsregex import DOT, WORD_END
from domain.model import EvidenceInput, MemoryEntry
from domain.text import WS, js_trim, lazy_compile, memory_key
from domain.timeutil import iso_from_ms

__all__ = ["parse_compaction_candidates"]

#: The candidate block formats, in priority order: the first one found wins.
_BLOCK_FORMATS: Final = (
    # Plain label (what the compaction prompt asks for). It ends at a line made of two ASCII words
    # and a colon (``Next steps:``), at a ``## `` heading, at the ``</summary>`` tag that closes the
    # summary block it was written in (docs/hosts.md, Claude Code), or at the end of the summary.
    lazy_compile(
        f"Memory candidates:[{WS}]*\\n((?s:.)*?)"
        f"(?:\\n[A-Za-z][A-Za-z]+ [A-Za-z]+:|\\n##[{WS}]|</summary>|\\Z)",
        re.IGNORECASE,
    ),
    lazy_compile(f"##[{WS}]*Memory Candidates[{WS}]*\\n((?s:.)*?)(?:\\n##[{WS}]|\\Z)", re.IGNORECASE),
    lazy_compile(
        f"##[{WS}]*Workspace Memory Candidates[{WS}]*\\n((?s:.)*?)(?:\\n##[{WS}]|\\Z)", re.IGNORECASE
    ),
    lazy_compile("<workspace_memory_candidates>((?s:.)*?)</workspace_memory_candidates>", re.IGNORECASE),
)

_TYPES: Final = "feedback|project|decision|reference"
_CANDIDATE_LINE: Final = lazy_compile(
    f"-[{WS}]*(?:\\[({_TYPES})\\]|({_TYPES}){WORD_END})[{WS}]+({DOT}+)\\Z", re.IGNORECASE
)
#: ``… (supersedes M3)`` at the end of a candidate line (docs/decisions.md#d10).
_SUPERSEDES: Final = lazy_compile(f"[{WS}]*\\([{WS}]*(?i:supersedes)[{WS}]+[Mm]([0-9]+)[{WS}]*\\)\\Z")

#: A trigger phrase (P1-P6) at the very start of a candidate body is stripped; elsewhere it is text
#: (docs/decisions.md#q-c1).
_CANDIDATE_TRIGGERS: Final = tuple(
    lazy_compile(f"(?:{phrase}){SEP}?[{WS}]*(?P<body>{DOT}+)\\Z", re.IGNORECASE)
    for phrase in request_phrases(WS)
)
_ANY_REQUEST: Final = "(?:" + "|".join(request_phrases(WS, questions=False)) + ")"
#: A body that starts as a negated request: a negative request verb, or a negation word and a
#: request phrase followed by a separator or by another request phrase (``覚えないで 覚えて: …``).
#: ``Do not remember passwords in memory files`` is an ordinary instruction, not a request.
_CANDIDATE_NEGATION: Final = lazy_compile(
    f"(?:please[{WS}]+)?(?:{NEG_VERB}"
    f"|(?:{NEG_EN}[{WS}]+(?:please[{WS}]+)?|{NEG_ZH}[{WS}]*(?:幫我|帮我)?[{WS}]*){_ANY_REQUEST}"
    f"(?:[{WS}]*{SEP}|[{WS}]*(?={_ANY_REQUEST})))",
    re.IGNORECASE,
)


class _Body(msgspec.Struct, frozen=True):
    text: str
    had_trigger: bool


#: Where a candidate block can start (every format names "memory candidates" in some spelling).
_BLOCK_NEEDLE: Final = lazy_compile("memory[ _]candidates", re.IGNORECASE)
_MAX_BLOCK_STARTS: Final = 16


def _extract_block(summary: str) -> str | None:
    """The candidate block, by format priority. A long summary is only searched in windows of
    :data:`~domain.bounds.SUMMARY_BLOCK_CHARS` after each of its first 16 block labels, so the
    block is at most that long."""
    if len(summary) <= SUMMARY_BLOCK_CHARS:
        windows = [summary]
    else:
        starts = [m.start() for m in islice(_BLOCK_NEEDLE.finditer(summary), _MAX_BLOCK_STARTS)]
        windows = [summary[max(0, start - 64) : start + SUMMARY_BLOCK_CHARS] for start in starts]
    for pattern in _BLOCK_FORMATS:
        for window in windows:
            found = pattern.search(window)
            if found is not None:
                return found.group(1) or None
    return None


def _normalize_candidate_body(body: str) -> _Body | None:
    """The candidate text with a leading request phrase removed; ``None`` for a negated request."""
    text = js_trim(body)
    if _CANDIDATE_NEGATION.match(text):
        return None
    for pattern in _CANDIDATE_TRIGGERS:
        found = pattern.match(text)
        if found is not None:
            extracted = js_trim(found.group("body"))
            return _Body(text=extracted, had_trigger=True) if extracted else None
    return _Body(text=text, had_trigger=False)


def parse_compaction_candidates(
    summary: str,
    now_ms: int,
    *,
    workspace_key: str | None = None,
    workspace_root_hash: str | None = None,
) -> ExtractionResult:
    """The memory candidates of a compaction summary.

    Lines that do not follow the ``- [type] text`` grammar are skipped without an event; every other
    line gives exactly one event. ``workspace_key``/``workspace_root_hash`` only label the rejection
    records."""
    block = _extract_block(summary)
    if block is None:
        return EMPTY

    stamp = iso_from_ms(now_ms)
    entries: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    rejections: list[RejectionRecord] = []
    requests: list[SupersedeRequest] = []
    seen: set[str] = set()
    examined = 0
    skipped = 0
    for line in block.split("\n"):
        item = _CANDIDATE_LINE.match(js_trim(line))
        if item is None:
            continue
        if examined >= MAX_COMPACTION_CANDIDATES:
            skipped += 1
            continue
        examined += 1
        type_ = MemoryType((item.group(1) or item.group(2)).lower())
        raw_body = item.group(3)
        label: str | None = None
        suffix = _SUPERSEDES.search(raw_body)
        if suffix is not None:
            label = f"M{suffix.group(1)}"
            raw_body = raw_body[: suffix.start()]
        body = _normalize_candidate_body(raw_body)
        if body is None:
            events.append(
                evidence.candidate_rejected(type_, (ExtractionReason.NEGATED_REQUEST,), item.group(3))
            )
            continue
        if body.had_trigger and is_bare_hedge(body.text):
            events.append(evidence.candidate_rejected(type_, (ExtractionReason.HEDGE_ONLY,), body.text))
            continue
        match safety.admit(type_, body.text, source=MemorySource.COMPACTION, from_trigger=body.had_trigger):
            case Failure(safety.Rejected() as rejected):
                events.append(evidence.candidate_rejected(type_, rejected.reasons, body.text))
                if rejected.from_quality_gate:
                    rejections.append(
                        RejectionRecord(
                            timestamp=stamp,
                            type=type_.value,
                            text=safety.redact(body.text),
                            reasons=rejected.reasons,
                            workspace_key=workspace_key,
                            workspace_root_hash=workspace_root_hash,
                        )
                    )
            case Success(str() as stored):
                key = memory_key(type_.value, stored)
                if key in seen:
                    events.append(
                        evidence.candidate_rejected(
                            type_, (ExtractionReason.DUPLICATE_IN_SUMMARY,), body.text
                        )
                    )
                    continue
                seen.add(key)
                entry = new_entry(now_ms, len(entries), type_, stored, MemorySource.COMPACTION, 0.75)
                entries.append(entry)
                if label is not None:
                    requests.append(SupersedeRequest(memory_id=entry.id, label=label))
                events.append(
                    evidence.candidate_accepted(
                        entry,
                        (safety.GateReason.QUALITY_GATE_PASSED, ExtractionReason.VALID_CANDIDATE_FORMAT),
                    )
                )
    if skipped:
        events.append(
            evidence.skipped(
                EventType.EXTRACTION_CANDIDATE_REJECTED,
                Phase.EXTRACTION,
                ExtractionReason.CANDIDATE_LIMIT,
                {"skippedCandidates": skipped, "examinedCandidates": examined},
            )
        )
    return ExtractionResult(
        entries=tuple(entries),
        events=tuple(events),
        rejections=tuple(rejections),
        supersede_requests=tuple(requests),
    )
