"""The Claude Code host adapter, driven through ``main(["hook", "claude-code"])`` with hook payloads on
stdin (a temporary ``WORKMEM_HOME`` and a fixed ``WORKMEM_NOW``): a whole session, the tool mapping, the
transcript's compaction summary, sub-agents, and the failure contract of docs/decisions.md#d12 (exit 0,
one ``hook_failed`` event, one stderr line, nothing unredacted anywhere)."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest

from adapters import paths
from adapters.hosts import claude_code as cc
from domain.evidence_records import privacy_hash
from tests.support.cli import T0, Cli, Run

MIN = 60_000
HEADER = "Workspace memory (cross-session, verify if stale):"
PNPM = "always use pnpm, never npm, in this repository"
MSGSPEC = "Use msgspec structs for every persisted value because decoding is fast"
BRITISH = "Write all user-facing text in British English spelling"
SUMMARY = f"""This session is being continued from a previous conversation that ran out of context. \
The conversation is summarized below:
## Goal
Finish the storage layer.

Memory candidates:
- [project] Always use pnpm, never npm, in this repository
- [decision] {MSGSPEC}
"""


@pytest.fixture
def cli(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.chdir(cli.workspace)  # Claude Code runs hooks in the project directory
    return cli


def hook(cli: Cli, event: str, session: str | None = "S1", **fields: Any) -> Run:
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(cli.workspace.parent / "transcript.jsonl"),
        "cwd": str(cli.workspace),
        "hook_event_name": event,
        **fields,
    }
    if session is None:
        del payload["session_id"]
    return raw_hook(cli, json.dumps(payload))


def raw_hook(cli: Cli, stdin: str) -> Run:
    return cli("hook", "claude-code", stdin=stdin, workspace=False)


def ok(run: Run) -> Run:
    assert run.code == 0, run
    assert run.err == "", run
    return run


def context_of(run: Run, event: str) -> str:
    """The ``additionalContext`` of a hook's JSON output (checking the documented shape)."""
    data = json.loads(run.out)
    assert list(data) == ["hookSpecificOutput"]
    assert data["hookSpecificOutput"]["hookEventName"] == event
    text: str = data["hookSpecificOutput"]["additionalContext"]
    return text


def layout(cli: Cli) -> paths.WorkspacePaths:
    return paths.workspace_paths(cli.home, str(cli.workspace))


def events(cli: Cli) -> list[dict[str, Any]]:
    log = layout(cli).evidence
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def failures(cli: Cli) -> list[dict[str, Any]]:
    return [e for e in events(cli) if e["type"] == "hook_failed"]


def all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def write_transcript(cli: Cli, *records: dict[str, Any], junk: str = "") -> None:
    lines = [json.dumps(r) for r in records]
    if junk:
        lines.insert(1, junk)
    (cli.workspace.parent / "transcript.jsonl").write_text("\n".join(lines) + "\n")


def summary_record(content: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "isCompactSummary": True,
        "isVisibleInTranscriptOnly": True,
        "message": {"role": "user", "content": content},
    }


# ---------------------------------------------------------------------------------------------
# A whole session
# ---------------------------------------------------------------------------------------------


