"""``workmem mcp`` answers every line a client sends (adapters/mcp_wire.py): a message the MCP SDK
would drop without a word gets a JSON-RPC error with the request's id where it can be read, a lone
surrogate escape becomes U+FFFD and the request is served."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from adapters.mcp_wire import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, check_line

ROOT = str(Path(__file__).resolve().parents[2])


def _reply(line: str) -> dict[str, Any]:
    checked = check_line(line)
    assert checked.forward is None and checked.reply is not None
    answer: dict[str, Any] = json.loads(checked.reply)
    return answer


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        ("{not json", PARSE_ERROR, None),
        ("[" * 100_000 + "]" * 100_000, PARSE_ERROR, None),
        ("[1, 2]", INVALID_REQUEST, None),
        ('[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', INVALID_REQUEST, None),
        ('{"id": 1, "method": "tools/list"}', INVALID_REQUEST, 1),
        ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": "x", "method": 5}', INVALID_REQUEST, "x"),
        ('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]}', INVALID_PARAMS, 3),
        ('{"jsonrpc": "2.0", "id": 4}', INVALID_REQUEST, 4),
    ],
)
def test_a_message_the_sdk_would_drop_gets_an_error(line: str, code: int, request_id: Any) -> None:
    answer = _reply(line)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id and answer["error"]["code"] == code


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    line = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "remember", '
    line += '"arguments": {"text": "we use pnpm \\ud83d always, \\ud83d\\ude00 stays"}}}'
    forward = check_line(line).forward
    assert forward is not None
    assert json.loads(forward)["params"]["arguments"]["text"] == "we use pnpm \ufffd always, \U0001f600 stays"


def test_notifications_and_responses_get_no_reply() -> None:
    assert check_line('{"jsonrpc": "2.0", "method": "x", "params": [1]}') == (None, None)
    assert check_line("   ") == (None, None)
    assert check_line('{"jsonrpc": "2.0", "id": 1, "result": {}}').forward is not None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | json_values,
        "id": st.integers() | st.text(max_size=5) | json_values,
        "method": st.sampled_from(["tools/list", "tools/call", "ping"]) | json_values,
        "params": st.dictionaries(st.text(max_size=5), json_values, max_size=3) | json_values,
    },
)


@given(messages | json_values)
def test_every_request_with_an_id_is_forwarded_or_answered(message: Any) -> None:
    checked = check_line(json.dumps(message))
    if isinstance(message, dict) and "id" in message and "method" in message:
        assert (checked.forward is None) != (checked.reply is None)
    if checked.forward is not None:
        forwarded = json.loads(checked.forward)
        assert forwarded["jsonrpc"] == "2.0" and isinstance(forwarded, dict)


HOSTILE = [
    b"{not json",
    b"[1,2]",
    b'{"id":1,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}',
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{"x":"\\ud83d"}}}',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":11,"method":5}',
    b'[{"jsonrpc":"2.0","id":14,"method":"tools/list"}]',
]


def test_the_mcp_server_answers_every_hostile_line(tmp_path: Path) -> None:
    pytest.importorskip("mcp")  # the extra (CI installs it)
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "WORKMEM_HOME": str(tmp_path / "home"), "PYTHONPATH": ROOT}
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "--workspace", str(project), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: bytes) -> dict[str, Any] | None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        return json.loads(proc.stdout.readline()) if ready else None

    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        assert ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for line in HOSTILE:
            answer = ask(line)
            assert answer is not None, line[:80]
            assert answer["jsonrpc"] == "2.0", answer
        served = ask(b'{"jsonrpc":"2.0","id":99,"method":"tools/list"}')
        assert served is not None and served["id"] == 99 and "tools" in served["result"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
