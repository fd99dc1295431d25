"""The payloads recorded from the real hosts (Claude Code 2.1.332, Codex CLI 0.171), driven through
``workmem hook`` as the hosts sent them, with only the recorded paths pointed at a temporary
workspace. Each test asserts what the host would print and what lands on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from adapters import paths
from adapters.hosts import codex
from tests.support.cli import T0, Cli, Run

FIXTURES = Path(__file__).parents[1] / "fixtures"
MIN = 60_000
EXPLICIT = "we deploy with blue-green"
CANDIDATES = (
    "Deploys use blue-green switching via src/deploy.sh",
    "Never deploy on Fridays",
    "Staging dashboard lives at grafana.internal/d/deploys",
)


@pytest.fixture
def cli(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.chdir(cli.workspace)
    return cli


def recorded(host: str, name: str, cli: Cli, **changes: Any) -> dict[str, Any]:
    """A recorded payload with its workspace and transcript paths moved into the test's directory."""
    raw = (FIXTURES / host / f"{name}.json").read_text()
    scratch = str(cli.workspace.parent)
    raw = raw.replace("<SCRATCH>/proj", str(cli.workspace)).replace("/home/dev/proj", str(cli.workspace))
    raw = raw.replace("<SCRATCH>", scratch).replace("/home/dev", scratch)
    payload: dict[str, Any] = json.loads(raw)
    payload.update(changes)
    return payload


def send(cli: Cli, host: str, payload: dict[str, Any]) -> Run:
    run = cli("hook", host, stdin=json.dumps(payload), workspace=False)
    assert run.code == 0, run
    assert run.err == "", run
    return run


def context(run: Run, event: str) -> str:
    body = json.loads(run.out)
    assert body["hookSpecificOutput"]["hookEventName"] == event
    text: str = body["hookSpecificOutput"]["additionalContext"]
    return text


def evidence_types(cli: Cli) -> list[str]:
    log = paths.workspace_paths(cli.home, str(cli.workspace)).evidence
    return [json.loads(line)["type"] for line in log.read_text().splitlines()] if log.exists() else []


def session_files(cli: Cli) -> list[Path]:
    return sorted(paths.workspace_paths(cli.home, str(cli.workspace)).sessions.glob("*.json"))


# ---------------------------------------------------------------------------------------------
# Claude Code 2.1.332
# ---------------------------------------------------------------------------------------------


def test_claude_code_recorded_session(cli: Cli) -> None:
    host = "claude-code"
    assert send(cli, host, recorded("claude_code", "SessionStart-startup", cli)).out == ""
    cli.at_ms(T0 + 1 * MIN)
    prompt = send(cli, host, recorded("claude_code", "UserPromptSubmit", cli))
    assert "pending_memories:" in context(prompt, "UserPromptSubmit")
    send(cli, host, recorded("claude_code", "PostToolUse", cli))  # a Write of a notes file
    failure = send(cli, host, recorded("claude_code", "PostToolUseFailure", cli))
    assert failure.out == ""
    assert send(cli, host, recorded("claude_code", "Stop", cli)).out == ""

    pre = send(cli, host, recorded("claude_code", "PreCompact", cli)).out
    assert pre.startswith("Inside your <summary> block") and "## Goal" not in pre
    assert len(pre) <= 10_000
    cli.at_ms(T0 + 2 * MIN)
    start = context(send(cli, host, recorded("claude_code", "SessionStart-compact", cli)), "SessionStart")
    assert "notes.md" in start  # the hot state survives the compaction
    assert send(cli, host, recorded("claude_code", "PostCompact", cli)).out == ""
    texts = [m["text"] for m in cli.memories()]
    assert "Deploys use blue-green switching via src/deploy.sh" in texts
    assert "Never deploy on Fridays" in texts

    cli.at_ms(T0 + 3 * MIN)
    assert send(cli, host, recorded("claude_code", "SessionEnd", cli)).out == ""  # reason "other"
    assert len(session_files(cli)) == 1  # kept for a resume
    cli.at_ms(T0 + 4 * MIN)
    resumed = context(send(cli, host, recorded("claude_code", "SessionStart-resume", cli)), "SessionStart")
    assert "notes.md" in resumed and "blue-green" in resumed
    # stored and listed, but folded into the explicit memory that says it too (docs/decisions.md#d22)
    assert "Never deploy on Fridays" not in resumed
    types = evidence_types(cli)
    assert "hook_failed" not in types and "session_suspended" in types