def test_full_session(cli: Cli) -> None:
    cli.ok("remember", "--type", "feedback", BRITISH)
    store_path = layout(cli).store

    # SessionStart: the frozen block (and no hot state yet) as additionalContext
    start = ok(hook(cli, "SessionStart", source="startup"))
    assert context_of(start, "SessionStart") == f"{HEADER}\nfeedback:\n- [R1] {BRITISH}"

    # UserPromptSubmit with an explicit request: pending, and the changed hot state is injected
    cli.at_ms(T0 + 1 * MIN)
    prompt = ok(hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}"))
    assert context_of(prompt, "UserPromptSubmit") == (
        f"Hot session state (current session):\npending_memories:\n- [project] {PNPM}"
    )
    assert [m["text"] for m in cli.memories()] == [BRITISH]

    # tool calls: an Edit and a failing Bash command (Claude Code reports it as PostToolUseFailure)
    cli.at_ms(T0 + 2 * MIN)
    edit_input = {"file_path": str(cli.workspace / "src" / "app.py"), "old_string": "a", "new_string": "b"}
    assert ok(hook(cli, "PostToolUse", tool_name="Edit", tool_input=edit_input, tool_response={})).out == ""
    failed = "Exit code 1\nFAILED tests/test_app.py::test_a - AssertionError: boom"
    run = hook(cli, "PostToolUseFailure", tool_name="Bash", tool_input={"command": "pytest -q"}, error=failed)
    assert ok(run).out == ""

    # the next prompt injects the hot state once; an unchanged hot state is not injected again
    cli.at_ms(T0 + 3 * MIN)
    prompt = ok(hook(cli, "UserPromptSubmit", prompt="please fix the failing test"))
    hot = context_of(prompt, "UserPromptSubmit")
    assert "- src/app.py (edit, 1x)" in hot
    assert "- [test] FAILED tests/test_app.py::test_a - AssertionError: boom" in hot
    assert ok(hook(cli, "UserPromptSubmit", prompt="and keep going")).out == ""

    # a successful bash run of the same kind clears the error: the hot state changed again
    ok(hook(cli, "PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q"}, tool_response={}))
    hot = context_of(ok(hook(cli, "UserPromptSubmit", prompt="thanks")), "UserPromptSubmit")
    assert "open_errors" not in hot

    # PreCompact: an addendum to Claude Code's own summary prompt (appended as "Additional
    # Instructions"): the memory rules inside the summary block, no summary structure of its own;
    # read-only
    before = store_path.read_bytes()
    pre = ok(hook(cli, "PreCompact", trigger="auto", custom_instructions=None))
    assert not pre.out.startswith("{")
    assert "</summary>" in pre.out and "Memory candidates:" in pre.out
    assert "## Goal" not in pre.out
    assert "[M1]" in pre.out  # the numbered block, so a summary can name what it supersedes
    assert f"- [project] {PNPM}" in pre.out  # the hot state as background
    assert store_path.read_bytes() == before

    # the real order: SessionStart(compact) fires before the summary exists (the transcript holds
    # only an older one, which must not be observed), then PostCompact carries the summary
    cli.at_ms(T0 + 30 * MIN)
    write_transcript(cli, summary_record("an older summary\nMemory candidates:\n- [decision] Old rule x"))
    start = ok(hook(cli, "SessionStart", source="compact"))
    assert context_of(start, "SessionStart").startswith(HEADER)
    assert cli.memories() == [{**cli.memories()[0]}] and len(cli.memories()) == 1  # nothing observed yet
    assert ok(hook(cli, "PostCompact", trigger="auto", compact_summary=SUMMARY)).out == ""
    rows = cli.memories()
    assert sorted(r["text"] for r in rows) == sorted([BRITISH, PNPM, MSGSPEC])
    assert {r["source"] for r in rows} == {"manual", "explicit", "compaction"}

    # PostCompact cannot inject: the next prompt carries the new block (and the hot state)
    cli.at_ms(T0 + 31 * MIN)
    block = context_of(ok(hook(cli, "UserPromptSubmit", prompt="go on")), "UserPromptSubmit")
    assert block.startswith(HEADER)
    for text in (PNPM, MSGSPEC, BRITISH):
        assert f"] {text}" in block  # each line tagged with its short id
    assert "pending_memories" not in block  # promoted: no longer pending in the hot state
    assert ok(hook(cli, "UserPromptSubmit", prompt="and on")).out == ""  # injected once
    types = [e["type"] for e in events(cli)]
    for expected in (
        "explicit_memory_detected",
        "pending_memory_appended",
        "extraction_candidate_accepted",
        "promotion_promoted",
        "render_selected",
    ):
        assert expected in types
    assert "hook_failed" not in types
    hashed = privacy_hash("S1")
    assert all(e.get("sessionHash") in (None, hashed) for e in events(cli))

    # SessionEnd when the process exits: the session's hot state is kept for a resume
    cli.at_ms(T0 + 40 * MIN)
    assert ok(hook(cli, "SessionEnd", reason="prompt_input_exit")).out == ""
    assert len(list(layout(cli).sessions.glob("*.json"))) == 1
    # the resumed conversation holds what it was handed: nothing again, and the hot state is kept
    assert ok(hook(cli, "SessionStart", source="resume")).out == ""
    assert "- src/app.py (edit, 1x)" in cli.ok("open-session", "--session", "S1").out
    # /clear (or logout) ends it for good
    assert ok(hook(cli, "SessionEnd", reason="clear")).out == ""
    assert list(layout(cli).sessions.glob("*.json")) == []
    assert failures(cli) == []


