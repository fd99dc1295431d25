"""A per-user hook server, so that a hook call costs little more than starting the interpreter.

A host runs ``workmem hook <host>`` as a new process for every event. Most of such a process's
time goes to importing the core (the codec, the models, the safety patterns), not to the event
itself (docs/performance.md). So the first hook call, after handling its event itself, starts this
server in the background; later calls hand their payload to it over a Unix socket and print its
answer. The server runs exactly the code the process would have run (:func:`run_hook` of the
host's dialect, one locked transaction per event, reading the files afresh every time), so it
holds nothing the files do not, and processes that use the server and processes that do not can
share a workspace. What it keeps between events is the core's speed state, one
:class:`domain.caches.Caches` per workspace (docs/decisions.md#d14), which no answer depends on. Each
request runs in a thread of its own; the threads of one workspace use its cache only inside the
workspace's transaction, whose lock lets one of them in at a time (``flock`` on a descriptor each
transaction opens itself), so they never use it at once.

- The socket is ``hooks-<data home tag>-<fingerprint>.sock`` in the user's runtime directory
  (``$XDG_RUNTIME_DIR/workmem``, else ``$TMPDIR/workmem-<uid>``), a 0700 directory of the user's own:
  only the user can connect. Nothing of the server lives in the data home, so an idle server keeps no
  file there open (the disk can be unmounted); it runs in ``/``. The fingerprint names the installed
  code (its version, location and the newest modification time of its modules), so an upgraded or
  edited install starts a server of its own; a server that finds its own modules changed answers no
  more requests and exits.
- One server per data home and code: it holds ``hooks-<data home tag>-<fingerprint>.lock`` (beside
  the socket) while it runs; a second one exits at once. It exits after :data:`IDLE_S` seconds
  without a request and removes its socket.
- Every request carries what a process takes from its environment: the data home, the workspace
  option, ``WORKMEM_NOW``, ``WORKMEM_LOCK_TIMEOUT`` and the working directory.
- When the server cannot be reached (none yet, a stale socket, a path too long for a socket, an
  error on the way), the call handles the event itself, as it would without a server; the event is
  never lost. ``WORKMEM_HOOK_SERVER=0`` turns the server off.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from typing import Any, Final

from adapters import hook_client
from adapters.exit_codes import EXIT_OK, EXIT_USAGE
from adapters.hook_client import (
    lock_path,
    private_dir_ok,
    receive as _receive,
    run_dir,
    send as _send,
    socket_path,
)

IDLE_S: Final = 600.0
#: How often the server looks for changed modules (an edit or upgrade under a running server).
CODE_CHECK_INTERVAL_S: Final = 2.0
_FORWARDED_ENV: Final = hook_client.FORWARDED_ENV


def _modules_dir() -> str:
    return hook_client.modules_dir()


def _code_mtime(root: str) -> int:
    """The newest modification time of every module of the installed code."""
    newest = 0
    for package in ("adapters", "domain"):
        for directory, _dirs, files in os.walk(os.path.join(root, package)):
            for name in files:
                if name.endswith((".py", ".js")):
                    try:
                        newest = max(newest, os.stat(os.path.join(directory, name)).st_mtime_ns)
                    except OSError:
                        continue
    return newest


# ---------------------------------------------------------------------------------------------
# The server side
# ---------------------------------------------------------------------------------------------


def handle(body: Any, cache: Any = None, caches: Any = None) -> dict[str, Any]:
    """Run one hook event as ``workmem hook`` would in its own process; ``cache`` (a
    :class:`adapters.storage_io.SnapshotCache`) saves decoding files that did not change, ``caches``
    (an :class:`adapters.service.CachesByWorkspace`) keeps the core's speed state of each workspace
    (docs/decisions.md#d14)."""
    from pathlib import Path

    from adapters.clock import now_ms
    from adapters.commands import lock_timeout_s
    from adapters.hosts.hook_dialect import HookEnv

    if not isinstance(body, dict):
        return {"retry": True}
    host, raw, home = body.get("host"), body.get("stdin"), body.get("home")
    given = body.get("env")
    env_in: dict[str, Any] = given if isinstance(given, dict) else {}
    workspace, cwd = body.get("workspace"), body.get("cwd")
    if not isinstance(raw, str) or not isinstance(home, str) or host not in ("claude-code", "codex"):
        return {"retry": True}
    if host == "codex":
        from adapters.hosts.codex import run_hook
    else:
        from adapters.hosts.claude_code import run_hook
    forwarded = {k: str(v) for k, v in env_in.items() if k in _FORWARDED_ENV and isinstance(v, str)}

    def lock_wait() -> float:
        value = forwarded.get("WORKMEM_LOCK_TIMEOUT")
        if value is None:
            return lock_timeout_s(environ={})
        return lock_timeout_s(environ={"WORKMEM_LOCK_TIMEOUT": value})

    chosen = workspace if isinstance(workspace, str) and workspace else None
    if chosen is None and isinstance(cwd, str) and cwd:
        payload_cwd = _payload_has_cwd(raw)
        chosen = None if payload_cwd else cwd
    hook_env = HookEnv(
        home=lambda: Path(home),
        now_ms=lambda: now_ms(forwarded),
        lock_timeout_s=lock_wait,
        workspace=chosen,
        cache=cache,
        caches=caches,
    )
    result = run_hook(raw, hook_env)
    return {"stdout": result.stdout, "stderr": result.stderr}


def _payload_has_cwd(raw: str) -> bool:
    """Whether the payload names its own working directory (then it wins over the caller's)."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "cwd" in value


def serve(home: str, print_: str, idle_s: float) -> int:
    """Serve until idle for ``idle_s`` seconds; 0 when another server already runs."""
    import threading
    from pathlib import Path

    from adapters import locking
    from adapters.jsonl import ensure_private_dir

    runtime = run_dir()
    try:
        ensure_private_dir(Path(runtime))
    except OSError:
        return EXIT_OK
    if not private_dir_ok(runtime):  # someone else's, or open to others: serve nobody from it
        return EXIT_OK
    path = socket_path(home, print_)
    lock = locking.FileLock(lock_path(home, print_), timeout=0)
    try:
        lock.acquire()
    except (locking.Timeout, OSError):
        return EXIT_OK
    # warm up: what every event needs, imported once
    import domain.extraction
    import domain.operations  # noqa: F401
    from adapters.service import CachesByWorkspace
    from adapters.storage_io import SnapshotCache

    cache = SnapshotCache(max_files=512)
    caches = CachesByWorkspace()
    started_mtime = _code_mtime(_modules_dir())
    checked_at = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        old_umask = os.umask(0o177)
        try:
            listener.bind(path)
        finally:
            os.umask(old_umask)
        listener.listen(64)
        listener.settimeout(idle_s)
        in_flight = _Counter()
        try:
            while True:
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    if in_flight.value == 0:  # idle: nothing in flight either
                        break
                    continue
                now = time.monotonic()
                if now - checked_at >= CODE_CHECK_INTERVAL_S:  # a walk over the modules costs ~1 ms
                    checked_at = now
                    if _code_mtime(_modules_dir()) != started_mtime:
                        _refuse(conn)
                        break
                in_flight.add(1)
                threading.Thread(target=_answer, args=(conn, in_flight, cache, caches)).start()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
            lock.release()
    return EXIT_OK


class _Counter:
    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.value = 0

    def add(self, delta: int) -> None:
        with self._lock:
            self.value += delta


def _refuse(conn: socket.socket) -> None:
    with conn:
        try:
            _receive(conn)
            _send(conn, {"retry": True})
        except (OSError, ValueError):
            pass


def _answer(conn: socket.socket, in_flight: _Counter, cache: Any, caches: Any) -> None:
    try:
        with conn:
            conn.settimeout(60)
            try:
                body = _receive(conn)
            except (OSError, ValueError):
                return
            try:
                answer = handle(body, cache, caches)
            except Exception:  # the caller handles the event itself
                answer = {"retry": True}
            try:
                _send(conn, answer)
            except OSError:
                return
    finally:
        in_flight.add(-1)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        return EXIT_USAGE
    try:
        idle = float(os.environ.get(hook_client.IDLE_ENV, "") or IDLE_S)
    except ValueError:
        idle = IDLE_S
    return serve(argv[0], argv[1], max(0.1, idle))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
