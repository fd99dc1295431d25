"""Durable workspace storage (docs/decisions.md#d5): the store, the pending journal, session files and the
archive of one workspace, behind one transaction helper.

Every command works the same way::

    with workspace.transaction(now_ms) as tx:      # lock, then read what is needed inside the lock
        result = domain_step(tx.store, tx.journal, ..., now_ms)   # pure
        tx.put_store(result.store); tx.emit(result.events)
    # clean exit: write what changed, append evidence and logs, unlock
    # exception: nothing is written (storage evidence such as a quarantine is still appended)

Guarantees:

* Reads never write. ``read_*`` views never create, rewrite or move anything; a corrupt file reads as
  an empty value flagged ``corrupt``.
* One cross-process lock per workspace (``workspace.lock``, :mod:`adapters.locking`), bounded wait
  (default 5 s) ending in :class:`LockTimeout` and a ``storage_lock_timeout`` event. The OS releases
  the lock of a process that dies; the holder record beside the lock (``workspace.lock.holder``: pid and time,
  written after acquiring and removed before releasing) tells the next holder that the previous one
  died, which is reported as ``storage_stale_lock_recovered``. Neither pid nor file content ever
  reaches an event.
* Inside a transaction, files are re-read under the lock. Corrupt JSON is renamed to
  ``<file>.corrupt-<ms>-<pid>`` (never deleted) with a ``storage_corrupt_json_quarantined`` event, and
  work continues from an empty value.
* Each written store, journal and session carries ``revision`` = revision it was based on + 1. Before
  anything is replaced, the revision on disk is re-read; a value based on another revision is rejected
  with :class:`StaleWrite` and a ``storage_stale_write_rejected`` event, and nothing is written.
* Writes are atomic and durable: temp file (0600) in the same directory, fsync, ``os.replace``,
  directory fsync. Archive lines are appended (and fsynced) *before* the store that no longer holds
  those entries is replaced, so a crash cannot lose an archived memory. Files are 0600, directories
  0700.
* Unreadable or unwritable storage (permission denied, read-only file system, disk full, a directory
  where a file should be) raises :class:`StorageUnavailable` with a one-line message; nothing on disk
  is lost.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Final, Generic, NamedTuple, TypeVar

import msgspec
from msgspec.structs import replace
from returns.result import Result

from adapters import locking
from adapters.evidence_log import EvidenceLog, describe_os_error, warn
from adapters.jsonl import (
    O_NOFOLLOW,
    SymlinkRefused,
    append_records,
    atomic_write,
    ensure_private_dir,
    read_bytes,
    refuse_symlink,
    rotate_if_larger,
    split_lines,
)
from adapters.paths import (
    WorkspacePaths,
    migration_log,
    rejection_log,
    session_file_name,
    workspace_key,
    workspace_paths_for_key,
    workspace_root_hash,
)
from domain.codec import DecodeFailure, decode, encode_pretty
from domain.ids import hash16
from domain.keys import exact_key
from domain.model import (
    EventType,
    EvidenceEvent,
    EvidenceInput,
    MemoryEntry,
    Outcome,
    PendingJournal,
    Phase,
    SessionState,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.salvage import Salvaged, describe_salvage, salvage_document
from domain.timeutil import iso_from_ms

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)

KIND_STORE: Final = "workspace_memory"
KIND_JOURNAL: Final = "pending_journal"
KIND_SESSION: Final = "session_state"
KIND_WORKSPACE: Final = "workspace"
DEFAULT_LOCK_TIMEOUT_S: Final = 5.0
POLL_INTERVAL_S: Final = 0.005
_SESSION_NAME: Final = re.compile(r"^[0-9a-f]{32}\.json\Z")


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


def _unavailable(action: str, path: Path, exc: OSError) -> StorageUnavailable:
    message = f"workspace storage unavailable: cannot {action} {path} ({describe_os_error(exc)})"
    return StorageUnavailable(_one_line(message))


def _read(path: Path) -> bytes | None:
    """The file's bytes; a symbolic link or a directory reads as empty (unreadable) content, so a
    transaction moves it aside like any corrupt file and nothing is ever read or written through a
    link."""
    try:
        return read_bytes(path)
    except (SymlinkRefused, IsADirectoryError):
        return b""
    except OSError as exc:
        raise _unavailable("read", path, exc) from None


class _Revision(msgspec.Struct):
    revision: int | None = None


_revision_decoder: Final = msgspec.json.Decoder(_Revision)


def _disk_revision(path: Path) -> int | None:
    """The revision recorded on disk: 0 for a missing file or a file without one, ``None`` when the file
    cannot be understood (which counts as a moved revision)."""
    data = _read(path)
    if data is None:
        return 0
    try:
        return _revision_decoder.decode(data).revision or 0
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _storage_event(
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


def _cached_decode(
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


class Workspace:
    """The files of one workspace under a data home."""

    def __init__(
        self,
        home: Path,
        root: str,
        *,
        lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
        cache: SnapshotCache | None = None,
    ) -> None:
        self.home = Path(home)
        self.cache = cache
        self.root = root
        self.key = workspace_key(root)
        self.root_hash = workspace_root_hash(root)
        self.paths: WorkspacePaths = workspace_paths_for_key(self.home, self.key)
        self.lock_timeout_s = lock_timeout_s
        self.evidence = EvidenceLog(
            self.paths.evidence, workspace_key=self.key, workspace_root_hash=self.root_hash
        )

    # ---- empty values ---------------------------------------------------------------------------

    def workspace_ref(self) -> WorkspaceRef:
        return WorkspaceRef(root=self.root, key=self.key)

    def empty_store(self, now_ms: int) -> WorkspaceStore:
        return WorkspaceStore(workspace=self.workspace_ref(), updated_at=iso_from_ms(now_ms))

    def empty_journal(self, now_ms: int) -> PendingJournal:
        return PendingJournal(workspace=self.workspace_ref(), updated_at=iso_from_ms(now_ms))

    def session_path(self, session_id: str) -> Path:
        return self.paths.sessions / session_file_name(session_id)

    # ---- read-only views ------------------------------------------------------------------------

    def _view(self, path: Path, tp: type[S], empty: T) -> Loaded[S | T]:
        data = _read(path)
        if data is None:
            return Loaded(empty, missing=True)
        if self.cache is not None:
            hit = self.cache.get(path, data)
            if hit is not None:
                return Loaded(hit)  # type: ignore[arg-type]
        salvaged = salvage_document(data, tp, empty if isinstance(empty, tp) else None)
        if salvaged is None:
            return Loaded(empty, corrupt=True)
        if salvaged.damaged:
            return Loaded(salvaged.value, damage=f"{path.name} is damaged; {describe_salvage(salvaged)}")
        if self.cache is not None:
            self.cache.put(path, data, salvaged.value)
        return Loaded(salvaged.value)

    def read_store(self, now_ms: int) -> Loaded[WorkspaceStore]:
        return self._view(self.paths.store, WorkspaceStore, self.empty_store(now_ms))

    def read_journal(self, now_ms: int) -> Loaded[PendingJournal]:
        return self._view(self.paths.journal, PendingJournal, self.empty_journal(now_ms))

    def read_session(self, session_id: str) -> Loaded[SessionState | None]:
        return self._view(self.session_path(session_id), SessionState, None)

    def read_events(self) -> tuple[tuple[EvidenceEvent, ...], int]:
        """(valid evidence records in file order, number of invalid lines)."""
        try:
            return self.evidence.read()
        except OSError as exc:
            raise _unavailable("read", self.paths.evidence, exc) from None

    def read_archive(self) -> dict[str, MemoryEntry]:
        """The latest archived copy of each memory, by :func:`archive_key`. Unreadable lines are skipped."""
        data = _read(self.paths.archive)
        found: dict[str, MemoryEntry] = {}
        for line in split_lines(data or b""):
            entry = decode(line, MemoryEntry).value_or(None)
            if isinstance(entry, MemoryEntry):
                found[archive_key(entry)] = entry
        return found

    def quarantined_files(self) -> list[Path]:
        """Every file moved aside in this workspace (corrupt JSON, corrupt evidence lines)."""
        found: list[Path] = []
        for directory in (self.paths.directory, self.paths.sessions, self.paths.evidence_dir):
            with contextlib.suppress(OSError):
                found.extend(p for p in directory.iterdir() if ".corrupt-" in p.name)
        return sorted(found)

    def emit(self, events: Iterable[EvidenceInput], now_ms: int) -> tuple[EvidenceEvent, ...]:
        """Append evidence outside a transaction (for example a host's ``hook_failed``). Never raises."""
        return self.evidence.append(events, now_ms)

    # ---- the lock -------------------------------------------------------------------------------

    def _acquire(self, now_ms: int) -> tuple[locking.FileLock, bool]:
        try:
            ensure_private_dir(self.paths.directory, no_symlink=True)
            refuse_symlink(self.paths.lock, file_expected=True)
        except OSError as exc:
            raise _unavailable("create", self.paths.directory, exc) from None
        lock = locking.FileLock(
            self.paths.lock, timeout=self.lock_timeout_s, mode=0o600, poll_interval=POLL_INTERVAL_S
        )
        try:
            lock.acquire()
        except locking.Timeout:
            wait_ms = round(self.lock_timeout_s * 1000)
            self.evidence.append(
                [
                    _storage_event(
                        EventType.STORAGE_LOCK_TIMEOUT,
                        Outcome.FAILED,
                        "lock_wait_timeout",
                        {"storeKind": KIND_WORKSPACE, "waitMs": wait_ms},
                    )
                ],
                now_ms,
            )
            raise LockTimeout(
                f"timed out after {self.lock_timeout_s:g} s waiting for the workspace lock "
                f"{self.paths.lock} (another workmem process is holding it)"
            ) from None
        except OSError as exc:
            raise _unavailable("lock", self.paths.lock, exc) from None
        try:
            recovered = self._claim_holder_record()
        except OSError as exc:
            lock.release()
            raise _unavailable("write", self.paths.lock_holder, exc) from None
        return lock, recovered

    def _claim_holder_record(self) -> bool:
        """Replace the holder record by ours; True when a previous holder left its record behind,
        which only happens when it died while holding the lock."""
        refuse_symlink(self.paths.lock_holder, file_expected=True)
        for inside in (self.paths.sessions, self.paths.evidence_dir):
            refuse_symlink(inside)
        previous = read_bytes(self.paths.lock_holder)
        recovered = bool(previous and previous.strip())
        if recovered and previous is not None:
            dead_pid = previous.split(b"\n", 1)[0].strip().decode("ascii", "replace")
            if dead_pid.isdigit():
                self._remove_orphan_temps(dead_pid)
        fd = os.open(self.paths.lock_holder, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_NOFOLLOW, 0o600)
        try:
            os.write(fd, f"{os.getpid()}\n{time.time_ns() // 1_000_000}\n".encode())
        finally:
            os.close(fd)
        return recovered

    def _remove_orphan_temps(self, pid: str) -> None:
        """Temp files of a dead holder (``<target>.<pid>.<ms>.<random>.tmp``) are unfinished writes."""
        pattern = re.compile(rf"\.{re.escape(pid)}\.\d+\.[0-9a-f]+\.tmp\Z")
        for directory in (self.paths.directory, self.paths.sessions):
            with contextlib.suppress(OSError):
                for path in directory.iterdir():
                    if pattern.search(path.name):
                        with contextlib.suppress(OSError):
                            path.unlink()

    def _release(self, lock: locking.FileLock) -> None:
        try:
            with contextlib.suppress(OSError):
                os.unlink(self.paths.lock_holder)
        finally:
            lock.release()

    # ---- the transaction ------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, now_ms: int) -> Iterator[Transaction]:
        """Lock the workspace and yield a :class:`Transaction`; commit on a clean exit."""
        lock, recovered = self._acquire(now_ms)
        tx = Transaction(self, now_ms)
        if recovered:
            tx._always.append(
                _storage_event(
                    EventType.STORAGE_STALE_LOCK_RECOVERED,
                    Outcome.RECOVERED,
                    "stale_lock",
                    {"storeKind": KIND_WORKSPACE},
                )
            )
        try:
            yield tx
            tx._commit()
        finally:
            try:
                tx._close()
            finally:
                self._release(lock)


class Transaction:
    """What a command may read and change while it holds the workspace lock. Valid only inside the
    ``with`` block that created it."""

    def __init__(self, workspace: Workspace, now_ms: int) -> None:
        self.workspace = workspace
        self.now_ms = now_ms
        self._open = True
        self._store: WorkspaceStore | None = None
        self._store_put: WorkspaceStore | None = None
        self._journal: PendingJournal | None = None
        self._journal_put: PendingJournal | None = None
        self._sessions: dict[str, SessionState | None] = {}
        self._sessions_put: dict[str, SessionState] = {}
        self._sessions_deleted: set[str] = set()
        self._archive: dict[str, MemoryEntry] | None = None
        self._events: list[EvidenceInput] = []
        self._always: list[EvidenceInput] = []
        self._always_flushed = False
        self._archive_out: list[MemoryEntry] = []
        self._audit: list[msgspec.Struct] = []
        self._rejections: list[msgspec.Struct] = []
        #: damaged files whose salvaged value must be written back, with the bytes they held
        self._salvaged: dict[Path, bytes] = {}
        #: kinds (``pending_journal``, ...) found damaged in this transaction: moved aside or salvaged
        self.damaged: set[str] = set()
        #: values as written by the commit, with their new revisions: ``workspace_memory``,
        #: ``pending_journal`` and ``session:<id>``
        self.written: dict[str, msgspec.Struct] = {}

    # ---- reading inside the lock ----------------------------------------------------------------

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("the transaction is closed; use it only inside its with-block")

    def _load(self, path: Path, kind: str, tp: type[S], empty: S | None = None) -> S | None:
        data = _read(path)
        if data is None:
            return None
        result = _cached_decode(self.workspace.cache, path, data, lambda raw: decode(raw, tp))
        value: S | None = result.value_or(None)
        if value is not None:
            return value
        salvaged = salvage_document(data, tp, empty)
        if salvaged is not None:
            self._keep_original(path, kind, data, salvaged)
            return salvaged.value
        self._quarantine(path, kind, result.swap().value_or(DecodeFailure("invalid_json", "")))
        return None

    def _aside_name(self, path: Path) -> Path:
        pid = os.getpid()
        target = path.with_name(f"{path.name}.corrupt-{self.now_ms}-{pid}")
        n = 1
        while os.path.lexists(target):
            target = path.with_name(f"{path.name}.corrupt-{self.now_ms}-{pid}-{n}")
            n += 1
        return target

    def _keep_original(self, path: Path, kind: str, data: bytes, salvaged: Salvaged[S]) -> None:
        """A damaged file was salvaged: its original bytes are copied aside (the file itself stays
        until the salvaged value replaces it at commit), with a warning and an event."""
        target = self._aside_name(path)
        try:
            atomic_write(target, data)
        except OSError as exc:
            raise _unavailable("keep a copy of damaged", path, exc) from None
        self._salvaged[path] = data
        self.damaged.add(kind)
        warn(f"{path.name} is damaged; {describe_salvage(salvaged)}; the original is kept as {target.name}")
        self._always.append(
            _storage_event(
                EventType.STORAGE_CORRUPT_JSON_QUARANTINED,
                Outcome.RECOVERED,
                "salvaged",
                {
                    "storeKind": kind,
                    "quarantined": True,
                    "salvageMode": salvaged.mode,
                    "readableEntries": salvaged.readable_entries,
                    "unreadableEntries": salvaged.unreadable_entries,
                    "replacedCharacters": salvaged.replaced_characters,
                },
            )
        )

    def _quarantine(self, path: Path, kind: str, failure: DecodeFailure) -> None:
        target = self._aside_name(path)
        link = os.path.islink(path)
        try:
            os.rename(path, target)
        except OSError as exc:
            raise _unavailable("move aside corrupt", path, exc) from None
        problem = "a symbolic link (never followed)" if link else "invalid JSON"
        warn(f"{path} is {problem}; moved aside to {target.name}")
        self.damaged.add(kind)
        reason = "invalid_json" if failure.kind == "invalid_json" else "invalid_shape"
        reason = "symlink" if link else reason
        self._always.append(
            _storage_event(
                EventType.STORAGE_CORRUPT_JSON_QUARANTINED,
                Outcome.QUARANTINED,
                reason,
                {"storeKind": kind, "quarantined": True},
            )
        )

    @property
    def store(self) -> WorkspaceStore:
        """The workspace store as last put in this transaction, else as read inside the lock."""
        self._check_open()
        if self._store_put is not None:
            return self._store_put
        if self._store is None:
            empty = self.workspace.empty_store(self.now_ms)
            loaded = self._load(self.workspace.paths.store, KIND_STORE, WorkspaceStore, empty)
            self._store = loaded if loaded is not None else self.workspace.empty_store(self.now_ms)
        return self._store

    def store_head(self) -> WorkspaceStore | None:
        """The store without its entries (``domain.codec.decode_store_head``), for an operation that
        only reads its workspace and activity time; ``None`` when only a full read will do. Never a
        value to write back: :func:`adapters.commands._run.run_operation` re-runs an operation that
        changed it on the full store."""
        self._check_open()
        if self._store_put is not None or self._store is not None:
            return self.store
        from domain.codec import decode_store_head

        data = _read(self.workspace.paths.store)
        return decode_store_head(data) if data is not None else None

    @property
    def journal(self) -> PendingJournal:
        """The pending journal as last put in this transaction, else as read inside the lock."""
        self._check_open()
        if self._journal_put is not None:
            return self._journal_put
        if self._journal is None:
            empty_journal = self.workspace.empty_journal(self.now_ms)
            loaded = self._load(self.workspace.paths.journal, KIND_JOURNAL, PendingJournal, empty_journal)
            self._journal = loaded if loaded is not None else self.workspace.empty_journal(self.now_ms)
        return self._journal

    def _session_by_file(self, name: str) -> SessionState | None:
        if name in self._sessions_deleted:
            return None
        if name in self._sessions_put:
            return self._sessions_put[name]
        if name not in self._sessions:
            path = self.workspace.paths.sessions / name
            self._sessions[name] = self._load(path, KIND_SESSION, SessionState)
        return self._sessions[name]

    def session(self, session_id: str) -> SessionState | None:
        """The state of one session, or ``None`` when it has none (or it was deleted here)."""
        self._check_open()
        return self._session_by_file(session_file_name(session_id))

    def sessions(self) -> list[SessionState]:
        """Every session of the workspace (for idle-owner adoption), in file-name order."""
        self._check_open()
        try:
            names = {p.name for p in self.workspace.paths.sessions.iterdir() if _SESSION_NAME.match(p.name)}
        except FileNotFoundError:
            names = set()
        except OSError as exc:
            raise _unavailable("list", self.workspace.paths.sessions, exc) from None
        names |= set(self._sessions_put)
        found = (self._session_by_file(name) for name in sorted(names))
        return [state for state in found if state is not None]

    def archive(self) -> Mapping[str, MemoryEntry]:
        """Archived memories by :func:`archive_key` (loaded on first use)."""
        self._check_open()
        if self._archive is None:
            self._archive = self.workspace.read_archive()
        return self._archive

    # ---- changes --------------------------------------------------------------------------------

    def put_store(self, store: WorkspaceStore) -> None:
        _ = self.store  # read (and quarantine if needed) before replacing
        self._store_put = store

    def put_journal(self, journal: PendingJournal) -> None:
        _ = self.journal
        self._journal_put = journal

    def put_session(self, state: SessionState) -> None:
        self._check_open()
        name = session_file_name(state.session_id)
        self._sessions_deleted.discard(name)
        self._session_by_file(name)
        self._sessions_put[name] = state

    def delete_session(self, session_id: str) -> None:
        self._check_open()
        name = session_file_name(session_id)
        self._sessions_put.pop(name, None)
        self._session_by_file(name)
        self._sessions_deleted.add(name)

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        self._check_open()
        self._events.extend(events)

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        self._check_open()
        self._archive_out.extend(entries)

    def append_migration_audit(self, records: Iterable[msgspec.Struct]) -> None:
        """Audit lines; each record's ``migration_id`` picks its file under ``migration-logs/``."""
        self._check_open()
        self._audit.extend(records)

    def append_rejections(self, records: Iterable[msgspec.Struct]) -> None:
        """Lines for the global extraction-rejection log."""
        self._check_open()
        self._rejections.extend(records)

    # ---- commit ---------------------------------------------------------------------------------

    def _checked(self, path: Path, kind: str, value: S, base: int | None) -> S:
        """``value`` with its next revision, after checking that the disk is still at ``base``."""
        expected = base or 0
        if path in self._salvaged:
            # a salvaged file has no readable revision: it must still hold the bytes salvaged from
            found: int | None = expected if _read(path) == self._salvaged[path] else None
        else:
            found = _disk_revision(path)
        if found != expected:
            self._always.append(
                _storage_event(
                    EventType.STORAGE_STALE_WRITE_REJECTED,
                    Outcome.REJECTED,
                    "stale_revision",
                    {
                        "storeKind": kind,
                        "expectedRevision": expected,
                        "foundRevision": -1 if found is None else found,
                    },
                )
            )
            shown = "unreadable" if found is None else str(found)
            raise StaleWrite(
                f"stale write rejected: {kind} on disk is at revision {shown}, "
                f"the update was based on revision {expected}"
            )
        return replace(value, revision=expected + 1)

    def _commit(self) -> None:
        ws = self.workspace
        # (path, label in ``written``, value with its new revision), in write order: store first, so a
        # crash between files can only leave pending entries that the next promotion absorbs.
        plan: list[tuple[Path, str, msgspec.Struct]] = []
        salvaged = self._salvaged
        store = self._store_put if self._store_put is not None else self._store
        if store is not None and (store != self._store or ws.paths.store in salvaged):
            new_store = self._checked(ws.paths.store, KIND_STORE, store, store.revision)
            plan.append((ws.paths.store, KIND_STORE, new_store))
        journal = self._journal_put if self._journal_put is not None else self._journal
        if journal is not None and (journal != self._journal or ws.paths.journal in salvaged):
            new_journal = self._checked(ws.paths.journal, KIND_JOURNAL, journal, journal.revision)
            plan.append((ws.paths.journal, KIND_JOURNAL, new_journal))
        damaged_sessions = {
            path.name: state
            for path in salvaged
            if path.parent == ws.paths.sessions
            and path.name not in self._sessions_deleted
            and (state := self._sessions.get(path.name)) is not None
        }
        for name in sorted({**damaged_sessions, **self._sessions_put}):
            state = self._sessions_put.get(name) or damaged_sessions[name]
            path = ws.paths.sessions / name
            if state != self._sessions.get(name) or path in salvaged:
                new_state = self._checked(path, KIND_SESSION, state, state.revision)
                plan.append((path, f"session:{state.session_id}", new_state))
        deletions = [name for name in sorted(self._sessions_deleted) if self._sessions.get(name) is not None]

        # Encode everything before the first byte is written: a value that cannot be encoded must
        # fail the whole transaction, not leave the store written and the journal behind.
        try:
            encoded = [(path, label, value, encode_pretty(value)) for path, label, value in plan]
        except (msgspec.EncodeError, UnicodeError, ValueError) as exc:
            raise StorageError(f"cannot encode the update: {type(exc).__name__}") from None
        if self._archive_out:
            try:
                append_records(ws.paths.archive, self._archive_out, durable=True)
            except OSError as exc:
                raise _unavailable("append to", ws.paths.archive, exc) from None
        if any(label.startswith("session:") for _, label, _ in plan):
            try:
                ensure_private_dir(ws.paths.sessions, no_symlink=True)
            except OSError as exc:
                raise _unavailable("create", ws.paths.sessions, exc) from None
        for path, label, value, data in encoded:
            if ws.cache is not None:
                ws.cache.drop(path)
            try:
                atomic_write(path, data)
            except OSError as exc:
                raise _unavailable("write", path, exc) from None
            self.written[label] = value
            if ws.cache is not None:
                # the value these very bytes decode to (the codec round-trips every value it writes),
                # so the next transaction of this process need not decode what it just wrote
                ws.cache.put(path, data, value)
        for name in deletions:
            path = ws.paths.sessions / name
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise _unavailable("delete", path, exc) from None

        self._flush_always(extra=self._events)
        self._append_logs()

    def _flush_always(self, extra: Iterable[EvidenceInput] = ()) -> None:
        batch = [*([] if self._always_flushed else self._always), *extra]
        self._always_flushed = True
        if batch:
            self.workspace.evidence.append(batch, self.now_ms)

    def _append_logs(self) -> None:
        home = self.workspace.home
        by_migration: dict[str, list[msgspec.Struct]] = {}
        for record in self._audit:
            migration_id = getattr(record, "migration_id", None)
            by_migration.setdefault(str(migration_id or "unknown"), []).append(record)
        targets: list[tuple[Path, list[msgspec.Struct]]] = [
            (migration_log(home, mid), records) for mid, records in by_migration.items()
        ]
        if self._rejections:
            targets.append((rejection_log(home), self._rejections))
        for path, records in targets:
            try:
                rotate_if_larger(path)
                append_records(path, records)
            except OSError as exc:
                warn(f"failed to append to {path.name}: {describe_os_error(exc)}")

    def _close(self) -> None:
        """End of the with-block: storage evidence (quarantine, recovery, stale write) is appended
        even when the block failed."""
        if self._open:
            self._open = False
            self._flush_always()
