"""The hook server (adapters/hook_server.py): real ``workmem hook`` processes, a real server.

What is checked: a hook call with no server handles its event itself and starts one; later calls are
answered by it with exactly what a process of its own would print and write; what a process takes
from its environment (the clock, the data home, the working directory) travels with each request;
an unreachable server never loses an event; the server is alone per data home, and leaves when idle.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from adapters import hook_client, paths
from tests.support.cli import REPO, T0_ISO

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")


def workmem() -> list[str]:
    script = shutil.which("workmem", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "adapters.cli"]


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A short directory: a Unix socket path must stay under ~100 bytes."""
    base = Path("/tmp") if Path("/tmp").is_dir() else Path.cwd()
    directory = Path(os.path.realpath(base)) / f"wmhs{os.getpid()}_{time.monotonic_ns() % 10**6}"
    directory.mkdir()
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def runtime_env(home: Path) -> dict[str, str]:
    """A runtime directory of the test's own (beside the data home) for the servers' sockets."""
    return {hook_client.RUNTIME_ENV: str(home.parent / "rt")}


def runtime_dir(home: Path) -> Path:
    return Path(hook_client.run_dir(runtime_env(home)))


def env_for(home: Path, *, server: bool, now: str = T0_ISO) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKMEM_")}
    env.update(
        WORKMEM_HOME=str(home),
        WORKMEM_NOW=now,
        WORKMEM_HOOK_SERVER="1" if server else "0",
        WORKMEM_HOOK_SERVER_IDLE_S="20",
        **runtime_env(home),
    )
    return env


