"""The one service (docs/decisions.md#d13): nothing but ``adapters/service.py`` opens a workspace
transaction, and the same memory written through every door gives the same stored files and the same
evidence events."""

from __future__ import annotations

import ast
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from adapters import paths
from adapters.api import WorkingMemory
from adapters.cli import main
from adapters.serve import Server
from domain.commands import (
    Batch,
    Compacted,
    EndSession,
    Footprint,
    MixedSessions,
    OpenSession,
    Remember,
    ToolResult,
    UserMessage,
    footprint,
)
from domain.enums import MemoryType
from domain.session import ToolEvent
from domain.timeutil import parse_iso_ms
from tests.support.cli import REPO, subcommands

NOW_ISO: Final = "2026-05-01T09:00:00.000Z"
NOW: Final = parse_iso_ms(NOW_ISO) or 0
REQUEST: Final = "remember this: we deploy with blue-green, never on Fridays"
MANUAL: Final = "Run the database migrations before the web servers start"


# ---------------------------------------------------------------------------------------------------
# Only the service opens a transaction
# ---------------------------------------------------------------------------------------------------


def _calls_transaction(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "transaction"
    ]


def test_nothing_but_the_service_opens_a_transaction() -> None:
    sources = [
        p for d in ("adapters", "workmem", "domain", "bench") for p in sorted((REPO / d).rglob("*.py"))
    ]
    opening = {str(p.relative_to(REPO)): lines for p in sources if (lines := _calls_transaction(p))}
    assert opening == {"adapters/service.py": opening.get("adapters/service.py", [])}
    assert opening["adapters/service.py"], "the service itself must open the transaction"


def _calls_handle(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_it = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "domain.commands"
        and any(a.name == "handle" for a in node.names)
        for node in ast.walk(tree)
    )
    return [
        node.lineno
        for node in ast.walk(tree)
        if imports_it
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "handle"
    ]


def test_nothing_in_the_shell_but_the_service_runs_a_command() -> None:
    """A dry run is the service's ``preview``, not a door's own call of the pure step."""
    sources = [p for d in ("adapters", "workmem", "bench") for p in sorted((REPO / d).rglob("*.py"))]
    running = {str(p.relative_to(REPO)): lines for p in sources if (lines := _calls_handle(p))}
    assert set(running) == {"adapters/service.py"}


# ---------------------------------------------------------------------------------------------------
# What a command reads comes from its type
# ---------------------------------------------------------------------------------------------------


def test_a_commands_reads_come_from_its_type() -> None:
    tool = ToolEvent(tool="edit", args={"filePath": "a.py"})
    assert footprint(OpenSession(session="s")) == Footprint("s", True, False)
    assert footprint(Compacted(session="s", summary="x")) == Footprint("s", True, False)
    assert footprint(UserMessage(session="s", text="x")) == Footprint("s", False, True)
    assert footprint(ToolResult(session="s", event=tool)) == Footprint("s", False, True)
    assert footprint(EndSession(session="s")) == Footprint("s", False, False)
    assert footprint(Remember(text="x")) == Footprint(None, False, False)
    assert footprint(UserMessage(session="s", text="x", parent="p")) is None  # a sub-agent: nothing
    batch = Batch(steps=(UserMessage(session="s", text="x"), EndSession(session="s")))
    assert footprint(batch) == Footprint("s", False, False)
    with pytest.raises(MixedSessions):
        footprint(Batch(steps=(EndSession(session="a"), EndSession(session="b"))))


def test_a_sub_agents_command_opens_no_file(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    memory = WorkingMemory(tmp_path / "project", home=tmp_path / "home", clock=lambda: NOW)
    assert memory.user_message("s", REQUEST, parent="p").decisions == ()
    assert not (tmp_path / "home").exists()


# ---------------------------------------------------------------------------------------------------
# The same memory through every door
# ---------------------------------------------------------------------------------------------------


def _stored(home: Path, project: Path) -> dict[str, Any]:
    """What a door left: the store and journal files as JSON, and the evidence events without their
    own ids and times."""
    directory = paths.workspace_paths_for_key(home, paths.workspace_key(str(project)))
    store = json.loads(directory.store.read_text(encoding="utf-8"))
    journal = (
        json.loads(directory.journal.read_text(encoding="utf-8")) if directory.journal.exists() else None
    )
    events = [json.loads(line) for line in directory.evidence.read_text(encoding="utf-8").splitlines()]
    for event in events:
        event.pop("eventId", None)
    return {"store": store, "journal": journal, "events": events}


def _cli(monkeypatch: pytest.MonkeyPatch, home: Path, project: Path, *args: str) -> None:
    monkeypatch.setenv("WORKMEM_HOME", str(home))
    monkeypatch.setenv("WORKMEM_NOW", NOW_ISO)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["--workspace", str(project), *args]) == 0