@pytest.mark.parametrize("source", ["system", "loop_wakeup", "schedule_wakeup", "poll_event"])
def test_machine_written_prompts_are_not_observed(cli: Cli, source: str) -> None:
    payload = recorded("claude_code", "UserPromptSubmit", cli, source=source)
    assert send(cli, "claude-code", payload).out == ""
    assert not paths.workspace_paths(cli.home, str(cli.workspace)).directory.exists()


@pytest.mark.parametrize("source", ["user", "sdk", None])
def test_typed_prompts_are_observed(cli: Cli, source: str | None) -> None:
    payload = recorded("claude_code", "UserPromptSubmit", cli)
    if source is not None:
        payload["source"] = source
    assert "pending_memories" in context(send(cli, "claude-code", payload), "UserPromptSubmit")


def test_the_same_prompt_typed_twice_is_two_messages(cli: Cli) -> None:
    first = recorded("claude_code", "UserPromptSubmit", cli, prompt="hello there")
    send(cli, "claude-code", first)
    send(cli, "claude-code", {**first, "prompt_id": "another-prompt"})
    state = json.loads(session_files(cli)[0].read_text())
    assert len(state["processedMessageIds"]) == 2
    send(cli, "claude-code", first)  # the same prompt id again: the same message
    assert len(json.loads(session_files(cli)[0].read_text())["processedMessageIds"]) == 2


def test_a_resume_after_the_window_drops_the_kept_hot_state(cli: Cli) -> None:
    host = "claude-code"
    send(cli, host, recorded("claude_code", "SessionStart-startup", cli))
    send(cli, host, recorded("claude_code", "PostToolUseFailure", cli))
    send(cli, host, recorded("claude_code", "SessionEnd", cli))
    cli.at_ms(T0 + 25 * 60 * MIN)  # past the 24 h resume window
    run = send(cli, host, recorded("claude_code", "SessionStart-resume", cli))
    assert "open_errors" not in run.out
    assert "session_hot_state_expired" in evidence_types(cli)


@pytest.mark.parametrize("reason", ["clear", "logout"])
def test_a_final_session_end_drops_the_state(cli: Cli, reason: str) -> None:
    send(cli, "claude-code", recorded("claude_code", "SessionStart-startup", cli))
    send(cli, "claude-code", recorded("claude_code", "UserPromptSubmit", cli))
    send(cli, "claude-code", recorded("claude_code", "SessionEnd", cli, reason=reason))
    assert session_files(cli) == []
    assert len(cli.memories()) == 1  # what it owned was promoted first


def test_pre_compact_stays_within_the_hosts_cut(cli: Cli) -> None:
    host = "claude-code"
    for n in range(60):
        text = f"Service {n} runbook lives at docs/runbooks/service-{n}.md " * 3
        cli.ok("remember", "--force", "--type", "reference", text)  # path-heavy on purpose
    send(cli, host, recorded("claude_code", "SessionStart-startup", cli))
    for n in range(40):
        tool = {"command": f"make target-{n}"}
        error = f"Exit code 2\nerror: target-{n} failed in src/module_{n}.py line {n}: " + "x" * 200
        send(cli, host, recorded("claude_code", "PostToolUseFailure", cli, tool_input=tool, error=error))
    pre = send(cli, host, recorded("claude_code", "PreCompact", cli)).out
    assert len(pre) <= 10_000
    assert "Memory candidates:\n(none)" in pre  # the rules are never the part that is cut


