"""Edit a JSON document's text in place: turn the text of one value into the text of another,
touching only the members and elements that differ (docs/hosts.md, "How the edit is made").

``splice(text, old, new)`` takes a document whose value is ``old`` and returns a text whose value is
``new``: a removed member or element is cut out with the separator before it (the one after it, for
the first), a new one is written after the last item in the style of its neighbours (its own line
with their indent, or inline with their separator), and a changed scalar is replaced where it
stands. Nothing else moves, so an insertion followed by the removal of the same item gives the
original text back byte for byte, whatever the layout (inline arrays, tabs, CRLF, a byte-order mark,
no final newline). New values are written with the document's indent unit, its ``: `` or ``:``,
and its ``\\uXXXX`` escapes when every non-ASCII character was escaped.

The text is parsed again and compared with ``new`` before it is returned; a mismatch (or a
duplicate key on the way to an edit) is a :class:`~adapters.config_files.ConfigError`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from adapters.config_files import ConfigError, encode_json, json_style

_BOM: Final = "\ufeff"
_SPACE: Final = " \t\r\n"
_FIRST_INDENT: Final = re.compile(r"\n([ \t]+)\S")
_SCALAR: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")
_UNSAFE: Final = "cannot be edited safely (unexpected layout); edit it by hand"

Key = str | int


@dataclass(frozen=True)
class Item:
    """A member (``key`` and the end of its text) or an element of a container."""

    start: int
    key: str | None
    key_end: int
    value: Node


@dataclass(frozen=True)
class Node:
    """A value's span in the text; ``kids`` are its members or elements."""

    start: int
    end: int
    kids: tuple[Item, ...] = ()

    def find(self, key: Key, path: Path) -> int:
        """The position in ``kids`` of ``key`` (an index for arrays)."""
        if isinstance(key, int):
            return key
        found = [i for i, item in enumerate(self.kids) if item.key == key]
        if len(found) != 1:
            raise ConfigError(path, f'the key "{key}" appears {len(found)} times; edit the file by hand')
        return found[0]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def string(self) -> str:
        start = self.pos
        self.pos += 1
        while self.text[self.pos] != '"':
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        self.pos += 1
        decoded: str = json.loads(self.text[start : self.pos])
        return decoded

    def value(self) -> Node:
        self.space()
        start, char = self.pos, self.text[self.pos]
        if char == '"':
            self.string()
            return Node(start, self.pos)
        if char not in "{[":
            match = _SCALAR.match(self.text, self.pos)
            if match is None:
                raise ValueError(f"unexpected {char!r} at {self.pos}")
            self.pos = match.end()
            return Node(start, self.pos)
        close = "}" if char == "{" else "]"
        kids: list[Item] = []
        self.pos += 1
        self.space()
        while self.text[self.pos] != close:
            self.space()
            item_start, key = self.pos, None
            if char == "{":
                key = self.string()
            key_end = self.pos
            if char == "{":
                self.space()
                self.pos += 1  # the colon
            kids.append(Item(item_start, key, key_end, self.value()))
            self.space()
            if self.text[self.pos] == ",":
                self.pos += 1
                self.space()
        self.pos += 1
        return Node(start, self.pos, tuple(kids))


def parse(path: Path, text: str) -> Node:
    """The spans of the JSON value in ``text`` (already known to be valid JSON)."""
    parser = _Parser(text)
    parser.pos = 1 if text.startswith(_BOM) else 0
    try:
        return parser.value()
    except (ValueError, IndexError, RecursionError):
        raise ConfigError(path, _UNSAFE) from None


def _canon(value: Any) -> str:
    return json.dumps(value)


