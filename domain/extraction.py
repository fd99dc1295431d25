"""Turning text into memory candidates: explicit user requests and compaction summaries.

Two pure parsers live here:

* :func:`extract_explicit` reads a user message and finds explicit memory requests ("remember this: …",
  "記住：…", "from now on …", …). Every request becomes an ``explicit`` entry or an
  ``explicit_memory_ignored`` event that says why not (negated, deferred, too short, repeated, unsafe).
* :func:`parse_compaction_candidates` reads the ``Memory candidates:`` block of a compaction summary and
  turns each ``- [type] text`` line into a ``compaction`` entry, or an ``extraction_candidate_rejected``
  event with the gate's reason codes.

Both are total (they never raise), deterministic (ids come from :func:`domain.ids.memory_id`, time
from ``now_ms``) and send every text through the shared safety gate before it is stored
(docs/decisions.md#d4).

Regex dialect: the reference patterns are JavaScript. Here ``WS`` stands for JavaScript's ``\\s``,
``HS`` for the same set without line terminators, ``[^LT]`` for JavaScript's ``.``, and ASCII word
boundaries are written as explicit lookarounds (see ``domain.text``).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import islice
from typing import Final

import msgspec
from returns.result import Success

from domain import safety
from domain.bounds import (
    MAX_COMPACTION_CANDIDATES,
    MAX_EXPLICIT_REQUESTS,
    SUMMARY_BLOCK_CHARS,
    message_window,
)
from domain.evidence import event, memory_ref
from domain.ids import memory_id
from domain.model import (
    EventType,
    EvidenceInput,
    EvidenceLogLimits,
    LongTermLimits,
    MemoryEntry,
    MemoryRef,
    MemorySource,
    MemoryStatus,
    MemoryType,
    Outcome,
    Phase,
)
from domain.text import WS, collapse_whitespace, js_trim, lazy_compile, memory_key
from domain.timeutil import iso_from_ms

__all__ = [
    "ExtractionResult",
    "RejectionRecord",
    "SupersedeRequest",
    "build_compaction_addendum",
    "build_compaction_prompt",
    "classify_explicit_memory",
    "extract_explicit",
    "parse_compaction_candidates",
    "stale_after_days_for",
    "static_compaction_prompt",
]

# ---------------------------------------------------------------------------------------------
# Result values
# ---------------------------------------------------------------------------------------------


def _compaction_source() -> str:
    # A factory rather than a plain default so that ``omit_defaults`` still writes the field:
    # every rejection-log line carries ``"source":"compaction"`` as the reference writes it.
    return "compaction"


class RejectionRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One line of the global extraction-rejection log (a candidate the quality gate turned down).

    Field order is the order of the JSON line. ``text`` is redacted, trimmed and not truncated."""

    timestamp: str
    type: str
    text: str
    reasons: tuple[str, ...]
    source: str = msgspec.field(default_factory=_compaction_source)
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


_EMPTY: Final = ExtractionResult(entries=(), events=())

# ---------------------------------------------------------------------------------------------
# Regex building blocks
# ---------------------------------------------------------------------------------------------

#: JavaScript line terminators (what ``.`` excludes and where ``^``/``$`` stop under the m flag).
_LT: Final = r"\n\r\u2028\u2029"
#: JavaScript whitespace without the line terminators.
_HS: Final = r"\t\v\f \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff"
_DOT: Final = f"[^{_LT}]"
#: ``(?:^|\n)\s*`` under the m flag, written so that it never rescans whitespace: a trigger must
#: follow the start of its line and horizontal whitespace only (the same triggers match).
_LINE_START: Final = f"(?<![^{_LT}])[{_HS}]*"
_TERMINATOR: Final = lazy_compile(f"[{_LT}]")
_WORD_END: Final = "(?![A-Za-z0-9_])"
_WORD_START: Final = "(?<![A-Za-z0-9_])"
_SEP: Final = "[:：,，]"
_QUESTION_WORDS: Final = "when|what|how|why|who|whom|whose|where|which|whether|if"


def _zh_remember(questions: bool) -> str:
    # 記得嗎 / 记得吗 is a question ("do you remember?"), not a request (docs/decisions.md#q-e4).
    ask = "(?![吗嗎])" if questions else ""
    return (
        "(?:请|請)?(?:帮我|幫我)?"
        f"(?:记住|記住|记得{ask}|記得{ask}|记下来|記下來)"
        "(?:这一点|這一點|这点|這點|这个|這個)?"
    )


