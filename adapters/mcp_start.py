"""The start of ``workmem mcp``: answer the host's handshake while the MCP SDK is still loading.

Importing the MCP Python SDK takes most of ``workmem mcp``'s start-up (it builds several hundred
pydantic models; docs/performance.md), and a host shows a server that has not answered its first
requests as still connecting. So the command puts a small relay between the host and the SDK: the
SDK serves its stdin and stdout as always, but they are pipes; the relay reads the host's messages,
passes every one of them to the SDK in order, and passes the SDK's messages back.

The SDK's answer to a handshake request (``initialize``, ``server/discover`` and the ``tools/list``,
``resources/list``, ``resources/templates/list`` and ``prompts/list`` a host sends next) depends on
nothing but the messages the host sent before it on the same connection (the protocol version
asked for, whether the connection began with ``initialize`` or ``server/discover``, ...), workmem's
version, ``adapters/mcp_server.py`` and the installed SDK. The relay keeps the SDK's answers in
``mcp-handshake.json`` in the data home, each under the hash of every message of the connection up
to its request (ids left out), in a file marked with a key made of the rest; from the next start on
it answers such a request at once when that hash is known. The SDK still gets every message, and
its own answer to a request the relay already answered is dropped. Answers the file did not hold,
or held differently, are written to it for the next start. Everything else, every tool call
included, is answered by the SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final

CACHE_FILE: Final = "mcp-handshake.json"
ANSWERED: Final = frozenset(
    {
        "initialize",
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    }
)
KEPT: Final = 256  # answers kept in the file, the most recent
_PACKAGES: Final = ("mcp", "mcp_types", "pydantic", "pydantic_core")
#: written after the SDK's last line: the SDK keeps its copy of the pipe open, so no end of file comes
_END: Final = b"\0workmem relay end\n"


def cache_key(server_source: Path, version: str) -> str:
    """What the handshake answers depend on: workmem's version, the server module and the SDK
    (``""``, which turns the file off, when the server module's source cannot be read)."""
    try:
        parts = [version, hashlib.sha256(server_source.read_bytes()).hexdigest()]
    except OSError:
        return ""
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec else None
        parts.append(f"{origin}:{os.stat(origin).st_mtime_ns}" if origin else f"{name}:missing")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class Relay:
    """Between the host (``host_in``, ``host_out``) and the SDK (``sdk_in``, ``sdk_out``)."""

    def __init__(self, cache: Path, key: str, host_in: IO[bytes], host_out: int) -> None:
        self.cache, self.key = cache, key
        self.host_in, self.host_out = host_in, host_out
        self.known = self._load()
        self.learned: dict[str, Any] = {}
        self.connection = hashlib.sha256()  # every message from the host so far, ids left out
        self.pending: dict[str, tuple[str, bool]] = {}  # request id -> (its hash, answered already)
        self.lock = threading.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            saved = json.loads(self.cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not self.key or not isinstance(saved, dict) or saved.get("key") != self.key:
            return {}
        answers = saved.get("answers")
        return answers if isinstance(answers, dict) else {}

    def _send(self, message: bytes) -> None:
        with self.lock:
            view = memoryview(message)
            while view:
                view = view[os.write(self.host_out, view) :]

    def from_host(self, sdk_in: int) -> None:
        """Every line from the host to the SDK; the handshake answered from the file on the way."""
        try:
            for line in self.host_in:
                self.take_request(line)
                view = memoryview(line)
                while view:
                    view = view[os.write(sdk_in, view) :]
        except OSError:
            pass
        finally:
            os.close(sdk_in)

    def take_request(self, line: bytes) -> None:
        """One message from the host: answered here when the file holds the SDK's answer to it."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # answered by the SDK's side (adapters.mcp_wire)
            message = None
        if not isinstance(message, dict):
            self.connection.update(line)
            return
        self.connection.update(
            json.dumps({k: v for k, v in message.items() if k != "id"}, sort_keys=True).encode()
        )
        if message.get("method") not in ANSWERED or "id" not in message:
            return
        where = self.connection.hexdigest()
        answer = self.known.get(where)
        self.pending[json.dumps(message["id"])] = (where, isinstance(answer, dict))
        if isinstance(answer, dict):
            answered = {"jsonrpc": "2.0", "id": message["id"], **answer}
            self._send(json.dumps(answered, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    def from_sdk(self, sdk_out: IO[bytes]) -> None:
        """Every line from the SDK to the host, less its answers the relay already gave."""
        for line in sdk_out:
            if line == _END:
                return
            if self.take_answer(line):
                self._send(line)

    def take_answer(self, line: bytes) -> bool:
        """One message from the SDK: learned when it answers the handshake; ``False`` when the relay
        answered that request already."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return True
        if not isinstance(message, dict) or "method" in message:
            return True
        where, answered = self.pending.pop(json.dumps(message.get("id")), ("", False))
        if where:
            self.learned[where] = {k: message[k] for k in ("result", "error") if k in message}
            changed = any(self.known.get(k) != v for k, v in self.learned.items())
            if self.key and not self.pending and changed:
                self._save()
        return not answered

    def _save(self) -> None:
        # start-up time: the relay answers the handshake before loading more (docs/performance.md)
        from adapters.jsonl import atomic_write, ensure_private_dir

        self.known = {**self._load(), **self.known, **self.learned}  # another start may have added some
        kept = dict(list(self.known.items())[-KEPT:])
        try:
            ensure_private_dir(self.cache.parent)
            atomic_write(self.cache, json.dumps({"key": self.key, "answers": kept}).encode())
        except OSError:
            pass  # only the next start is slower


def serve(cache: Path, key: str, run_sdk: Callable[[], None]) -> None:
    """Run ``run_sdk`` (which serves MCP on fds 0 and 1) behind a :class:`Relay` on the real ones."""
    if sys.platform == "win32":
        run_sdk()
        return
    host_in, host_out = os.dup(0), os.dup(1)
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    for fd in (host_in, host_out, sdk_in_w, sdk_out_r):
        os.set_inheritable(fd, False)
    os.dup2(sdk_in_r, 0)
    os.dup2(sdk_out_w, 1)
    os.close(sdk_in_r)
    os.close(sdk_out_w)
    relay = Relay(cache, key, os.fdopen(host_in, "rb"), host_out)
    threading.Thread(target=relay.from_host, args=(sdk_in_w,), daemon=True, name="mcp-host").start()
    to_host = threading.Thread(
        target=relay.from_sdk, args=(os.fdopen(sdk_out_r, "rb"),), daemon=True, name="mcp-sdk"
    )
    to_host.start()
    try:
        run_sdk()
    finally:
        sys.stdout.flush()
        with contextlib.suppress(OSError):
            os.write(1, _END)  # fd 1 is the pipe again: the SDK restores it when it stops
        to_host.join(timeout=5)
