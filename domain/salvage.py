"""Salvage of damaged store, journal and session documents: read what can be read, count what could
not, and never pretend a damaged document is empty.

Three stages, each tried only when the previous one failed:

1. **strict**: the document decodes as it is (:func:`domain.codec.decode`);
2. **lenient**: invalid UTF-8 bytes and lone UTF-16 surrogate escapes (``"\\ud83d"``, which the
   reference writes when its 260-unit cut splits an emoji) are replaced by U+FFFD, then the document
   decodes; an entry of the wrong shape is kept verbatim under ``workmemInvalidEntries`` as usual;
3. **entries**: the document is still not JSON (torn, glued, garbage in the middle): the memories of
   its entry list are read one by one from the front, up to the first one that cannot be parsed, on
   top of an empty document supplied by the caller.

The caller keeps the original bytes aside; this module only computes values and counts.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, Generic, TypeVar

import msgspec

from domain.codec import INVALID_ENTRIES_KEY, convert, decode, to_builtins

T = TypeVar("T", bound=msgspec.Struct)

__all__ = ["SalvageMode", "Salvaged", "describe_salvage", "repair_text", "salvage_document"]

REPLACEMENT: Final = "\ufffd"


class SalvageMode:
    STRICT: Final = "strict"
    LENIENT: Final = "lenient"
    ENTRIES: Final = "entries"


class Salvaged(msgspec.Struct, Generic[T], frozen=True):
    """A decoded (possibly repaired) document and what it cost.

    ``replaced_characters``: invalid byte sequences and lone surrogates replaced by U+FFFD;
    ``readable_entries``: entries of the main list that decoded; ``unreadable_entries``: entries set
    aside (wrong shape) or lost to a parse failure (a torn tail counts as one)."""

    value: T
    mode: str
    replaced_characters: int = 0
    readable_entries: int = 0
    unreadable_entries: int = 0

    @property
    def damaged(self) -> bool:
        return self.mode != SalvageMode.STRICT


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


def _entry_counts(raw_entries: Any, extras: Any) -> tuple[int, int]:
    readable = len(raw_entries) if isinstance(raw_entries, (list, tuple)) else 0
    invalid = extras.get(INVALID_ENTRIES_KEY) if isinstance(extras, dict) else None
    return readable, len(invalid) if isinstance(invalid, list) else 0


_LIST_START: Final = re.compile(r'"(?P<key>[A-Za-z]+)"\s*:\s*\[')
_SEPARATOR_CHARS: Final = frozenset(" \t\n\r,")
_decoder: Final = json.JSONDecoder()


def _read_list(text: str, key: str) -> tuple[list[Any], bool]:
    """The objects of the first ``"key": [...]`` list in ``text``, read one by one; and whether the
    list was read to its closing bracket."""
    start = next((m for m in _LIST_START.finditer(text) if m.group("key") == key), None)
    if start is None:
        return [], False
    items: list[Any] = []
    pos = start.end()
    while True:
        while pos < len(text) and text[pos] in _SEPARATOR_CHARS:
            pos += 1
        if text.startswith("]", pos):
            return items, True
        try:
            item, pos = _decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return items, False
        if not isinstance(item, dict):
            return items, False
        items.append(item)


def _main_list(tp: type[msgspec.Struct]) -> str:
    fields = {f.encode_name for f in msgspec.structs.fields(tp)}
    return "pendingMemories" if "pendingMemories" in fields else "entries"


def salvage_document(data: bytes, tp: type[T], empty: T | None = None) -> Salvaged[T] | None:
    """Decode ``data`` as ``tp`` as well as it can be decoded (see the module docstring), or
    ``None`` when nothing can be read. ``empty`` is the document the entries stage fills (without
    it that stage is skipped). Pure and total."""
    list_key = _main_list(tp)
    strict = decode(data, tp).value_or(None)
    if strict is not None:
        return Salvaged(strict, SalvageMode.STRICT)
    text, replaced = repair_text(data)
    lenient = decode(text.encode("utf-8"), tp).value_or(None) if replaced else None
    if lenient is not None:
        readable, invalid = _entry_counts(getattr_list(lenient, list_key), to_builtins(lenient))
        return Salvaged(lenient, SalvageMode.LENIENT, replaced, readable, invalid)
    if empty is None:
        return None
    items, complete = _read_list(text, list_key)
    base = to_builtins(empty)
    base[list_key] = items
    value = convert(base, tp).value_or(None)
    if value is None or not items:
        return None
    readable, invalid = _entry_counts(getattr_list(value, list_key), to_builtins(value))
    return Salvaged(value, SalvageMode.ENTRIES, replaced, readable, invalid + (0 if complete else 1))


def getattr_list(value: msgspec.Struct, encode_name: str) -> tuple[Any, ...]:
    """The tuple a struct holds under the JSON name ``encode_name``."""
    for info in msgspec.structs.fields(value):
        if info.encode_name == encode_name:
            found = getattr(value, info.name)
            return tuple(found) if isinstance(found, (list, tuple)) else ()
    return ()


def describe_salvage(salvaged: Salvaged[Any]) -> str:
    """A short, content-free description: ``salvaged: 12 entries readable, 1 unreadable, 3 damaged
    characters replaced by U+FFFD``."""
    parts = [f"{salvaged.readable_entries} entries readable"]
    if salvaged.unreadable_entries:
        parts.append(f"{salvaged.unreadable_entries} unreadable")
    if salvaged.replaced_characters:
        parts.append(f"{salvaged.replaced_characters} damaged characters replaced by U+FFFD")
    return "salvaged: " + ", ".join(parts)
