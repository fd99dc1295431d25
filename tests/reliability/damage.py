"""The kinds of damage the corruption suite applies to a workspace file: byte damage (a function of
the file's bytes) and damage to the file itself (a directory or a symbolic link in its place)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

#: How many bytes ``garbled`` overwrites, a third of the way into the file.
GARBLED_BYTES: Final = 40


def truncated(data: bytes) -> bytes:
    """The first half (a torn write, a full disk)."""
    return data[: len(data) // 2]


def zeroed(data: bytes) -> bytes:
    """Every byte zero, the length kept (a file system that lost the data blocks)."""
    return b"\0" * max(1, len(data))


def garbage(data: bytes) -> bytes:
    """Random bytes instead of the content: nothing of it left."""
    return hashlib.sha512(data).digest() * 4 + b"\xff\xfe{not json"


def garbled(data: bytes) -> bytes:
    """:data:`GARBLED_BYTES` random bytes over the content, a third of the way in."""
    at = len(data) // 3
    noise = (hashlib.sha512(data).digest() * 2)[:GARBLED_BYTES]
    return data[:at] + noise + data[at + GARBLED_BYTES :]


def invalid_utf8(data: bytes) -> bytes:
    """Invalid UTF-8 sequences in a text and after the first quote."""
    return data.replace(b"pnpm", b"pn\xff\xfepm").replace(b'"', b'"\xc3', 1) if data else b"\xff"


def wrong_type(data: bytes) -> bytes:
    """Valid JSON of the wrong type."""
    return b"[1, 2, 3]\n"


BYTE_DAMAGE: Final[dict[str, Callable[[bytes], bytes]]] = {
    "truncated": truncated,
    "zeroed": zeroed,
    "garbage": garbage,
    "garbled": garbled,
    "invalid_utf8": invalid_utf8,
    "wrong_type": wrong_type,
}
#: every kind of damage, by name: the byte damage, then a directory or a symbolic link in its place
DAMAGES: Final = (*BYTE_DAMAGE, "directory", "symlink")


def damage(target: Path, kind: str, outside: Path) -> bytes:
    """Apply ``kind`` to the file ``target``; returns the bytes now found there (for a directory: the
    file it holds, for a link: what it points at, which is ``outside``, holding the old content)."""
    original = target.read_bytes() if target.exists() else b""
    if kind in BYTE_DAMAGE:
        damaged = BYTE_DAMAGE[kind](original)
        target.write_bytes(damaged)
        return damaged
    target.unlink(missing_ok=True)
    if kind == "directory":
        target.mkdir()
        (target / "inner").write_bytes(b"kept")
        return b"kept"
    outside.write_bytes(original)
    target.symlink_to(outside)
    return original
