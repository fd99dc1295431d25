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
        text: str, type: str | None = None, importance: str | None = None, rationale: str | None = None
    ) -> dict[str, Any]:
        """``type``: feedback, project, decision or reference (default: classified from the text);
        ``importance``: low, normal or high."""
        return record(memory.remember, text, type=type, importance=importance, rationale=rationale)

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
    from adapters.paths import data_home

    missing = CommandError("the MCP server needs the mcp extra: pip install 'workmem[mcp]'")
    if importlib.util.find_spec("mcp") is None:
        raise missing
    root = os.path.abspath(getattr(args, "workspace", None) or os.getcwd())
    home = data_home(override=getattr(args, "home", None))

    def run_sdk() -> None:
        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            raise missing from None
        from adapters.api import WorkingMemory

        memory = WorkingMemory(root, home=home, lock_timeout_s=lock_timeout_s())
        build_server(memory).run("stdio")

    serve(home / CACHE_FILE, cache_key(Path(__file__), __version__), run_sdk)
    return EXIT_OK
