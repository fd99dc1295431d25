"""An exclusive, inter-process file lock with a timeout: ``flock`` where the OS has it.

Every hook event is a new process, so import time counts (docs/performance.md): on POSIX this
module takes the lock with ``fcntl.flock`` directly — the same advisory lock the ``filelock``
package takes on POSIX, so the two interoperate — and only elsewhere falls back to ``filelock``.
The lock is released when the holder calls :meth:`FileLock.release` or when its process dies (the
OS drops it with the file descriptor), which is what the stale-holder recovery in
:mod:`adapters.filestore` relies on.
"""

from __future__ import annotations

import os
import time

# start-up time: the thin hook client imports this module, and ``typing`` costs it milliseconds
# (docs/performance.md); type checkers read the name TYPE_CHECKING as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Final

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

DEFAULT_POLL_INTERVAL_S: Final = 0.05
#: how long any workmem command waits for a workspace's lock, unless ``WORKMEM_LOCK_TIMEOUT`` says
DEFAULT_LOCK_TIMEOUT_S: Final = 5.0
LOCK_TIMEOUT_ENV: Final = "WORKMEM_LOCK_TIMEOUT"


class Timeout(TimeoutError):
    """The lock was not acquired within the timeout (an ``OSError``, like ``filelock.Timeout``)."""

    def __init__(self, lock_file: str) -> None:
        super().__init__(f"The file lock '{lock_file}' could not be acquired.")
        self.lock_file = lock_file


class FileLock:
    """``with FileLock(path, timeout=5):`` — exclusive across processes; not re-entrant."""

    def __init__(
        self,
        lock_file: str | os.PathLike[str],
        timeout: float = -1,
        mode: int = 0o600,
        poll_interval: float = DEFAULT_POLL_INTERVAL_S,
    ) -> None:
        self.lock_file = os.fspath(lock_file)
        self.timeout = timeout
        self.mode = mode
        self.poll_interval = poll_interval
        self._fd: int | None = None
        self._fallback: object | None = None

    @property
    def is_locked(self) -> bool:
        return self._fd is not None or self._fallback is not None

    def acquire(self) -> None:
        if self.is_locked:
            return
        if fcntl is None:  # pragma: no cover - not POSIX
            self._acquire_fallback()
            return
        deadline = None if self.timeout < 0 else time.monotonic() + self.timeout
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.lock_file, flags, self.mode)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise Timeout(self.lock_file) from None
                    time.sleep(self.poll_interval)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _acquire_fallback(self) -> None:  # pragma: no cover - not POSIX
        # start-up time: the fallback lock is loaded only where flock is missing
        import filelock

        lock = filelock.FileLock(self.lock_file, timeout=self.timeout, mode=self.mode)
        try:
            lock.acquire(poll_interval=self.poll_interval)
        except filelock.Timeout:
            raise Timeout(self.lock_file) from None
        self._fallback = lock

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        fallback, self._fallback = self._fallback, None
        if fallback is not None:  # pragma: no cover - not POSIX
            fallback.release()  # type: ignore[attr-defined]

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