def test_session_end_promotes_what_the_session_still_owns(cli: Cli) -> None:
    ok(hook(cli, "SessionStart", source="startup"))
    ok(hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}"))
    assert cli.memories() == []
    ok(hook(cli, "SessionEnd", reason="clear"))
    assert [m["text"] for m in cli.memories()] == [PNPM]


@pytest.mark.parametrize("asker", ["others", "itself"])
def test_a_prompt_pushed_over_the_journal_bound_is_still_stored(cli: Cli, asker: str) -> None:
    """docs/decisions.md#pending-journal-bound through the hooks: a request acknowledged in S's
    prompt, then 60 newer requests (other sessions' prompts, or S's own), then S's next prompt and
    its end. The 50-entry journal cap used to drop the request, and the next prompt S's copy."""
    ok(hook(cli, "SessionStart", source="startup"))
    ok(hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}"))
    for i in range(60):
        cli.at_ms(T0 + (i + 1) * 1_000)
        sid = f"O{i}" if asker == "others" else "S1"
        ok(
            hook(
                cli, "UserPromptSubmit", session=sid, prompt=f"Remember this: rule {i} keeps module {i} tidy"
            )
        )
    cli.at_ms(T0 + MIN + 5_000)
    ok(hook(cli, "UserPromptSubmit", prompt="thanks, carry on"))
    ok(hook(cli, "SessionEnd", reason="clear"))
    texts = [m["text"] for m in cli.memories()]
    assert PNPM in texts
    # the ten oldest of the others' requests were promoted early with it: stored as well
    assert len(texts) == (11 if asker == "others" else 61)
    assert not [e for e in events(cli) if "journal_cap" in e["reasonCodes"]]
    assert failures(cli) == []


def test_start_on_an_empty_workspace_prints_nothing(cli: Cli) -> None:
    assert ok(hook(cli, "SessionStart", source="startup")).out == ""


def test_a_resume_hands_out_only_what_the_conversation_lacks(cli: Cli) -> None:
    """Claude Code keeps what a hook handed out in the resumed conversation: the block again would be
    a second copy in its history (docs/decisions.md#hook-injection)."""
    cli.ok("remember", "--type", "feedback", BRITISH)
    first = context_of(ok(hook(cli, "SessionStart", source="startup")), "SessionStart")
    assert BRITISH in first
    cli.ok("remember", "--type", "project", PNPM)
    cli.at_ms(T0 + 5 * MIN)
    assert ok(hook(cli, "SessionStart", source="resume")).out == ""  # same epoch, same block
    ok(hook(cli, "PostToolUse", tool_name="Edit", tool_input={"file_path": str(cli.workspace / "a.py")}))
    cli.at_ms(T0 + 6 * MIN)
    ok(hook(cli, "SessionEnd", reason="prompt_input_exit"))
    cli.at_ms(T0 + 7 * MIN)
    resumed = context_of(ok(hook(cli, "SessionStart", source="resume")), "SessionStart")
    assert HEADER in resumed and PNPM in resumed  # the end started a new epoch: the block changed
    cli.at_ms(T0 + 8 * MIN)
    assert ok(hook(cli, "SessionStart", source="resume")).out == ""  # nothing new since
    ok(hook(cli, "PostToolUse", tool_name="Edit", tool_input={"file_path": str(cli.workspace / "b.py")}))
    cli.at_ms(T0 + 9 * MIN)
    again = context_of(ok(hook(cli, "SessionStart", source="resume")), "SessionStart")
    assert HEADER not in again and "b.py" in again  # only the hot state changed
    cli.at_ms(T0 + 10 * MIN)
    compacted = context_of(ok(hook(cli, "SessionStart", source="compact")), "SessionStart")
    assert compacted.startswith(HEADER)  # a compaction replaced the conversation: everything again