# ---------------------------------------------------------------------------------------------
# Codex CLI 0.171
# ---------------------------------------------------------------------------------------------


def with_rollout(cli: Cli) -> str:
    path = cli.workspace.parent / "rollout.jsonl"
    shutil.copy(FIXTURES / "codex" / "rollout.jsonl", path)
    text = path.read_text().replace("<SCRATCH>", str(cli.workspace.parent))
    path.write_text(text)
    return str(path)


def test_codex_recorded_session(cli: Cli) -> None:
    host = "codex"
    rollout = with_rollout(cli)
    # run 1: remember; every `codex exec` ends the session
    assert send(cli, host, recorded("codex", "SessionStart.startup", cli)).out == ""
    send(cli, host, recorded("codex", "UserPromptSubmit", cli))
    assert send(cli, host, recorded("codex", "Stop", cli)).out == ""
    send(cli, host, recorded("codex", "SessionEnd", cli))
    assert [m["text"] for m in cli.memories()] == [f"{EXPLICIT}, never on Fridays"]

    # run 2: resume, a failing command whose exit code is only in the rollout
    cli.at_ms(T0 + 1 * MIN)
    start = context(send(cli, host, recorded("codex", "SessionStart.resume", cli)), "SessionStart")
    assert EXPLICIT in start
    send(cli, host, recorded("codex", "PreToolUse", cli))
    send(cli, host, recorded("codex", "PostToolUse", cli, transcript_path=rollout))
    ctx = cli.ok("context", "--session", recorded("codex", "PostToolUse", cli)["session_id"]).out
    assert "open_errors:" in ctx and "deploy check failed" in ctx
    send(cli, host, recorded("codex", "SessionEnd", cli))

    # run 4: the compaction comes first; PostCompact reads the summary from the rollout
    cli.at_ms(T0 + 2 * MIN)
    assert send(cli, host, recorded("codex", "PreCompact", cli)).out == ""
    send(cli, host, recorded("codex", "PostCompact", cli, transcript_path=rollout))
    texts = [m["text"] for m in cli.memories()]
    for text in CANDIDATES:
        assert text in texts
    send(cli, host, recorded("codex", "SessionStart.resume", cli))
    send(cli, host, recorded("codex", "SessionStart.compact", cli))
    send(cli, host, recorded("codex", "SessionEnd", cli))

    # run 5: a new session gets the compaction's memories
    cli.at_ms(T0 + 3 * MIN)
    fresh = recorded("codex", "SessionStart.startup", cli, session_id="another-thread")
    assert "blue-green switching" in context(send(cli, host, fresh), "SessionStart")
    assert "hook_failed" not in evidence_types(cli)


def test_codex_post_compact_without_a_rollout_leaves_evidence(cli: Cli) -> None:
    send(cli, "codex", recorded("codex", "PostCompact", cli, transcript_path=None))
    assert "compaction_summary_missing" in evidence_types(cli)


def test_codex_reads_the_rollout_for_summary_and_exit_code(cli: Cli) -> None:
    rollout = with_rollout(cli)
    summary = codex.compaction_summary(rollout)
    assert summary.startswith("## Goal") and "Another language model" not in summary
    assert "Memory candidates:" in summary
    assert codex.rollout_exit_code(rollout, "call_mock0001") == 3
    assert codex.rollout_exit_code(rollout, "call_unknown") is None
    assert codex.rollout_exit_code(None, "call_mock0001") is None
    assert codex.compaction_summary(None) == ""


def test_codex_exit_code_from_a_function_call_output(tmp_path: Path) -> None:
    line = {
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "c1",
            "output": "Process exited with code 7\nboom",
        },
    }
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert codex.rollout_exit_code(str(path), "c1") == 7


def test_health_shows_compactions_without_a_summary(cli: Cli) -> None:
    send(cli, "claude-code", recorded("claude_code", "PostCompact", cli, compact_summary=""))
    text = cli.ok("health").out
    assert "compactions without a summary: 1" in text
    assert cli.ok("health", "--json").json()["summary"]["compactionsWithoutSummary"] == 1