def _ja_remember() -> str:
    # Longer (polite) forms first so that no suffix leaks into the body (docs/decisions.md#q-e1).
    return (
        "(?:覚えておいてください|覚えておいて|覚えといて|覚えてください|覚えて"
        "|忘れないでください|忘れないで"
        "|メモしておいてください|メモしておいて|メモしてください|メモして)"
    )


def _ko_remember(s: str) -> str:
    return (
        f"(?:기억해[{s}]*주세요|기억해[{s}]*줘|기억해"
        f"|잊지[{s}]*마세요|잊지 마|잊지마"
        f"|메모해[{s}]*주세요|메모해[{s}]*줘|메모해)"
    )


def _en_remember(s: str, questions: bool) -> str:
    # ``remember`` needs a word boundary (docs/decisions.md#q-e1), and ``remember when …?`` is a question.
    ask = f"(?![{WS}]+(?:{_QUESTION_WORDS}){_WORD_END})" if questions else ""
    return f"(?:please[{s}]+)?remember{_WORD_END}{ask}(?:[{s}]+(?:this|that){_WORD_END})?"


def _en_save(s: str) -> str:
    return f"(?:please[{s}]+)?(?:save|add)[{s}]+(?:this|that)?[{s}]*(?:to|in)[{s}]+memory{_WORD_END}"


def _en_commit(s: str) -> str:
    return f"(?:please[{s}]+)?commit[{s}]+(?:this|that)?[{s}]*to memory{_WORD_END}"


_FROM_NOW_ON: Final = (
    "(?:从现在开始|從現在開始|从今以后|從今以後"
    f"|{_WORD_START}(?:from now on(?:wards)?|going forwards?){_WORD_END})"
)
_PREFERENCE_ZH: Final = "(?:我的偏好是|我偏好|以后请|以後請|以后都|以後都)"
_PREFERENCE_EN: Final = f"(?:my preference is|i prefer){_WORD_END}"


def _request_phrases(s: str, questions: bool = True) -> tuple[str, ...]:
    """The trigger phrases P1-P6 of docs/decisions.md#explicit-requests (the ones a candidate body
    may start with). ``s`` is the space class allowed inside a phrase; ``questions=False`` drops the
    question exclusions, for negation (``don't remember when …`` still negates whatever trigger
    follows on the line)."""
    return (
        _zh_remember(questions),
        _ja_remember(),
        _ko_remember(s),
        _en_remember(s, questions),
        _en_save(s),
        _en_commit(s),
    )


def _all_phrases(s: str, questions: bool = True) -> tuple[str, ...]:
    """All nine trigger phrases P1-P9 (docs/decisions.md#explicit-requests), in the reference's order."""
    return (*_request_phrases(s, questions), _FROM_NOW_ON, _PREFERENCE_ZH, _PREFERENCE_EN)


#: Which explicit patterns must start a line (P7 and P8 match anywhere).
_ANCHORED: Final = (True, True, True, True, True, True, False, False, True)

_BODY: Final = f"{_SEP}?[{WS}]*(?P<body>{_DOT}+)(?=[{_LT}]|\\Z)"


def _explicit_pattern(phrase: str, anchored: bool) -> re.Pattern[str]:
    lead = _LINE_START if anchored else ""
    return lazy_compile(f"{lead}(?P<trigger>{phrase}){_BODY}", re.IGNORECASE)


_EXPLICIT_PATTERNS: Final = tuple(
    _explicit_pattern(phrase, anchored) for phrase, anchored in zip(_all_phrases(WS), _ANCHORED, strict=True)
)