def test_post_compact_without_a_summary_still_promotes_and_leaves_evidence(cli: Cli) -> None:
    ok(hook(cli, "SessionStart", source="startup"))
    ok(hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}"))
    ok(hook(cli, "SessionStart", source="compact"))
    assert cli.memories() == []
    ok(hook(cli, "PostCompact", trigger="manual"))  # compact_summary missing
    assert [m["text"] for m in cli.memories()] == [PNPM]
    missing = [e for e in events(cli) if e["type"] == "compaction_summary_missing"]
    assert len(missing) == 1 and missing[0]["reasonCodes"] == ["summary_missing"]
    ok(hook(cli, "PostCompact", trigger="manual", compact_summary="   "))
    assert len([e for e in events(cli) if e["type"] == "compaction_summary_missing"]) == 2
    assert failures(cli) == []


def test_the_real_compaction_order_stores_every_candidate_once(cli: Cli) -> None:
    """PreCompact -> SessionStart(compact) with a transcript that does not hold the summary yet ->
    PostCompact with it -> UserPromptSubmit -> a new session: every accepted candidate is stored and
    injected; the previous compaction's summary is never observed twice."""
    ok(hook(cli, "SessionStart", source="startup"))
    ok(hook(cli, "PreCompact", trigger="manual"))
    first = "<summary>1. Primary Request:\n   x\n</summary>\n\nMemory candidates:\n- [decision] " + MSGSPEC
    ok(hook(cli, "SessionStart", source="compact"))
    ok(hook(cli, "PostCompact", trigger="manual", compact_summary=first))
    # a second compaction: the transcript now holds the first summary, SessionStart must not read it
    write_transcript(cli, summary_record(first))
    cli.at_ms(T0 + 10 * MIN)
    ok(hook(cli, "PreCompact", trigger="manual"))
    ok(hook(cli, "SessionStart", source="compact"))
    ok(hook(cli, "PostCompact", trigger="manual", compact_summary=first))  # a repeat is skipped
    second = f"<summary>\n</summary>\nMemory candidates:\n- [project] {PNPM}"
    ok(hook(cli, "PostCompact", trigger="manual", compact_summary=second))
    accepted = [e for e in events(cli) if e["type"] == "extraction_candidate_accepted"]
    assert len(accepted) == 2
    assert sorted(m["text"].lower() for m in cli.memories()) == sorted([MSGSPEC.lower(), PNPM.lower()])
    cli.at_ms(T0 + 11 * MIN)
    block = context_of(ok(hook(cli, "UserPromptSubmit", prompt="next")), "UserPromptSubmit")
    assert MSGSPEC in block and PNPM in block.lower()
    cli.at_ms(T0 + 12 * MIN)
    fresh = context_of(ok(hook(cli, "SessionStart", "S2", source="startup")), "SessionStart")
    assert MSGSPEC in fresh and PNPM in fresh.lower()
    assert failures(cli) == []


# ---------------------------------------------------------------------------------------------
# Mapping tool payloads
# ---------------------------------------------------------------------------------------------


def payload(event: str = "PostToolUse", **fields: Any) -> dict[str, Any]:
    return {"session_id": "S1", "hook_event_name": event, **fields}


@pytest.mark.parametrize(
    ("tool", "key", "core"),
    [
        ("Read", "file_path", "read"),
        ("Edit", "file_path", "edit"),
        ("MultiEdit", "file_path", "edit"),
        ("Write", "file_path", "write"),
        ("NotebookEdit", "notebook_path", "edit"),
    ],
)
def test_file_tools_map_to_a_file_path(tool: str, key: str, core: str) -> None:
    event = cc.tool_event(payload(tool_name=tool, tool_input={key: "/w/src/a.py"}, tool_response={}))
    assert event is not None
    assert (event.tool, event.args) == (core, {"filePath": "/w/src/a.py"})


