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

This module holds :class:`Workspace` (the files, the lock, the read-only views); the transaction is
:mod:`adapters.transaction` and what both share is :mod:`adapters.storage_io` (import each name from
the module that defines it).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import msgspec

from adapters import locking
from adapters.evidence_log import EvidenceLog
from adapters.jsonl import O_NOFOLLOW, ensure_private_dir, read_bytes, refuse_symlink, split_lines
from adapters.locking import DEFAULT_LOCK_TIMEOUT_S
from adapters.paths import (
    WorkspacePaths,
    session_file_name,
    workspace_key,
    workspace_paths_for_key,
    workspace_root_hash,
)
from adapters.storage_io import (
    KIND_WORKSPACE,
    POLL_INTERVAL_S,
    Loaded,
    LockTimeout,
    SnapshotCache,
    archive_key,
    read_file,
    salvage_file,
    storage_event,
    unavailable,
)
from adapters.transaction import Transaction
from domain.codec import decode
from domain.enums import EventType, Outcome
from domain.model import (
    EvidenceEvent,
    EvidenceInput,
    MemoryEntry,
    PendingJournal,
    SessionState,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.timeutil import iso_from_ms

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)


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
        data = read_file(path)
        if data is None:
            return Loaded(empty, missing=True)
        if self.cache is not None:
            hit = self.cache.get(path, data)
            if hit is not None:
                return Loaded(hit)  # type: ignore[arg-type]
        value = decode(data, tp).value_or(None)
        if value is not None:
            if self.cache is not None:
                self.cache.put(path, data, value)
            return Loaded(value)
        from domain.salvage import describe_salvage  # only a damaged file gets here

        salvaged, previous = salvage_file(path, data, tp, empty if isinstance(empty, tp) else None)
        if salvaged is None:
            return Loaded(empty, corrupt=True)
        return Loaded(
            salvaged.value, damage=f"{path.name} is damaged; {describe_salvage(salvaged, previous)}"
        )

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
            raise unavailable("read", self.paths.evidence, exc) from None

    def read_archive(self) -> dict[str, MemoryEntry]:
        """The latest archived copy of each memory, by :func:`archive_key`. Unreadable lines are skipped."""
        data = read_file(self.paths.archive)
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
            raise unavailable("create", self.paths.directory, exc) from None
        lock = locking.FileLock(
            self.paths.lock, timeout=self.lock_timeout_s, mode=0o600, poll_interval=POLL_INTERVAL_S
        )
        try:
            lock.acquire()
        except locking.Timeout:
            wait_ms = round(self.lock_timeout_s * 1000)
            self.evidence.append(
                [
                    storage_event(
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
            raise unavailable("lock", self.paths.lock, exc) from None
        try:
            recovered = self._claim_holder_record()
        except OSError as exc:
            lock.release()
            raise unavailable("write", self.paths.lock_holder, exc) from None
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
                storage_event(
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