# Negation. A negation word right before any trigger phrase, or a negative request verb, starts a
# negation scope that runs to the end of the request's body line: every trigger inside it is negated
# (docs/decisions.md#q-e2: this covers the unanchored P7/P8 phrases too). The words and the trigger
# stay on one line.
_NEG_EN: Final = f"{_WORD_START}(?:do[{_HS}]+not|don['’]t|dont|never|not|cannot|can['’]t)"
_NEG_ZH: Final = "(?:不要|別|别|不用|不需要|勿)"
_NEG_VERB: Final = f"(?:覚えないで|記憶しないで|メモしないで|기억하지[{_HS}]*마|메모하지[{_HS}]*마)"
_ANY_TRIGGER_HS: Final = "(?:" + "|".join(_all_phrases(_HS, questions=False)) + ")"
_NEG_LEAD: Final = f"(?:{_NEG_EN}[{_HS}]+(?:please[{_HS}]+)?|{_NEG_ZH}[{_HS}]*(?:幫我|帮我)?[{_HS}]*)"
_NEGATION: Final = lazy_compile(
    f"(?P<neg>{_NEG_LEAD}{_ANY_TRIGGER_HS}|{_NEG_VERB}){_SEP}?[{WS}]*(?P<body>{_DOT}+)?",
    re.IGNORECASE,
)
#: What may stand between the start of a line and a negation for the line itself to be the request.
_NEGATION_LEAD: Final = lazy_compile(f"[{_HS}]*(?:please[{_HS}]+)?", re.IGNORECASE)

_DEFERRAL: Final = lazy_compile("(?:再说|再說|later|next time)", re.IGNORECASE)
#: A trigger's remainder that is only a hedge or a courtesy (``from now onwards if possible``) says
#: nothing to remember.
_HEDGE_WORDS: Final = (
    "please|pls|thanks|thank you|thx|ok|okay|too|also|as well|for now|if possible|if at all possible"
    "|if you can|if you could|when possible|whenever possible|where possible|as much as possible"
    "|if needed|as needed|if necessary|if that'?s (?:ok|okay|fine|alright)|if you don'?t mind"
)
_HEDGE_ONLY: Final = lazy_compile(
    f"(?:(?:{_HEDGE_WORDS})[{WS},;:.!?…]*)+",
    re.IGNORECASE,
)


def is_bare_hedge(body: str) -> bool:
    """True when ``body`` is nothing but hedges and courtesies (``if possible``, ``please, thanks``)."""
    return _HEDGE_ONLY.fullmatch(js_trim(body)) is not None
_URL: Final = lazy_compile(r"https?://")

_EXPLICIT_MIN_CHARS: Final = 8
_PREVIEW_ACCEPTED: Final = EvidenceLogLimits.MAX_PREVIEW_CHARS
_PREVIEW_REJECTED: Final = EvidenceLogLimits.MAX_REJECTED_PREVIEW_CHARS

# ---------------------------------------------------------------------------------------------
# Explicit extraction
# ---------------------------------------------------------------------------------------------


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


def stale_after_days_for(type_: MemoryType) -> int | None:
    """Days after which a memory of this type is marked for verification (``None``: never)."""
    if type_ == MemoryType.FEEDBACK:
        return None
    if type_ == MemoryType.DECISION:
        return 45
    if type_ == MemoryType.PROJECT:
        return 60
    return 90


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
    for found in _NEGATION.finditer(text):
        neg_start = found.start("neg")
        at_line_start = _NEGATION_LEAD.fullmatch(text, lines.start(neg_start), neg_start) is not None
        body = found.group("body")
        anchor = found.start("body") if body is not None else neg_start
        reported = at_line_start and body is not None
        scopes.append(_Scope(start=neg_start, end=lines.end(anchor), reported=reported))
        if reported:
            events.append(_ignored("negated_request", body or ""))
    return scopes, events


def _scope_of(scopes: list[_Scope], starts: list[int], offset: int) -> _Scope | None:
    index = bisect_right(starts, offset) - 1
    if index >= 0 and offset < scopes[index].end:
        return scopes[index]
    return None


def _ignored(reason: str, text: str) -> EvidenceInput:
    return event(
        EventType.EXPLICIT_MEMORY_IGNORED,
        Phase.EXPLICIT,
        Outcome.REJECTED,
        (reason,),
        text=text,
        preview_limit=_PREVIEW_REJECTED,
    )


def _skipped(type_: EventType, phase: Phase, reason: str, details: dict[str, int]) -> EvidenceInput:
    """One event that records how much of a large input was not examined."""
    return event(type_, phase, Outcome.REJECTED, (reason,), details=details)


def _explicit_matches(text: str) -> list[_Match]:
    found: list[_Match] = []
    for index, pattern in enumerate(_EXPLICIT_PATTERNS):
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