def test_grep_results_become_path_lines() -> None:
    listing = {"mode": "files_with_matches", "filenames": ["/w/src/a.py", "/w/b.ts"], "numFiles": 2}
    event = cc.tool_event(payload(tool_name="Grep", tool_input={"pattern": "x"}, tool_response=listing))
    assert event is not None and event.tool == "grep"
    assert event.output == "/w/src/a.py:\n/w/b.ts:"
    content = {"mode": "content", "content": "/w/src/a.py:3:x = 1", "numLines": 1}
    event = cc.tool_event(payload(tool_name="Grep", tool_input={"pattern": "x"}, tool_response=content))
    assert event is not None and event.output == "/w/src/a.py:3:x = 1"


def test_bash_success_failure_and_explicit_codes() -> None:
    ok_event = cc.tool_event(
        payload(tool_name="Bash", tool_input={"command": "ls"}, tool_response={"stdout": "a", "stderr": "b"})
    )
    assert ok_event is not None
    assert (ok_event.tool, ok_event.args, ok_event.output, ok_event.exit_code) == (
        "bash",
        {"command": "ls"},
        "a\nb",
        0,
    )
    coded = cc.tool_event(
        payload(tool_name="Bash", tool_input={"command": "make"}, tool_response={"stdout": "", "exitCode": 2})
    )
    assert coded is not None and coded.exit_code == 2
    failed = cc.tool_event(
        payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"}, error="Exit code 127")
    )
    assert failed is not None and failed.exit_code == 127
    vague = cc.tool_event(payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"}))
    assert vague is not None and vague.exit_code == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"tool_name": "WebFetch", "tool_input": {"url": "https://example.com"}},
        {"tool_name": "Bash", "tool_input": {}},
        {"tool_name": "Edit", "tool_input": {"file_path": 3}},
        {"tool_name": "Edit", "tool_input": "not an object"},
        {"tool_input": {"file_path": "/w/a.py"}},
    ],
)
def test_unknown_tools_and_inputs_are_ignored(fields: dict[str, Any]) -> None:
    assert cc.tool_event(payload(**fields)) is None


def test_unknown_tool_opens_nothing(cli: Cli) -> None:
    run = ok(hook(cli, "PostToolUse", tool_name="WebSearch", tool_input={"query": "x"}, tool_response={}))
    assert run.out == ""
    assert not cli.home.exists()


# ---------------------------------------------------------------------------------------------
# The transcript's compaction summary
# ---------------------------------------------------------------------------------------------


def test_sub_agent_payloads_get_no_injection_and_cause_no_writes(cli: Cli) -> None:
    cli.ok("remember", "--type", "feedback", BRITISH)
    before = all_bytes(cli.home)
    agent = {"agent_id": "a4d2c8f1e0b3a297", "agent_type": "Explore"}
    assert ok(hook(cli, "SessionStart", source="startup", **agent)).out == ""
    assert ok(hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}", **agent)).out == ""
    edit = {"file_path": str(cli.workspace / "a.py")}
    assert (
        ok(hook(cli, "PostToolUse", tool_name="Edit", tool_input=edit, tool_response={}, **agent)).out == ""
    )
    assert ok(hook(cli, "SessionEnd", reason="other", **agent)).out == ""
    assert all_bytes(cli.home) == before


# ---------------------------------------------------------------------------------------------
# Failures: exit 0, one hook_failed event, one stderr line (docs/decisions.md#d12)
# ---------------------------------------------------------------------------------------------


def one_failure(cli: Cli, run: Run, reason: str) -> dict[str, Any]:
    assert run.code == 0, run
    assert run.out == ""
    assert run.err.startswith("workmem: claude-code ") and run.err.count("\n") == 1, run
    [failed] = failures(cli)
    assert failed["reasonCodes"] == [reason]
    assert (failed["phase"], failed["outcome"]) == ("hook", "failed")
    message = failed["details"]["message"]
    assert isinstance(message, str) and "\n" not in message and len(message) <= 240
    return failed


def test_bad_json_is_recorded_not_raised(cli: Cli) -> None:
    failed = one_failure(cli, raw_hook(cli, "{not json"), cc.UNKNOWN_EVENT)
    assert "not valid JSON" in failed["details"]["message"]


