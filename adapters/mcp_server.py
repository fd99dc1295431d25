"""``workmem mcp``: an MCP stdio server on the official MCP Python SDK (extra ``workmem[mcp]``).

MCP cannot observe messages, tools or compactions (hooks do that); it gives the agent deliberate
access to the user's commands on memories: the tools ``remember``, ``forget``, ``supersede``,
``restore``, ``pin``, ``unpin``, ``list``, ``explain``, ``search`` and ``show``
(docs/decisions.md#d16), and the current workspace block as the resource ``workmem://block``. Every
tool is one call of :class:`adapters.api.WorkingMemory`, so a memory written by a tool call passes the
same safety gate as any other; a refusal, an unknown id or a storage failure comes back as a tool error
with its reason, and the server keeps serving.

Only this module imports ``mcp``, and only the ``mcp`` command imports this module. The command
starts behind :mod:`adapters.mcp_start`, which answers the host's handshake while the SDK (and the
workspace API) are still being imported, so this module imports both only where they are used.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, Final

from adapters import __version__
from adapters.exit_codes import EXIT_OK

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from adapters.api import Edit, Pinning, Remembered, WorkingMemory

BLOCK_URI: Final = "workmem://block"
INSTRUCTIONS: Final = (
    "workmem keeps durable, decaying working memory for this workspace. Use `remember` only when the "
    "user asks you to remember something lasting (a decision, a preference, a project fact, a "
    "reference); `search` finds any stored memory by its words and `show` gives one in full (the "
    "block holds only the strongest few); `list` and `explain` show what is stored and why; "
    "`forget`, `supersede`, `restore`, `pin` and `unpin` change it. The resource workmem://block is "
    "the block new sessions start with."
)


def _refused(result: Remembered | Edit | Pinning) -> str | None:
    """The tool error for a result the caller should see as a failure, else ``None``."""
    # optional extra `mcp` and start-up time (module docstring)
    from adapters.api import Edit, Pinning
    from domain.operations import CommandOutcome

    if isinstance(result, Pinning) and result.outcome == CommandOutcome.REJECTED:
        pinned = "; ".join(result.pinned)
        return f"the pinned budget is full ({result.budget}); pinned now: {pinned}. Unpin one first"
    if isinstance(result, Pinning | Edit) and result.outcome == CommandOutcome.UNKNOWN:
        return f"no memory with id {result.target} (see the list tool with include_all)"
    if result.outcome == CommandOutcome.REJECTED:
        return f"rejected by the safety gate: {', '.join(result.reasons) or 'rejected'}"
    return None


def build_server(memory: WorkingMemory) -> MCPServer:
    """The MCP server for one workspace (tools and the block resource)."""
    # optional extra `mcp` and start-up time (module docstring)
    import msgspec
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    # optional extra `mcp` and start-up time (module docstring)
    from adapters.api import Edit, InvalidInput, Pinning, Remembered, StorageError

    server: MCPServer = MCPServer(
        name="workmem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except InvalidInput as exc:
            raise ToolError(str(exc)) from None
        except StorageError as exc:
            raise ToolError(f"storage unavailable: {exc}") from None
        if isinstance(result, Remembered | Edit | Pinning):
            refused = _refused(result)
            if refused is not None:
                raise ToolError(refused)
        return msgspec.to_builtins(result)

    def call_value(fn: Any, *args: Any, **kwargs: Any) -> Any:
        """One call whose typed result the tool formats itself."""
        try:
            return fn(*args, **kwargs)
        except InvalidInput as exc:
            raise ToolError(str(exc)) from None
        except StorageError as exc:
            raise ToolError(f"storage unavailable: {exc}") from None

    def record(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """One call whose result is a record (remember, forget, supersede, restore)."""
        found: dict[str, Any] = call(fn, *args, **kwargs)
        return found

    @server.tool(name="remember", description="Store a lasting memory the user asked you to keep.")
    def remember(
        text: str,
        type: str | None = None,
        importance: str | None = None,
        rationale: str | None = None,
        scope: str | None = None,
        pin: bool = False,
        force: bool = False,
        volatility: str | None = None,
        valid_until: str | None = None,
        cite: list[str] | None = None,
    ) -> dict[str, Any]:
        """``type``: feedback, project, decision or reference (default: classified from the text);
        ``importance``: low, normal or high; ``scope``: team (shared with the repository), personal
        (this machine) or user (every workspace of this user) — default: personal for feedback,
        team for the others. ``pin``: always shown first (only when the user asks to always
        remember it); ``force``: keep it although the quality gate refuses it (only when the user
        insists). ``volatility``: stable, normal or volatile (default: by type and text);
        ``valid_until``: YYYY-MM-DD, not shown after that day; ``cite``: PATH[:LINE[-LINE]] files of
        the workspace the memory describes (checked at each session start)."""
        return record(
            memory.remember,
            text,
            type=type,
            importance=importance,
            rationale=rationale,
            scope=scope,
            pin=pin,
            force=force,
            volatility=volatility,
            valid_until=valid_until,
            cite=tuple(cite or ()),
        )

    @server.tool(name="forget", description="Stop using a memory (it is kept and can be restored).")
    def forget(id: str) -> dict[str, Any]:
        return record(memory.forget, id)

    @server.tool(name="supersede", description="Replace a memory by a new text; the old one is kept.")
    def supersede(id: str, text: str, type: str | None = None) -> dict[str, Any]:
        return record(memory.supersede, id, text, type=type)

    @server.tool(name="restore", description="Undo forget or supersede, or bring back an archived memory.")
    def restore(id: str) -> dict[str, Any]:
        return record(memory.restore, id)

    @server.tool(name="pin", description="Always show a memory first in the block; it never decays out.")
    def pin(id: str) -> dict[str, Any]:
        return record(memory.pin, id)

    @server.tool(name="unpin", description="Rank a pinned memory as usual again.")
    def unpin(id: str) -> dict[str, Any]:
        return record(memory.unpin, id)

    @server.tool(name="list", description="The stored memories, strongest first.")
    def list_memories(include_all: bool = False) -> dict[str, Any]:
        """``include_all`` also lists superseded and forgotten memories."""
        return {"memories": call(memory.list, include_all=include_all)}

    @server.tool(name="explain", description="Why each memory (or one id) is or is not in the block.")
    def explain(id: str | None = None) -> str:
        found: dict[str, str] = call(memory.explain, id)
        return found["text"]

    @server.tool(
        name="search",
        description=(
            "Search every stored memory of this workspace by its words, not only the few in the block "
            "you were given. Use it before answering a question about this project's past decisions, "
            "conventions, people's preferences or where something lives, and when a block entry's "
            "[R12] tag says there is more. Returns short ids, snippets and citations (memory id, "
            "file:line, code paths); 'no match' means nothing stored answers it."
        ),
    )
    def search(query: str, type: str | None = None, limit: int = 5, include_all: bool = False) -> str:
        """``query``: any text (words, a path, a symbol, a question); ``type``: feedback, project,
        decision or reference; ``include_all``: also superseded, forgotten and expired memories."""
        # optional extra `mcp` and start-up time (module docstring)
        from adapters.search_door import format_search

        return format_search(
            call_value(memory.search, query, type=type, limit=limit, include_all=include_all)
        )

    @server.tool(
        name="show",
        description=(
            "One memory in full by its id or short id (R12 from the block or a search): its text, "
            "rationale, provenance, what it replaced or was replaced by, how often it was reinforced."
        ),
    )
    def show(id: str) -> str:
        # optional extra `mcp` and start-up time (module docstring)
        from adapters.search_door import format_show

        answer = call_value(memory.show, id)
        if not answer.found:
            raise ToolError(f"no memory with id {id} (search for it first)")
        return format_show(answer)

    @server.resource(
        BLOCK_URI,
        name="block",
        description="The workspace memory block a new session starts with",
        mime_type="text/plain",
    )
    def block() -> str:
        try:
            return memory.block().text
        except StorageError as exc:
            # optional extra `mcp` and start-up time (module docstring)
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(f"storage unavailable: {exc}") from None

    return server


def mcp_cmd(args: argparse.Namespace) -> int:
    """The ``workmem mcp`` command: serve MCP over stdio until the client closes the connection."""
    # optional extra `mcp` and start-up time (module docstring)
    import importlib.util
    from pathlib import Path

    # optional extra `mcp` and start-up time (module docstring)
    from adapters.commands import CommandError, lock_timeout_s
    from adapters.mcp_start import CACHE_FILE, cache_key, serve
    from adapters.paths import NoSuchWorkspace, data_home, workspace_root_of

    missing = CommandError("the MCP server needs the mcp extra: pip install 'workmem[mcp]'")
    if importlib.util.find_spec("mcp") is None:
        raise missing
    try:  # a workspace directory that does not exist is refused before anything starts
        root = workspace_root_of(getattr(args, "workspace", None) or os.getcwd())
    except NoSuchWorkspace as exc:
        raise CommandError(str(exc)) from None
    home = data_home(override=getattr(args, "home", None))

    def run_sdk() -> None:
        try:  # optional extra `mcp` (module docstring)
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            raise missing from None
        # optional extra `mcp` and start-up time (module docstring)
        from adapters.api import WorkingMemory

        memory = WorkingMemory(root, home=home, lock_timeout_s=lock_timeout_s())
        serve_stdio(build_server(memory))

    serve(home / CACHE_FILE, cache_key(Path(__file__), __version__), run_sdk)
    return EXIT_OK


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdin/stdout, every line checked first (:mod:`adapters.mcp_wire`): a line
    the SDK would drop without a word gets a JSON-RPC error instead. Stray output of the process goes
    to stderr, never onto the wire (as the SDK's own transport does)."""
    # optional extra `mcp` and start-up time (module docstring)
    import anyio

    # The SDK offers no public way to run an MCPServer on streams of one's own; with another layout
    # of the SDK, serve with its transport (without the checks) rather than not at all.
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:
        server.run("stdio")
        return
    saved = os.dup(0), os.dup(1)
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    try:
        anyio.run(_serve_checked, lowlevel, wire_in, wire_out)
    finally:  # the wire back on fds 0 and 1 (the start-up relay writes its end mark there)
        for fd, original in enumerate(saved):
            os.dup2(original, fd)
            os.close(original)
        wire_in.close()
        wire_out.close()