def test_observations_read_the_store_head_and_never_write_a_partial_store(cli: Cli) -> None:
    """A prompt or tool observation reads only the store's head; when it must stamp the activity
    time (at most once a day) it runs again on the full store: every entry survives."""
    for n in range(5):
        cli.ok("remember", "--type", "reference", f"Runbook {n} lives at docs/runbooks/r{n}.md")
    store_path = paths.workspace_paths(cli.home, str(cli.workspace)).store
    send(cli, "claude-code", recorded("claude_code", "PostToolUse", cli))  # stamps the first activity
    assert len(json.loads(store_path.read_text())["entries"]) == 5
    before = store_path.read_bytes()
    cli.at_ms(T0 + 1 * MIN)
    send(cli, "claude-code", recorded("claude_code", "PostToolUse", cli))
    send(cli, "claude-code", recorded("claude_code", "UserPromptSubmit", cli, prompt="just a question"))
    assert store_path.read_bytes() == before  # nothing to stamp within the day: not rewritten
    cli.at_ms(T0 + 2 * 24 * 60 * MIN)
    send(cli, "claude-code", recorded("claude_code", "PostToolUse", cli))
    after = json.loads(store_path.read_text())
    assert len(after["entries"]) == 5
    assert after["lastActivityAt"].startswith("2026-05-03")
    cli.at_ms(T0 + 4 * 24 * 60 * MIN)
    request = recorded("claude_code", "UserPromptSubmit", cli, prompt="remember this: use pnpm")
    send(cli, "claude-code", request)
    assert len(json.loads(store_path.read_text())["entries"]) == 5
    assert [m["text"] for m in cli.memories()].count("use pnpm") == 0  # pending until the session ends


def test_the_hook_fast_path_parses_like_the_full_parser() -> None:
    from adapters.cli import build_parser, hook_fast_path

    for argv in (
        ["hook", "claude-code"],
        ["--home", "/h", "hook", "codex"],
        ["--workspace=/w", "--home=/h", "hook", "claude-code"],
        ["--workspace", "/w", "hook", "anything"],
    ):
        fast = hook_fast_path(argv)
        full = build_parser().parse_args(argv)
        assert fast is not None
        for name in ("command", "handler", "host", "home", "workspace"):
            assert getattr(fast, name) == getattr(full, name), (argv, name)
    for argv in (["hook"], ["hook", "a", "b"], ["--home", "hook", "x"], ["--bogus", "hook", "x"],
                 ["list"], ["hook", "--help"], ["--home", "/a", "--home", "/b", "hook", "x"]):  # fmt: skip
        assert hook_fast_path(argv) is None, argv


def test_a_hook_call_leaves_the_garbage_collector_as_it_found_it(cli: Cli) -> None:
    import gc

    assert gc.isenabled()
    send(cli, "claude-code", recorded("claude_code", "Stop", cli))
    assert gc.isenabled()