@dataclass
class _Doc:
    path: Path
    text: str

    def __post_init__(self) -> None:
        self.newline = "\r\n" if "\r\n" in self.text else "\n"
        match = _FIRST_INDENT.search(self.text)
        self.unit = match.group(1) if match else None
        body = self.text.removeprefix(_BOM)
        self.ascii = "\\u" in body and body.isascii()
        self.colon, self.comma = self._separators(parse(self.path, self.text))

    def _separators(self, root: Node) -> tuple[str, str]:
        """The document's ``": "`` and inline ``", "`` (their first use), else the defaults."""
        colon = comma = None
        todo = [root]
        while todo and (colon is None or comma is None):
            node = todo.pop(0)
            for i, item in enumerate(node.kids):
                if item.key is not None and colon is None:
                    colon = self.text[item.key_end : item.value.start]
                    colon = colon if "\n" not in colon else None
                if i and comma is None:
                    between = self.text[node.kids[i - 1].value.end : item.start]
                    comma = between if "\n" not in between else None
                todo.append(item.value)
        return colon or ": ", comma or ", "

    def node(self, keys: Sequence[Key]) -> Node:
        node = parse(self.path, self.text)
        for key in keys:
            node = node.kids[node.find(key, self.path)].value
        return node

    def indent_at(self, pos: int) -> str:
        line = self.text[self.text.rfind("\n", 0, pos) + 1 : pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def render(self, key: str | None, value: Any, indent: str | None) -> str:
        """``value`` (as a member ``key``), on lines indented from ``indent`` or, without, inline."""
        if indent is not None and self.unit is not None:
            text = json.dumps(value, indent=self.unit, ensure_ascii=self.ascii, separators=(",", self.colon))
            text = text.replace("\n", self.newline + indent)
        else:
            text = json.dumps(value, ensure_ascii=self.ascii, separators=(self.comma, self.colon))
        return text if key is None else json.dumps(key, ensure_ascii=self.ascii) + self.colon + text

    def splice(self, start: int, end: int, new: str) -> None:
        self.text = self.text[:start] + new + self.text[end:]

    # --- the three edits -------------------------------------------------------------------------
    def remove(self, keys: Sequence[Key], key: Key) -> None:
        parent = self.node(keys)
        i = parent.find(key, self.path)
        kids = parent.kids
        if len(kids) == 1:
            self.splice(parent.start + 1, parent.end - 1, "")
        elif i == len(kids) - 1:
            self.splice(kids[i - 1].value.end, kids[i].value.end, "")
        else:
            self.splice(kids[i].start, kids[i + 1].start, "")

    def insert(self, keys: Sequence[Key], index: int, key: str | None, value: Any) -> None:
        """A new member (``key``) or element at ``index`` of the container at ``keys``."""
        parent = self.node(keys)
        kids = parent.kids
        if not kids:
            if self.unit is None:
                self.splice(parent.start + 1, parent.end - 1, self.render(key, value, None))
                return
            outer = self.indent_at(parent.start)
            inner = outer + self.unit
            item = self.render(key, value, inner)
            self.splice(parent.start + 1, parent.end - 1, self.newline + inner + item + self.newline + outer)
            return
        if len(kids) >= 2:
            at = min(max(index, 1), len(kids) - 1)
            separator = self.text[kids[at - 1].value.end : kids[at].start]
        else:
            before = self.text[parent.start + 1 : kids[0].start]
            separator = "," + self.newline + before.rsplit("\n", 1)[1] if "\n" in before else self.comma
        indent = separator.rsplit("\n", 1)[1] if "\n" in separator else None
        item = self.render(key, value, indent)
        if index >= len(kids):
            self.splice(kids[-1].value.end, kids[-1].value.end, separator + item)
        else:
            self.splice(kids[index].start, kids[index].start, item + separator)

    def replace(self, keys: Sequence[Key], value: Any) -> None:
        node = self.node(keys)
        multi_line = "\n" in self.text[node.start : node.end]
        indent = self.indent_at(node.start) if multi_line else None
        self.splice(node.start, node.end, self.render(None, value, indent))

    # --- the difference of two values ------------------------------------------------------------
    def apply(self, keys: tuple[Key, ...], old: Any, new: Any) -> None:
        if _canon(old) == _canon(new):
            return
        if isinstance(old, dict) and isinstance(new, dict):
            for key in [k for k in old if k not in new]:
                self.remove(keys, key)
            for key in [k for k in old if k in new]:
                self.apply((*keys, key), old[key], new[key])
            for key in [k for k in new if k not in old]:
                self.insert(keys, len(self.node(keys).kids), key, new[key])
        elif isinstance(old, list) and isinstance(new, list):
            self._apply_list(keys, old, new)
        else:
            self.replace(keys, new)

    def _apply_list(self, keys: tuple[Key, ...], old: list[Any], new: list[Any]) -> None:
        matcher = difflib.SequenceMatcher(None, [_canon(v) for v in old], [_canon(v) for v in new], False)
        for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):  # from the end: indices stay valid
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1)  # a replaced run: its first items are edited in place
            for i in reversed(range(i1 + paired, i2)):
                self.remove(keys, i)
            for j in reversed(range(j1 + paired, j2)):
                self.insert(keys, i1 + paired, None, new[j])
            for k in reversed(range(paired)):
                self.apply((*keys, i1 + k), old[i1 + k], new[j1 + k])


def splice(path: Path, text: str | None, old: Any, new: Any) -> str:
    """The text of ``new``, made from ``text`` (whose value is ``old``) by editing only what differs.
    A missing or blank file is written whole (two-space indent, final newline)."""
    if text is None or not text.strip(_BOM + _SPACE):
        return encode_json(new, json_style(text))
    doc = _Doc(path, text)
    doc.apply((), old, new)
    try:
        after = json.loads(doc.text.removeprefix(_BOM))
    except ValueError:
        raise ConfigError(path, _UNSAFE) from None
    if json.dumps(after, sort_keys=True) != json.dumps(new, sort_keys=True):  # new keys come last
        raise ConfigError(path, _UNSAFE)
    return doc.text
