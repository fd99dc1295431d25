"""``workmem mcp``: an MCP stdio server on the official MCP Python SDK (extra ``workmem[mcp]``).

MCP cannot observe messages, tools or compactions (hooks do that); it gives the agent deliberate
access to the user's commands on memories: the tools ``remember``, ``forget``, ``supersede``,
``restore``, ``list`` and ``explain``, and the current workspace block as the resource
``workmem://block``. Every tool is one call of :class:`adapters.api.WorkingMemory`, so a memory written
by a tool call passes the same safety gate as any other; a refusal, an unknown id or a storage failure
comes back as a tool error with its reason, and the server keeps serving.

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

    from adapters.api import Edit, Remembered, WorkingMemory

BLOCK_URI: Final = "workmem://block"
INSTRUCTIONS: Final = (
    "workmem keeps durable, decaying working memory for this workspace. Use `remember` only when the "
    "user asks you to remember something lasting (a decision, a preference, a project fact, a "
    "reference); `list` and `explain` show what is stored and why; `forget`, `supersede` and "
    "`restore` change it. The resource workmem://block is the block new sessions start with."
)


def _refused(result: Remembered | Edit) -> str | None:
    """The tool error for a result the caller should see as a failure, else ``None``."""
    from adapters.api import Edit

    if result.outcome == "rejected":
        return f"rejected by the safety gate: {', '.join(result.reasons) or 'rejected'}"
    if isinstance(result, Edit) and result.outcome == "unknown":
        return f"no memory with id {result.target} (see the list tool with include_all)"
    return None


def build_server(memory: WorkingMemory) -> MCPServer:
    """The MCP server for one workspace (tools and the block resource)."""
    import msgspec
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from adapters.api import Edit, InvalidInput, Remembered, StorageError

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
        if isinstance(result, Remembered | Edit):
            refused = _refused(result)
            if refused is not None:
                raise ToolError(refused)
        return msgspec.to_builtins(result)

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
        volatility: str | None = None,
        valid_until: str | None = None,
        cite: list[str] | None = None,
    ) -> dict[str, Any]:
        """``type``: feedback, project, decision or reference (default: classified from the text);
        ``importance``: low, normal or high; ``scope``: team (shared with the repository), personal
        (this machine) or user (every workspace of this user) — default: personal for feedback,
        team for the others. ``volatility``: stable, normal or volatile (default: by type and text);
        ``valid_until``: YYYY-MM-DD, not shown after that day; ``cite``: PATH[:LINE[-LINE]] files of
        the workspace the memory describes (checked at each session start)."""
        return record(
            memory.remember,
            text,
            type=type,
            importance=importance,
            rationale=rationale,
            scope=scope,
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

    @server.tool(name="list", description="The stored memories, strongest first.")
    def list_memories(include_all: bool = False) -> dict[str, Any]:
        """``include_all`` also lists superseded and forgotten memories."""
        return {"memories": call(memory.list, include_all=include_all)}

    @server.tool(name="explain", description="Why each memory (or one id) is or is not in the block.")
    def explain(id: str | None = None) -> str:
        found: dict[str, str] = call(memory.explain, id)
        return found["text"]

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
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(f"storage unavailable: {exc}") from None

    return server


def mcp_cmd(args: argparse.Namespace) -> int:
    """The ``workmem mcp`` command: serve MCP over stdio until the client closes the connection."""
    import importlib.util
    from pathlib import Path

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
        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            raise missing from None
        from adapters.api import WorkingMemory

        memory = WorkingMemory(root, home=home, lock_timeout_s=lock_timeout_s())
        serve_stdio(build_server(memory))

    serve(home / CACHE_FILE, cache_key(Path(__file__), __version__), run_sdk)
    return EXIT_OK


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdin/stdout, every line checked first (:mod:`adapters.mcp_wire`): a line
    the SDK would drop without a word gets a JSON-RPC error instead. Stray output of the process goes
    to stderr, never onto the wire (as the SDK's own transport does)."""
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
        import anyio

        self._in = wire_in
        self._out = wire_out
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        import anyio

        data = text.encode("utf-8", "replace")
        async with self._lock:
            await anyio.to_thread.run_sync(self._out.write, data)

    async def flush(self) -> None:
        return None  # unbuffered

    def __aiter__(self) -> _Wire:
        return self

    async def __anext__(self) -> str:
        import anyio

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
    from mcp.server.stdio import stdio_server

    wire = _Wire(wire_in, wire_out)
    async with stdio_server(stdin=wire, stdout=wire) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
