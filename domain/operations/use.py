"""Reinforcement from use, not from being shown (docs/decisions.md#d19).

A memory in the block a session was shown is *used* when the agent, strongest signal first:

1. cites its id (``mem_…``, or a short id an ``aliases`` resolver maps to it) in a tool's input or
   in its reply (:attr:`UseSignal.CITED_ID`);
2. writes one of its rare terms — a path, a command or an identifier that few memories of the store
   hold — into the input of an edit, a write or a shell command (:attr:`UseSignal.RARE_TERM`): one
   specific term (punctuation or a digit inside) or two rare words.

Being injected, or found by a search, with no such trace afterwards is not use. The guards: only a
memory of the session's :attr:`SessionState.use_cues` (recorded when a block is frozen) counts; a
session reinforces a memory at most once (:attr:`SessionState.used_memory_ids`); the gain shrinks as
strength rises — the strength's share of its initial value ``f`` becomes ``f + USE_GAIN x (1 - f)``,
by moving the retention clock forward and touching no other field; every bump is a ``memory_used``
event with its signal, so a replay can recompute it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Final, NamedTuple

from msgspec.structs import replace

from domain.enums import EventType, MemoryStatus, Outcome, Phase
from domain.evidence.build import event
from domain.limits import DAY_MS
from domain.matching import cue_candidates, is_specific, occurrences, rare_terms, terms
from domain.model import EvidenceInput, MemoryEntry, SessionState, UseCue, WorkspaceStore
from domain.retention import DEFAULT_TUNING, Tuning, dormancy_at, half_life_days, initial_strength, strength
from domain.session.state import ToolEvent
from domain.text import lazy_compile

__all__ = ["UseSignal", "record_cues", "reinforce_from_use", "use_signals"]

#: The share of the distance to full strength one use closes.
USE_GAIN: Final = 0.5
#: The memories a session keeps cues for (the newest blocks win), and the terms per memory.
MAX_USE_CUES: Final = 64
MAX_CUE_TERMS: Final = 4
#: How much of a tool's input or a reply is read.
MAX_USE_TEXT_CHARS: Final = 20_000
#: The tools whose input may carry a memory's rare terms (the core's tool names).
WRITING_TOOLS: Final = frozenset({"edit", "write", "bash"})


_SHORT_ID: Final = lazy_compile(r"\b[A-Za-z]{1,3}[0-9]{1,5}\b")


class UseSignal(StrEnum):
    CITED_ID = "cited_id"
    RARE_TERM = "rare_term"


class Use(NamedTuple):
    memory_id: str
    signal: UseSignal
    #: what was seen: the id, or the rare terms
    seen: tuple[str, ...]


def record_cues(
    session: SessionState, rendered: Sequence[MemoryEntry], entries: Iterable[MemoryEntry]
) -> SessionState:
    """``session`` with the memories of a new block among its cues (``entries``: the store's active
    memories, for how rare each term is)."""
    if not rendered:
        return session
    active = [e for e in entries if e.status is MemoryStatus.ACTIVE]
    df = occurrences((t for e in rendered for t in cue_candidates(e.text)), active)
    fresh = tuple(UseCue(memory_id=e.id, terms=rare_terms(e, df, MAX_CUE_TERMS)) for e in rendered)
    ids = {c.memory_id for c in fresh}
    kept = tuple(c for c in session.use_cues if c.memory_id not in ids)
    return replace(session, use_cues=(*kept, *fresh)[-MAX_USE_CUES:])


def use_signals(
    session: SessionState,
    text: str,
    *,
    writing: bool,
    aliases: Mapping[str, str] | None = None,
    place: str = "",
) -> tuple[Use, ...]:
    """The uses ``text`` shows of the memories this session was shown and has not used yet.
    ``writing``: the text is what an edit, a write or a shell command puts into effect (rare terms
    count: a specific one, or two words); else only a cited id does (a reply, another tool's input).
    ``place``: the path the call works on — its terms count as one word each, never alone (editing
    the file a memory names is not yet following it)."""
    cues = [c for c in session.use_cues if c.memory_id not in session.used_memory_ids]
    if not cues or not (text or place):
        return ()
    window = f"{text[:MAX_USE_TEXT_CHARS]}\n{place}"
    lowered = window.lower()
    short = aliases or {}
    cited = {short[w] for w in _SHORT_ID.findall(window) if w in short}
    found: list[Use] = []
    words = terms(text[:MAX_USE_TEXT_CHARS]) if writing and text else frozenset()
    where = terms(place) if writing and place else frozenset()
    for cue in cues:
        if cue.memory_id.lower() in lowered or cue.memory_id in cited:
            found.append(Use(cue.memory_id, UseSignal.CITED_ID, (cue.memory_id,)))
            continue
        seen = tuple(t for t in cue.terms if t in words)
        near = tuple(t for t in cue.terms if t in where and t not in seen)
        if sum(2 if is_specific(t) else 1 for t in seen) + len(near) >= 2:
            found.append(Use(cue.memory_id, UseSignal.RARE_TERM, seen + near))
    return tuple(found)


def _used(entry: MemoryEntry, use: Use, where: str, before: float, after: float) -> EvidenceInput:
    details = {"signal": use.signal.value, "where": where, "seen": use.seen}
    details_with_gain = {**details, "shareBefore": round(before, 4), "shareAfter": round(after, 4)}
    return event(
        EventType.MEMORY_USED,
        Phase.REINFORCEMENT,
        Outcome.REINFORCED,
        (use.signal.value,),
        memory=entry,
        details=details_with_gain,
        text=entry.text,
    )


def _bumped(
    entry: MemoryEntry, store: WorkspaceStore, now_ms: int, tuning: Tuning
) -> tuple[MemoryEntry, float, float]:
    """``entry`` with its retention clock moved so that its share of full strength ``f`` becomes
    ``f + USE_GAIN x (1 - f)``; the clock never moves back."""
    initial = initial_strength(entry)
    current = strength(entry, now_ms, dormancy_at(store, now_ms, tuning), tuning)
    share = min(1.0, max(0.0, current / initial)) if initial > 0 else 1.0
    target = share + USE_GAIN * (1.0 - share)
    age_days = -half_life_days(entry, tuning) * math.log2(target) if target > 0 else 0.0
    clock = int(now_ms - age_days * DAY_MS)
    old = entry.retention_clock if isinstance(entry.retention_clock, int | float) else None
    if old is not None and math.isfinite(old) and old >= clock:
        return entry, share, share
    return replace(entry, retention_clock=clock), share, target


def reinforce_from_use(
    store: WorkspaceStore,
    session: SessionState,
    uses: Sequence[Use],
    where: str,
    now_ms: int,
    tuning: Tuning = DEFAULT_TUNING,
) -> tuple[WorkspaceStore, SessionState, tuple[EvidenceInput, ...]]:
    """Reinforce the memories of ``uses`` once each for this session. The session records every use
    (also of a memory the store does not hold, a user-scope one, so it is not looked for again); the
    store comes back as a new value whenever there was a use, so that a caller that read only the
    store's head reads the whole store and runs again (docs/decisions.md#d19)."""
    if not uses:
        return store, session, ()
    by_id = {u.memory_id: u for u in uses}
    bumped: list[MemoryEntry] = []
    emitted: list[EvidenceInput] = []
    for entry in store.entries:
        use = by_id.get(entry.id)
        if use is None or entry.status is not MemoryStatus.ACTIVE:
            bumped.append(entry)
            continue
        new, before, after = _bumped(entry, store, now_ms, tuning)
        bumped.append(new)
        emitted.append(_used(new, use, where, before, after))
    used = (*session.used_memory_ids, *(i for i in by_id if i not in session.used_memory_ids))
    used = used[-MAX_USE_CUES * 4 :]
    return replace(store, entries=tuple(bumped)), replace(session, used_memory_ids=used), tuple(emitted)


#: Shell commands that only read: a memory's path in them is looked at, not acted on.
_READING: Final = lazy_compile(
    r"\A\s*(?:sudo\s+)?(?:cat|less|more|head|tail|ls|ll|tree|wc|file|stat|du|grep|egrep|rg|ag|find|fd|echo"
    r"|git\s+(?:log|diff|show|status|blame|grep|ls-files))\b"
)
_SEGMENTS: Final = lazy_compile(r"&&|\|\||[;|\n]")


class ToolInput(NamedTuple):
    """What a tool call's input says for use: the text it puts into effect (a command without its
    reading parts, an edit's or a write's new text), the path it works on, and every string
    argument (where a cited id counts too)."""

    acting: str
    place: str
    whole: str


def tool_input(tool_event: ToolEvent) -> ToolInput:
    """The parts of a tool call's input (never its output) that :func:`use_signals` reads."""
    args = tool_event.args
    whole = "\n".join(v for v in args.values() if isinstance(v, str))[:MAX_USE_TEXT_CHARS]
    place = args.get("filePath")
    place = place if isinstance(place, str) else ""
    command = args.get("command")
    if tool_event.tool == "bash" and isinstance(command, str):
        acting = "\n".join(s for s in _SEGMENTS.split(command) if not _READING.match(s))
        return ToolInput(acting[:MAX_USE_TEXT_CHARS], "", whole)
    written = args.get("content")
    return ToolInput(written[:MAX_USE_TEXT_CHARS] if isinstance(written, str) else "", place, whole)
