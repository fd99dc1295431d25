"""Reading, re-writing and replacing a host's configuration file without disturbing it.

Used by ``workmem install`` / ``uninstall`` (see docs/hosts.md, "Installing"). A JSON settings file
is decoded keeping its key order, and encoded again in the style it was written in: the indent of
its first indented line (or one line when it had none), its final newline, a byte-order mark, and
``\\uXXXX`` escapes when the file used them for every non-ASCII character. Values are never
reformatted beyond what JSON allows.

A file that cannot be read or decoded is a :class:`ConfigError` (exit 2) and is left untouched.
Writes go through :func:`adapters.jsonl.atomic_write` (temp file, fsync, rename), keep an existing
file's permission bits, follow a symlink to the file it names, and create a missing file 0600 in
missing directories created 0700 (existing directories keep their mode). A file is only replaced or
removed when it still holds the text the edit was computed from.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from adapters.commands import EXIT_USAGE, CommandError
from adapters.jsonl import FILE_MODE, atomic_write, ensure_private_dir

_BOM: Final = "\ufeff"
_FIRST_INDENT: Final = re.compile(r"\n([ \t]+)\S")


class ConfigError(CommandError):
    """A settings file that cannot be used safely; reported as one line, exit 2."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}", EXIT_USAGE)


@dataclass(frozen=True)
class JsonStyle:
    indent: str | None = "  "
    final_newline: bool = True
    ascii_escapes: bool = False
    bom: bool = False


def read_text(path: Path) -> str | None:
    """The file's text, or ``None`` when it does not exist. Unreadable or not UTF-8: ConfigError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(path, f"cannot read it: {exc.strerror or type(exc).__name__}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(path, "not UTF-8 text") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_json_object(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON object in ``text`` (an empty object for a missing or blank file)."""
    if text is None or not text.strip(_BOM + " \t\r\n"):
        return {}
    try:
        value = json.loads(text.removeprefix(_BOM), parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(path, f"not valid JSON ({first})") from None
    if not isinstance(value, dict):
        raise ConfigError(path, f"expected a JSON object, found {type(value).__name__}")
    return value


def json_style(text: str | None) -> JsonStyle:
    """How an existing JSON file is written (defaults for a new one: two spaces, final newline)."""
    if text is None or not text.strip(_BOM + " \t\r\n"):
        return JsonStyle()
    match = _FIRST_INDENT.search(text)
    indent = match.group(1) if match else None
    body = text.removeprefix(_BOM)
    ascii_escapes = "\\u" in body and body.isascii()
    return JsonStyle(indent, text.endswith("\n"), ascii_escapes, text.startswith(_BOM))


def encode_json(value: dict[str, Any], style: JsonStyle) -> str:
    text = json.dumps(value, indent=style.indent, ensure_ascii=style.ascii_escapes)
    return (_BOM if style.bom else "") + text + ("\n" if style.final_newline else "")


def unified_diff(path: Path, old: str | None, new: str | None) -> str:
    """A unified diff of one file; ``None`` stands for a missing file."""

    def lines(text: str | None) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    name = str(path)
    return "".join(
        difflib.unified_diff(
            lines(old),
            lines(new),
            fromfile=name if old is not None else "/dev/null",
            tofile=name if new is not None else "/dev/null",
        )
    )


def _unchanged_since(path: Path, expected_old: str | None) -> None:
    if read_text(path) != expected_old:
        raise ConfigError(path, "changed while workmem was editing it; nothing written, run it again")


def remove_file(path: Path, expected_old: str | None) -> None:
    """Delete ``path`` (uninstall left nothing in it), unless it changed since it read ``expected_old``."""
    _unchanged_since(path, expected_old)
    path.unlink()


def replace_file(path: Path, expected_old: str | None, new: str) -> None:
    """Write ``new`` over ``path`` atomically, unless the file changed since it read
    ``expected_old`` (another program writing it meanwhile): then ConfigError, nothing written."""
    target = Path(os.path.realpath(path))
    _unchanged_since(target, expected_old)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = FILE_MODE
    parent = target.parent
    if not parent.is_dir():
        ensure_private_dir(parent, fix_mode=False)
    atomic_write(target, new.encode("utf-8"), mode=mode)