def _serve(home: Path, *requests: dict[str, Any]) -> None:
    server = Server(home, lock_timeout_s=5.0, clock=lambda: NOW)
    for request in requests:
        answer = json.loads(server.answer(msgspec.json.encode(request)))
        assert "error" not in answer, answer


def _hook(monkeypatch: pytest.MonkeyPatch, home: Path, project: Path, *payloads: dict[str, Any]) -> None:
    for payload in payloads:
        monkeypatch.setenv("WORKMEM_HOME", str(home))
        monkeypatch.setenv("WORKMEM_NOW", NOW_ISO)
        body = {"session_id": "s1", "cwd": str(project), **payload}
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(body).encode())))
        assert main(["hook", "claude-code"]) == 0


def _explicit_doors(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[Path, Path], None]]:
    def api(home: Path, project: Path) -> None:
        memory = WorkingMemory(project, home=home, clock=lambda: NOW)
        memory.user_message("s1", REQUEST, message_id="m1")
        memory.end_session("s1")

    def cli(home: Path, project: Path) -> None:
        _cli(monkeypatch, home, project, "message", "--session", "s1", "--message-id", "m1", REQUEST)
        _cli(monkeypatch, home, project, "end-session", "--session", "s1")

    def serve(home: Path, project: Path) -> None:
        where = {"workspace": str(project), "session": "s1"}
        _serve(
            home,
            {"op": "message", **where, "text": REQUEST, "messageId": "m1"},
            {"op": "end-session", **where},
        )

    def hook(home: Path, project: Path) -> None:
        _hook(
            monkeypatch,
            home,
            project,
            {"hook_event_name": "UserPromptSubmit", "prompt": REQUEST, "prompt_id": "m1"},
            {"hook_event_name": "SessionEnd", "reason": "clear"},
        )

    return {"api": api, "cli": cli, "serve": serve, "hook": hook}


def _manual_doors(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[Path, Path], None]]:
    def api(home: Path, project: Path) -> None:
        WorkingMemory(project, home=home, clock=lambda: NOW).remember(MANUAL, type="project")

    def cli(home: Path, project: Path) -> None:
        _cli(monkeypatch, home, project, "remember", "--type", "project", MANUAL)

    def serve(home: Path, project: Path) -> None:
        _serve(home, {"op": "remember", "workspace": str(project), "text": MANUAL, "type": "project"})

    return {"api": api, "cli": cli, "serve": serve}