class _Wire:
    """The client's side: lines in (checked), answers out (one writer at a time)."""

    def __init__(self, wire_in: Any, wire_out: Any) -> None:
        # optional extra `mcp` and start-up time (module docstring)
        import anyio

        self._in = wire_in
        self._out = wire_out
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        # optional extra `mcp` and start-up time (module docstring)
        import anyio

        data = text.encode("utf-8", "replace")
        async with self._lock:
            await anyio.to_thread.run_sync(self._out.write, data)

    async def flush(self) -> None:
        return None  # unbuffered

    def __aiter__(self) -> _Wire:
        return self

    async def __anext__(self) -> str:
        # optional extra `mcp` and start-up time (module docstring)
        import anyio

        # optional extra `mcp` and start-up time (module docstring)
        from adapters.mcp_wire import check_line

        while True:
            raw = await anyio.to_thread.run_sync(self._in.readline)
            if not raw:
                raise StopAsyncIteration
            checked = check_line(raw.decode("utf-8", "replace"))
            if checked.reply is not None:
                await self.write(checked.reply + "\n")
            if checked.forward is not None:
                return checked.forward + "\n"


async def _serve_checked(lowlevel: Any, wire_in: Any, wire_out: Any) -> None:
    # optional extra `mcp` and start-up time (module docstring)
    from mcp.server.stdio import stdio_server

    wire = _Wire(wire_in, wire_out)
    async with stdio_server(stdin=wire, stdout=wire) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
