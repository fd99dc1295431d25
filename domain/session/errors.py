"""Open errors (docs/decisions.md#hot-session-state-errors): error lines found in a failed command's
output, their fingerprints, the bounded list of open and maybe-fixed errors, and how an edit or a
successful command changes it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from msgspec.structs import replace

from domain.enums import ErrorCategory, ErrorStatus
from domain.ids import sha1
from domain.limits import HotStateLimits
from domain.model import OpenError, SessionState
from domain.safety import redact
from domain.session.commands import classify_command
from domain.session.files import paths_match, relative_path
from domain.text import WS, lazy_compile
from domain.timeutil import iso_from_ms

MAX_ERROR_SUMMARY_CHARS: Final = 280
MAX_ERROR_LINES: Final = 5
_STRONG_ERROR: Final = lazy_compile(
    r"TS[0-9]{4}|ERR!|Traceback \(most recent call last\):|panic:", re.IGNORECASE
)


_ERROR_PREFIX: Final = lazy_compile(
    rf"[{WS}]*(?:Error|TypeError|ReferenceError|SyntaxError|Exception):", re.IGNORECASE
)


_LOOSE_ERROR: Final = lazy_compile(
    r"(?<!(?-i:[A-Za-z0-9_]))(?:error|failed|failure|exception)(?!(?-i:[A-Za-z0-9_]))", re.IGNORECASE
)


_FIRST_PATH: Final = lazy_compile(r"[A-Za-z0-9_./-]+\.(?:tsx|ts|jsx|json|js|md|py|go|rs)(?![A-Za-z0-9_])")
_WS_RUN: Final = lazy_compile(f"[{WS}]+")


def _is_error_line(line: str, known_command: bool) -> bool:
    if _STRONG_ERROR.search(line) or _ERROR_PREFIX.match(line):
        return True
    return known_command and _LOOSE_ERROR.search(line) is not None


def extract_first_path(text: str) -> str | None:
    """The first thing in ``text`` that looks like a source file path, extension included whole
    (``src/index.tsx(1,1): …`` -> ``src/index.tsx``)."""
    match = _FIRST_PATH.search(text)
    return match.group(0) if match else None


def error_fingerprint(category: ErrorCategory, summary: str) -> str:
    """``sha1(category:lower(summary) with whitespace runs collapsed)`` as 12 hex digits."""
    material = f"{category.value}:{_WS_RUN.sub(' ', summary.lower())}"
    return sha1(material.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def extract_errors_from_bash(command: str, output: str, now_ms: int) -> tuple[OpenError, ...]:
    """At most one error from a failed command: the first 5 error-looking lines of ``output`` joined by
    spaces, redacted and cut to 280 characters. A line counts when it carries a strong signal (``TS1234``,
    ``ERR!``, a traceback, ``panic:``), starts with an error type, or, for a recognised check command,
    says error/failed/failure/exception.

    The whole output is redacted before lines are picked, so a secret spread over several lines (a PEM
    block) is caught even when only one of its lines looks like an error; the joined lines are redacted
    again before the cut."""
    classified = classify_command(command)
    known = classified is not None
    if not any(_is_error_line(line, known) for line in output.split("\n")):
        return ()
    lines = [line for line in redact(output).split("\n") if _is_error_line(line, known)]
    if not lines:
        return ()
    category = classified or ErrorCategory.RUNTIME
    summary = redact(" ".join(lines[:MAX_ERROR_LINES]))[:MAX_ERROR_SUMMARY_CHARS]
    fingerprint = error_fingerprint(category, summary)
    return (
        OpenError(
            id=f"err_{fingerprint}",
            category=category,
            summary=summary,
            command=redact(command),
            file=extract_first_path(summary),
            fingerprint=fingerprint,
            status=ErrorStatus.OPEN,
            first_seen=now_ms,
            last_seen=now_ms,
            seen_count=1,
        ),
    )


def redact_error(error: OpenError) -> OpenError:
    command = None if error.command is None else redact(error.command)
    summary = redact(error.summary)
    if summary == error.summary and command == error.command:
        return error
    return replace(error, summary=summary, command=command)


def _error_order(error: OpenError) -> tuple[bool, float]:
    return (error.status != ErrorStatus.OPEN, -error.last_seen)


def order_errors(errors: Iterable[OpenError]) -> tuple[OpenError, ...]:
    """Open errors before maybe-fixed ones, each group most recently seen first
    (docs/decisions.md#hot-session-state-errors)."""
    return tuple(sorted(errors, key=_error_order))


def upsert_open_error(state: SessionState, error: OpenError, now_ms: int) -> SessionState:
    """Record ``error``. One with the same fingerprint is refreshed in place (new summary, command and
    file when given, seen now, open again, seen once more); a new one goes first. Then the errors are
    ordered and the first 5 kept."""
    error = redact_error(error)
    errors: list[OpenError] = []
    found = False
    for item in state.open_errors:
        if not found and item.fingerprint == error.fingerprint:
            found = True
            item = replace(
                item,
                summary=error.summary,
                command=error.command if error.command is not None else item.command,
                file=error.file if error.file is not None else item.file,
                last_seen=now_ms,
                status=ErrorStatus.OPEN,
                seen_count=item.seen_count + 1,
            )
        errors.append(item)
    if not found:
        errors.insert(
            0,
            replace(error, last_seen=now_ms, seen_count=max(error.seen_count, 1), status=ErrorStatus.OPEN),
        )
    return replace(
        state,
        open_errors=order_errors(errors)[: HotStateLimits.MAX_OPEN_ERRORS_STORED],
        updated_at=iso_from_ms(now_ms),
    )


def mark_errors_maybe_fixed_for_file(
    state: SessionState, file_path: str, workspace_root: str, now_ms: int
) -> SessionState:
    """An edit or write of ``file_path`` may have fixed the open errors reported in it: mark them
    ``maybe_fixed``. Their ``lastSeen`` stays as it was, so they do not jump ahead
    (docs/decisions.md#hot-session-state-errors)."""
    candidates = [file_path]
    if workspace_root and file_path.startswith(workspace_root):
        rel = relative_path(workspace_root, file_path)
        if rel is not None:
            candidates.append(rel)
    changed = False
    errors: list[OpenError] = []
    for error in state.open_errors:
        file = error.file
        if error.status == ErrorStatus.OPEN and file and any(paths_match(file, c) for c in candidates):
            error = replace(error, status=ErrorStatus.MAYBE_FIXED)
            changed = True
        errors.append(error)
    if not changed:
        return state
    return replace(state, open_errors=order_errors(errors), updated_at=iso_from_ms(now_ms))


def clear_errors_for_successful_command(state: SessionState, command: str) -> SessionState:
    """A check that passed clears every error of its category (open or maybe fixed). Runtime errors
    and unclassified commands clear nothing."""
    category = classify_command(command)
    if category is None:
        return state
    return replace(state, open_errors=tuple(e for e in state.open_errors if e.category != category))
