"""The thin side of the hook server (adapters/hook_server.py): what a ``workmem hook`` process runs
before it imports anything else.

Only the standard library's lightest modules are imported here (``os``, ``sys``, ``json``,
``_socket``, ``binascii``): a hook call that the server answers costs little more than
starting the interpreter (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import sys

from adapters.host_names import HOOK_HOSTS, HookEvent
from adapters.locking import DEFAULT_LOCK_TIMEOUT_S, LOCK_TIMEOUT_ENV

SERVER_ENV = "WORKMEM_HOOK_SERVER"
IDLE_ENV = "WORKMEM_HOOK_SERVER_IDLE_S"
HOME_ENV = "WORKMEM_HOME"
APP_NAME = "workmem"

#: How long a call waits for the server's answer beyond the longest lock wait.
ANSWER_MARGIN_S = 10.0
MAX_SOCKET_PATH = 100
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
FORWARDED_ENV = ("WORKMEM_NOW", LOCK_TIMEOUT_ENV)
#: every message is preceded by its length: 4 bytes, big-endian
_HEADER_BYTES = 4
_GLOBAL_OPTIONS = ("--home", "--workspace")

#: Events that read or write the workspace; every other event (and a tool the hot state does not
#: follow, or a sub-agent's event) costs nothing worth a round trip and is handled in the process.
STORAGE_EVENTS = frozenset(HookEvent)
FOLLOWED_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Bash"})


def enabled(environ: dict[str, str] | None = None) -> bool:
    source = os.environ if environ is None else environ
    return source.get(SERVER_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def home_dir(override: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The data home as ``adapters.paths.data_home`` resolves it, as a string; ``None`` where only
    ``platformdirs`` knows it (then no server is used)."""
    source = os.environ if environ is None else environ
    if override:
        return os.path.expanduser(override)
    value = source.get(HOME_ENV, "")
    if value:
        return os.path.expanduser(value)
    xdg = source.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, APP_NAME)
    if sys.platform not in ("win32", "darwin"):
        return os.path.join(os.path.expanduser("~/.local/share"), APP_NAME)
    return None


def parse_hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """``(host, --home, --workspace)`` for ``[--home DIR] [--workspace DIR] hook HOST`` and nothing
    else; ``None`` for any other command line."""
    values: dict[str, str] = {}
    index = 0
    while index < len(argv) and argv[index] != "hook":
        name, eq, value = argv[index].partition("=")
        if name not in _GLOBAL_OPTIONS or name in values:
            return None
        if not eq:
            if index + 1 >= len(argv) or argv[index + 1].startswith("-"):
                return None
            value = argv[index + 1]
            index += 1
        values[name] = value
        index += 1
    rest = argv[index:]
    if len(rest) != 2 or rest[1].startswith("-"):
        return None
    return rest[1], values.get("--home"), values.get("--workspace")


def modules_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fingerprint() -> str:
    """Names the installed code cheaply (every hook call computes it): the version, the location, the
    interpreter, and the modification times of the package directories and of the hook modules.
    Installing or upgrading rewrites them; the server itself also watches every module."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    import binascii

    from adapters import __version__

    root = modules_dir()
    stamps = []
    for relative in ("adapters", "domain", "adapters/hosts", "adapters/commands", "adapters/hook_client.py",
                     "adapters/hook_server.py"):  # fmt: skip
        try:
            stamps.append(str(os.stat(os.path.join(root, relative)).st_mtime_ns))
        except OSError:
            stamps.append("-")
    text = "\x1f".join((__version__, root, os.path.realpath(sys.executable), *stamps)).encode(
        "utf-8", "surrogatepass"
    )
    return f"{binascii.crc32(text):08x}{binascii.crc32(text[::-1]):08x}"


RUNTIME_ENV = "XDG_RUNTIME_DIR"


def run_dir(environ: dict[str, str] | None = None) -> str:
    """Where the hook servers keep their sockets and locks: never in the data home (a server idles for
    minutes, and a file it holds open there would keep that disk from being unmounted), but in the
    user's runtime directory (``$XDG_RUNTIME_DIR/workmem``), else ``$TMPDIR/workmem-<uid>`` (or
    ``/tmp/workmem-<uid>``). The directory is 0700 and must belong to the user (checked by
    :func:`private_dir_ok` before it is used)."""
    source = os.environ if environ is None else environ
    runtime = source.get(RUNTIME_ENV, "")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, APP_NAME)
    base = source.get("TMPDIR", "") or "/tmp"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(base, f"{APP_NAME}-{uid}")


def private_dir_ok(path: str) -> bool:
    """``path`` is a real directory (not a link) of this user that nobody else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    import stat

    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o077:
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def _home_tag(home: str) -> str:
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    import binascii

    data = os.path.abspath(home).encode("utf-8", "surrogatepass")
    return f"{binascii.crc32(data):08x}"


def socket_path(home: str, print_: str, environ: dict[str, str] | None = None) -> str:
    """The server socket for the data home ``home`` and the code ``print_``."""
    return os.path.join(run_dir(environ), f"hooks-{_home_tag(home)}-{print_}.sock")


