"""The evidence log of one workspace: ``evidence/events.jsonl``, one compact JSON record per line.

* Appending never raises: a failure becomes one line on stderr and the built records are still
  returned (docs/decisions.md#evidence-log-append-and-prune).
* Appends and prunes take the log's own lock (``events.jsonl.lock``), so a prune never drops a line
  appended concurrently (the reference pruned without a lock, docs/decisions.md#b10).
* Whether to prune is decided on every append from the file itself (size, age of the first line,
  line count), not from an in-process counter, so short-lived processes prune too
  (docs/decisions.md#b10). A prune starts once a limit is exceeded by a margin (100 events, 128 KiB,
  one day), so a log at its bounds is not rewritten on every append; right after a prune the bounds
  (90 days, 5,000 events, 2 MiB) hold exactly.
* Invalid lines found while pruning are moved to ``events.jsonl.corrupt-lines-<ms>.jsonl`` (0600),
  never dropped.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Final, NamedTuple

from adapters import locking
from adapters.clock import real_now_ms
from adapters.jsonl import (
    append_bytes,
    atomic_write,
    encode_lines,
    ensure_private_dir,
    read_bytes,
    refuse_symlink,
    split_lines,
)
from adapters.locking import DEFAULT_LOCK_TIMEOUT_S
from domain.evidence_records import build_record, event_time_ms, parse_event_line, prune_indices
from domain.ids import event_id
from domain.limits import DAY_MS, EvidenceLogLimits
from domain.model import EvidenceEvent, EvidenceInput
from domain.text import strip_controls
from domain.timeutil import iso_from_ms

PRUNE_SLACK_EVENTS: Final = 100
PRUNE_SLACK_BYTES: Final = 128 * 1024
PRUNE_SLACK_MS: Final = DAY_MS
POLL_INTERVAL_S: Final = 0.005
_HEAD_BYTES: Final = 64 * 1024


def warn(message: str) -> None:
    """One line on stderr; never raises."""
    try:
        sys.stderr.write("workmem: " + strip_controls(" ".join(message.split())) + "\n")
        sys.stderr.flush()
    except Exception:  # a warning must not become a failure
        pass


def describe_os_error(exc: BaseException) -> str:
    """A short description of an error without file contents (``IsADirectoryError: Is a directory``)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return type(exc).__name__


def lock_path(log: Path) -> Path:
    return log.with_name(log.name + ".lock")


def corrupt_lines_path(log: Path, now_ms: int) -> Path:
    return log.with_name(f"{log.name}.corrupt-lines-{now_ms}.jsonl")


class PruneReport(NamedTuple):
    kept: int
    dropped: int
    quarantined: int
    quarantine_file: Path | None


def read_events(log: Path) -> tuple[tuple[EvidenceEvent, ...], int]:
    """(valid records in file order, number of invalid non-blank lines). A missing log is empty;
    other I/O errors (a directory, no permission) propagate as ``OSError``."""
    data = read_bytes(log)
    if data is None:
        return (), 0
    events: list[EvidenceEvent] = []
    invalid = 0
    for line in split_lines(data):
        event = parse_event_line(line)
        if event is None:
            invalid += 1
        else:
            events.append(event)
    return tuple(events), invalid


def needs_prune(log: Path, now_ms: int) -> bool:
    """Whether the log is over a limit (by the margin): bigger than 2 MiB, first line invalid or older
    than 90 days, or more than 5000 lines."""
    try:
        st = os.stat(log)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return False
    if st.st_size > EvidenceLogLimits.MAX_BYTES_PER_WORKSPACE + PRUNE_SLACK_BYTES:
        return True
    max_lines = EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE + PRUNE_SLACK_EVENTS
    with open(log, "rb") as handle:
        head = handle.readline(_HEAD_BYTES)
        if head.strip():
            first = parse_event_line(head)
            if first is None:
                return True
            cutoff = now_ms - EvidenceLogLimits.MAX_AGE_DAYS * DAY_MS - PRUNE_SLACK_MS
            if event_time_ms(first) < cutoff:
                return True
        if st.st_size > 2 * max_lines:
            return _line_count(handle, st, head) > max_lines
    return False


class _Counted(NamedTuple):
    """How many line breaks a log held at ``size``, its first line, and the bytes just before
    ``size`` (to tell that a log with the same device and inode is still the same file, grown)."""

    size: int
    lines: int
    head: bytes
    tail: bytes


#: Line counts of the logs this process looked at, by (device, inode). A log only grows by appends
#: until a prune or a repair replaces it (a new file), so the next look counts only what was
#: appended since: a hook server does not read the whole log on every event (docs/performance.md).
_COUNTED: dict[tuple[int, int], _Counted] = {}
_COUNTED_LIMIT: Final = 64
_TAIL_BYTES: Final = 64


def _line_count(handle: BinaryIO, st: os.stat_result, head: bytes) -> int:
    """The number of line breaks in the open log ``handle`` (its ``stat`` ``st``, first line ``head``)."""
    key = (st.st_dev, st.st_ino)
    known = _COUNTED.get(key)
    lines = -1
    if known is not None and known.size <= st.st_size and known.head == head:
        start = max(0, known.size - _TAIL_BYTES)
        handle.seek(start)
        if handle.read(known.size - start) == known.tail:
            lines = known.lines + handle.read(st.st_size - known.size).count(b"\n")
    if lines < 0:
        handle.seek(0)
        lines = handle.read(st.st_size).count(b"\n")
    handle.seek(max(0, st.st_size - _TAIL_BYTES))
    tail = handle.read(st.st_size - max(0, st.st_size - _TAIL_BYTES))
    if len(_COUNTED) >= _COUNTED_LIMIT and key not in _COUNTED:
        _COUNTED.clear()
    _COUNTED[key] = _Counted(st.st_size, lines, head, tail)
    return lines


