"""The frontmatter of a projection file: a small, strict subset of YAML (docs/decisions.md#d17).

Written: one ``key: value`` line per field, in the order given; a value is a plain word when that is
unambiguous, else a JSON-style double-quoted string; a list is a flow list ``[a, b]``. Read: the
same, plus what a person is likely to type by hand — single-quoted strings, a block list
(``key:`` followed by ``  - item`` lines), blank lines and ``#`` comment lines. Every value is a string
or a tuple of strings; nothing is ever read as a number, a date or a boolean, so a value comes back
exactly as it was written. Anything else is a :class:`FrontmatterError` with its line number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

import msgspec
from returns.result import Failure, Result, Success

Value = str | tuple[str, ...]

FENCE: Final = "---"

_KEY: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)\Z")
_BLOCK_ITEM: Final = re.compile(r"[ \t]+-(?:[ \t]+(.*)|[ \t]*)\Z")
#: A value written without quotes: no leading YAML indicator, no ``: `` or `` #``, no comma or
#: bracket (they would end it inside a flow list), no surrounding space.
_PLAIN: Final = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_.:/+@~()-]*(?:[ ][A-Za-z0-9_.:/+@~()-]+)*\Z")
#: Plain words another YAML reader would take for something other than a string.
_RESERVED: Final = frozenset({"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"})
_NUMBER: Final = re.compile(r"[-+]?(?:0[xob][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)\Z")


class FrontmatterError(msgspec.Struct, frozen=True):
    """Why the frontmatter cannot be read; ``line`` counts from 1 in the whole file."""

    line: int
    message: str


class Field(msgspec.Struct, frozen=True):
    key: str
    value: Value
    line: int


# ---------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------


def scalar(value: str) -> str:
    """``value`` as a plain word when that reads back unchanged, else double-quoted."""
    plain = _PLAIN.match(value) and ": " not in value and not value.endswith(":")
    if plain and value not in _RESERVED and not _NUMBER.match(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def field_line(key: str, value: Value) -> str:
    """One ``key: value`` line, with its newline."""
    if isinstance(value, tuple):
        return f"{key}: [{', '.join(scalar(v) for v in value)}]\n"
    return f"{key}: {scalar(value)}\n"


def render(fields: Sequence[tuple[str, Value]]) -> str:
    """The frontmatter block, fences included, one field per line, ending with a newline."""
    return FENCE + "\n" + "".join(field_line(key, value) for key, value in fields) + FENCE + "\n"


# ---------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------


def _quoted(text: str, line: int) -> Result[tuple[str, str], FrontmatterError]:
    """The quoted string at the start of ``text`` and what follows it."""
    if text.startswith('"'):
        end = 1
        while end < len(text):
            if text[end] == "\\":
                end += 2
                continue
            if text[end] == '"':
                try:
                    decoded = json.loads(text[: end + 1])
                except ValueError:
                    return Failure(FrontmatterError(line, "a double-quoted value has an invalid escape"))
                return Success((str(decoded), text[end + 1 :]))
            end += 1
        return Failure(FrontmatterError(line, "a double-quoted value is not closed"))
    end = 1
    out: list[str] = []
    while end < len(text):
        if text[end] == "'":
            if text[end + 1 : end + 2] == "'":
                out.append("'")
                end += 2
                continue
            return Success(("".join(out), text[end + 1 :]))
        out.append(text[end])
        end += 1
    return Failure(FrontmatterError(line, "a single-quoted value is not closed"))


def _plain(text: str) -> str:
    """A plain value: up to a `` #`` comment, without surrounding space."""
    cut = re.search(r"[ \t]#", text)
    return (text[: cut.start()] if cut else text).strip()


def _item(text: str, line: int, *, in_list: bool) -> Result[tuple[str, str], FrontmatterError]:
    """One scalar at the start of ``text`` and the rest (inside a flow list, up to a comma)."""
    text = text.lstrip(" \t")
    if text[:1] in ('"', "'"):
        return _quoted(text, line)
    if not in_list:
        return Success((_plain(text), ""))
    cut = re.search(r"[,\]]", text)
    end = cut.start() if cut else len(text)
    return Success((text[:end].strip(), text[end:]))


def _flow_list(text: str, line: int) -> Result[tuple[str, ...], FrontmatterError]:
    rest = text[1:].strip()
    items: list[str] = []
    if rest.startswith("]"):
        return _list_end(rest, items, line)
    while True:
        found = _item(rest, line, in_list=True)
        if isinstance(found, Failure):
            return Failure(found.failure())
        value, rest = found.unwrap()
        rest = rest.lstrip(" \t")
        if not value:
            return Failure(FrontmatterError(line, "a list has an empty item"))
        items.append(value)
        if rest.startswith(","):
            rest = rest[1:].lstrip(" \t")
            continue
        return _list_end(rest, items, line)


def _list_end(rest: str, items: list[str], line: int) -> Result[tuple[str, ...], FrontmatterError]:
    if not rest.startswith("]") or _plain(rest[1:]):
        return Failure(FrontmatterError(line, "a list is not closed by ]"))
    return Success(tuple(items))


def _value(text: str, line: int) -> Result[Value, FrontmatterError]:
    if text.startswith("["):
        return _flow_list(text, line)
    if text.startswith(("{", "&", "*", "!", "|", ">", "%", "@", "`")):
        return Failure(FrontmatterError(line, f"a value starting with {text[0]!r} is not supported"))
    found = _item(text, line, in_list=False)
    if isinstance(found, Failure):
        return Failure(found.failure())
    value, rest = found.unwrap()
    if _plain(rest):
        return Failure(FrontmatterError(line, "text after a quoted value"))
    return Success(value)


def parse(lines: Sequence[str], first_line: int) -> Result[tuple[Field, ...], FrontmatterError]:
    """The fields of the lines between the fences (``first_line``: the file line of ``lines[0]``)."""
    fields: list[Field] = []
    seen: set[str] = set()
    index = 0
    while index < len(lines):
        raw = lines[index]
        number = first_line + index
        index += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = _KEY.match(raw)
        if match is None:
            return Failure(FrontmatterError(number, "expected `key: value`"))
        key, text = match.group(1), (match.group(2) or "").strip()
        if key in seen:
            return Failure(FrontmatterError(number, f"the key {key!r} is given twice"))
        seen.add(key)
        if text and not text.startswith("#"):
            found = _value(text, number)
            if isinstance(found, Failure):
                return Failure(found.failure())
            fields.append(Field(key, found.unwrap(), number))
            continue
        items: list[str] = []
        while index < len(lines) and (item := _BLOCK_ITEM.match(lines[index])) is not None:
            got = _value((item.group(1) or "").strip(), first_line + index)
            if isinstance(got, Failure):
                return Failure(got.failure())
            value = got.unwrap()
            if not isinstance(value, str) or not value:
                return Failure(FrontmatterError(first_line + index, "a list item must be one value"))
            items.append(value)
            index += 1
        fields.append(Field(key, tuple(items) if items else "", number))
    return Success(tuple(fields))
