"""Forget and correct in the conversation (docs/decisions.md#d19): the corrections of a user message
(:func:`domain.extraction.corrections.find_corrections`) carried out on the store, through the same
``forget`` and ``supersede`` operations as the CLI's, so every change passes the gate, leaves its
evidence event and is undone by ``restore``.

A correction whose target is ambiguous changes nothing; the note handed back to the host (the hook's
additional context) lists the memories it matched, so the user can name one. The note also tells
the agent that a memory it still sees in the frozen block no longer holds.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from msgspec.structs import replace

from domain.emitted import events
from domain.enums import MemoryStatus
from domain.extraction.corrections import Correction, CorrectionKind, find_corrections, message_lines
from domain.keys import exact_key
from domain.matching import MatchKind, match_memory
from domain.model import MemoryEntry
from domain.operations.commands import forget, supersede
from domain.operations.values import CommandOutcome, OpResult, Snapshot, unchanged
from domain.pending import clear_pending
from domain.safety import is_prompt_injection, preview
from domain.session import remove_pending_memories

__all__ = ["Corrected", "correct_in_conversation"]

_PREVIEW_CHARS: Final = 80
_HEADER: Final = "workmem (memory changes asked for in this message):"
_DROPPED: Final = "dropped_in_conversation"


class Corrected(NamedTuple):
    """What the corrections of one message did: the result (``unchanged`` when nothing changed), the
    message as the remember triggers should read it (corrected lines blanked, "don't forget that X"
    read as "remember: X"), and the note for the host (``""``: nothing to say)."""

    result: OpResult
    text: str
    note: str


def _quoted(text: str) -> str:
    return '"' + preview(text, _PREVIEW_CHARS) + '"'


def _listed(entries: dict[str, MemoryEntry], ids: tuple[str, ...]) -> str:
    return "; ".join(f"{i} {_quoted(entries[i].text)}" for i in ids)


def _replaced_text(old: MemoryEntry, correction: Correction, line: str) -> str:
    """The new wording: the stored text with the old words replaced by the new ones where it says
    them, else the user's own line."""
    new = correction.new or ""
    pattern = re.compile(re.escape(correction.target), re.IGNORECASE)
    if pattern.search(old.text) is not None:
        return pattern.sub(lambda _m: new, old.text, count=1)
    return line


def _drop_pending(
    result: OpResult, target: MemoryEntry, correction: Correction, line: str, now_ms: int
) -> tuple[OpResult, str | None, str]:
    """A memory this session asked to remember and that is not stored yet: it leaves the session's
    pending memories and the journal (a ``pending_memory_cleared`` event), so it is never stored; a
    replacement is asked for instead, as "remember: …"."""
    session = result.session
    if session is None:
        return result, None, line
    key = exact_key(target)
    journal, cleared = clear_pending(
        result.journal, {key}, now_ms, owner=session.session_id, clear_unowned=False, reason=_DROPPED
    )
    dropped = replace(result, session=remove_pending_memories(session, {key}), journal=journal)
    dropped = dropped.emitting(events(cleared))
    if correction.kind is CorrectionKind.FORGET:
        return (
            dropped,
            f"- dropped {_quoted(target.text)}, asked for earlier in this session: it will not be stored.",
            "",
        )
    text = _replaced_text(target, correction, line)
    return (
        dropped,
        f"- {_quoted(target.text)}, asked for earlier in this session, becomes {_quoted(text)}.",
        f"remember: {text}",
    )


def _apply(
    result: OpResult, correction: Correction, line: str, now_ms: int
) -> tuple[OpResult, str | None, str]:
    """One correction on what ``result`` left: the new result, its note line, and the message line
    as the remember triggers should read it (``""`` once carried out; the line itself for a
    replacement that named no memory: it is an ordinary message line then)."""
    snap = result.next_snapshot()
    active = {e.id: e for e in snap.store.entries if e.status is MemoryStatus.ACTIVE}
    pending = {e.id: e for e in (snap.session.pending_memories if snap.session is not None else ())}
    said = _quoted(correction.target)
    if is_prompt_injection(line):
        return result, f"- {said}: not carried out (it reads like an instruction override).", ""
    found = match_memory(correction.target, (*active.values(), *pending.values()))
    if found.kind is MatchKind.NONE:
        if correction.kind is CorrectionKind.REPLACE:
            return result, None, line
        return result, f"- {said} matched no stored memory; nothing was forgotten.", ""
    if found.kind is MatchKind.AMBIGUOUS:
        listed = _listed({**pending, **active}, found.ids)
        note = f"- {said} matches several memories, so nothing was changed: {listed}. Name one by its id."
        return result, note, ""
    if found.ids[0] in pending:
        return _drop_pending(result, pending[found.ids[0]], correction, line, now_ms)
    target = active[found.ids[0]]
    if correction.kind is CorrectionKind.FORGET:
        done = result.then(lambda s: forget(s, target.id, now_ms))
        note = f"- forgot {target.id} {_quoted(target.text)}: it no longer holds, even where still shown."
    else:
        text = _replaced_text(target, correction, line)
        done = result.then(lambda s: supersede(s, target.id, text, now_ms))
        if done.outcome is CommandOutcome.REJECTED:
            reasons = ", ".join(done.reasons)
            return result, f"- new wording for {target.id} rejected ({reasons}); nothing changed.", ""
        if done.outcome is not CommandOutcome.SUPERSEDED:
            return result, None, ""
        note = f"- replaced {target.id} {_quoted(target.text)} with {done.memory_id} {_quoted(text)}."
    return done, f"{note} Undo: `workmem restore {target.id}`.", ""


def correct_in_conversation(snap: Snapshot, text: str, now_ms: int) -> Corrected:
    """Carry out the corrections of the user message ``text`` on ``snap``."""
    corrections = find_corrections(text)
    if not corrections:
        return Corrected(unchanged(snap), text, "")
    lines = message_lines(text)
    result = unchanged(snap)
    notes: list[str] = []
    for correction in corrections:
        if correction.kind is CorrectionKind.REMEMBER:
            lines[correction.line] = f"remember: {correction.target}"
            continue
        result, note, lines[correction.line] = _apply(result, correction, lines[correction.line], now_ms)
        if note is not None:
            notes.append(note)
    note_text = "\n".join((_HEADER, *notes)) if notes else ""
    return Corrected(replace(result, outcome=None, memory_id=None, reasons=()), "\n".join(lines), note_text)
