"""Low-level file helpers shared by the store and the logs: private directories, durable atomic
replacement, and appending JSON lines. Everything here raises ``OSError``; callers decide what a
failure means."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec

from domain.codec import encode_line

FILE_MODE: Final = 0o600
DIR_MODE: Final = 0o700
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def ensure_private_dir(path: Path, *, fix_mode: bool = True) -> None:
    """Create ``path`` (and missing parents) with mode 0700. An existing directory we own gets its
    mode tightened to 0700 when ``fix_mode`` is set. ``NotADirectoryError`` when a file is in the way."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _make_private_dirs(path)
        return
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    if fix_mode and stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.getuid():
        os.chmod(path, DIR_MODE)


def _make_private_dirs(path: Path) -> None:
    """``mkdir -p`` where every directory created gets mode 0700 (``os.makedirs`` applies the mode to
    the leaf only)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)


def fsync_dir(path: Path) -> None:
    """Flush a directory entry change (a rename) to disk; a no-op where directories cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def temp_name(target: Path) -> Path:
    """``<target>.<pid>.<ms>.<random>.tmp`` in the target's directory."""
    token = os.urandom(4).hex()
    return target.with_name(f"{target.name}.{os.getpid()}.{time.time_ns() // 1_000_000}.{token}.tmp")


def atomic_write(target: Path, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Replace ``target`` by ``data``: temp file (created 0600, then given ``mode``) in the same
    directory, fsync, ``os.replace``, directory fsync. The temp file is removed when anything fails,
    and the target is then untouched."""
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_NOFOLLOW, FILE_MODE)
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def append_bytes(target: Path, data: bytes, *, durable: bool = False) -> None:
    """Append ``data`` in one ``O_APPEND`` write sequence; the file is created 0600 and an existing
    file with wider permissions is tightened to 0600."""
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC, FILE_MODE)
    try:
        st = os.fstat(fd)
        if stat.S_IMODE(st.st_mode) != FILE_MODE and st.st_uid == os.getuid():
            os.fchmod(fd, FILE_MODE)
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def encode_lines(records: Iterable[msgspec.Struct]) -> bytes:
    """Compact JSON lines, each ending in ``\\n``."""
    return b"".join(encode_line(record) + b"\n" for record in records)


def append_records(target: Path, records: Iterable[msgspec.Struct], *, durable: bool = False) -> int:
    """Append structs as JSON lines (creating the directory 0700); returns the number written."""
    items = list(records)
    if not items:
        return 0
    ensure_private_dir(target.parent, fix_mode=False)
    append_bytes(target, encode_lines(items), durable=durable)
    return len(items)


def read_bytes(target: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist. Other errors propagate."""
    try:
        with open(target, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def split_lines(data: bytes) -> list[bytes]:
    """The non-blank lines of a JSONL document, without their newline."""
    return [line for line in data.split(b"\n") if line.strip()]