def _entry(
    now_ms: int,
    seq: int,
    type_: MemoryType,
    text: str,
    source: MemorySource,
    confidence: float,
    id_seed: str = "",
) -> MemoryEntry:
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
            _skipped(
                EventType.EXPLICIT_MEMORY_IGNORED,
                Phase.EXPLICIT,
                "input_window",
                {"skippedChars": window.skipped},
            )
        )
    scope_starts = [scope.start for scope in scopes]
    matches = _outermost(_explicit_matches(text), lines)
    if len(matches) > MAX_EXPLICIT_REQUESTS:
        events.append(
            _skipped(
                EventType.EXPLICIT_MEMORY_IGNORED,
                Phase.EXPLICIT,
                "request_limit",
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
        if body and _DEFERRAL.fullmatch(body):
            events.append(_ignored("deferral", body))
            continue
        if body and is_bare_hedge(body):
            events.append(_ignored("hedge_only", body))
            continue
        if len(body) < _EXPLICIT_MIN_CHARS:
            events.append(_ignored("too_short", body))
            continue
        if scope is not None:
            events.append(_ignored("negated_request", body))
            continue
        key = collapse_whitespace(body.lower())
        if key in seen:
            events.append(_ignored("duplicate_in_message", body))
            continue
        seen.add(key)
        type_ = classify_explicit_memory(safety.redact(body))
        outcome = safety.gate_memory(type_.value, body, source=MemorySource.EXPLICIT.value, from_trigger=True)
        if not isinstance(outcome, Success):
            rejected = outcome.failure()
            events.append(
                event(
                    EventType.EXPLICIT_MEMORY_IGNORED,
                    Phase.EXPLICIT,
                    Outcome.REJECTED,
                    rejected.reasons,
                    text=body,
                    preview_limit=_PREVIEW_REJECTED,
                )
            )
            continue
        stored = safety.stored_text(outcome.unwrap().text, LongTermLimits.MAX_ENTRY_TEXT_CHARS)
        entry = _entry(now_ms, len(entries), type_, stored, MemorySource.EXPLICIT, 1.0, id_seed)
        entries.append(entry)
        events.append(
            event(
                EventType.EXPLICIT_MEMORY_DETECTED,
                Phase.EXPLICIT,
                Outcome.ACCEPTED,
                ("explicit_trigger_matched",),
                memory=memory_ref(entry, with_keys=False),
                text=entry.text,
                preview_limit=_PREVIEW_ACCEPTED,
            )
        )
    return ExtractionResult(entries=tuple(entries), events=tuple(events))


# ---------------------------------------------------------------------------------------------
# Compaction candidates
# ---------------------------------------------------------------------------------------------

#: The candidate block formats, in priority order: the first one found wins.
_BLOCK_FORMATS: Final = (
    # Plain label (what the compaction prompt asks for). It ends at a line made of two ASCII words
    # and a colon (``Next steps:``), at a ``## `` heading, or at the end of the summary.
    lazy_compile(
        f"Memory candidates:[{WS}]*\\n((?s:.)*?)(?:\\n[A-Za-z][A-Za-z]+ [A-Za-z]+:|\\n##[{WS}]|\\Z)",
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
    f"-[{WS}]*(?:\\[({_TYPES})\\]|({_TYPES}){_WORD_END})[{WS}]+({_DOT}+)\\Z", re.IGNORECASE
)
#: ``… (supersedes M3)`` at the end of a candidate line (docs/decisions.md#d10).
_SUPERSEDES: Final = lazy_compile(f"[{WS}]*\\([{WS}]*(?i:supersedes)[{WS}]+[Mm]([0-9]+)[{WS}]*\\)\\Z")

#: A trigger phrase (P1-P6) at the very start of a candidate body is stripped; elsewhere it is text
#: (docs/decisions.md#q-c1).
_CANDIDATE_TRIGGERS: Final = tuple(
    lazy_compile(f"(?:{phrase}){_SEP}?[{WS}]*(?P<body>{_DOT}+)\\Z", re.IGNORECASE)
    for phrase in _request_phrases(WS)
)
_ANY_REQUEST: Final = "(?:" + "|".join(_request_phrases(WS, questions=False)) + ")"
#: A body that starts as a negated request: a negative request verb, or a negation word and a
#: request phrase followed by a separator or by another request phrase (``覚えないで 覚えて: …``).
#: ``Do not remember passwords in memory files`` is an ordinary instruction, not a request.
_CANDIDATE_NEGATION: Final = lazy_compile(
    f"(?:please[{WS}]+)?(?:{_NEG_VERB}"
    f"|(?:{_NEG_EN}[{WS}]+(?:please[{WS}]+)?|{_NEG_ZH}[{WS}]*(?:幫我|帮我)?[{WS}]*){_ANY_REQUEST}"
    f"(?:[{WS}]*{_SEP}|[{WS}]*(?={_ANY_REQUEST})))",
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


def _candidate_rejected(type_: MemoryType, reasons: tuple[str, ...], text: str) -> EvidenceInput:
    return event(
        EventType.EXTRACTION_CANDIDATE_REJECTED,
        Phase.EXTRACTION,
        Outcome.REJECTED,
        reasons,
        memory=MemoryRef(type=type_.value, source=MemorySource.COMPACTION.value),
        text=text,
        preview_limit=_PREVIEW_REJECTED,
    )


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
        return _EMPTY

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
            events.append(_candidate_rejected(type_, ("negated_request",), item.group(3)))
            continue
        if body.had_trigger and is_bare_hedge(body.text):
            events.append(_candidate_rejected(type_, ("hedge_only",), body.text))
            continue
        outcome = safety.gate_memory(
            type_.value, body.text, source=MemorySource.COMPACTION.value, from_trigger=body.had_trigger
        )
        if not isinstance(outcome, Success):
            rejected = outcome.failure()
            events.append(_candidate_rejected(type_, rejected.reasons, body.text))
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
            continue
        stored = safety.stored_text(outcome.unwrap().text, LongTermLimits.MAX_ENTRY_TEXT_CHARS)
        key = memory_key(type_.value, stored)
        if key in seen:
            events.append(_candidate_rejected(type_, ("duplicate_in_summary",), body.text))
            continue
        seen.add(key)
        entry = _entry(now_ms, len(entries), type_, stored, MemorySource.COMPACTION, 0.75)
        entries.append(entry)
        if label is not None:
            requests.append(SupersedeRequest(memory_id=entry.id, label=label))
        events.append(
            event(
                EventType.EXTRACTION_CANDIDATE_ACCEPTED,
                Phase.EXTRACTION,
                Outcome.ACCEPTED,
                ("quality_gate_passed", "valid_candidate_format"),
                memory=memory_ref(entry, with_keys=False),
                text=entry.text,
                preview_limit=_PREVIEW_ACCEPTED,
            )
        )
    if skipped:
        events.append(
            _skipped(
                EventType.EXTRACTION_CANDIDATE_REJECTED,
                Phase.EXTRACTION,
                "candidate_limit",
                {"skippedCandidates": skipped, "examinedCandidates": examined},
            )
        )
    return ExtractionResult(
        entries=tuple(entries),
        events=tuple(events),
        rejections=tuple(rejections),
        supersede_requests=tuple(requests),
    )


# ---------------------------------------------------------------------------------------------
# The compaction prompt
# ---------------------------------------------------------------------------------------------

#: The one rule line workmem adds to the reference prompt (docs/decisions.md#d10): a new decision may
#: name the numbered memory of the background block that it replaces.
SUPERSEDE_RULE: Final = (
    "- If a new decision replaces a memory labelled [M<n>] in the background context, end its line with"
    " (supersedes M<n>)."
)

_PROMPT_LINES: Final = (
    "Provide a detailed summary for continuing our conversation above.",
    "Focus on information that would help another agent continue the work: the goal, user instructions,"
    " completed work, current state, decisions, relevant files, and next steps.",
    "",
    "Do not call any tools. Respond only with the summary text.",
    "Respond in the same language as the user's messages in the conversation.",
    "",
    "Formatting rules:",
    '- Start the response with "## Goal".',
    "- Use Markdown headings only.",
    "- Do not output YAML frontmatter.",
    "- Do not output horizontal rules.",
    "- Do not wrap the summary in delimiter lines such as ---.",
    "- Do not use code fences around the summary.",
    "",
    "Use this structure:",
    "",
    "## Goal",
    "",
    "## Instructions",
    "",
    "## Progress",
    "",
    "## Key Decisions",
    "",
    "## Discoveries",
    "",
    "## Next Steps",
    "",
    "## Relevant Files",
    "",
    "At the end of the summary, include a Memory candidates section only if there are durable facts that"
    " will change future behavior.",
    "",
    "CRITICAL MEMORY RULES:",
    "- Most compactions should produce ZERO memories. Empty is correct when nothing durable changed.",
    "- NO completion or progress statements: do not extract completed work, passing tests, commits,"
    " PR status, wave/task/phase completion, or current state.",
    "- NO session-internal implementation notes: do not extract what files were edited, what bug was"
    " just fixed, what command just ran, or what the assistant reviewed.",
    "- feedback ONLY means stable user preferences or user instructions, written in imperative/future-facing"
    " form.",
    "- decision ONLY means rules that apply to FUTURE work, not decisions already implemented in this"
    " session.",
    "- project/reference ONLY when the fact is stable across sessions and hard to rediscover from the"
    " repository.",
    SUPERSEDE_RULE,
    "- If unsure, skip it.",
    "",
    "Good memory examples:",
    "- [feedback] User prefers architecture reviews in Traditional Chinese.",
    "- [decision] Do not add semantic merge to memory dedupe.",
    "- [project] This repository is an OpenCode plugin using local JSON stores.",
    "- [reference] Workspace memory is rendered as frozen system[1]; pending memories remain in hot state"
    " until compaction.",
    "",
    "Bad memory examples to skip:",
    "- Wave 2 completed successfully.",
    "- 180 tests passed and CI is green.",
    "- Implemented owner-aware cleanup in plugin.ts.",
    "- The assistant reviewed code reviewer feedback and updated the plan.",
    "- Commit a762e86 contains the owner scope fix.",
    "",
    "Format when there ARE durable memories:",
    "Memory candidates:",
    "- [feedback|decision|project|reference] future-facing durable fact",
    "",
    "Format when there are NO durable memories:",
    "Memory candidates:",
    "(none)",
    "",
    "Background context, use this to inform the summary above.",
    "Do not output this context verbatim:",
    "",
)


def build_compaction_prompt(context: str) -> str:
    """The prompt that replaces the host's default compaction prompt; ``context`` (frozen workspace
    block, hot state, todos, …) is appended as background."""
    return "\n".join((*_PROMPT_LINES, context))


#: Where the memory rules start in the full prompt, and where its background part starts.
_RULES_START: Final = _PROMPT_LINES.index("CRITICAL MEMORY RULES:")
_BACKGROUND_START: Final = _PROMPT_LINES.index("Background context, use this to inform the summary above.")


def static_compaction_prompt() -> str:
    """The full replacement prompt without a background part: for hosts whose compaction prompt is
    fixed in a configuration file (the Codex CLI's ``compact_prompt``), where no per-session context
    can be added."""
    return "\n".join(_PROMPT_LINES[:_BACKGROUND_START]).rstrip("\n") + "\n"


#: The opening of the addendum for hosts that keep their own summary prompt and append ours to it
#: (Claude Code appends a PreCompact hook's output as additional instructions and keeps what follows
#: its ``</summary>`` tag). See docs/hosts.md.
_ADDENDUM_HEAD: Final = (
    "After the closing </summary> tag, add a Memory candidates section, only if there are durable facts"
    " that will change future behavior. Keep your summary's own structure; this section comes after it.",
    "",
)
_ADDENDUM_BACKGROUND: Final = (
    "",
    "Background context (the current workspace memory and session state), to inform the summary."
    " Do not output it verbatim:",
    "",
)


def build_compaction_addendum(context: str) -> str:
    """The memory-candidate instructions as an addendum to a host's own summary prompt: the rules,
    examples and output format of :func:`build_compaction_prompt`, without its summary structure,
    then ``context`` as background (last, so a host that cuts long instructions cuts it first)."""
    rules = _PROMPT_LINES[_RULES_START:_BACKGROUND_START]
    lines = [*_ADDENDUM_HEAD, *rules]
    while lines and not lines[-1]:
        lines.pop()
    if context:
        lines.extend((*_ADDENDUM_BACKGROUND, context))
    return "\n".join(lines)