@pytest.mark.parametrize("stdin", ["", "[1, 2]", "null"])
def test_empty_and_non_object_payloads(cli: Cli, stdin: str) -> None:
    one_failure(cli, raw_hook(cli, stdin), cc.UNKNOWN_EVENT)


def test_unknown_event_is_recorded_under_a_fixed_code(cli: Cli) -> None:
    secret_name = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    failed = one_failure(cli, hook(cli, secret_name), cc.UNKNOWN_EVENT)
    assert failed["sessionHash"] == privacy_hash("S1")
    assert not layout(cli).store.exists()
    assert secret_name.encode() not in all_bytes(cli.home)


@pytest.mark.parametrize("event", ["Stop", "PreToolUse", "Notification", "SubagentStart", "PostToolBatch"])
def test_known_unused_events_are_silent_no_ops(cli: Cli, event: str) -> None:
    run = ok(hook(cli, event, tool_name="Bash", tool_input={"command": "ls"}))
    assert run.out == ""
    assert not layout(cli).directory.exists()


def test_missing_session_id(cli: Cli) -> None:
    one_failure(cli, hook(cli, "UserPromptSubmit", session=None, prompt="hi"), "UserPromptSubmit")


def test_prompt_must_be_text(cli: Cli) -> None:
    one_failure(cli, hook(cli, "UserPromptSubmit", prompt=["hi"]), "UserPromptSubmit")


@pytest.fixture
def held_lock(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The workspace lock held by another thread; the hook waits 50 ms at most."""
    monkeypatch.setenv("WORKMEM_LOCK_TIMEOUT", "0.05")
    target = layout(cli)
    target.directory.mkdir(parents=True)
    acquired, release = threading.Event(), threading.Event()

    def hold() -> None:
        with filelock.FileLock(target.lock):
            acquired.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert acquired.wait(5)
    try:
        yield
    finally:
        release.set()
        thread.join()


@pytest.mark.usefixtures("held_lock")
def test_lock_timeout_becomes_one_hook_failed_event(cli: Cli) -> None:
    failed = one_failure(
        cli, hook(cli, "UserPromptSubmit", prompt=f"Remember this: {PNPM}"), "UserPromptSubmit"
    )
    assert "lock" in failed["details"]["message"]
    assert str(cli.home) not in json.dumps(failed)  # no absolute path in the log (docs/decisions.md#b18)
    assert "storage_lock_timeout" in [e["type"] for e in events(cli)]
    assert not layout(cli).journal.exists()
    assert list(layout(cli).directory.glob("sessions/*")) == []


def test_storage_error_becomes_one_hook_failed_event(cli: Cli) -> None:
    ok(hook(cli, "SessionStart", source="startup"))
    # a file where the sessions directory should be (a directory where a file should be is moved
    # aside, so it no longer fails)
    sessions = layout(cli).sessions
    shutil.rmtree(sessions)
    sessions.write_text("in the way")
    run = hook(cli, "SessionEnd", reason="other")
    one_failure(cli, run, "SessionEnd")


def test_invalid_clock_setting_is_a_failure_not_a_crash(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKMEM_NOW", "yesterday-ish")
    one_failure(cli, hook(cli, "SessionStart", source="startup"), "SessionStart")


def test_unknown_host_exits_zero(cli: Cli) -> None:
    run = cli("hook", "other-host", stdin="{}", workspace=False)
    assert run.code == 0 and run.out == "" and run.err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# Secrets never reach stdout or disk
# ---------------------------------------------------------------------------------------------

SECRETS = ("hunter2sushi", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "sk-proj-Abc123Def456Ghi789Jkl012Mno")


def test_secrets_in_prompts_and_tool_output_stay_out_of_stdout_and_disk(cli: Cli) -> None:
    outputs: list[str] = []
    outputs.append(ok(hook(cli, "SessionStart", source="startup")).out)
    prompt = f"Remember this: the deploy password is {SECRETS[0]} and the token is {SECRETS[1]}"
    outputs.append(hook(cli, "UserPromptSubmit", prompt=prompt).out)
    error = f"Exit code 1\nError: auth failed for token {SECRETS[1]} password: {SECRETS[0]} key {SECRETS[2]}"
    run = hook(cli, "PostToolUseFailure", tool_name="Bash", tool_input={"command": "npm test"}, error=error)
    outputs.append(run.out)
    outputs.append(hook(cli, "UserPromptSubmit", prompt=f"why? {SECRETS[2]}").out)
    outputs.append(hook(cli, "PreCompact", trigger="manual", custom_instructions="").out)
    # a failure whose payload carries a secret
    outputs.append(
        raw_hook(cli, '{"hook_event_name": "UserPromptSubmit", "prompt": "' + SECRETS[0] + '"}').err
    )
    disk = all_bytes(cli.home)
    for secret in SECRETS:
        assert secret.encode() not in disk
        for out in outputs:
            assert secret not in out
    assert any("[REDACTED]" in out for out in outputs)


def test_a_misconfigured_hook_command_line_never_exits_with_a_blocking_status_d12(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from adapters.cli import main

    assert main(["hook"]) == 0  # no host named
    assert main(["hook", "claude-code", "--bogus"]) == 0
    err = capsys.readouterr().err
    assert err.count("workmem:") == 2
    assert main(["--bogus"]) == 2  # outside a hook, a usage error is still exit 2


def test_closed_standard_streams_never_make_the_hook_fail(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host may close stdin or stdout (``>&-``): the streams are then ``None``; still exit 0."""
    from adapters.cli import main

    monkeypatch.setattr(sys, "stdin", None)
    assert main(["hook", "claude-code"]) == 0
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"hook_event_name": "SessionEnd"}')))
    assert main(["hook", "claude-code"]) == 0