def hook(project: Path, env: dict[str, str], payload: dict[str, Any], host: str = "claude-code") -> str:
    body = {"session_id": "S1", "cwd": str(project), **payload}
    argv = [*workmem(), "hook", host]
    done = subprocess.run(argv, input=json.dumps(body), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done
    assert done.stderr == "", done.stderr
    return done.stdout


def wait_for(predicate: Any, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def sockets(home: Path) -> list[Path]:
    """The sockets of servers of the data home ``home``."""
    run = runtime_dir(home)
    tag = Path(hook_client.socket_path(str(home), "x", runtime_env(home))).name.split("-")[1]
    return sorted(run.glob(f"hooks-{tag}-*.sock")) if run.is_dir() else []


def stop_servers(home: Path) -> None:
    """Servers leave by themselves when idle; a test does not wait for that."""
    for path in sockets(home):
        with socket.socket(socket.AF_UNIX) as conn:
            try:
                conn.connect(str(path))
            except OSError:
                continue
    if shutil.which("pkill"):
        subprocess.run(["pkill", "-f", f"adapters.hook_server {home}"], check=False)


def at(minute: int) -> str:
    return f"2026-05-01T09:{minute:02d}:00.000Z"


ERROR = "Exit code 1\nError: failed in a.ts"
FAILURE = {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "error": ERROR}
REQUEST = "remember this: deploys use blue-green switching"
SUMMARY = "Memory candidates:\n- [feedback] Never deploy on Fridays"
SESSION: list[tuple[str, dict[str, Any]]] = [
    (at(0), {"hook_event_name": "SessionStart", "source": "startup"}),
    (at(1), {"hook_event_name": "UserPromptSubmit", "prompt": REQUEST, "prompt_id": "p1"}),
    (at(2), {"hook_event_name": "PostToolUseFailure", **FAILURE}),
    (at(3), {"hook_event_name": "UserPromptSubmit", "prompt": "fix it", "prompt_id": "p2"}),
    (at(4), {"hook_event_name": "PreCompact", "trigger": "manual"}),
    (at(5), {"hook_event_name": "PostCompact", "trigger": "manual", "compact_summary": SUMMARY}),
    (at(6), {"hook_event_name": "Stop"}),
    (at(7), {"hook_event_name": "SessionEnd", "reason": "other"}),
    (at(8), {"hook_event_name": "SessionStart", "source": "resume"}),
]  # fmt: skip


def run_session(home: Path, project: Path, *, server: bool) -> list[str]:
    outputs = []
    for now, payload in SESSION:
        outputs.append(hook(project, env_for(home, server=server, now=now), payload))
        if server and not outputs[1:]:  # the first call started the server: let it come up
            assert wait_for(lambda: bool(sockets(home)))
    return outputs


def stored(home: Path, project: Path) -> tuple[list[str], list[str]]:
    layout = paths.workspace_paths(home, str(project))
    store = json.loads(layout.store.read_text())
    events = [json.loads(line) for line in layout.evidence.read_text().splitlines()]
    return sorted(e["text"] for e in store["entries"]), [f"{e['type']}@{e['createdAt']}" for e in events]


def test_a_session_through_the_server_equals_one_without(short_tmp: Path) -> None:
    project = short_tmp / "p"
    project.mkdir()
    with_server, without = short_tmp / "a", short_tmp / "b"
    try:
        served = run_session(with_server, project, server=True)
        assert sockets(with_server), "the first hook call starts a server"
        alone = run_session(without, project, server=False)
        assert sockets(without) == []
        assert served == alone
        assert stored(with_server, project) == stored(without, project)
        texts, events = stored(with_server, project)
        assert "deploys use blue-green switching" in texts and "Never deploy on Fridays" in texts
        assert any(e.startswith("session_suspended@2026-05-01T09:07") for e in events)  # its clock
        assert "open_errors" in served[-1]  # the resume shows the kept hot state
    finally:
        stop_servers(with_server)


def test_the_client_uses_a_server_that_answers(short_tmp: Path) -> None:
    """A stand-in server proves the call goes through the socket (and what it sends)."""
    home = short_tmp / "h"
    runtime_dir(home).mkdir(parents=True, mode=0o700)
    path = hook_client.socket_path(str(home), "x", runtime_env(home))
    seen: list[Any] = []

    def serve_once(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            seen.append(hook_client.receive(conn))
            hook_client.send(conn, {"stdout": "FROM THE SERVER\n", "stderr": ""})

    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen(1)
        thread = threading.Thread(target=serve_once, args=(listener,))
        thread.start()
        env = {"WORKMEM_NOW": T0_ISO}
        body: dict[str, object] = {"host": "codex", "stdin": "{}", "home": str(home), "env": env}
        assert hook_client.request(path, body, 10) == ("FROM THE SERVER\n", "")
        thread.join(10)
    assert seen == [body]


def test_an_unreachable_server_never_loses_the_event(short_tmp: Path) -> None:
    home, project = short_tmp / "h", short_tmp / "p"
    project.mkdir()
    runtime_dir(home).mkdir(parents=True, mode=0o700)
    # a stale socket file with no server behind it
    stale = hook_client.socket_path(str(home), hook_client.fingerprint(), runtime_env(home))
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(stale)
    try:
        env = env_for(home, server=True)
        prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "remember: use pnpm", "prompt_id": "p"}
        out = hook(project, env, prompt)
        assert "use pnpm" in out  # handled by the call itself
        assert wait_for(lambda: stale_is_live(stale))  # and a server now answers on that path
    finally:
        stop_servers(home)


def stale_is_live(path: str) -> bool:
    with socket.socket(socket.AF_UNIX) as conn:
        try:
            conn.connect(path)
        except OSError:
            return False
    return True


def test_one_server_per_home_and_it_leaves_when_idle(short_tmp: Path) -> None:
    home = short_tmp / "h"
    print_ = "test"
    env = {**os.environ, hook_client.IDLE_ENV: "1.0", hook_client.SERVER_ENV: "0", **runtime_env(home)}
    cmd = [sys.executable, "-m", "adapters.hook_server", str(home), print_]
    first = subprocess.Popen(cmd, env=env)
    try:
        path = hook_client.socket_path(str(home), print_, runtime_env(home))
        assert wait_for(lambda: stale_is_live(path))
        second = subprocess.run(cmd, env=env, timeout=30)
        assert second.returncode == 0  # found the first one holding the lock, and left
        assert first.wait(timeout=30) == 0  # idle for a second: gone
        assert not os.path.exists(path)
        mode = runtime_dir(home).stat().st_mode & 0o777
        assert mode == 0o700
        assert not home.exists()  # nothing of the server lives in the data home
    finally:
        first.kill()


def test_a_socket_path_too_long_is_no_server(short_tmp: Path) -> None:
    path = str(short_tmp / ("x" * 120) / "s.sock")
    assert hook_client.request(path, {}, 1) is None


@pytest.mark.parametrize(
    ("payload", "worth"),
    [
        ({"hook_event_name": "Stop"}, True),  # the reply, read for the memories it cites
        ({"hook_event_name": "Notification"}, False),
        ({"hook_event_name": "PostToolUse", "tool_name": "WebFetch"}, False),
        ({"hook_event_name": "PostToolUse", "tool_name": "Edit"}, True),
        ({"hook_event_name": "UserPromptSubmit", "agent_id": "a1"}, False),
        ({"hook_event_name": "SessionStart"}, True),
    ],
)
def test_only_events_that_touch_the_workspace_go_to_the_server(payload: dict[str, Any], worth: bool) -> None:
    assert hook_client.worth_a_round_trip(json.dumps(payload)) is worth
    assert hook_client.worth_a_round_trip("{not json") is False


def test_the_server_is_off_when_asked() -> None:
    assert hook_client.enabled({}) is True
    assert hook_client.enabled({hook_client.SERVER_ENV: "0"}) is False
    assert hook_client.enabled({hook_client.SERVER_ENV: "off"}) is False


def test_the_thin_client_finds_the_data_home_like_the_core(tmp_path: Path) -> None:
    homes: tuple[dict[str, str], ...] = (
        {"WORKMEM_HOME": str(tmp_path)},
        {"XDG_DATA_HOME": str(tmp_path)},
        {"XDG_DATA_HOME": "rel"},
        {},
    )
    for environ in homes:
        assert hook_client.home_dir(None, environ) == str(paths.data_home(environ))
    assert hook_client.home_dir("~/x", {}) == str(paths.data_home({}, override="~/x"))


DEEP = "[" * 200_000 + "]" * 200_000
HOSTILE = [
    '{"session_id": "S1", "hook_event_name": ["SessionStart"]}',
    '{"session_id": "S1", "hook_event_name": {"a": 1}}',
    DEEP,
    '{"session_id": "S1", "hook_event_name": "SessionStart", "x": ' + DEEP + "}",
]


def test_hostile_payloads_exit_0_through_client_server_and_process(short_tmp: Path) -> None:
    """A payload the hook cannot use exits 0 with one line on stderr and one ``hook_failed`` event,
    whether the server is asked (and a server runs) or not."""
    home, project = short_tmp / "h", short_tmp / "p"
    project.mkdir()
    try:
        start = {"hook_event_name": "SessionStart", "source": "startup"}
        hook(project, env_for(home, server=True), start)  # starts a server
        assert wait_for(lambda: bool(sockets(home)))
        for server in (True, False):
            for raw in HOSTILE:
                env = env_for(home, server=server)
                done = subprocess.run(
                    [*workmem(), "--workspace", str(project), "hook", "claude-code"],
                    input=raw, env=env, capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                assert done.returncode == 0, (raw[:80], done.stderr)
                assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
                assert done.stdout == ""
        failed = [e for e in stored(home, project)[1] if e.startswith("hook_failed@")]
        assert len(failed) == 2 * len(HOSTILE)
    finally:
        stop_servers(home)


def test_a_cwd_that_does_not_exist_creates_no_workspace(short_tmp: Path) -> None:
    home, project = short_tmp / "h", short_tmp / "p"
    project.mkdir()
    for cwd in (str(short_tmp / "gone"), str(project) + "\x00x"):
        raw = json.dumps({"session_id": "S1", "hook_event_name": "SessionStart", "cwd": cwd})
        done = subprocess.run(
            [*workmem(), "hook", "claude-code"], input=raw, env=env_for(home, server=False),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0 and ("does not exist" in done.stderr or "not a path" in done.stderr), (
            done.stderr
        )
    workspaces = home / "workspaces"
    assert not workspaces.exists() or all(
        not (d / "workspace-memory.json").exists() for d in workspaces.iterdir()
    )


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_an_idle_server_holds_nothing_in_the_data_home(short_tmp: Path) -> None:
    home, project = short_tmp / "h", short_tmp / "p"
    project.mkdir()
    try:
        hook(project, env_for(home, server=True), {"hook_event_name": "SessionStart", "source": "startup"})
        assert wait_for(lambda: bool(sockets(home)))
        found = subprocess.run(
            ["pgrep", "-f", f"adapters.hook_server {home}"], capture_output=True, text=True
        )
        (pid,) = found.stdout.split()
        held = [
            os.path.realpath(p)
            for p in Path(f"/proc/{pid}/fd").iterdir()
            if not os.readlink(p).startswith(("pipe:", "socket:"))
        ]
        held.append(os.path.realpath(f"/proc/{pid}/cwd"))
        assert not [p for p in held if p.startswith(str(home)) or p.startswith(str(project))], held
    finally:
        stop_servers(home)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
    max_leaves=10,
)


@given(
    st.dictionaries(st.sampled_from(["hook_event_name", "tool_name", "agent_id", "session_id"]), json_values)
)
def test_deciding_where_an_event_goes_never_raises(payload: dict[str, Any]) -> None:
    assert hook_client.worth_a_round_trip(json.dumps(payload)) in (True, False)


@given(json_values)
def test_the_server_answers_any_request_body(body: Any) -> None:
    from adapters import hook_server

    answer = hook_server.handle(body)
    assert isinstance(answer, dict) and ("retry" in answer or set(answer) == {"stdout", "stderr"})


def test_the_server_keeps_the_cores_speed_state_per_workspace(tmp_path: Path) -> None:
    """One cache per workspace (docs/decisions.md#d14), handed to the service with each event of that
    workspace and to no other."""
    from adapters.filestore import Workspace
    from adapters.hook_server import handle
    from adapters.service import CachesByWorkspace

    home = tmp_path / "home"
    caches = CachesByWorkspace()
    for name in ("p", "q"):
        project = tmp_path / name
        project.mkdir()
        for now, payload in SESSION[:1] + SESSION[5:6]:  # a start, then a compaction that promotes
            stdin = json.dumps({"session_id": "S1", "cwd": str(project), **payload})
            body = {"host": "claude-code", "stdin": stdin, "home": str(home), "env": {"WORKMEM_NOW": now}}
            assert "retry" not in handle(body, None, caches)
    first, second = (caches.of(Workspace(home, str(tmp_path / name))) for name in ("p", "q"))
    assert first is not second
    assert len(first.settled) > 0 and len(second.settled) > 0


def test_the_thin_client_stays_thin() -> None:
    """What a hook call that the server answers imports beyond a bare interpreter: never ``typing``,
    ``socket`` (its wrappers import ``selectors`` and build enums), ``struct``, ``msgspec`` or the
    command line (docs/performance.md, "Hook events")."""
    probe = (
        "import sys; before = set(sys.modules); "
        "import adapters.entry, adapters.hook_client, _socket; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(done.stdout.split())
    heavy = {"typing", "socket", "selectors", "struct", "msgspec", "adapters.cli", "adapters.api"}
    assert loaded & heavy == set(), loaded & heavy
