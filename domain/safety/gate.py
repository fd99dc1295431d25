"""The gate every write path uses: :func:`admit` (docs/decisions.md#d4)."""

from __future__ import annotations

import re
from typing import Final

import msgspec
from returns.result import Failure, Result, Success

from domain.bounds import MEMORY_INPUT_CHARS, cut_at_whitespace
from domain.enums import MemorySource, MemoryType
from domain.jsregex import js_compile as _js
from domain.limits import LongTermLimits
from domain.safety.injection import is_prompt_injection
from domain.safety.quality import assess_memory_quality
from domain.safety.reasons import GateReason, RejectionReason
from domain.safety.redaction import REDACTED, redact, stored_text
from domain.text import js_trim

__all__ = ["Rejected", "admit"]

_I: Final = re.IGNORECASE


class Rejected(msgspec.Struct, frozen=True):
    """A memory the gate turned down: its trimmed, redacted text and why. ``from_quality_gate``: the
    reasons are the quality gate's (such a rejection goes to the rejection log)."""

    text: str
    reasons: tuple[RejectionReason, ...]
    from_quality_gate: bool


#: The reference's short-reference allowlist without its ``admin pin`` branch
#: (docs/decisions.md#q-c3): a short ``reference`` memory that names scrypt parameters skips the
#: 20-character minimum.
_SHORT_REFERENCE: Final = _js(r"scrypt|n=\d+|r=\d+|p=\d+", _I)
_PARSER_MIN: Final = 12
_PARSER_MIN_TRIGGER: Final = 6
_GATE_MIN: Final = 20
_GATE_MIN_TRIGGER: Final = 6


def _content_length(text: str) -> int:
    """The length of what a memory says beyond its redacted secrets."""
    return len(js_trim(text.replace(REDACTED, "")))


def _too_short(type_: MemoryType, text: str, from_trigger: bool) -> bool:
    length = _content_length(text)
    if length < (_PARSER_MIN_TRIGGER if from_trigger else _PARSER_MIN):
        return True
    if type_ == MemoryType.REFERENCE and _SHORT_REFERENCE.search(text):
        return False
    return length < (_GATE_MIN_TRIGGER if from_trigger else _GATE_MIN)


def _rejected(text: str, reason: GateReason) -> Failure[Rejected]:
    return Failure(Rejected(text=text, reasons=(reason,), from_quality_gate=False))


def admit(
    type_: MemoryType, text: str, *, source: MemorySource, from_trigger: bool = False
) -> Result[str, Rejected]:
    """Decide whether a memory may be stored; on success, the text it is stored with.

    In order: the text is trimmed and redacted; compaction candidates must be long enough
    (``too_short``: 12 and 20 code points, or 6 after a memory trigger; a short scrypt ``reference``
    is allowed) where the length counts what remains once the ``[REDACTED]`` markers are removed;
    an empty explicit or manual text is rejected (``empty``); prompt injection is rejected for every source
    (``prompt_injection``); compaction candidates then pass :func:`assess_memory_quality` on the
    redacted text, the same text the store's quality migration later assesses, and its reasons are
    returned with ``from_quality_gate=True``. Explicit and manual memories bypass only the length and
    quality rules. An admitted text is cut as a stored entry is
    (:func:`~domain.safety.redaction.stored_text` at ``LongTermLimits.MAX_ENTRY_TEXT_CHARS``); a
    rejection carries the whole trimmed, redacted text. Never raises.
    """
    # bounded (a memory is stored with 260 characters), then trimmed again: removing control
    # characters can expose whitespace at either end
    redacted = js_trim(redact(js_trim(cut_at_whitespace(text, MEMORY_INPUT_CHARS))))
    compaction = source == MemorySource.COMPACTION
    if compaction and _too_short(type_, redacted, from_trigger):
        return _rejected(redacted, GateReason.TOO_SHORT)
    if not redacted:
        return _rejected(redacted, GateReason.EMPTY)
    if is_prompt_injection(redacted):
        return _rejected(redacted, GateReason.PROMPT_INJECTION)
    if compaction:
        quality = assess_memory_quality(type_, redacted)
        if not quality.accepted:
            return Failure(Rejected(text=redacted, reasons=quality.reasons, from_quality_gate=True))
    return Success(stored_text(redacted, LongTermLimits.MAX_ENTRY_TEXT_CHARS))
