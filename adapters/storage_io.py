"""What the workspace storage (:mod:`adapters.filestore`) shares between its read-only views and its
transaction (:mod:`adapters.transaction`): the storage errors, the file kinds, reading a file, the
revision on disk, the storage evidence events and the decode cache of a long-running process."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Generic, NamedTuple, Protocol, TypeVar

import msgspec
from returns.result import Result, Success

from adapters.evidence_log import describe_os_error
from adapters.jsonl import SymlinkRefused, atomic_write, previous_of, read_bytes
from domain.codec import DecodeFailure, decode
from domain.enums import EventType, Outcome, Phase
from domain.ids import hash16
from domain.keys import exact_key
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, WorkspaceStore

if TYPE_CHECKING:
    from adapters.evidence_log import EvidenceLog
    from adapters.paths import WorkspacePaths
    from domain.salvage import Salvaged

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)

KIND_STORE: Final = "workspace_memory"
KIND_JOURNAL: Final = "pending_journal"
KIND_SESSION: Final = "session_state"
KIND_WORKSPACE: Final = "workspace"
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


def salvage_file(
    path: Path,
    data: bytes,
    tp: type[S],
    empty: S | None,
    settled: Callable[[], frozenset[str]] | None = None,
) -> tuple[Salvaged[S] | None, str | None]:
    """The damaged ``data`` of ``path`` salvaged with the help of its last good generation
    (``<name>.prev``, docs/decisions.md#last-good-generation) when that decodes; and the name of the
    last good generation used. An unreadable ``.prev`` is no generation at all: reading it never fails
    the command. ``settled`` gives the ids that must not come back from it (asked only when used)."""
    from domain.salvage import salvage_document  # start-up time: only a damaged file gets here

    previous: S | None = None
    kept = previous_of(path)
    try:
        earlier = read_file(kept)
    except StorageError:
        earlier = None
    if earlier:
        previous = decode(earlier, tp).value_or(None)
    ids = settled() if previous is not None and settled is not None else frozenset()
    salvaged = salvage_document(data, tp, empty, previous, settled=ids)
    return salvaged, (kept.name if previous is not None else None)


def aside_name(path: Path, now_ms: int) -> Path:
    """``<name>.corrupt-<ms>`` (``-2``, ``-3``, ... when taken) next to ``path``: unique under the
    workspace lock, and free of a pid, so that an event may name it."""
    target = path.with_name(f"{path.name}.corrupt-{now_ms}")
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{now_ms}-{n}")
    return target


def set_aside(path: Path, data: bytes, now_ms: int) -> tuple[Path, bool]:
    """Keep the damaged ``path`` aside (:func:`aside_name`): a regular file is copied, byte for byte
    (``data``), and stays in place until a good value replaces it; a symbolic link or a directory in
    its place is moved aside whole. Returns the aside path and whether ``path`` was moved. Raises
    ``OSError``."""
    target = aside_name(path, now_ms)
    if stat.S_ISREG(os.lstat(path).st_mode):
        atomic_write(target, data)
        return target, False
    os.rename(path, target)
    return target, True


def move_aside(path: Path, kind: str, failure: DecodeFailure, now_ms: int) -> tuple[str, EvidenceInput]:
    """Move the unreadable ``path`` aside (:func:`aside_name`) and return the warning and the
    ``storage_corrupt_json_quarantined`` event that say so."""
    target = aside_name(path, now_ms)
    link = os.path.islink(path)
    try:
        os.rename(path, target)
    except OSError as exc:
        raise unavailable("move aside corrupt", path, exc) from None
    problem = "a symbolic link (never followed)" if link else "invalid JSON"
    reason = "symlink" if link else ("invalid_json" if failure.kind == "invalid_json" else "invalid_shape")
    found = storage_event(
        EventType.STORAGE_CORRUPT_JSON_QUARANTINED,
        Outcome.QUARANTINED,
        reason,
        {"storeKind": kind, "quarantined": True},
    )
    return f"{path} is {problem}; moved aside to {target.name}", found


def salvage_report(
    path: Path, kind: str, salvaged: Salvaged[S], aside: Path, previous: str | None
) -> tuple[str, EvidenceInput]:
    """The one-line warning and the ``storage_corrupt_json_quarantined`` event of a salvaged file:
    how many entries came from its damaged bytes and how many from its last good generation (named),
    how many are known lost, and the name of the copy kept aside."""
    from domain.salvage import describe_salvage  # start-up time: only a damaged file gets here

    message = (
        f"{path.name} is damaged; {describe_salvage(salvaged, previous)}; the original is kept as "
        f"{aside.name} (`workmem recover` lists what was set aside)"
    )
    details: dict[str, str | int | bool] = {
        "storeKind": kind,
        "quarantined": True,
        "salvageMode": salvaged.mode,
        "readableEntries": salvaged.readable_entries,
        "unreadableEntries": salvaged.unreadable_entries,
        "replacedCharacters": salvaged.replaced_characters,
        "previousEntries": salvaged.previous_entries,
        "lostEntries": salvaged.lost_entries,
        "asideFile": aside.name,
    }
    if previous is not None:
        details["previousFile"] = previous
    found = storage_event(EventType.STORAGE_CORRUPT_JSON_QUARANTINED, Outcome.RECOVERED, "salvaged", details)
    return message, found


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


class LazyArchive(Mapping[str, MemoryEntry]):
    """The archive as a snapshot reads it (docs/performance.md, "Search"): decoded on the first
    lookup, so a command that never meets an archive marker does not pay for reading every archived
    memory. Whether it is empty is answered from the file's size until then (an empty or missing file
    is an empty archive; a file whose every line is damaged counts as not empty until it is read)."""

    def __init__(self, load: Callable[[], Mapping[str, MemoryEntry]], path: Path) -> None:
        self._load = load
        self._path = path
        self._items: Mapping[str, MemoryEntry] | None = None

    def _loaded(self) -> Mapping[str, MemoryEntry]:
        if self._items is None:
            self._items = self._load()
        return self._items

    def __getitem__(self, key: str) -> MemoryEntry:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __contains__(self, key: object) -> bool:
        return key in self._loaded()

    def __bool__(self) -> bool:
        if self._items is not None:
            return bool(self._items)
        try:
            return self._path.stat().st_size > 0
        except OSError:
            return False


class WorkspaceFiles(Protocol):
    """What a transaction needs of its workspace (:class:`adapters.filestore.Workspace` is one): where
    its files are, its evidence log, its decode cache and its empty documents."""

    home: Path
    paths: WorkspacePaths
    cache: SnapshotCache | None
    evidence: EvidenceLog

    def empty_store(self, now_ms: int) -> WorkspaceStore: ...

    def empty_journal(self, now_ms: int) -> PendingJournal: ...

    def read_archive(self) -> dict[str, MemoryEntry]: ...