@pytest.mark.parametrize("doors", [_explicit_doors, _manual_doors], ids=["explicit-request", "remember"])
def test_the_same_memory_through_every_door_is_stored_the_same(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    doors: Callable[[pytest.MonkeyPatch], dict[str, Callable[[Path, Path], None]]],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    seen: dict[str, dict[str, Any]] = {}
    for name, door in doors(monkeypatch).items():
        home = tmp_path / f"home-{name}"
        door(home, project)
        seen[name] = _stored(home, project)
    first = next(iter(seen.values()))
    assert [e["text"] for e in first["store"]["entries"]], "the memory was stored"
    for name, found in seen.items():
        assert found == first, f"the {name} door stored something else"


def test_the_mcp_remember_tool_stores_what_the_api_stores(tmp_path: Path) -> None:
    pytest.importorskip("mcp")  # the extra (CI installs it)
    import anyio

    from tests.adapters.test_mcp_server import call_tools

    project = tmp_path / "project"
    project.mkdir()
    anyio.run(call_tools, tmp_path / "home-mcp", project, [("remember", {"text": MANUAL, "type": "project"})])
    WorkingMemory(project, home=tmp_path / "home-api", clock=lambda: NOW).remember(MANUAL, type="project")
    assert _stored(tmp_path / "home-mcp", project) == _stored(tmp_path / "home-api", project)


def test_each_operation_has_one_name_at_every_door() -> None:
    """The command's tag is the CLI command and the ``serve`` op (docs/architecture.md, the door table)."""
    from typing import get_args

    from adapters.cli import build_parser
    from adapters.serve import OPS
    from domain.commands import Command

    # a batch and a re-verification are composed by the service (BEFORE steps), never named at a door
    tags = {tp.__struct_config__.tag for tp in get_args(Command)} - {"batch", "reverify"}
    parser = build_parser()
    commands = subcommands(parser)
    assert tags <= set(commands), tags - set(commands)
    # maintenance of one machine's files: the command line's alone
    command_line_only = {"recover", "workspaces"}
    assert tags - command_line_only <= set(OPS), tags - set(OPS)
    assert commands["context"] is commands["open-session"]  # the older name, kept


# ---------------------------------------------------------------------------------------------------
# The core's speed state: one per workspace, used inside the transaction (docs/decisions.md#d14)
# ---------------------------------------------------------------------------------------------------


def test_the_service_files_what_it_derives_in_the_callers_cache(tmp_path: Path) -> None:
    from adapters.filestore import Workspace
    from adapters.service import execute
    from domain.caches import Caches

    ws = Workspace(tmp_path / "home", str(tmp_path / "project"))
    caches = Caches()
    result = execute(ws, Remember(text=MANUAL, type=MemoryType.PROJECT), NOW, caches)
    assert result is not None and result.basis is not None and result.basis.caches is caches
    assert len(caches.keys) > 0 and len(caches.settled) > 0  # the promotion's keys and settled store
    # a one-shot caller passes none: a fresh one, and the same files
    assert execute(ws, Remember(text=MANUAL, type=MemoryType.PROJECT), NOW) is not None


def test_a_working_memory_and_serve_keep_one_cache_per_workspace(tmp_path: Path) -> None:
    home, project, other = tmp_path / "home", tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    memory = WorkingMemory(project, home=home, clock=lambda: NOW)
    caches = memory.caches
    memory.remember(MANUAL, type="project")
    memory.remember("Deploys use blue-green switching, never on Fridays", type="project")
    assert memory.caches is caches and len(caches.settled) > 0

    server = Server(home, lock_timeout_s=5.0, clock=lambda: NOW)
    for root in (project, other):
        server.answer(msgspec.json.encode({"op": "remember", "workspace": str(root), "text": MANUAL}))
    kept = server.memory(str(project)).caches
    assert server.memory(str(project)).caches is kept
    assert server.memory(str(other)).caches is not kept


def test_caches_by_workspace_gives_each_workspace_its_own_and_stays_bounded(tmp_path: Path) -> None:
    from adapters.filestore import Workspace
    from adapters.service import CachesByWorkspace

    home = tmp_path / "home"
    by = CachesByWorkspace(limit=2)
    a, b, c = (Workspace(home, str(tmp_path / name)) for name in "abc")
    first = by.of(a)
    assert by.of(Workspace(home, str(tmp_path / "a"))) is first  # the same workspace, another object
    assert by.of(b) is not first
    by.of(a)  # used again: now b is the least recently used
    by.of(c)
    assert by.of(a) is first
    assert by.of(b) is not by.of(c)
    homes = CachesByWorkspace()  # the same project under another data home is another workspace
    assert homes.of(a) is not homes.of(Workspace(tmp_path / "other-home", str(tmp_path / "a")))


def test_the_workspace_lock_keeps_two_threads_of_one_process_apart(tmp_path: Path) -> None:
    """Why one cache per workspace is safe in the hook server's threads: it is used only inside the
    workspace's transaction, and a second thread of the same process cannot enter one while the first
    is inside (each transaction takes ``flock`` on a descriptor of its own)."""
    import threading

    from adapters.filestore import Workspace
    from adapters.storage_io import LockTimeout

    home, root = tmp_path / "home", str(tmp_path / "project")
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with Workspace(home, root).transaction(NOW):
            inside.set()
            leave.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(30)
        with pytest.raises(LockTimeout), Workspace(home, root, lock_timeout_s=0.3).transaction(NOW):
            pass
    finally:
        leave.set()
        holder.join(30)
    with Workspace(home, root, lock_timeout_s=5.0).transaction(NOW):
        pass  # free again once the first thread left


def test_the_archive_is_read_only_when_a_command_meets_an_archived_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt, a search and an unrelated memory never decode the archive (docs/performance.md,
    "Search"); a memory that duplicates an archived one still brings it back."""
    from adapters.filestore import Workspace
    from domain.codec import encode_pretty
    from domain.enums import EventType, MemorySource
    from domain.limits import DAY_MS
    from tests.support.builders import memory, store

    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    old = NOW - 90 * DAY_MS
    texts = [f"Service number {n} listens behind the gateway on its own route" for n in range(620)]
    entries = [
        memory(t, id=f"mem_{n:04d}", type="project", source=MemorySource.MANUAL, at=old)
        for n, t in enumerate(texts)
    ]
    layout = paths.workspace_paths(home, str(project.resolve()))
    layout.directory.mkdir(parents=True, mode=0o700)
    layout.store.write_bytes(
        encode_pretty(store(*entries, root=str(project.resolve()), key=layout.directory.name))
    )
    wm = WorkingMemory(project, home=home, clock=lambda: NOW)
    wm.remember("The gateway drains connections for thirty seconds on deploy", type="project")
    assert layout.archive.stat().st_size > 0  # the weakest went to the archive

    reads: list[int] = []
    real = Workspace.read_archive

    def counted(self: Workspace) -> dict[str, Any]:
        reads.append(1)
        return real(self)

    monkeypatch.setattr(Workspace, "read_archive", counted)
    wm.open_session("s1")
    wm.user_message("s1", "how does the gateway route service number 7?", message_id="u1")
    wm.search("gateway route")
    wm.remember("Canary deploys take ten percent of traffic first", type="project")
    assert reads == []

    archived = {json.loads(line)["text"] for line in layout.archive.read_text().splitlines()}
    back = sorted(archived)[0]
    wm.remember(back, type="project")
    assert reads
    kinds = [json.loads(line)["type"] for line in layout.evidence.read_text().splitlines()]
    assert EventType.MEMORY_REVIVED.value in kinds
