"""Explicit memory requests: :func:`extract_explicit` reads a user message and finds requests such as
"remember this: …", "記住：…" or "from now on …" (docs/decisions.md#explicit-requests). Every request
becomes an ``explicit`` entry or an ``explicit_memory_ignored`` event that says why not (negated,
deferred, too short, repeated, unsafe)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Final

import msgspec
from returns.result import Failure, Success

from domain import evidence, safety
from domain.bounds import MAX_EXPLICIT_REQUESTS, message_window
from domain.enums import EventType, MemorySource, MemoryType, Phase, Scope
from domain.extraction.results import ExtractionReason, ExtractionResult, new_entry
from domain.extraction.triggers import (
    DEFERRAL,
    EXPLICIT_PATTERNS,
    NEGATION,
    NEGATION_LEAD,
    PINNED_PATTERN,
    is_bare_hedge,
    until_body,
    user_scope_body,
)
from domain.freshness import parse_until
from domain.jsregex import LINE_TERMINATORS
from domain.model import EvidenceInput, MemoryEntry
from domain.text import collapse_whitespace, js_trim, lazy_compile

__all__ = ["classify_explicit_memory", "extract_explicit"]

_URL: Final = lazy_compile(r"https?://")
_TERMINATOR: Final = lazy_compile(f"[{LINE_TERMINATORS}]")

_EXPLICIT_MIN_CHARS: Final = 8


def classify_explicit_memory(text: str) -> MemoryType:
    """The type of an explicit memory from plain substrings of its lower-cased text (first hit wins)."""
    lower = text.lower()
    if _URL.search(lower) or any(w in lower for w in ("linear", "slack", "notion", "dashboard", "grafana")):
        return MemoryType.REFERENCE
    if any(w in lower for w in ("decide", "decision", "choose", "chosen", "决定", "決定", "选择", "選擇")):
        return MemoryType.DECISION
    if any(w in lower for w in ("project", "repo", "项目", "專案")):
        return MemoryType.PROJECT
    return MemoryType.FEEDBACK


class _Match(msgspec.Struct, frozen=True):
    pattern: int
    trigger_start: int
    body_start: int
    body_end: int
    body: str


class _Scope(msgspec.Struct, frozen=True):
    start: int
    end: int
    reported: bool


class _Lines:
    """Line geometry of a text (JavaScript line terminators), for offset look-ups in O(log n)."""

    def __init__(self, text: str) -> None:
        #: offsets of every line terminator, then the length of the text
        self.ends = [found.start() for found in _TERMINATOR.finditer(text)]
        self.ends.append(len(text))

    def end(self, offset: int) -> int:
        """Where the line holding ``offset`` ends."""
        return self.ends[bisect_left(self.ends, offset)]

    def start(self, offset: int) -> int:
        """Where the line holding ``offset`` starts."""
        index = bisect_left(self.ends, offset)
        return self.ends[index - 1] + 1 if index else 0


def _negation_scopes(text: str, lines: _Lines) -> tuple[list[_Scope], list[EvidenceInput]]:
    """Every negated request of ``text`` (disjoint scopes, in text order) and the events of those
    that make up their own line."""
    scopes: list[_Scope] = []
    events: list[EvidenceInput] = []
    for found in NEGATION.finditer(text):
        neg_start = found.start("neg")
        at_line_start = NEGATION_LEAD.fullmatch(text, lines.start(neg_start), neg_start) is not None
        body = found.group("body")
        anchor = found.start("body") if body is not None else neg_start
        reported = at_line_start and body is not None
        scopes.append(_Scope(start=neg_start, end=lines.end(anchor), reported=reported))
        if reported:
            events.append(_ignored(ExtractionReason.NEGATED_REQUEST, body or ""))
    return scopes, events


def _scope_of(scopes: list[_Scope], starts: list[int], offset: int) -> _Scope | None:
    index = bisect_right(starts, offset) - 1
    if index >= 0 and offset < scopes[index].end:
        return scopes[index]
    return None


def _ignored(reason: ExtractionReason, text: str) -> EvidenceInput:
    return evidence.explicit_ignored((reason,), text)


def _explicit_matches(text: str) -> list[_Match]:
    found: list[_Match] = []
    for index, pattern in enumerate(EXPLICIT_PATTERNS):
        for match in pattern.finditer(text):
            found.append(
                _Match(
                    pattern=index,
                    trigger_start=match.start("trigger"),
                    body_start=match.start("body"),
                    body_end=match.end("body"),
                    body=match.group("body"),
                )
            )
    return found


def _outermost(matches: list[_Match], lines: _Lines) -> list[_Match]:
    """Drop every match whose trigger sits inside another match's body: the outer request already
    holds the whole statement (docs/decisions.md#q-e3: the reference gave one entry per overlapping
    pattern). A body runs to the end of its line, so it is enough to know where the earliest body of
    each line starts."""
    first_body: dict[int, int] = {}
    for match in matches:
        first_body[match.body_end] = min(first_body.get(match.body_end, match.body_start), match.body_start)
    return [
        match
        for match in matches
        if first_body.get(lines.end(match.trigger_start), match.trigger_start + 1) > match.trigger_start
    ]


def extract_explicit(text: str, now_ms: int, *, id_seed: str = "") -> ExtractionResult:
    """The explicit memory requests of one user message. ``id_seed`` (for example the session and
    message ids) keeps the ids of equal requests from different messages apart.

    Events: one ``negated_request`` per line that is itself a negated request, then, pattern by
    pattern and in text order, one event per remaining trigger match (``deferral``, ``too_short``,
    ``negated_request``, ``duplicate_in_message``, ``prompt_injection`` or ``explicit_memory_detected``).
    Entries come out in pattern order, as in the reference."""
    window = message_window(text)
    text = window.text
    lines = _Lines(text)
    scopes, events = _negation_scopes(text, lines)
    if window.skipped:
        events.append(
            evidence.skipped(
                EventType.EXPLICIT_MEMORY_IGNORED,
                Phase.EXPLICIT,
                ExtractionReason.INPUT_WINDOW,
                {"skippedChars": window.skipped},
            )
        )
    scope_starts = [scope.start for scope in scopes]
    matches = _outermost(_explicit_matches(text), lines)
    if len(matches) > MAX_EXPLICIT_REQUESTS:
        events.append(
            evidence.skipped(
                EventType.EXPLICIT_MEMORY_IGNORED,
                Phase.EXPLICIT,
                ExtractionReason.REQUEST_LIMIT,
                {"skippedRequests": len(matches) - MAX_EXPLICIT_REQUESTS},
            )
        )
        matches = matches[:MAX_EXPLICIT_REQUESTS]

    entries: list[MemoryEntry] = []
    seen: set[str] = set()
    for match in matches:
        scope = _scope_of(scopes, scope_starts, match.trigger_start)
        if scope is not None and scope.reported:
            continue  # the line's own negation event already speaks for this request
        body = js_trim(match.body)
        everywhere = user_scope_body(body)
        if everywhere is not None:
            body = js_trim(everywhere)
        bounded = until_body(body)
        until = parse_until(bounded[1]) if bounded is not None else None
        if bounded is not None and until is not None:
            body = js_trim(bounded[0])
        if body and DEFERRAL.fullmatch(body):
            events.append(_ignored(ExtractionReason.DEFERRAL, body))
            continue
        if body and is_bare_hedge(body):
            events.append(_ignored(ExtractionReason.HEDGE_ONLY, body))
            continue
        if len(body) < _EXPLICIT_MIN_CHARS:
            events.append(_ignored(ExtractionReason.TOO_SHORT, body))
            continue
        if scope is not None:
            events.append(_ignored(ExtractionReason.NEGATED_REQUEST, body))
            continue
        key = collapse_whitespace(body.lower())
        if key in seen:
            events.append(_ignored(ExtractionReason.DUPLICATE_IN_MESSAGE, body))
            continue
        seen.add(key)
        type_ = classify_explicit_memory(safety.redact(body))
        match safety.admit(type_, body, source=MemorySource.EXPLICIT, from_trigger=True):
            case Failure(safety.Rejected() as rejected):
                events.append(evidence.explicit_ignored(rejected.reasons, body))
            case Success(str() as stored):
                entry = new_entry(now_ms, len(entries), type_, stored, MemorySource.EXPLICIT, 1.0, id_seed)
                if everywhere is not None:
                    entry = msgspec.structs.replace(entry, scope=Scope.USER)
                if match.pattern == PINNED_PATTERN:  # "always remember: …" (docs/decisions.md#d20)
                    entry = msgspec.structs.replace(entry, pinned=True)
                if until is not None:
                    entry = msgspec.structs.replace(entry, valid_until=until)
                entries.append(entry)
                events.append(evidence.explicit_detected(entry, ExtractionReason.EXPLICIT_TRIGGER_MATCHED))
    return ExtractionResult(entries=tuple(entries), events=tuple(events))