# ---------------------------------------------------------------------------------------------
# Forget and correct in the conversation (docs/decisions.md#d19), both dialects
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "fixtures", "start"), [
    ("claude-code", "claude_code", "SessionStart-startup"),
    ("codex", "codex", "SessionStart.startup"),
])  # fmt: skip
def test_forget_and_correct_in_user_prompt_submit(cli: Cli, host: str, fixtures: str, start: str) -> None:
    cli.ok("remember", "--type", "project", "We install dependencies with yarn in this repo")
    cli.ok("remember", "--type", "project", "The API server listens on port 8080 in development")
    cli.ok("remember", "--type", "feedback", "Run the linters with yarn lint before every push")
    cli.at_ms(T0 + 1 * MIN)
    assert "port 8080" in context(send(cli, host, recorded(fixtures, start, cli)), "SessionStart")

    def prompt(text: str, n: int) -> str:
        ids = {"prompt_id": f"p{n}"} if host == "claude-code" else {"turn_id": f"t{n}"}
        payload = recorded(fixtures, "UserPromptSubmit", cli, prompt=text, **ids)
        return context(send(cli, host, payload), "UserPromptSubmit")

    ambiguous = prompt("we don't use yarn anymore", 1)
    assert "matches several memories" in ambiguous and len(cli.memories()) == 3
    forgot = prompt("that's no longer true: the API listens on port 8080", 2)
    assert "forgot mem_" in forgot and "workmem restore mem_" in forgot
    corrected = prompt("actually, use pnpm instead of yarn\nyarn lint stays", 3)
    assert "matches several memories" in corrected  # two memories say yarn: nothing changed
    replaced = prompt("from now on pnpm install, not yarn in this repo", 4)
    assert "replaced mem_" in replaced
    texts = sorted(m["text"] for m in cli.memories())
    assert texts == [
        "Run the linters with yarn lint before every push",
        "We install dependencies with pnpm install",
    ]
    forgotten_id = forgot.split("forgot ")[1].split()[0]
    cli.ok("restore", forgotten_id)
    assert any("port 8080" in m["text"] for m in cli.memories())
    kinds = evidence_types(cli)
    assert "memory_forgotten" in kinds and "memory_superseded" in kinds and "hook_failed" not in kinds


# ---------------------------------------------------------------------------------------------
# Reinforcement from use (docs/decisions.md#d19), both dialects
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "fixtures", "start"), [
    ("claude-code", "claude_code", "SessionStart-startup"),
    ("codex", "codex", "SessionStart.startup"),
])  # fmt: skip
def test_use_in_post_tool_use_and_stop(cli: Cli, host: str, fixtures: str, start: str) -> None:
    checks = cli.ok(
        "remember", "--json", "--type", "project", "Run the full checks with make check-all"
    ).json()
    deploy = cli.ok(
        "remember", "--json", "--type", "project", "Deploy with scripts/deploy.sh --env staging"
    ).json()
    commits = cli.ok("remember", "--json", "--type", "feedback", "Prefer small focused commits").json()
    idle = cli.ok("remember", "--json", "--type", "project", "Benchmarks run with python -m bench.run").json()
    cli.at_ms(T0 + 30 * 24 * 60 * MIN)
    send(cli, host, recorded(fixtures, start, cli))
    before = {m["id"]: m["strength"] for m in cli.memories()}
    bash = {"tool_name": "Bash", "tool_input": {"command": "make check-all && make check-all"}}
    send(cli, host, recorded(fixtures, "PostToolUse", cli, **bash))
    send(cli, host, recorded(fixtures, "PostToolUse", cli, **bash))  # once per session
    if host == "claude-code":  # the text a Write puts in
        write = {
            "tool_input": {
                "file_path": str(cli.workspace / "run.sh"),
                "content": "scripts/deploy.sh --env staging",
            }
        }
        send(cli, host, recorded(fixtures, "PostToolUse", cli, **write))
    else:
        bash = {
            "tool_name": "Bash",
            "tool_input": {"command": "cat README && scripts/deploy.sh --env staging"},
        }
        send(cli, host, recorded(fixtures, "PostToolUse", cli, **bash))
    stop = send(
        cli, host, recorded(fixtures, "Stop", cli, last_assistant_message=f"Split per {commits['id']}.")
    )
    assert stop.out == ""  # a Stop hook prints nothing (anything else could block the agent)
    after = {m["id"]: m["strength"] for m in cli.memories()}
    for used in (checks, deploy, commits):
        assert after[used["id"]] > before[used["id"]], used
    assert after[idle["id"]] == before[idle["id"]]  # shown, not used
    log = paths.workspace_paths(cli.home, str(cli.workspace)).evidence
    signals = sorted(
        json.loads(line)["details"]["signal"]
        for line in log.read_text().splitlines()
        if json.loads(line)["type"] == "memory_used"
    )
    assert signals == ["cited_id", "rare_term", "rare_term"]
