# ruff: noqa: E501
"""The hook dialects (Claude Code, Codex) and ``workmem serve`` under hostile input and the secrets
corpus: every payload gets exit 0 (hooks) or one answer per line (server), never a traceback; what is
stored still decodes; no credential of the corpus reaches a file under the data home or any output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.reliability.corpus import SECRETS
from tests.support.cli import Cli, stored_data_decodes

CLAUDE_EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact",
                 "PostCompact", "SessionEnd", "Stop", "SubagentStart", "Bogus\u202e\x1b[31m", ""]  # fmt: skip
TOOLS = ["Read", "Edit", "Write", "Bash", "Grep", "NotebookEdit", "MultiEdit", "Task", "", "\x00"]
SPECIAL_PATHS = ["/dev/zero", "/dev/null", "/", "", "relative/x.jsonl", "\udcff", None, 7]

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=40),
    st.sampled_from(["\x1b]0;pwn\x07", "\u202e", "\x00", "\ud83d", "ghp_" + "a1B2" * 9]),
)  # fmt: skip
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for key, strategy in (
        ("session_id", st.one_of(st.text(max_size=12), json_value)),
        ("hook_event_name", st.one_of(st.sampled_from(CLAUDE_EVENTS), json_value)),
        ("source", st.sampled_from(["startup", "resume", "compact", "clear", "system", "x"])),
        ("prompt", st.one_of(st.text(max_size=80), json_value)),
        ("prompt_id", st.one_of(st.text(max_size=8), json_value)),
        ("tool_name", st.sampled_from(TOOLS)),
        ("tool_input", st.one_of(st.fixed_dictionaries({"command": st.text(max_size=30)}),
                                 st.fixed_dictionaries({"file_path": st.text(max_size=30)}), json_value)),
        ("tool_response", json_value),
        ("tool_use_id", st.one_of(st.text(max_size=8), json_value)),
        ("error", st.one_of(st.text(max_size=60), json_value)),
        ("compact_summary", st.one_of(st.text(max_size=120), json_value)),
        ("transcript_path", st.sampled_from(SPECIAL_PATHS)),
        ("reason", st.sampled_from(["clear", "logout", "other", "", "x"])),
        ("agent_id", st.one_of(st.none(), st.text(max_size=4))),
    ):  # fmt: skip
        if draw(st.booleans()):
            payload[key] = draw(strategy)
    return payload


@pytest.fixture
def cli(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.chdir(cli.workspace)
    return cli


def _raw(payload: dict[str, Any], mode: int) -> str:
    text = json.dumps(payload, default=str)  # escapes: a lone surrogate arrives as \\udcxx
    if mode == 1:
        return text[: len(text) // 2]  # torn
    if mode == 2:
        return "[" + text + "]"  # not an object
    return text


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(["claude-code", "codex"]), st.lists(st.tuples(payloads(), st.sampled_from([0, 0, 0, 1, 2])),
                                                             min_size=1, max_size=5))  # fmt: skip
def test_hostile_hook_payloads_exit_0_and_keep_data_readable(
    cli: Cli, host: str, calls: list[tuple[dict[str, Any], int]]
) -> None:
    for payload, mode in calls:
        payload.setdefault("cwd", str(cli.workspace))
        run = cli("hook", host, stdin=_raw(payload, mode), workspace=False)
        assert run.code == 0, run
        assert "Traceback" not in run.err
        assert run.err.count("\n") <= 1
        assert "\x1b" not in run.err and "\x1b" not in run.out
        if run.out and not (host == "claude-code" and payload.get("hook_event_name") == "PreCompact"):
            # (Claude Code's PreCompact output is plain text: an addendum to its summary prompt)
            body = json.loads(run.out)
            assert set(body) == {"hookSpecificOutput"} or isinstance(body, str)
    stored_data_decodes(cli.home, cli.workspace)


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_no_secret_from_a_hook_payload_reaches_disk_or_output(cli: Cli, tmp_path: Path) -> None:
    outputs: list[str] = []
    rollout = tmp_path / "rollout.jsonl"
    for n, case in enumerate(SECRETS):
        for host in ("claude-code", "codex"):
            sid = f"s{n}-{host}"
            summary = f"<summary>\n{case.text}\n</summary>\nMemory candidates:\n- [reference] {case.text}"
            rollout.write_text(json.dumps({"type": "compacted", "payload": {"message": summary}}) + "\n")
            events: list[dict[str, Any]] = [
                {"hook_event_name": "SessionStart", "source": "startup"},
                {"hook_event_name": "UserPromptSubmit", "prompt": f"remember this: {case.text}", "prompt_id": "p"},
                {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                 "tool_input": {"command": f"deploy --token {case.secret}"}, "error": f"Exit code 1\n{case.text}"},
                {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": case.text},
                 "tool_response": case.text, "tool_use_id": "c1", "transcript_path": str(rollout)},
                {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": case.text}},
                {"hook_event_name": "PreCompact"},
                {"hook_event_name": "PostCompact", "compact_summary": summary, "transcript_path": str(rollout)},
                {"hook_event_name": "UserPromptSubmit", "prompt": "go on", "prompt_id": "q"},
                {"hook_event_name": case.secret},
                {"hook_event_name": "SessionEnd", "reason": "other"},
                {"hook_event_name": "SessionStart", "source": "resume"},
            ]  # fmt: skip
            for event in events:
                payload = {"session_id": sid, "cwd": str(cli.workspace), **event}
                run = cli("hook", host, stdin=json.dumps(payload), workspace=False)
                assert run.code == 0, run
                outputs.extend((run.out, run.err))
    stored = _all_bytes(cli.home)
    shown = "\n".join(outputs)
    for case in SECRETS:
        assert case.secret.encode() not in stored, case.format
        assert case.secret not in shown, case.format


def _serve(home: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    env = {**os.environ, "WORKMEM_HOME": str(home), "WORKMEM_NOW": "2026-05-01T09:00:00Z"}
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "serve"], input=b"".join(lines), env=env,
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.one_of(
    json_value.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
    st.fixed_dictionaries({"id": json_value, "op": st.sampled_from(["message", "tool", "context", "remember", "x"]),
                           "workspace": st.one_of(st.text(max_size=10), json_value),
                           "session": st.one_of(st.text(max_size=6), json_value),
                           "text": st.one_of(st.text(max_size=40), json_value)}).map(lambda v: json.dumps(v).encode()),
), min_size=1, max_size=8))  # fmt: skip
def test_hostile_server_requests_get_one_answer_each(lines: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        hello = json.dumps({"id": "end", "op": "hello"}).encode()
        answers = _serve(home, [*(line + b"\n" for line in lines), hello + b"\n"])
        blank = sum(1 for line in lines if not line.strip())  # a blank line is ignored (docs/protocol.md)
        assert len(answers) == len(lines) - blank + 1
        assert answers[-1]["id"] == "end" and "error" not in answers[-1]
        for answer in answers:
            assert "error" in answer or "result" in answer or "protocol" in answer or set(answer) >= {"id"}


def test_no_secret_through_the_server_reaches_disk_or_output(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    requests: list[bytes] = []
    for n, case in enumerate(SECRETS):
        for request in (
            {"op": "message", "session": f"s{n}", "text": f"remember this: {case.text}"},
            {"op": "tool", "session": f"s{n}", "tool": "bash", "args": {"command": case.text},
             "output": case.text, "exit_code": 1},
            {"op": "compacted", "session": f"s{n}", "summary": f"Memory candidates:\n- [reference] {case.text}"},
            {"op": "remember", "text": case.text},
            {"op": "context", "session": f"s{n}"},
        ):  # fmt: skip
            requests.append(json.dumps({"id": n, "workspace": str(project), **request}).encode() + b"\n")
    answers = _serve(home, requests)
    shown = json.dumps(answers, ensure_ascii=False)
    stored = _all_bytes(home)
    for case in SECRETS:
        assert case.secret.encode() not in stored, case.format
        assert case.secret not in shown, case.format
