"""``workmem serve``: the Python API over JSON lines on standard input and output (docs/protocol.md).

One request per line, one response per line, in order. A request that cannot be used (not UTF-8, not
JSON, not an object, an unknown ``op``, a missing or mistyped field, a line over the size limit) gets
an error response and the server reads the next line; a storage failure fails that request only. End
of input ends the server with exit 0.

The server holds nothing the files do not hold: every request is one transaction of
:class:`adapters.api.WorkingMemory`, so any number of servers and CLI calls can share a workspace. Its
savings are a :class:`adapters.storage_io.SnapshotCache` of decoded files, used only while the bytes
on disk are unchanged, and the core's speed state of each workspace, kept by that workspace's
``WorkingMemory`` (docs/decisions.md#d14).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec

from adapters import __version__
from adapters.api import InvalidInput, WorkingMemory
from adapters.clock import ClockError
from adapters.commands import lock_timeout_s
from adapters.exit_codes import EXIT_OK
from adapters.paths import data_home
from adapters.storage_io import SnapshotCache, StorageError
from domain.salvage import repair_text

PROTOCOL: Final = 1
#: The longest request line accepted (a compaction summary is the largest payload a host sends).
MAX_LINE_BYTES: Final = 8 * 1024 * 1024
_WORKSPACES_KEPT: Final = 32

# ---------------------------------------------------------------------------------------------------
# Requests (one struct per op; unknown fields are ignored, so ``id`` and ``op`` may sit beside them)
# ---------------------------------------------------------------------------------------------------


class _InWorkspace(msgspec.Struct, kw_only=True, rename="camel"):
    workspace: str


class _InSession(_InWorkspace, kw_only=True):
    session: str
    parent: str | None = None


class ContextRequest(_InSession, kw_only=True):
    host: str | None = None  # whose instruction files to read (docs/decisions.md#d22)


class MessageRequest(_InSession, kw_only=True):
    text: str
    message_id: str | None = None


class ToolRequest(_InSession, kw_only=True):
    tool: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    output: str = ""
    exit_code: int | None = None


class ReplyRequest(_InSession, kw_only=True):
    text: str


class CompactedRequest(_InSession, kw_only=True):
    summary: str
    host: str | None = None


class EndRequest(_InSession, kw_only=True):
    keep_hot_state: bool = False


class SessionOnlyRequest(_InWorkspace, kw_only=True):
    session: str


class RememberRequest(_InWorkspace, kw_only=True):
    text: str
    type: str | None = None
    importance: str | None = None
    rationale: str | None = None
    scope: str | None = None
    pin: bool = False
    force: bool = False
    volatility: str | None = None
    valid_until: str | None = None
    cite: tuple[str, ...] = ()


class MemoryRequest(_InWorkspace, kw_only=True):
    memory: str


class SupersedeRequest(MemoryRequest, kw_only=True):
    text: str
    type: str | None = None


class SyncRequest(_InWorkspace, kw_only=True):
    dry_run: bool = False


class ListRequest(_InWorkspace, kw_only=True):
    all: bool = False


class ExplainRequest(_InWorkspace, kw_only=True):
    memory: str | None = None


class SearchRequest(_InWorkspace, kw_only=True):
    query: str
    type: str | None = None
    limit: int = 5
    all: bool = False


Handler = Callable[[WorkingMemory, Any], msgspec.Struct | dict[str, Any]]


def _open(m: WorkingMemory, r: ContextRequest) -> Any:
    return m.open_session(r.session, parent=r.parent, host=r.host)


OPS: Final[dict[str, tuple[type[_InWorkspace], Handler]]] = {
    "open-session": (ContextRequest, _open),
    "context": (ContextRequest, _open),  # the older name of open-session
    "message": (
        MessageRequest,
        lambda m, r: m.user_message(r.session, r.text, message_id=r.message_id, parent=r.parent),
    ),
    "tool": (
        ToolRequest,
        lambda m, r: m.tool_result(
            r.session, r.tool, args=r.args, output=r.output, exit_code=r.exit_code, parent=r.parent
        ),
    ),
    "reply": (ReplyRequest, lambda m, r: m.agent_reply(r.session, r.text, parent=r.parent)),
    "compacted": (
        CompactedRequest,
        lambda m, r: m.compacted(r.session, r.summary, parent=r.parent, host=r.host),
    ),
    "end-session": (
        EndRequest,
        lambda m, r: m.end_session(r.session, parent=r.parent, keep_hot_state=r.keep_hot_state),
    ),
    "compaction-prompt": (SessionOnlyRequest, lambda m, r: m.compaction_prompt(r.session)),
    "remember": (
        RememberRequest,
        lambda m, r: m.remember(
            r.text,
            type=r.type,
            importance=r.importance,
            rationale=r.rationale,
            scope=r.scope,
            pin=r.pin,
            force=r.force,
            volatility=r.volatility,
            valid_until=r.valid_until,
            cite=r.cite,
        ),
    ),
    "pin": (MemoryRequest, lambda m, r: m.pin(r.memory)),
    "unpin": (MemoryRequest, lambda m, r: m.unpin(r.memory)),
    "forget": (MemoryRequest, lambda m, r: m.forget(r.memory)),
    "supersede": (SupersedeRequest, lambda m, r: m.supersede(r.memory, r.text, type=r.type)),
    "restore": (MemoryRequest, lambda m, r: m.restore(r.memory)),
    "sync": (SyncRequest, lambda m, r: m.sync(dry_run=r.dry_run)),
    "list": (ListRequest, lambda m, r: {"memories": m.list(include_all=r.all)}),
    "explain": (ExplainRequest, lambda m, r: m.explain(r.memory)),
    "search": (SearchRequest, lambda m, r: m.search(r.query, type=r.type, limit=r.limit, include_all=r.all)),
    "show": (MemoryRequest, lambda m, r: m.show(r.memory)),
}


class RequestError(Exception):
    """A request the server answers with an error: ``code`` is one of the protocol's error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _decode(text: str) -> Any:
    """The request's JSON value. A lone surrogate escape (``"\\ud83d"``, which JavaScript writes
    when it cuts a string inside a pair) becomes U+FFFD, as every other input does
    (docs/reliability.md); anything else that is not JSON is a ``parse_error``."""
    try:
        try:
            return msgspec.json.decode(text)
        except msgspec.DecodeError as exc:
            if "surrogate" not in str(exc):
                raise

            return msgspec.json.decode(repair_text(text.encode("utf-8", "surrogatepass"))[0])
    except msgspec.DecodeError as exc:
        raise RequestError("parse_error", f"the request is not JSON: {exc}") from None
    except RecursionError:
        raise RequestError("parse_error", "the request is nested too deeply") from None


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