def test_a_cwd_that_is_not_a_path_is_a_recorded_failure_not_a_fallback(cli: Cli) -> None:
    run = hook(cli, "SessionStart", cwd=123)
    assert run.code == 0 and run.out == ""
    assert run.err.count("\n") == 1


def obedient_model(instructions: str, candidates: list[str]) -> str:
    """A summariser that writes only what it is asked for: an analysis block and a summary block and
    nothing after ``</summary>`` (Claude Code's own reminder, which follows any additional
    instructions, asks for exactly that). A Memory candidates section asked for inside the summary
    block becomes its last part; one asked for after it is never written."""
    lines = ["<analysis>The user wants safer HTTP retries.</analysis>", "<summary>", "1. Intent: ship.", ""]
    if re.search(r"inside your <summary> block", instructions, re.IGNORECASE):
        lines += ["Memory candidates:", *(f"- {c}" for c in candidates)]
    lines.append("</summary>")
    return "\n".join(lines)


OLD_ADDENDUM_HEAD = "After the closing </summary> tag, add a Memory candidates section"
CANDIDATES = ["[decision] Use exponential backoff with jitter for every HTTP retry in the client"]


def test_candidates_reach_the_store_from_a_model_that_stops_at_the_summary_end(cli: Cli) -> None:
    ok(hook(cli, "SessionStart", source="startup"))
    instructions = ok(hook(cli, "PreCompact", trigger="auto")).out
    summary = obedient_model(instructions, CANDIDATES)
    assert summary.endswith("</summary>")
    ok(hook(cli, "PostCompact", trigger="auto", compact_summary=summary))
    stored = [m["text"] for m in cli.memories()]
    assert stored == ["Use exponential backoff with jitter for every HTTP retry in the client"]
    # what the addendum asked for before: the same model writes no candidates at all
    assert "Memory candidates" not in obedient_model(OLD_ADDENDUM_HEAD, CANDIDATES)


def test_a_session_started_in_a_sub_directory_gets_the_repositorys_block(cli: Cli) -> None:
    """docs/decisions.md#d15: Claude Code started in ``proj/src`` is the workspace ``proj``."""
    (cli.workspace / ".git").mkdir()
    (cli.workspace / "src").mkdir()
    cli.ok("remember", "--type", "feedback", BRITISH)
    payload = {"session_id": "S9", "cwd": str(cli.workspace / "src"), "hook_event_name": "SessionStart"}
    start = ok(raw_hook(cli, json.dumps({**payload, "source": "startup"})))
    assert BRITISH in context_of(start, "SessionStart")
