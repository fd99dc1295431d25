"""What ``workmem mcp`` reads before the MCP SDK sees it: one JSON-RPC message per line, checked.

The SDK drops a line it cannot validate without a word (not JSON, a batch, an id that is ``null``,
a boolean or an object, a method that is not a string, ``params`` that are not an object, a lone
surrogate escape): a client that sent a request then waits for its timeout. Here every such line gets
the JSON-RPC error a client can act on (``-32700`` parse error, ``-32600`` invalid request, ``-32602``
invalid params), with the request's id when it can be read; a lone surrogate escape becomes U+FFFD
(docs/reliability.md) and the request goes on. A notification or a response that cannot be used
gets no reply, as JSON-RPC says.
"""

from __future__ import annotations

import json
from typing import Any, Final, NamedTuple

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602


class Checked(NamedTuple):
    """``forward``: the line to hand to the SDK; ``reply``: an error response to write instead."""

    forward: str | None = None
    reply: str | None = None


def _error(request_id: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _parse(line: str) -> Any:
    """The JSON value of ``line``; a lone surrogate escape in it becomes U+FFFD (a valid pair stays)."""
    if "\\u" in line:
        # start-up time: the repair is loaded only for a damaged line
        from domain.salvage import repair_text

        line = repair_text(line.encode("utf-8", "surrogatepass"))[0]
    return json.loads(line)


def check_line(line: str) -> Checked:
    """What to do with one line read from the client (blank lines are skipped)."""
    if not line.strip():
        return Checked()
    try:
        message = _parse(line)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "not JSON"
        return Checked(reply=_error(None, PARSE_ERROR, f"Parse error: the message is {reason}"))
    if not isinstance(message, dict):
        return Checked(reply=_error(None, INVALID_REQUEST, "Invalid request: a message is a JSON object"))
    has_id = "id" in message
    request_id = message.get("id") if _valid_id(message.get("id")) else None
    if has_id and request_id is None:
        return Checked(
            reply=_error(None, INVALID_REQUEST, "Invalid request: an id is a string or an integer")
        )
    if message.get("jsonrpc") != "2.0":
        return Checked(reply=_error(request_id, INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"'))
    if "method" not in message:
        if has_id and ("result" in message or "error" in message):
            return Checked(forward=json.dumps(message, ensure_ascii=False))  # a response to the server
        return Checked(reply=_error(request_id, INVALID_REQUEST, "Invalid request: no method"))
    if not isinstance(message["method"], str):
        return Checked(reply=_error(request_id, INVALID_REQUEST, "Invalid request: method must be a string"))
    if "params" in message and not isinstance(message["params"], dict):
        if not has_id:
            return Checked()  # a notification gets no reply
        return Checked(reply=_error(request_id, INVALID_PARAMS, "Invalid params: params must be an object"))
    return Checked(forward=json.dumps(message, ensure_ascii=False))