# ---------------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------------


class Server:
    """Answers request lines. One instance per process; one :class:`WorkingMemory` per workspace."""

    def __init__(self, home: Path, *, lock_timeout_s: float, clock: Callable[[], int] | None = None) -> None:
        self.home = home
        self.lock_timeout_s = lock_timeout_s
        self.clock = clock
        self.cache = SnapshotCache()
        self._memories: OrderedDict[str, WorkingMemory] = OrderedDict()
        self._encoder = msgspec.json.Encoder()

    def memory(self, workspace: str) -> WorkingMemory:
        if not Path(workspace).is_absolute():
            raise RequestError("invalid_request", "workspace must be an absolute path")
        found = self._memories.pop(workspace, None)
        if found is None:
            found = WorkingMemory(
                workspace,
                home=self.home,
                clock=self.clock,
                lock_timeout_s=self.lock_timeout_s,
                cache=self.cache,
            )
        self._memories[workspace] = found
        while len(self._memories) > _WORKSPACES_KEPT:
            self._memories.popitem(last=False)
        return found

    def answer(self, line: bytes) -> bytes:
        """The response line (with its newline) for one request line (without its newline)."""
        request_id: Any = None
        try:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                raise RequestError("parse_error", "the request is not valid UTF-8") from None
            request = _decode(text)
            if not isinstance(request, dict):
                raise RequestError("invalid_request", "a request must be a JSON object")
            request_id = request.get("id")
            if isinstance(request_id, dict | list):
                request_id = None
                raise RequestError("invalid_request", "id must be a string, a number or null")
            result = self._dispatch(request)
            return self._encoder.encode({"id": request_id, "result": result}) + b"\n"
        except RequestError as exc:
            return self._error(request_id, exc.code, str(exc))
        except InvalidInput as exc:
            return self._error(request_id, "invalid_request", str(exc))
        except StorageError as exc:
            return self._error(request_id, "storage", f"storage unavailable: {exc}")
        except ClockError as exc:
            return self._error(request_id, "usage", str(exc))
        except Exception as exc:  # a bug must not end the server: report it and keep serving
            return self._error(request_id, "internal", f"unexpected failure: {type(exc).__name__}: {exc}")

    def _dispatch(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        if not isinstance(op, str):
            raise RequestError("invalid_request", "op must be a string")
        if op == "hello":
            return {"protocol": PROTOCOL, "version": __version__}
        spec = OPS.get(op)
        if spec is None:
            raise RequestError("unknown_op", f"unknown op {op[:40]!r} (see docs/protocol.md)")
        kind, handler = spec
        try:
            params = msgspec.convert(request, kind)
        except msgspec.ValidationError as exc:
            raise RequestError("invalid_request", str(exc)) from None
        return handler(self.memory(params.workspace), params)

    def _error(self, request_id: Any, code: str, message: str) -> bytes:
        payload = {"id": request_id, "error": {"code": code, "message": _one_line(message)}}
        return self._encoder.encode(payload) + b"\n"


def _lines(stream: BinaryIO, limit: int) -> Any:
    """Request lines, without their line ends; a line over ``limit`` bytes is yielded as ``None``
    (its rest is skipped)."""
    while True:
        chunk = stream.readline(limit + 1)
        if not chunk:
            return
        if len(chunk) > limit and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):
                chunk = stream.readline(1 << 20)
            yield None
            continue
        yield chunk.rstrip(b"\r\n")


def run(stdin: BinaryIO, stdout: BinaryIO, server: Server, *, limit: int = MAX_LINE_BYTES) -> None:
    """Serve until end of input."""
    for line in _lines(stdin, limit):
        if line is None:
            response = server._error(None, "too_large", f"the request is over {limit} bytes")
        elif not line.strip():
            continue  # blank lines are allowed between requests
        else:
            response = server.answer(line)
        stdout.write(response)
        stdout.flush()


def serve(args: Any) -> int:
    """The ``workmem serve`` command."""

    server = Server(data_home(override=getattr(args, "home", None)), lock_timeout_s=lock_timeout_s())
    run(sys.stdin.buffer, sys.stdout.buffer, server)  # a broken pipe ends it quietly (adapters.cli)
    return EXIT_OK