def lock_path(home: str, print_: str, environ: dict[str, str] | None = None) -> str:
    """The lock a server of ``home`` and ``print_`` holds while it runs (one server each)."""
    return os.path.join(run_dir(environ), f"hooks-{_home_tag(home)}-{print_}.lock")


def worth_a_round_trip(raw: str) -> bool:
    """Whether the payload is an event that touches the workspace (else it is handled in-process,
    where anything unusable about it is recorded as a hook failure). Never raises."""
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    if not isinstance(payload, dict):
        return False
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or event not in STORAGE_EVENTS or payload.get("agent_id"):
        return False
    if event in ("PostToolUse", "PostToolUseFailure"):
        tool = payload.get("tool_name")
        return isinstance(tool, str) and tool in FOLLOWED_TOOLS
    return True


# ---------------------------------------------------------------------------------------------
# Framing: a 4-byte length, then that many bytes of JSON
# ---------------------------------------------------------------------------------------------


def send(conn: object, value: object) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    conn.sendall(len(data).to_bytes(_HEADER_BYTES, "big") + data)  # type: ignore[attr-defined]


def receive(conn: object) -> object:
    size = int.from_bytes(_read_exactly(conn, _HEADER_BYTES), "big")
    if size > MAX_MESSAGE_BYTES:
        raise ValueError("message too large")
    return json.loads(_read_exactly(conn, size).decode("utf-8", "surrogatepass"))


def _read_exactly(conn: object, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk: bytes = conn.recv(min(remaining, 1 << 20))  # type: ignore[attr-defined]
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def request(path: str, body: dict[str, object], timeout_s: float) -> tuple[str, str] | None:
    """Hand one event to the server at ``path``: ``(stdout, stderr)``, or ``None`` when the server
    cannot be reached or gives no usable answer (the caller then handles the event itself)."""
    if len(path.encode("utf-8", "surrogatepass")) > MAX_SOCKET_PATH or not private_dir_ok(
        os.path.dirname(path)
    ):
        return None
    try:
        # start-up time: the C socket type, without the ``socket`` module's wrappers (it imports
        # ``selectors`` and builds its enums: a few milliseconds of every hook call,
        # docs/performance.md); an interpreter without it takes the module
        import _socket as sockets
    except ImportError:  # pragma: no cover - CPython and PyPy have it
        # start-up time: only where the C module is missing (the comment above)
        import socket as sockets  # type: ignore[no-redef]
    try:
        conn = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    except (OSError, AttributeError):
        return None
    try:
        conn.settimeout(timeout_s)
        conn.connect(path)
        send(conn, body)
        answer = receive(conn)
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    finally:
        conn.close()
    if not isinstance(answer, dict) or answer.get("retry"):
        return None
    out, err = answer.get("stdout"), answer.get("stderr")
    if not isinstance(out, str) or not isinstance(err, str):
        return None
    return out, err


def start(home: str, print_: str) -> None:
    """Start a server for ``home`` in the background (detached, no output); never raises."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "adapters.hook_server", home, print_],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd="/",  # hold no directory of the user's: the request carries the caller's cwd
            env={**os.environ, SERVER_ENV: "0"},
        )
    except Exception:
        return


def write_output(stdout: str, stderr: str) -> None:
    """Print a hook's answer; a closed stream or a broken pipe (the host is gone) is ignored."""
    try:
        if stdout:
            sys.stdout.write(stdout)
            sys.stdout.flush()
        if stderr:
            sys.stderr.write(stderr)
    except Exception:
        pass


def _lock_wait() -> float:
    try:
        return max(0.0, float(os.environ.get("WORKMEM_LOCK_TIMEOUT", "") or DEFAULT_LOCK_TIMEOUT_S))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT_S


class Call:
    """One ``workmem hook`` call on its way to the server."""

    def __init__(self, host: str, home: str, workspace: str | None, raw: str) -> None:
        self.host, self.home, self.workspace, self.raw = host, home, workspace, raw
        self.fingerprint = fingerprint()

    def ask(self) -> tuple[str, str] | None:
        body: dict[str, object] = {
            "host": self.host,
            "stdin": self.raw,
            "home": self.home,
            "workspace": os.path.abspath(self.workspace) if self.workspace else None,
            "cwd": os.getcwd(),
            "env": {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ},
        }
        return request(socket_path(self.home, self.fingerprint), body, _lock_wait() + ANSWER_MARGIN_S)


def prepare(argv: list[str], raw: bytes) -> Call | None:
    """The server call for this command line and payload, or ``None`` when the event is better
    handled in the process (not a hook call, server off, an event that touches no workspace)."""
    parsed = parse_hook_call(argv)
    if parsed is None or not enabled():
        return None
    host, home_option, workspace = parsed
    if host not in HOOK_HOSTS:
        return None
    text = raw.decode("utf-8", errors="replace")
    if not worth_a_round_trip(text):
        return None
    home = home_dir(home_option)
    if home is None:
        return None
    try:
        return Call(host, home, workspace, text)
    except Exception:
        return None
