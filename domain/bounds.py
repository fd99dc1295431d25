"""Bounded work on unbounded input: the windows the core scans, and the caps on what one input can
produce. A host may hand over a 50 MB prompt, summary or tool output; every step stays fast because
it only ever looks at a bounded window, and what was skipped is counted so it can be recorded.

The adapters (CLI, hooks) call the same functions for what they read themselves (for example a
transcript tail), so every door applies the same bounds. All functions are pure and total.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = [
    "MAX_COMPACTION_CANDIDATES",
    "MAX_EXPLICIT_REQUESTS",
    "MEMORY_INPUT_CHARS",
    "MESSAGE_HEAD_CHARS",
    "MESSAGE_TAIL_CHARS",
    "SUMMARY_BLOCK_CHARS",
    "TOOL_OUTPUT_HEAD_CHARS",
    "TOOL_OUTPUT_TAIL_CHARS",
    "TRANSCRIPT_TAIL_BYTES",
    "Window",
    "complete_lines",
    "cut_at_whitespace",
    "head_and_tail",
    "message_window",
    "tool_output_window",
]

#: A user message is scanned for memory requests in its first and last 64 Ki characters: a request
#: is typed at the start or the end of a prompt, not in the middle of a pasted log.
MESSAGE_HEAD_CHARS: Final = 64 * 1024
MESSAGE_TAIL_CHARS: Final = 64 * 1024
#: At most this many trigger matches of one message are examined (a stored memory needs one).
MAX_EXPLICIT_REQUESTS: Final = 20
#: At most this many candidate lines of one compaction summary are examined.
MAX_COMPACTION_CANDIDATES: Final = 100
#: The ``Memory candidates:`` block is read for at most this many characters.
SUMMARY_BLOCK_CHARS: Final = 256 * 1024
#: A memory text is gated on at most this many characters (a memory is stored with 260).
MEMORY_INPUT_CHARS: Final = 8 * 1024
#: Tool output is scanned for errors in its first 16 Ki and last 64 Ki characters.
TOOL_OUTPUT_HEAD_CHARS: Final = 16 * 1024
TOOL_OUTPUT_TAIL_CHARS: Final = 64 * 1024
#: A host transcript is read from its last 8 MiB only (the adapter reads regular files only, and only
#: this tail; :func:`complete_lines` then drops the partial first line).
TRANSCRIPT_TAIL_BYTES: Final = 8 * 1024 * 1024
#: How far a cut may move to reach a whitespace or a line boundary.
_SLACK: Final = 4096


class Window(msgspec.Struct, frozen=True):
    """The part of an input that is scanned, and how many characters were left out."""

    text: str
    skipped: int = 0


def cut_at_whitespace(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, extended (by at most 4 Ki characters) to the next
    whitespace, so that a cut never splits a token-shaped credential into a piece that no longer
    looks like one. Unchanged when ``text`` is short enough."""
    if len(text) <= limit:
        return text
    end = limit
    stop = min(len(text), limit + _SLACK)
    while end < stop and not text[end].isspace():
        end += 1
    return text[:end]


def head_and_tail(text: str, head: int, tail: int) -> Window:
    """The first ``head`` and last ``tail`` characters of ``text``, each cut at a line boundary where
    one is near, joined by a newline (so nothing read can span the gap); the whole text when it is
    short enough."""
    if len(text) <= head + tail:
        return Window(text)
    head_end = text.rfind("\n", max(0, head - _SLACK), head)
    head_end = head if head_end < 0 else head_end
    tail_start = text.find("\n", len(text) - tail, len(text) - tail + _SLACK)
    tail_start = len(text) - tail if tail_start < 0 else tail_start + 1
    return Window(text[:head_end] + "\n" + text[tail_start:], skipped=tail_start - head_end)


def message_window(text: str) -> Window:
    """What of a user message is scanned for memory requests."""
    return head_and_tail(text, MESSAGE_HEAD_CHARS, MESSAGE_TAIL_CHARS)


def tool_output_window(output: str) -> Window:
    """What of a tool's output is scanned for errors."""
    return head_and_tail(output, TOOL_OUTPUT_HEAD_CHARS, TOOL_OUTPUT_TAIL_CHARS)


def complete_lines(tail: str, *, started_mid_file: bool) -> Window:
    """The whole lines of a file tail: when the read did not start at the beginning of the file, the
    first (partial) line is dropped and counted as skipped. For JSON-lines transcripts."""
    if not started_mid_file:
        return Window(tail)
    cut = tail.find("\n")
    if cut < 0:
        return Window("", skipped=len(tail))
    return Window(tail[cut + 1 :], skipped=cut + 1)