def _prune_locked(log: Path, now_ms: int) -> PruneReport | None:
    try:
        st = os.stat(log)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    data = read_bytes(log) or b""
    valid: list[EvidenceEvent] = []
    raw_valid: list[bytes] = []
    invalid: list[bytes] = []
    for line in split_lines(data):
        event = parse_event_line(line)
        if event is None:
            invalid.append(line)
        else:
            valid.append(event)
            raw_valid.append(line)
    quarantine: Path | None = None
    if invalid:
        quarantine = corrupt_lines_path(log, now_ms)
        # Must succeed before the log is rewritten: invalid lines are moved, never dropped.
        append_bytes(quarantine, b"\n".join(invalid) + b"\n", durable=True)
    kept = prune_indices(valid, now_ms, sizes=[len(line) + 1 for line in raw_valid])
    atomic_write(log, b"".join(raw_valid[i] + b"\n" for i in kept))
    return PruneReport(len(kept), len(valid) - len(kept), len(invalid), quarantine)


def _lock(log: Path, timeout_s: float) -> locking.FileLock:
    refuse_symlink(lock_path(log), file_expected=True)
    return locking.FileLock(lock_path(log), timeout=timeout_s, mode=0o600, poll_interval=POLL_INTERVAL_S)


def prune_log(
    log: Path, now_ms: int, *, lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S
) -> PruneReport | None:
    """Prune now, under the log's lock (docs/decisions.md#evidence-log-append-and-prune). Raises
    ``OSError`` (including ``locking.Timeout``)."""
    with _lock(log, lock_timeout_s):
        return _prune_locked(log, now_ms)


def _maybe_prune(log: Path, now_ms: int) -> None:
    # Age is judged against the earlier of the operation's clock and the real one: a run with
    # ``WORKMEM_NOW`` set months ahead (an offline decay simulation) must not age out real evidence.
    at = min(now_ms, real_now_ms())
    try:
        if needs_prune(log, at):
            _prune_locked(log, at)
    except Exception as exc:  # pruning is housekeeping; never fail the append
        warn(f"failed to prune evidence log: {describe_os_error(exc)}")


def _size(log: Path) -> int:
    try:
        return os.stat(log).st_size
    except OSError:
        return 0


def append_events(
    log: Path,
    inputs: Iterable[EvidenceInput],
    *,
    now_ms: int,
    workspace_key: str,
    workspace_root_hash: str,
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
) -> tuple[EvidenceEvent, ...]:
    """Sanitise and append ``inputs`` in order; return the stored records. Never raises.

    Event ids are ``evt_<ms>_<8>`` derived from the time, the log's size before the append, the
    position in the batch and the event type, so they are deterministic for a given log state and
    distinct within a log.
    """
    items = tuple(inputs)
    if not items:
        return ()
    lock: locking.FileLock | None = None
    try:
        ensure_private_dir(log.parent, no_symlink=True)
        lock = _lock(log, lock_timeout_s)
        lock.acquire()
    except locking.Timeout:
        warn("evidence log is busy; appending without its lock")
        lock = None
    except Exception:
        # No lock (for example the directory cannot be created): the append below reports the failure.
        lock = None
    try:
        offset = _size(log)
        created_at = iso_from_ms(now_ms)
        records = tuple(
            build_record(
                inp,
                event_id=event_id(now_ms, offset, seq, str(inp.type)),
                created_at=created_at,
                workspace_key=workspace_key,
                workspace_root_hash=workspace_root_hash,
            )
            for seq, inp in enumerate(items)
        )
        try:
            append_bytes(log, encode_lines(records))
        except Exception as exc:  # an append never raises (docs/decisions.md#evidence-log-append-and-prune)
            warn(f"failed to write evidence event: {describe_os_error(exc)}")
            return records
        if lock is not None:
            _maybe_prune(log, now_ms)
        return records
    finally:
        if lock is not None:
            with contextlib.suppress(Exception):
                lock.release()


class EvidenceLog:
    """The evidence log of one workspace, bound to its key and root hash."""

    def __init__(
        self,
        path: Path,
        *,
        workspace_key: str,
        workspace_root_hash: str,
        lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
    ) -> None:
        self.path = path
        self.workspace_key = workspace_key
        self.workspace_root_hash = workspace_root_hash
        self.lock_timeout_s = lock_timeout_s

    def append(self, inputs: Iterable[EvidenceInput], now_ms: int) -> tuple[EvidenceEvent, ...]:
        return append_events(
            self.path,
            inputs,
            now_ms=now_ms,
            workspace_key=self.workspace_key,
            workspace_root_hash=self.workspace_root_hash,
            lock_timeout_s=self.lock_timeout_s,
        )

    def read(self) -> tuple[tuple[EvidenceEvent, ...], int]:
        return read_events(self.path)

    def prune(self, now_ms: int) -> PruneReport | None:
        return prune_log(self.path, now_ms, lock_timeout_s=self.lock_timeout_s)
