"""Low-level file helpers shared by the store and the logs: private directories, durable atomic
replacement, and appending JSON lines. Everything here raises ``OSError``; callers decide what a
failure means."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec

from adapters import locking
from domain.codec import encode_line

FILE_MODE: Final = 0o600
DIR_MODE: Final = 0o700
#: ``<name>.prev``: the last good generation of a state file (docs/decisions.md#last-good-generation)
PREVIOUS_SUFFIX: Final = ".prev"
#: ``os.link`` failures that mean the file system has no hard links (a copy is written instead)
_NO_HARD_LINKS: Final = frozenset(
    {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", -1)}
)
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


class SymlinkRefused(OSError):
    """A file inside the data home is a symbolic link; workmem never reads or writes through one."""


def _note(message: str) -> None:
    """One line on stderr; never raises."""
    with contextlib.suppress(Exception):
        sys.stderr.write("workmem: " + message + "\n")
        sys.stderr.flush()


def move_aside(path: Path) -> Path:
    """Rename ``path`` (a file, a directory or the link itself, never its target) to
    ``<name>.corrupt-<ms>-<pid>``, never deleting anything; returns the new name."""
    stem = f"{path.name}.corrupt-{time.time_ns() // 1_000_000}-{os.getpid()}"
    target = path.with_name(stem)
    n = 1
    while os.path.lexists(target):
        target = path.with_name(f"{stem}-{n}")
        n += 1
    os.rename(path, target)
    return target


def refuse_symlink(path: Path, *, file_expected: bool = False) -> bool:
    """When ``path`` is a symbolic link (or, with ``file_expected``, anything but a regular file, such
    as a directory), move it aside (see :func:`move_aside`) with a warning and return True, so that
    nothing is ever written through a link and a stray directory does not block every write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        problem = "a symbolic link (never followed)"
    elif file_expected and not stat.S_ISREG(st.st_mode):
        problem = "not a regular file"
    else:
        return False
    target = move_aside(path)
    _note(f"{path.name} was {problem}; moved aside to {target.name}")
    return True


def ensure_private_dir(path: Path, *, fix_mode: bool = True, no_symlink: bool = False) -> None:
    """Create ``path`` (and missing parents) with mode 0700. An existing directory we own gets its
    mode tightened to 0700 when ``fix_mode`` is set. ``NotADirectoryError`` when a file is in the way.
    With ``no_symlink`` (directories inside the data home) a symbolic link at ``path`` is moved aside
    and a real directory created instead."""
    if no_symlink:
        refuse_symlink(path)
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
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | O_NOFOLLOW, FILE_MODE)
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


def previous_of(target: Path) -> Path:
    """Where the last good generation of ``target`` is kept: ``<name>.prev`` next to it."""
    return target.with_name(target.name + PREVIOUS_SUFFIX)


def keep_previous(target: Path) -> None:
    """Keep ``target`` as it is now as ``<name>.prev`` (docs/decisions.md#last-good-generation), just
    before it is replaced: a hard link to its bytes under a temp name, given mode 0600 and renamed over
    the previous one, so ``<name>.prev`` is always one whole generation and costs no copy. Where the
    file system has no hard links, a copy is written the way :func:`atomic_write` writes. A symbolic
    link or a directory found at ``<name>.prev`` is moved aside (:func:`refuse_symlink`), never
    replaced or followed. No directory fsync: the replace that follows fsyncs the same directory.
    Nothing to keep when ``target`` is missing."""
    previous = previous_of(target)
    refuse_symlink(previous, file_expected=True)  # a link or directory there is moved aside
    tmp = temp_name(previous)
    try:
        os.link(target, tmp, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        data = read_bytes(target)
        if data is not None:
            atomic_write(previous, data)
        return
    try:
        st = os.lstat(tmp)
        if not stat.S_ISREG(st.st_mode):  # never keep (or chmod through) a link
            os.unlink(tmp)
            return
        if stat.S_IMODE(st.st_mode) != FILE_MODE:  # the old file's mode; it is replaced next anyway
            with contextlib.suppress(OSError):
                os.chmod(tmp, FILE_MODE)
        os.replace(tmp, previous)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _open_no_follow(target: Path, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` that refuses a symbolic link: the link is moved aside and a new file created."""
    try:
        return os.open(target, flags | O_NOFOLLOW | _O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EISDIR) or not refuse_symlink(target, file_expected=True):
            raise
    return os.open(target, flags | O_NOFOLLOW | _O_CLOEXEC, mode)


def append_bytes(target: Path, data: bytes, *, durable: bool = False) -> None:
    """Append ``data`` in one ``O_APPEND`` write sequence; the file is created 0600 and an existing
    file with wider permissions is tightened to 0600. A symbolic link is moved aside, never followed.
    When the file's last line is torn (no final newline, for example after a crash or a full disk),
    a newline is written first, so the new records never glue onto it."""
    fd = _open_no_follow(target, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(target))
        if stat.S_IMODE(st.st_mode) != FILE_MODE and st.st_uid == os.getuid():
            os.fchmod(fd, FILE_MODE)
        if st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) != b"\n":
            data = b"\n" + data
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


#: The rejection and migration logs rotate past this size: the full file becomes ``<name>.1``
#: (replacing the previous one), so each log holds at most twice this.
ROTATE_BYTES: Final = 1024 * 1024


def rotate_if_larger(target: Path, limit: int = ROTATE_BYTES) -> bool:
    """Rename ``target`` to ``<name>.1`` when it is larger than ``limit``; under the log's own lock
    (``<name>.lock``, short wait, skipped when busy) so that two writers never rotate twice."""
    try:
        if os.lstat(target).st_size <= limit:
            return False
    except OSError:
        return False
    lock = locking.FileLock(str(target.with_name(target.name + ".lock")), timeout=1.0, mode=FILE_MODE)
    try:
        with lock:
            if os.lstat(target).st_size <= limit:
                return False
            os.replace(target, target.with_name(target.name + ".1"))
            return True
    except (OSError, locking.Timeout):
        return False


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
    """The file's bytes, or ``None`` when it does not exist. :class:`SymlinkRefused` when it is a
    symbolic link (never followed); other errors propagate."""
    try:
        fd = os.open(target, os.O_RDONLY | O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(errno.ELOOP, "is a symbolic link", str(target)) from None
        raise
    with open(fd, "rb") as handle:
        return handle.read()


def split_lines(data: bytes) -> list[bytes]:
    """The non-blank lines of a JSONL document, without their newline."""
    return [line for line in data.split(b"\n") if line.strip()]
