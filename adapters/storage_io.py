"""What the workspace storage (:mod:`adapters.filestore`) shares between its read-only views and its
transaction (:mod:`adapters.transaction`): the storage errors, the file kinds, reading a file, the
revision on disk, the storage evidence events and the decode cache of a long-running process."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Generic, NamedTuple, TypeVar

import msgspec
from returns.result import Result

from adapters.evidence_log import describe_os_error
from adapters.jsonl import SymlinkRefused, read_bytes
from domain.codec import DecodeFailure
from domain.ids import hash16
from domain.keys import exact_key
from domain.model import EventType, EvidenceInput, MemoryEntry, Outcome, Phase

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)

KIND_STORE: Final = "workspace_memory"
KIND_JOURNAL: Final = "pending_journal"
KIND_SESSION: Final = "session_state"
KIND_WORKSPACE: Final = "workspace"
DEFAULT_LOCK_TIMEOUT_S: Final = 5.0
POLL_INTERVAL_S: Final = 0.005
SESSION_FILE_NAME: Final = re.compile(r"^[0-9a-f]{32}\.json\Z")


class StorageError(Exception):
    """Base of every storage failure; messages are one line and never contain file contents."""


class LockTimeout(StorageError):
    """Another process held the workspace lock for longer than the bounded wait."""


class StaleWrite(StorageError):
    """A value based on an older (or newer) revision than the one on disk was about to be written."""


class StorageUnavailable(StorageError):
    """The storage cannot be read or written: permission, read-only file system, disk full, a
    directory where a file should be."""


class Loaded(NamedTuple, Generic[T]):
    """A read-only view of one file: ``missing`` when it does not exist, ``corrupt`` when it could not
    be decoded (``value`` is then the empty value)."""

    value: T
    corrupt: bool = False
    missing: bool = False
    #: set when the file was damaged but salvaged (``value`` holds what could be read): a one-line,
    #: content-free description for a warning
    damage: str | None = None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def unavailable(action: str, path: Path, exc: OSError) -> StorageUnavailable:
    message = f"workspace storage unavailable: cannot {action} {path} ({describe_os_error(exc)})"
    return StorageUnavailable(_one_line(message))


def read_file(path: Path) -> bytes | None:
    """The file's bytes; a symbolic link or a directory reads as empty (unreadable) content, so a
    transaction moves it aside like any corrupt file and nothing is ever read or written through a
    link."""
    try:
        return read_bytes(path)
    except (SymlinkRefused, IsADirectoryError):
        return b""
    except OSError as exc:
        raise unavailable("read", path, exc) from None


class _Revision(msgspec.Struct):
    revision: int | None = None


_revision_decoder: Final = msgspec.json.Decoder(_Revision)


def disk_revision(path: Path) -> int | None:
    """The revision recorded on disk: 0 for a missing file or a file without one, ``None`` when the file
    cannot be understood (which counts as a moved revision)."""
    data = read_file(path)
    if data is None:
        return 0
    try:
        return _revision_decoder.decode(data).revision or 0
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def storage_event(
    type_: EventType, outcome: Outcome, reason: str, details: Mapping[str, str | int | bool]
) -> EvidenceInput:
    return EvidenceInput(
        type=type_, phase=Phase.STORAGE, outcome=outcome, reason_codes=(reason,), details=dict(details)
    )


class SnapshotCache:
    """Decoded files kept between transactions by a long-running process (``workmem serve``).

    An entry is the file's path, its bytes and the value decoded from them. It is used only when the
    bytes read now, inside the lock, are the very bytes it was decoded from: every write bumps the
    file's ``revision``, so a write by any other process changes the bytes and the file is decoded
    again. The cache therefore never holds anything the files do not hold; it only saves decoding.
    At most ``max_files`` files are kept (the least recently used go first).
    """

    def __init__(self, max_files: int = 256) -> None:
        self.max_files = max_files
        self._items: dict[Path, tuple[bytes, msgspec.Struct]] = {}
        #: decodes avoided and decodes done, for tests and benchmarks
        self.hits = 0
        self.misses = 0

    def get(self, path: Path, data: bytes) -> msgspec.Struct | None:
        item = self._items.pop(path, None)
        if item is None or item[0] != data:
            self.misses += 1
            return None
        self._items[path] = item  # most recently used last
        self.hits += 1
        return item[1]

    def put(self, path: Path, data: bytes, value: msgspec.Struct) -> None:
        self._items.pop(path, None)
        self._items[path] = (data, value)
        while len(self._items) > self.max_files:
            del self._items[next(iter(self._items))]

    def drop(self, path: Path) -> None:
        self._items.pop(path, None)


def cached_decode(
    cache: SnapshotCache | None, path: Path, data: bytes, decoder: Callable[[bytes], Result[S, DecodeFailure]]
) -> Result[S, DecodeFailure]:
    from returns.result import Success

    if cache is not None:
        hit = cache.get(path, data)
        if hit is not None:
            return Success(hit)  # type: ignore[arg-type]
    result = decoder(data)
    value = result.value_or(None)
    if cache is not None and value is not None:
        cache.put(path, data, value)
    return result


def archive_key(entry: MemoryEntry) -> str:
    """The key an archived entry is found by: ``hash16`` of its exact key (as archive markers use)."""
    return hash16(exact_key(entry))
