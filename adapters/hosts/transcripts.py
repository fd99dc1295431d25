"""Reading a host's transcript file safely: only regular files, never blocking, never unbounded.

A hook payload names a file (``transcript_path``) that the host writes; the hook must never hang on
it or read without limit, whatever it points at (a FIFO, ``/dev/zero``, a huge log). The reader
opens without blocking, checks that the file is a regular file, and reads at most
``domain.bounds.TRANSCRIPT_TAIL_BYTES`` from its end: the records a hook needs
(the newest compaction, the last tool call) are the newest ones.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any


def read_tail(path: str | None, limit: int | None = None) -> bytes:
    """The last ``limit`` bytes (default ``domain.bounds.TRANSCRIPT_TAIL_BYTES``: a Codex compaction
    record holds the kept user messages too, so the bound is generous) of the regular file at
    ``path``, cut to whole lines; ``b""`` for no path, a missing or unreadable file, or anything that
    is not a regular file."""
    if not path:
        return b""
    if limit is None:  # imported here: a hook that reads no transcript imports no msgspec
        # start-up time: a hook call loads only what its event needs (docs/performance.md)
        from domain.bounds import TRANSCRIPT_TAIL_BYTES

        limit = TRANSCRIPT_TAIL_BYTES
    try:
        fd = os.open(os.path.expanduser(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - limit)
        os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        remaining = min(limit, info.st_size)
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)
    if start > 0:  # the first line was cut: drop it
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""
    return data


def records(path: str | None, needle: bytes | None = None) -> Iterator[dict[str, Any]]:
    """The JSON object records of a JSONL transcript's tail, oldest first; lines that do not parse,
    or (when ``needle`` is given) do not contain it, are skipped."""
    for line in read_tail(path).splitlines():
        if needle is not None and needle not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def flatten_text(value: Any) -> str:
    """Text content: strings as they are, lists of text blocks (``{"text": ...}``) joined by lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for text in map(flatten_text, value) if text)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    return ""
