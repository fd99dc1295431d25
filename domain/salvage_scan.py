"""Reading what survives in a damaged JSON document (docs/decisions.md#last-good-generation): its
text with invalid bytes replaced (:func:`repair_text`), the top-level fields whose values survived
whole, and every complete entry of its main list (:func:`scan_document`).

A document as workmem and the reference write it is indented by two spaces: a top-level key starts
a line with two spaces (``  "key": ``), an entry of a top-level list is a ``{`` line indented four
spaces, and the entry's own keys are indented six. A JSON string cannot hold a raw line break, so
these line starts are structure, never text, and they keep their meaning on both sides of a damaged
place. The scan resynchronises on them: after damage, the next entry starts at the next ``{`` line
indented four spaces before the list's closing bracket or the next top-level key, and is kept only
if it decodes as a memory. A compact document (no line breaks; only ever written by hand) has no such
landmarks: there the next entry starts at the next ``{"id":``, which can also be an object nested in
an entry whose own start was damaged.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import msgspec

from domain.codec import convert
from domain.model import MemoryEntry

__all__ = ["REPLACEMENT", "Fragments", "repair_text", "scan_document"]

REPLACEMENT: Final = "\ufffd"

# A JSON string escape: a surrogate pair, a lone surrogate, or any other escape (consumed so that an
# escaped backslash is never mistaken for the start of a ``\u`` escape).
_ESCAPE: Final = re.compile(
    r"\\u(?P<hi>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<lo>[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u(?P<lone>[dD][89a-fA-F][0-9a-fA-F]{2})"
    r"|\\.",
    re.DOTALL,
)
_UTF8_REPLACEMENT: Final = REPLACEMENT.encode("utf-8")


def repair_text(data: bytes) -> tuple[str, int]:
    """``data`` as text, with invalid UTF-8 and lone surrogate escapes replaced by U+FFFD; and how
    many replacements were made. Valid JSON text comes back unchanged with 0."""
    text = data.decode("utf-8", errors="replace")
    replaced = text.count(REPLACEMENT) - data.count(_UTF8_REPLACEMENT)
    lone = 0

    def fix(match: re.Match[str]) -> str:
        nonlocal lone
        if match.group("lone") is None:
            return match.group(0)
        lone += 1
        return "\\ufffd"

    if "\\u" in text:
        text = _ESCAPE.sub(fix, text)
    return text, max(0, replaced) + lone


class Fragments(msgspec.Struct, frozen=True, kw_only=True):
    """What survives of a damaged document. ``fields``: top-level values that decode whole (from an
    indented document only); ``items``: the objects read from the main list, in order; ``found``: the
    main list's start was read; ``complete``: it was read to its closing bracket with nothing
    unreadable; ``unreadable_places``: places in it where an entry could not be read (a torn or
    missing end counts as one); ``unreadable_ids``: the ids still visible at those places."""

    fields: dict[str, Any] = msgspec.field(default_factory=dict)
    items: tuple[Any, ...] = ()
    found: bool = False
    complete: bool = False
    unreadable_places: int = 0
    unreadable_ids: tuple[str, ...] = ()


_SEPARATORS: Final = " \t\n\r,"
_WHITESPACE: Final = " \t\n\r"
_LIST_START: Final = re.compile(r'"(?P<key>[A-Za-z]+)"\s*:\s*\[')
_TOP_KEY: Final = re.compile(r'^  "((?:[^"\\\n]|\\.)*)": ', re.MULTILINE)
_INDENTED_ITEM: Final = re.compile(r"^    \{", re.MULTILINE)
_COMPACT_ITEM: Final = re.compile(r'\{\s*"id"\s*:')
_ID: Final = re.compile(r'"id"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_decoder: Final = json.JSONDecoder()


def _value_at(text: str, pos: int) -> tuple[Any, int] | None:
    try:
        return _decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def _unescape(body: str) -> str | None:
    try:
        found = json.loads(f'"{body}"')
    except ValueError:
        return None
    return found if isinstance(found, str) else None


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _ids(segment: str) -> list[str]:
    return [found for m in _ID.finditer(segment) if (found := _unescape(m.group(1))) is not None]


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and convert(item, MemoryEntry).value_or(None) is not None


def _top_fields(text: str, list_key: str) -> dict[str, Any]:
    """Every top-level field of an indented document whose value decodes whole and is followed by
    what follows a value (a comma, the closing brace); a number or literal cut by the end of the
    text is not taken."""
    found: dict[str, Any] = {}
    for match in _TOP_KEY.finditer(text):
        key = _unescape(match.group(1))
        if key is None or key == list_key or key in found:
            continue
        got = _value_at(text, match.end())
        if got is None:
            continue
        value, end = got
        follow = _skip(text, end, _WHITESPACE)
        if follow < len(text) and text[follow] not in ",}":
            continue
        if follow == len(text) and not isinstance(value, (dict, list, str)):
            continue
        found[key] = value
    return found


def _list_start(text: str, list_key: str, indented: bool) -> int | None:
    for match in _LIST_START.finditer(text):
        if match.group("key") != list_key:
            continue
        if indented and text[max(0, match.start() - 3) : match.start()] != "\n  ":
            continue
        return match.end()
    return None


def scan_document(text: str, list_key: str) -> Fragments:
    """The fragments of ``text`` (see :class:`Fragments` and the module docstring). Pure and total."""
    indented = _TOP_KEY.search(text) is not None or _INDENTED_ITEM.search(text) is not None
    fields = _top_fields(text, list_key) if indented else {}
    if indented:
        starts = [m.end() - 1 for m in _INDENTED_ITEM.finditer(text)]
    else:
        starts = [m.start() for m in _COMPACT_ITEM.finditer(text)]
    start = _list_start(text, list_key, indented)
    if start is None:
        return _scattered(text, starts, fields)
    return _listed(text, start, [s for s in starts if s >= start], fields, indented)


def _closes_list(text: str, at: int, indented: bool) -> bool:
    """Whether the ``]`` at ``at`` closes the main list: in an indented document only a bracket on a
    line of its own, indented two spaces, followed by the next top-level key, the closing brace or
    nothing (a damaged place can hold a stray bracket)."""
    if not indented:
        return True
    if text[max(0, at - 3) : at] != "\n  ":
        return False
    return text.startswith((',\n  "', "\n}"), at + 1) or not text[at + 1 :].strip()


def _listed(text: str, start: int, starts: list[int], fields: dict[str, Any], indented: bool) -> Fragments:
    """Read the main list from ``start`` (just after its bracket): object after object, and after an
    unreadable place, on from the next entry start (``starts``)."""
    items: list[Any] = []
    ids: list[str] = []
    places = 0
    damaged = failed = False
    pos = start
    index = 0
    while True:
        here = _skip(text, pos, _SEPARATORS)
        if text.startswith("]", here) and _closes_list(text, here, indented):
            return Fragments(
                fields=fields,
                items=tuple(items),
                found=True,
                complete=places == 0,
                unreadable_places=places,
                unreadable_ids=tuple(ids),
            )
        while index < len(starts) and starts[index] < here:
            index += 1
        if index == len(starts):
            rest = text[here:]
            if rest.strip(_SEPARATORS) or not failed:  # a torn or missing end
                places += 1
                ids.extend(_ids(rest))
            return Fragments(
                fields=fields,
                items=tuple(items),
                found=True,
                unreadable_places=places,
                unreadable_ids=tuple(ids),
            )
        at = starts[index]
        if at > here:  # something that is not an entry before the next entry start
            places += 1
            ids.extend(_ids(text[here:at]))
            damaged = True
        following = starts[index + 1] if index + 1 < len(starts) else len(text)
        got = _value_at(text, at)
        index += 1
        if got is not None and isinstance(got[0], dict) and (not damaged or _is_entry(got[0])):
            items.append(got[0])
            pos = got[1]
            failed = False
        else:
            places += 1
            ids.extend(_ids(text[at:following]))
            damaged = failed = True
            pos = following


def _scattered(text: str, starts: list[int], fields: dict[str, Any]) -> Fragments:
    """The main list's start is unreadable: every object at an entry start that decodes as a memory
    (objects of other lists at the same nesting are not memories)."""
    items: list[Any] = []
    pos = 0
    for at in starts:
        if at < pos:
            continue
        got = _value_at(text, at)
        if got is not None and _is_entry(got[0]):
            items.append(got[0])
            pos = got[1]
    return Fragments(fields=fields, items=tuple(items), unreadable_places=1)
