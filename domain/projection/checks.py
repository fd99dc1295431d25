"""The gate a projection file passes before its text is stored (docs/decisions.md#d17, #d4).

The text goes through :func:`domain.safety.admit` with the file's ``source``, exactly as any other
write of that source. A file is never stored other than as written: where the gate would store a
different text — a credential redacted, control characters removed, a text cut to the stored length —
the file is turned down with that reason, so that the person fixes the file (a secret typed into a
file must not be committed, and a redacted copy would hide that it is there). The other values the
store keeps as written (the rationale, ids, keys workmem does not know) must come out of redaction
unchanged too, and the rationale, shown in every prompt, passes the injection check.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from domain.limits import LongTermLimits
from domain.projection.document import MemoryFile
from domain.projection.reasons import FileReason
from domain.safety import GateReason, admit, is_prompt_injection, redact
from domain.text import js_trim, strip_controls

#: Where a refusal is: the line a person should look at, and the reasons.
Refusal = tuple[int, tuple[str, ...]]


def _changed_by_gate(text: str) -> FileReason:
    if strip_controls(text) != text:
        return FileReason.CONTROL_CHARACTERS
    if redact(text) != text:
        return FileReason.CREDENTIAL
    return (
        FileReason.TOO_LONG
        if len(text) > LongTermLimits.MAX_ENTRY_TEXT_CHARS
        else FileReason.CONTROL_CHARACTERS
    )


def gate(file: MemoryFile, body_line: int) -> Result[str, Refusal]:
    """The text to store for ``file`` (its body, trimmed), or where and why it is turned down."""
    body = js_trim(file.body)
    match admit(file.type, body, source=file.source):
        case Failure(rejected):
            return Failure((body_line, tuple(str(r) for r in rejected.reasons)))
        case Success(str() as stored) if stored != body:
            return Failure((body_line, (_changed_by_gate(body).value,)))
    if file.rationale is not None and is_prompt_injection(file.rationale):
        return Failure((1, (GateReason.PROMPT_INJECTION.value,)))
    for value in _stored_values(file):
        if redact(value) != value:
            return Failure((1, (_changed_by_gate(value).value,)))
    return Success(body)


def _stored_values(file: MemoryFile) -> list[str]:
    """Every other value of the file the store keeps as written: the rationale, the ids, and the
    values of the keys workmem does not know."""
    found = [v for v in (file.rationale, file.id) if v is not None]
    found += file.supersedes
    for _key, value in file.extras:
        found += [value] if isinstance(value, str) else list(value)
    return found
