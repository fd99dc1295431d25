"""Hot session state (docs/decisions.md#hot-session-state, docs/decisions.md#hot-session-state-tool-events,
docs/decisions.md#hot-session-state-errors, docs/decisions.md#hot-session-state-recent-decisions), with
the reference's seed cases 1-7 and 81-85 (docs/decisions.md#parity-with-the-reference), and
docs/decisions.md#d4 and docs/decisions.md#d12."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import msgspec
import pytest
from msgspec.structs import replace

from domain.enums import DecisionSource, ErrorCategory, ErrorStatus, FileAction, MemorySource, MemoryType
from domain.model import ActiveFile, OpenError, SessionDecision, SessionState
from domain.session import (
    HEADER,
    ToolEvent,
    add_pending_memories,
    add_recent_decision,
    classify_command,
    clear_errors_for_successful_command,
    display_path,
    empty_session,
    error_fingerprint,
    extract_errors_from_bash,
    extract_first_path,
    grep_paths,
    mark_errors_maybe_fixed_for_file,
    normalize_session,
    observe_tool,
    paths_match,
    relative_path,
    remove_pending_memories,
    render_hot_state,
    resolve_exit_code,
    touch_active_file,
    upsert_open_error,
)
from domain.text import memory_key
from domain.timeutil import iso_from_ms
from tests.support.builders import memory

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
ROOT = "/repo"

#: A pending explicit memory of confidence 1, made at T0.
pending_memory = partial(memory, id="m", source=MemorySource.EXPLICIT, confidence=1, at=T0)


def error(
    category: ErrorCategory = ErrorCategory.LINT,
    summary: str = "eslint error in src/a.ts",
    *,
    file: str | None = "src/a.ts",
    command: str | None = "npm run lint",
    seen: int = T0,
    status: ErrorStatus = ErrorStatus.OPEN,
) -> OpenError:
    fp = error_fingerprint(category, summary)
    return OpenError(
        id=f"err_{fp}",
        category=category,
        summary=summary,
        command=command,
        file=file,
        fingerprint=fp,
        status=status,
        first_seen=seen,
        last_seen=seen,
        seen_count=1,
    )


def read(path: str) -> ToolEvent:
    return ToolEvent(tool="read", args={"filePath": path})


def bash(command: str, output: str, exit_code: int | None) -> ToolEvent:
    return ToolEvent(tool="bash", args={"command": command}, output=output, exit_code=exit_code)


def section(render: str, header: str) -> list[str]:
    """The ``- `` lines under ``header`` in a render."""
    lines = render.split("\n")
    if header not in lines:
        return []
    out: list[str] = []
    for line in lines[lines.index(header) + 1 :]:
        if not line.startswith("- "):
            break
        out.append(line)
    return out


# ---------------------------------------------------------------------------------------------
# extractErrorsFromBash, seed cases 1-7
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "output", "category"),
    [
        (
            "cd /repo && rtk git log --oneline -5",
            "4832b38 fix: silence memory load errors in working-memory",
            None,
        ),
        ("rtk cat ~/.local/share/opencode-working-memory/session.json", '"openErrors": []', None),
        ("npm run typecheck", "src/index.ts(10,3): error TS2345: bad type", ErrorCategory.TYPECHECK),
        ("node script.js", "Error: Cannot find module './missing'", ErrorCategory.RUNTIME),
        ("some-unknown-command", "this output has errors in it but no clear signal", None),
        ("node script.js", "TypeError: Cannot read property 'x' of undefined", ErrorCategory.RUNTIME),
        (
            "cat some-file.txt",
            "src/index.ts(10,3): error TS2345: Argument of type 'string' is not assignable",
            ErrorCategory.RUNTIME,
        ),
    ],
    ids=[f"case{i}" for i in range(1, 8)],
)
def test_extract_errors_from_bash_seed_cases(
    command: str, output: str, category: ErrorCategory | None
) -> None:
    errors = extract_errors_from_bash(command, output, T0)
    if category is None:
        assert errors == ()
    else:
        assert len(errors) == 1
        assert errors[0].category == category


def test_extracted_error_shape() -> None:
    (err,) = extract_errors_from_bash("npm run typecheck", "src/index.ts(10,3): error TS2345: bad type", T0)
    assert err.summary == "src/index.ts(10,3): error TS2345: bad type"
    assert err.command == "npm run typecheck"
    assert err.file == "src/index.ts"
    assert err.status == ErrorStatus.OPEN
    assert (err.first_seen, err.last_seen, err.seen_count) == (T0, T0, 1)
    assert len(err.fingerprint) == 12
    assert err.id == f"err_{err.fingerprint}"
    assert err.fingerprint == error_fingerprint(ErrorCategory.TYPECHECK, err.summary)


def test_error_summary_joins_first_five_lines_and_cuts_at_280() -> None:
    output = "\n".join(f"Error: line {i} " + "x" * 70 for i in range(8))
    (err,) = extract_errors_from_bash("node run.js", output, T0)
    assert err.summary == " ".join(output.split("\n")[:5])[:280]
    assert len(err.summary) == 280


def test_loose_error_words_only_count_for_known_commands() -> None:
    assert extract_errors_from_bash("npm run build", "build failed", T0)[0].category == ErrorCategory.BUILD
    assert extract_errors_from_bash("./deploy.sh", "build failed", T0) == ()
    # word boundaries are ASCII: "errors" and "failedness" are not the words
    assert extract_errors_from_bash("npm test", "3 errors\nfailedness", T0) == ()


def test_strong_signals_match_anywhere_and_case_insensitively() -> None:
    for out in ("results ts2024 ok", "npm ERR! code 1", "Traceback (most recent call last):", "PANIC: x"):
        assert len(extract_errors_from_bash("./run", out, T0)) == 1, out


def test_fingerprint_ignores_case_and_whitespace_runs() -> None:
    assert error_fingerprint(ErrorCategory.TEST, "Error:  A\tB") == error_fingerprint(
        ErrorCategory.TEST, "error: a b"
    )
    assert error_fingerprint(ErrorCategory.TEST, "x") != error_fingerprint(ErrorCategory.LINT, "x")


# ---------------------------------------------------------------------------------------------
# extract_first_path, seed case 82 (docs/decisions.md#hot-session-state-tool-events)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("src/index.tsx(1,1): error TS1005: x", "src/index.tsx"),
        ("TypeError: boom in package.json", "package.json"),
        ("see components/App.jsx:3", "components/App.jsx"),
        ("src/index.ts(10,3): error", "src/index.ts"),
        ("FAIL tests/a.test.ts:10:5", "tests/a.test.ts"),
        ("in ./lib/x.js line 2", "./lib/x.js"),
        ("main.rs and main.go", "main.rs"),
        ("no path here", None),
    ],
)
def test_extract_first_path_keeps_the_whole_extension_fixing_q9_tsx_json_truncation(
    text: str, path: str | None
) -> None:
    """The reference returns ``src/index.ts`` and ``package.js`` for the first two rows."""
    assert extract_first_path(text) == path


def test_tsx_error_is_marked_maybe_fixed_when_its_file_is_edited_fixing_q9() -> None:
    """With the truncated ``src/index.ts`` the reference never matches the edited .tsx file."""
    state = empty_session("s", T0)
    state = observe_tool(state, bash("npm run typecheck", "src/index.tsx(1,1): error TS1005: x", 2), ROOT, T0)
    state = observe_tool(
        state, ToolEvent(tool="edit", args={"filePath": "/repo/src/index.tsx"}), ROOT, T0 + 1
    )
    assert [e.status for e in state.open_errors] == [ErrorStatus.MAYBE_FIXED]


# ---------------------------------------------------------------------------------------------
# classify_command, seed case 83 (docs/decisions.md#hot-session-state-tool-events)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "category"),
    [
        ("tsc --noEmit", ErrorCategory.TYPECHECK),
        ("npm run typecheck", ErrorCategory.TYPECHECK),
        ("npx tsc -p .", ErrorCategory.TYPECHECK),
        ("npm test", ErrorCategory.TEST),
        ("npm run test", ErrorCategory.TEST),
        ("npm run test:unit", ErrorCategory.TEST),
        ("pnpm test", ErrorCategory.TEST),
        ("yarn test", ErrorCategory.TEST),
        ("bun test", ErrorCategory.TEST),
        ("pytest -q", ErrorCategory.TEST),
        ("python -m pytest tests", ErrorCategory.TEST),
        ("uv run pytest", ErrorCategory.TEST),
        ("go test ./...", ErrorCategory.TEST),
        ("cargo test", ErrorCategory.TEST),
        ("npx vitest run", ErrorCategory.TEST),
        ("jest", ErrorCategory.TEST),
        ("./node_modules/.bin/jest --ci", ErrorCategory.TEST),
        ("CI=1 npm test", ErrorCategory.TEST),
        ("npm run lint", ErrorCategory.LINT),
        ("biome check", ErrorCategory.LINT),
        ("eslint .", ErrorCategory.LINT),
        ("pnpm lint", ErrorCategory.LINT),
        ("vite build", ErrorCategory.BUILD),
        ("npm run build", ErrorCategory.BUILD),
        ("webpack", ErrorCategory.BUILD),
        ("tsup", ErrorCategory.BUILD),
        ("cargo build --release", ErrorCategory.BUILD),
        ("cd x && npm test", ErrorCategory.TEST),
        ("npm test 2>&1 | tail -20", ErrorCategory.TEST),
        # reference priority across a compound command: typecheck before test before lint before build
        ("npm run build && npm run lint && npm test && tsc", ErrorCategory.TYPECHECK),
        ("make", None),
        ('git commit -m "fix tests"', None),
        ("vite", None),
        ("npm install", None),
        ("", None),
    ],
)
def test_classify_command_case_83(command: str, category: ErrorCategory | None) -> None:
    assert classify_command(command) == category


@pytest.mark.parametrize("command", ["cat test.txt", "latest-test-runner", "echo build", "ls lint/"])
def test_classify_command_reads_the_command_word_not_substrings_fixing_q9(command: str) -> None:
    """Seed case 83: the reference classifies ``cat test.txt`` and ``latest-test-runner`` as
    test runs because ``\\btest\\b`` matches anywhere in the command line."""
    assert classify_command(command) is None


def test_successful_cat_of_a_test_file_does_not_clear_test_errors_fixing_q9() -> None:
    state = upsert_open_error(empty_session("s", T0), error(ErrorCategory.TEST, "Error: expected 1"), T0)
    assert clear_errors_for_successful_command(state, "cat test.txt") is state


# ---------------------------------------------------------------------------------------------
# Exit-code resolution (docs/decisions.md#hot-session-state-tool-events)
# ---------------------------------------------------------------------------------------------


def test_resolve_exit_code_candidate_order() -> None:
    meta = {"exitCode": 3, "exit_code": 4, "code": 5, "status": 6}
    assert resolve_exit_code(ToolEvent(tool="bash", exit_code=2, metadata=meta)) == 2
    assert resolve_exit_code(ToolEvent(tool="bash", metadata=meta)) == 3
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"exit_code": 4, "code": 5})) == 4
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"code": 5, "status": 6})) == 5
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"status": 6})) == 6


def test_resolve_exit_code_accepts_numeric_strings_and_skips_other_values() -> None:
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"exitCode": "-1"})) == -1
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"exitCode": "0"})) == 0
    skipped = {"exitCode": "1a", "exit_code": True, "code": None, "status": "ok"}
    assert resolve_exit_code(ToolEvent(tool="bash", metadata=skipped)) is None
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"exitCode": " 1", "code": 7})) == 7
    assert resolve_exit_code(ToolEvent(tool="bash", metadata={"exitCode": 1.0})) == 1


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("done\nexit code: 2", 2),
        ("Exit Code=0", 0),
        ("exitCode:-3", -3),
        ("STATUS: 1", 1),
        ("exit code 2", None),
        ("all good", None),
    ],
)
def test_resolve_exit_code_falls_back_to_the_output_text(output: str, code: int | None) -> None:
    assert resolve_exit_code(ToolEvent(tool="bash", output=output)) == code


def test_bash_without_exit_code_neither_extracts_nor_clears_10_9_item_1() -> None:
    state = upsert_open_error(empty_session("s", T0), error(ErrorCategory.TYPECHECK, "TS1 old"), T0)
    after = observe_tool(
        state, bash("npm run typecheck", "src/index.ts(10,3): error TS2345: bad type", None), ROOT, T0 + 1
    )
    assert after.open_errors == state.open_errors
    fresh = observe_tool(
        empty_session("s", T0),
        bash("npm run typecheck", "src/index.ts(10,3): error TS2345: bad type", None),
        ROOT,
        T0,
    )
    assert fresh.open_errors == ()


def test_exit_code_zero_clears_and_one_creates_typecheck_errors_10_9_item_2() -> None:
    failing = bash("npm run typecheck", "src/index.ts(10,3): error TS2345: bad type", 1)
    state = observe_tool(empty_session("s", T0), failing, ROOT, T0)
    assert [e.category for e in state.open_errors] == [ErrorCategory.TYPECHECK]
    state = upsert_open_error(state, error(ErrorCategory.LINT), T0)
    cleared = observe_tool(state, bash("npm run typecheck", "", 0), ROOT, T0 + 1)
    assert [e.category for e in cleared.open_errors] == [ErrorCategory.LINT]


def test_bash_exit_code_from_metadata_and_output() -> None:
    out = "src/index.ts(10,3): error TS2345: bad type"
    by_meta = ToolEvent(tool="bash", args={"command": "tsc"}, output=out, metadata={"exit_code": "2"})
    assert len(observe_tool(empty_session("s", T0), by_meta, ROOT, T0).open_errors) == 1
    by_text = bash("tsc", out + "\nexit code: 2", None)
    assert len(observe_tool(empty_session("s", T0), by_text, ROOT, T0).open_errors) == 1


def test_bash_without_a_command_changes_no_errors() -> None:
    state = upsert_open_error(empty_session("s", T0), error(), T0)
    no_command = ToolEvent(tool="bash", args={}, output="Error: x", exit_code=1)
    assert observe_tool(state, no_command, ROOT, T0).open_errors == state.open_errors
    not_a_string = ToolEvent(tool="bash", args={"command": ["npm", "run", "lint"]}, exit_code=0)
    assert observe_tool(state, not_a_string, ROOT, T0).open_errors == state.open_errors


def test_other_tools_and_missing_file_paths_are_ignored() -> None:
    state = empty_session("s", T0)
    for event in (
        ToolEvent(tool="patch", args={"filePath": "/repo/a.ts"}),
        ToolEvent(tool="multiedit", args={"filePath": "/repo/a.ts"}),
        ToolEvent(tool="read", args={"path": "/repo/a.ts"}),
        ToolEvent(tool="read", args={"filePath": 7}),
        ToolEvent(tool="Read", args={"filePath": "/repo/a.ts"}),
    ):
        after = observe_tool(state, event, ROOT, T0 + 5)
        assert after.active_files == ()
        assert after.updated_at == iso_from_ms(T0 + 5)


def test_tool_event_is_a_plain_value_d12() -> None:
    event = msgspec.convert(
        {"tool": "bash", "args": {"command": "npm test"}, "output": "x", "exit_code": 1}, ToolEvent
    )
    assert event == bash("npm test", "x", 1)
    assert ToolEvent(tool="read").args == {}


# ---------------------------------------------------------------------------------------------
# Active files, seed case 84 (grep) (docs/decisions.md#hot-session-state-tool-events)
# ---------------------------------------------------------------------------------------------


def test_grep_output_paths_case_84() -> None:
    output = (
        "/repo/src/a.ts:\n  Line 3: foo\n/repo/docs/readme.md:12: bar\n"
        "relative/x.ts:1: no\n/repo/src/a.ts:5: again"
    )
    assert grep_paths(output) == ("/repo/src/a.ts", "/repo/docs/readme.md")
    state = observe_tool(empty_session("s", T0), ToolEvent(tool="grep", output=output), ROOT, T0)
    assert [(f.path, f.action, f.count) for f in state.active_files] == [
        ("/repo/src/a.ts", FileAction.GREP, 1),
        ("/repo/docs/readme.md", FileAction.GREP, 1),
    ]


def test_grep_paths_take_the_first_ten_and_treat_cr_as_a_line_break() -> None:
    output = "\n".join(f"/r/f{i}.py:1: x" for i in range(15))
    assert grep_paths(output) == tuple(f"/r/f{i}.py" for i in range(10))
    assert grep_paths("noise\r/r/a.yaml: k") == ("/r/a.yaml",)
    assert grep_paths("/r/a.txt: k\n/r/b.toml:x") == ("/r/b.toml",)


def test_touch_counts_and_never_lowers_the_action_weight() -> None:
    state = touch_active_file(empty_session("s", T0), "/repo/a.ts", FileAction.READ, T0)
    state = touch_active_file(state, "/repo/a.ts", FileAction.EDIT, T0 + 1)
    assert state.active_files[0] == ActiveFile(
        path="/repo/a.ts", action=FileAction.EDIT, count=2, last_seen=T0 + 1
    )
    state = touch_active_file(state, "/repo/a.ts", FileAction.WRITE, T0 + 2)
    state = touch_active_file(state, "/repo/a.ts", FileAction.READ, T0 + 3)
    assert state.active_files[0] == ActiveFile(
        path="/repo/a.ts", action=FileAction.EDIT, count=4, last_seen=T0 + 3
    )
    grep_then_read = touch_active_file(
        touch_active_file(empty_session("s", T0), "/b", FileAction.READ, T0), "/b", FileAction.GREP, T0
    )
    assert grep_then_read.active_files[0].action == FileAction.GREP


def test_rank_by_weight_plus_three_per_touch_then_recency() -> None:
    state = empty_session("s", T0)
    state = touch_active_file(state, "/r/old", FileAction.READ, T0)
    state = touch_active_file(state, "/r/new", FileAction.READ, T0 + 1)
    assert [f.path for f in state.active_files] == ["/r/new", "/r/old"]
    # four reads score 20 + 3*4 = 32, one grep scores 30 + 3 = 33
    for _ in range(3):
        state = touch_active_file(state, "/r/old", FileAction.READ, T0)
    state = touch_active_file(state, "/r/grep", FileAction.GREP, T0)
    assert [f.path for f in state.active_files] == ["/r/grep", "/r/old", "/r/new"]


def test_at_most_twenty_files_are_stored() -> None:
    state = empty_session("s", T0)
    for i in range(25):
        state = touch_active_file(state, f"/r/{i}.ts", FileAction.READ, T0 + i)
    assert len(state.active_files) == 20
    assert {f.path for f in state.active_files} == {f"/r/{i}.ts" for i in range(5, 25)}


def test_edit_and_write_mark_errors_in_that_file_maybe_fixed() -> None:
    state = upsert_open_error(empty_session("s", T0), error(), T0)
    read_only = observe_tool(state, read("/repo/src/a.ts"), ROOT, T0 + 1)
    assert read_only.open_errors[0].status == ErrorStatus.OPEN
    for tool in ("edit", "write"):
        after = observe_tool(state, ToolEvent(tool=tool, args={"filePath": "/repo/src/a.ts"}), ROOT, T0 + 1)
        assert after.open_errors[0].status == ErrorStatus.MAYBE_FIXED


# ---------------------------------------------------------------------------------------------
# Errors: upsert, maybe fixed, clear (docs/decisions.md#hot-session-state-errors)
# ---------------------------------------------------------------------------------------------


def test_upsert_same_fingerprint_twice_keeps_one_error() -> None:
    state = upsert_open_error(empty_session("s", T0), error(), T0)
    again = replace(error(), command=None, file=None, summary="eslint error in src/a.ts")
    state = upsert_open_error(state, again, T0 + 10)
    (err,) = state.open_errors
    assert err.seen_count == 2
    assert err.status == ErrorStatus.OPEN
    assert (err.first_seen, err.last_seen) == (T0, T0 + 10)
    assert (err.command, err.file) == ("npm run lint", "src/a.ts")


def test_upsert_reopens_a_maybe_fixed_error() -> None:
    state = upsert_open_error(empty_session("s", T0), error(), T0)
    state = mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0 + 1)
    state = upsert_open_error(state, error(), T0 + 2)
    assert state.open_errors[0].status == ErrorStatus.OPEN
    assert state.open_errors[0].seen_count == 2


def test_upsert_puts_new_errors_first_and_keeps_five() -> None:
    state = empty_session("s", T0)
    for i in range(7):
        state = upsert_open_error(state, error(summary=f"Error: {i}", seen=T0), T0)
    assert [e.summary for e in state.open_errors] == [f"Error: {i}" for i in (6, 5, 4, 3, 2)]
    assert state.open_errors[0].seen_count == 1


def test_maybe_fixed_keeps_last_seen_and_sorts_after_open_errors_fixing_q8() -> None:
    """docs/decisions.md#hot-session-state-errors: the reference bumps ``lastSeen`` when marking, so a
    probably-fixed error jumps to the top of the render, unmarked."""
    state = empty_session("s", T0)
    state = upsert_open_error(state, error(), T0)
    state = upsert_open_error(state, error(ErrorCategory.BUILD, "build failed", file=None), T0 + 1)
    state = mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0 + 50)
    lint = next(e for e in state.open_errors if e.category == ErrorCategory.LINT)
    assert lint.status == ErrorStatus.MAYBE_FIXED
    assert lint.last_seen == T0
    assert [e.category for e in state.open_errors] == [ErrorCategory.BUILD, ErrorCategory.LINT]
    assert section(render_hot_state(state, ROOT), "open_errors:") == [
        "- [build] build failed",
        "- [lint] (maybe fixed) eslint error in src/a.ts",
    ]


def test_open_errors_come_before_newer_maybe_fixed_ones_fixing_q8() -> None:
    state = empty_session("s", T0)
    state = upsert_open_error(state, error(ErrorCategory.BUILD, "build failed", file=None), T0)
    state = upsert_open_error(state, error(), T0 + 5)
    state = mark_errors_maybe_fixed_for_file(state, "src/a.ts", ROOT, T0 + 6)
    assert [e.category for e in state.open_errors] == [ErrorCategory.BUILD, ErrorCategory.LINT]


def test_storage_cap_prefers_open_errors_over_maybe_fixed() -> None:
    state = upsert_open_error(empty_session("s", T0), error(), T0 + 100)
    state = mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0 + 100)
    for i in range(5):
        state = upsert_open_error(state, error(ErrorCategory.TEST, f"Error: {i}", file=None), T0 + i)
    assert [e.status for e in state.open_errors] == [ErrorStatus.OPEN] * 5


@pytest.mark.parametrize(
    ("error_file", "touched", "root", "marked"),
    [
        ("src/a.ts", "/repo/src/a.ts", ROOT, True),
        ("./src/a.ts", "/repo/src/a.ts", ROOT, True),
        ("src\\a.ts", "src/a.ts", "", True),
        ("/repo/src/a.ts", "src/a.ts", ROOT, True),
        ("a.ts", "/elsewhere/a.ts", ROOT, True),
        ("src/b.ts", "/repo/src/a.ts", ROOT, False),
        ("rc/a.ts", "/repo/src/a.ts", ROOT, False),
    ],
)
def test_mark_maybe_fixed_path_matching(error_file: str, touched: str, root: str, marked: bool) -> None:
    state = upsert_open_error(empty_session("s", T0), error(file=error_file), T0)
    after = mark_errors_maybe_fixed_for_file(state, touched, root, T0 + 1)
    assert (after.open_errors[0].status == ErrorStatus.MAYBE_FIXED) is marked
    if not marked:
        assert after is state


def test_mark_maybe_fixed_skips_errors_without_a_file() -> None:
    state = upsert_open_error(empty_session("s", T0), error(file=None), T0)
    assert mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0) is state


def test_paths_match() -> None:
    assert paths_match("src/a.ts", "/repo/src/a.ts")
    assert paths_match("/repo/src/a.ts", "src/a.ts")
    assert not paths_match("a.ts", "/repo/ba.ts")


def test_clear_removes_every_error_of_the_category_open_or_maybe_fixed() -> None:
    state = empty_session("s", T0)
    state = upsert_open_error(state, error(), T0)
    state = upsert_open_error(
        state, error(summary="eslint warning? no: error in src/b.ts", file="src/b.ts"), T0
    )
    state = mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0)
    state = upsert_open_error(state, error(ErrorCategory.RUNTIME, "TypeError: x", file=None), T0)
    cleared = clear_errors_for_successful_command(state, "npx eslint .")
    assert [e.category for e in cleared.open_errors] == [ErrorCategory.RUNTIME]


def test_clear_with_an_unclassified_command_changes_nothing() -> None:
    state = upsert_open_error(empty_session("s", T0), error(ErrorCategory.RUNTIME, "TypeError: x"), T0)
    assert clear_errors_for_successful_command(state, "node x.js") is state


# ---------------------------------------------------------------------------------------------
# Recent decisions, seed case 85 (docs/decisions.md#hot-session-state-recent-decisions)
# ---------------------------------------------------------------------------------------------


def test_recent_decisions_case_85() -> None:
    state = empty_session("s", T0)
    for i in range(10):
        state = add_recent_decision(state, f"decision {i}", DecisionSource.USER, T0 + i)
    assert [d.text for d in state.recent_decisions] == [f"decision {i}" for i in range(2, 10)]
    state = add_recent_decision(state, "DECISION  3", DecisionSource.ASSISTANT, T0 + 100, rationale="r")
    assert [d.text for d in state.recent_decisions] == [f"decision {i}" for i in range(2, 10)]
    three = state.recent_decisions[1]
    assert (three.text, three.source, three.rationale, three.created_at) == (
        "decision 3",
        DecisionSource.ASSISTANT,
        "r",
        T0 + 100,
    )


def test_decision_refresh_keeps_the_old_rationale_when_none_is_given() -> None:
    state = add_recent_decision(empty_session("s", T0), "Use pnpm", DecisionSource.USER, T0, rationale="fast")
    state = add_recent_decision(state, " use\tPNPM ", DecisionSource.COMPACTION, T0 + 1)
    (decision,) = state.recent_decisions
    assert (decision.text, decision.rationale, decision.source) == (
        "Use pnpm",
        "fast",
        DecisionSource.COMPACTION,
    )


def test_decision_ids_are_deterministic() -> None:
    first = add_recent_decision(empty_session("s", T0), "Use pnpm", DecisionSource.USER, T0)
    second = add_recent_decision(empty_session("s", T0), "Use pnpm", DecisionSource.USER, T0)
    assert first.recent_decisions[0].id == second.recent_decisions[0].id
    assert first.recent_decisions[0].id.startswith(f"decision_{T0}_")


def test_normalize_keeps_the_newest_eight_decisions_fixing_q7() -> None:
    """docs/decisions.md#hot-session-state-recent-decisions: the reference's normalisation keeps the
    *first* 8 while adding keeps the last 8."""
    decisions = tuple(
        SessionDecision(id=f"d{i}", text=f"decision {i}", source=DecisionSource.USER, created_at=T0 + i)
        for i in range(10)
    )
    state = normalize_session(replace(empty_session("s", T0), recent_decisions=decisions), T0)
    assert [d.id for d in state.recent_decisions] == [f"d{i}" for i in range(2, 10)]


# ---------------------------------------------------------------------------------------------
# Pending memories and normalisation
# ---------------------------------------------------------------------------------------------


def test_pending_memories_dedupe_first_wins_and_keep_last_twelve() -> None:
    state = add_pending_memories(
        empty_session("s", T0),
        [
            pending_memory("Always use pnpm", type=MemoryType.FEEDBACK, id="first"),
            pending_memory("always, use PNPM!", type=MemoryType.FEEDBACK, id="dup"),
        ],
    )
    assert [m.id for m in state.pending_memories] == ["first"]
    state = add_pending_memories(
        state, [pending_memory(f"Project fact {i}", type=MemoryType.PROJECT, id=f"p{i}") for i in range(14)]
    )
    assert [m.id for m in state.pending_memories] == [f"p{i}" for i in range(2, 14)]


def test_pending_memory_key_includes_the_type() -> None:
    state = add_pending_memories(
        empty_session("s", T0),
        [
            pending_memory("Use pnpm always", type=MemoryType.FEEDBACK),
            pending_memory("Use pnpm always", type=MemoryType.DECISION),
        ],
    )
    assert len(state.pending_memories) == 2


def test_remove_pending_memories_by_memory_key() -> None:
    a, b = (
        pending_memory("Use pnpm always", type=MemoryType.FEEDBACK, id="a"),
        pending_memory("Ship on Fridays", type=MemoryType.DECISION, id="b"),
    )
    state = add_pending_memories(empty_session("s", T0), [a, b])
    after = remove_pending_memories(state, {memory_key("feedback", "use pnpm, always")})
    assert [m.id for m in after.pending_memories] == ["b"]
    assert remove_pending_memories(state, {"decision:nothing"}) is state


def test_normalize_applies_every_stored_limit() -> None:
    state = replace(
        empty_session("s", T0),
        active_files=tuple(
            ActiveFile(path=f"/r/{i}", action=FileAction.READ, count=1, last_seen=T0 + i) for i in range(25)
        ),
        open_errors=tuple(error(summary=f"Error: {i}", seen=T0 + i) for i in range(7)),
        pending_memories=tuple(
            pending_memory(f"Project fact {i % 15}", type=MemoryType.PROJECT, id=f"p{i}") for i in range(20)
        ),
    )
    norm = normalize_session(state, T0 + 99)
    assert norm.updated_at == iso_from_ms(T0 + 99)
    assert len(norm.active_files) == 20
    assert norm.active_files[0].path == "/r/24"
    assert [e.summary for e in norm.open_errors] == [f"Error: {i}" for i in (6, 5, 4, 3, 2)]
    assert [m.id for m in norm.pending_memories] == [f"p{i}" for i in range(3, 15)]
    assert normalize_session(norm, T0 + 99) == norm


def test_turn_is_left_at_zero_q13() -> None:
    """docs/decisions.md#hot-session-state: ``turn`` is never incremented; workmem documents it as
    always 0 in session.py."""
    state = empty_session("s", T0)
    for event in (read("/repo/a.ts"), bash("npm test", "Error: x", 1)):
        state = observe_tool(state, event, ROOT, T0)
    state = add_recent_decision(state, "Use pnpm", DecisionSource.USER, T0)
    assert normalize_session(state, T0).turn == 0


def test_empty_session() -> None:
    state = empty_session("ses_1", T0, parent_session_id="ses_0")
    assert state == SessionState(session_id="ses_1", updated_at=iso_from_ms(T0), parent_session_id="ses_0")
    assert render_hot_state(state, ROOT) == ""
    encoded = msgspec.json.decode(msgspec.json.encode(state))
    assert encoded["sessionID"] == "ses_1"


# ---------------------------------------------------------------------------------------------
# Render, seed case 81 (docs/decisions.md#hot-session-state)
# ---------------------------------------------------------------------------------------------


def worked_example_state() -> SessionState:
    """The reference's worked example, every step at the same instant (the reference's ties depend on it)."""
    state = empty_session("s", T0)
    for i in range(10):
        state = observe_tool(state, read(f"/repo/src/f{i}.ts"), ROOT, T0)
    state = observe_tool(state, ToolEvent(tool="edit", args={"filePath": "/repo/src/f3.ts"}), ROOT, T0)
    state = observe_tool(state, read("/repo/src/f3.ts"), ROOT, T0)
    state = observe_tool(state, ToolEvent(tool="write", args={"filePath": "/other/x.ts"}), ROOT, T0)
    state = observe_tool(state, read("/repo"), ROOT, T0)
    for command, output in (
        ("npm run typecheck", "src/index.tsx(1,1): error TS1005: x"),
        ("npm test", "FAIL tests/a.test.ts\nError: expected 1"),
        ("node x.js", "TypeError: boom in package.json"),
        ("npm run lint", "eslint error in src/a.ts"),
        ("npm run build", "build failed"),
    ):
        for err in extract_errors_from_bash(command, output, T0):
            state = upsert_open_error(state, err, T0)
    state = mark_errors_maybe_fixed_for_file(state, "/repo/src/a.ts", ROOT, T0)
    state = add_recent_decision(state, "We decided to use pnpm", DecisionSource.USER, T0)
    state = add_recent_decision(state, "we  decided to use PNPM", DecisionSource.USER, T0)
    return add_pending_memories(
        state,
        [
            pending_memory("password: hunter22 is the db login", type=MemoryType.FEEDBACK),
            pending_memory("we decided to use pnpm workspaces", type=MemoryType.DECISION),
        ],
    )


#: The reference's worked example with workmem's fixes: the lint error was only marked maybe fixed, so
#: it no longer jumps ahead (docs/decisions.md#hot-session-state-errors) and falls out of the top 3
#: behind the open errors; the pending secret is redacted (docs/decisions.md#d4).
WORKED_EXAMPLE = """\
Hot session state (current session):
active_files:
- src/f3.ts (edit, 3x)
- /other/x.ts (write, 1x)
- src/f0.ts (read, 1x)
- src/f1.ts (read, 1x)
- src/f2.ts (read, 1x)
- src/f4.ts (read, 1x)
- src/f5.ts (read, 1x)
- src/f6.ts (read, 1x)
open_errors:
- [build] build failed
- [runtime] TypeError: boom in package.json
- [test] Error: expected 1
recent_decisions:
- We decided to use pnpm
pending_memories:
- [feedback] password: [REDACTED] is the db login
- [decision] we decided to use pnpm workspaces"""


def test_worked_example_5_8_with_q8_ordering_and_d4_redaction() -> None:
    state = worked_example_state()
    assert render_hot_state(state, ROOT) == WORKED_EXAMPLE
    assert "hunter22" not in msgspec.json.encode(state).decode()
    by_category = {e.category: e for e in state.open_errors}
    assert by_category[ErrorCategory.TYPECHECK].file == "src/index.tsx"
    assert by_category[ErrorCategory.RUNTIME].file == "package.json"
    assert by_category[ErrorCategory.LINT].status == ErrorStatus.MAYBE_FIXED


@pytest.mark.parametrize(
    ("path", "action", "line"),
    [
        ("/repo/", "edit", "- . (edit, 1x)"),
        ("/repo", "read", "- . (read, 1x)"),
        ("/repo2/x.ts", "read", "- ../repo2/x.ts (read, 1x)"),
        ("/repo/src/a.ts", "write", "- src/a.ts (write, 1x)"),
        ("/elsewhere/a.ts", "read", "- /elsewhere/a.ts (read, 1x)"),
    ],
)
def test_render_display_paths_case_81(path: str, action: str, line: str) -> None:
    state = observe_tool(empty_session("s", T0), ToolEvent(tool=action, args={"filePath": path}), ROOT, T0)
    assert render_hot_state(state, ROOT) == f"{HEADER}\nactive_files:\n{line}"


def test_display_path_and_relative_path() -> None:
    assert display_path("", "/repo/a.ts") == "/repo/a.ts"
    assert display_path("/repo", "/repo/./src//a.ts") == "src/a.ts"
    assert display_path("repo", "repo/x") == "x"
    assert relative_path("/a/b", "/a/c/d") == "../c/d"
    assert relative_path("/a/b/", "/a/b") == ""
    assert relative_path("/a", "b") is None
    assert relative_path("../a", "b") is None
    assert relative_path("x", "x/../../y") == "../../y"


def test_render_leaves_out_empty_sections_and_has_no_blank_lines() -> None:
    state = add_recent_decision(empty_session("s", T0), "Use pnpm", DecisionSource.USER, T0)
    assert render_hot_state(state, ROOT) == f"{HEADER}\nrecent_decisions:\n- Use pnpm"
    state = add_pending_memories(
        empty_session("s", T0), [pending_memory("Docs live at docs/", type=MemoryType.REFERENCE)]
    )
    assert render_hot_state(state, ROOT) == f"{HEADER}\npending_memories:\n- [reference] Docs live at docs/"


def test_render_shows_the_newest_six_distinct_pending_memories() -> None:
    entries = [pending_memory(f"Project fact {i}", type=MemoryType.PROJECT, id=f"p{i}") for i in range(9)]
    loaded = replace(empty_session("s", T0), pending_memories=(*entries, entries[0]))
    lines = section(render_hot_state(loaded, ROOT), "pending_memories:")
    assert lines == [f"- [project] Project fact {i}" for i in range(3, 9)]


def test_render_limits_files_errors_and_decisions() -> None:
    state = empty_session("s", T0)
    for i in range(12):
        state = touch_active_file(state, f"/repo/{i}.ts", FileAction.READ, T0 + i)
        state = upsert_open_error(state, error(summary=f"Error: {i}", file=None), T0 + i)
        state = add_recent_decision(state, f"d{i}", DecisionSource.USER, T0 + i)
    render = render_hot_state(state, ROOT)
    assert section(render, "active_files:") == [f"- {i}.ts (read, 1x)" for i in range(11, 3, -1)]
    assert section(render, "open_errors:") == [f"- [lint] Error: {i}" for i in (11, 10, 9)]
    assert section(render, "recent_decisions:") == [f"- d{i}" for i in range(4, 12)]


def test_render_is_cut_hard_at_700_characters() -> None:
    state = add_pending_memories(
        empty_session("s", T0),
        [pending_memory(f"{i} " + "long project fact " * 12, type=MemoryType.PROJECT) for i in range(6)],
    )
    full = "\n".join(
        [HEADER, "pending_memories:", *(f"- [project] {m.text}" for m in state.pending_memories)]
    )
    render = render_hot_state(state, ROOT)
    assert len(full) > 700
    assert render == full[:700]


# ---------------------------------------------------------------------------------------------
# Nothing unredacted in session state or in the rendered prompt (docs/decisions.md#d4)
# ---------------------------------------------------------------------------------------------


def test_error_summary_and_command_are_redacted_before_storage_d4() -> None:
    state = observe_tool(
        empty_session("s", T0),
        bash("PGPASSWORD=sushi npm test", "Error: login failed for password sushi", 1),
        ROOT,
        T0,
    )
    (err,) = state.open_errors
    assert err.summary == "Error: login failed for password [REDACTED]"
    assert err.command == "PGPASSWORD=[REDACTED] npm test"
    assert err.fingerprint == error_fingerprint(ErrorCategory.TEST, err.summary)


def test_decisions_and_pending_texts_are_redacted_before_storage_d4() -> None:
    state = add_recent_decision(
        empty_session("s", T0),
        "Use password: sushi for the db",
        DecisionSource.USER,
        T0,
        rationale="the db password is sushi",
    )
    state = add_pending_memories(
        state, [pending_memory("The db login password is sushi, remember it", type=MemoryType.FEEDBACK)]
    )
    (decision,) = state.recent_decisions
    assert (decision.text, decision.rationale) == (
        "Use password: [REDACTED] for the db",
        "the db password is [REDACTED]",
    )
    assert [m.text for m in state.pending_memories] == ["The db login password is [REDACTED], remember it"]
    assert "sushi" not in msgspec.json.encode(state).decode()
    assert "sushi" not in render_hot_state(state, ROOT)


def test_loaded_unredacted_state_is_cleaned_by_normalize_and_render_d4() -> None:
    loaded = replace(
        empty_session("s", T0),
        open_errors=(error(summary="Error: password: sushi", command="login --password=sushi"),),
        recent_decisions=(
            SessionDecision(
                id="d",
                text="password: sushi",
                rationale="token: sushi too",
                source=DecisionSource.USER,
                created_at=T0,
            ),
        ),
        pending_memories=(pending_memory("The secret is sushi here", type=MemoryType.PROJECT),),
    )
    assert render_hot_state(loaded, ROOT) == "\n".join(
        [
            HEADER,
            "open_errors:",
            "- [lint] Error: password: [REDACTED]",
            "recent_decisions:",
            "- password: [REDACTED]",
            "pending_memories:",
            "- [project] The secret is [REDACTED] here",
        ]
    )
    cleaned = normalize_session(loaded, T0)
    ((err,), (decision,), (pending,)) = (
        cleaned.open_errors,
        cleaned.recent_decisions,
        cleaned.pending_memories,
    )
    assert (err.summary, err.command) == ("Error: password: [REDACTED]", "login --password=[REDACTED]")
    assert (decision.text, decision.rationale) == ("password: [REDACTED]", "token: [REDACTED] too")
    assert pending.text == "The secret is [REDACTED] here"
    assert "sushi" not in msgspec.json.encode(cleaned).decode()


@pytest.mark.parametrize(
    "apply",
    [
        lambda s: observe_tool(s, bash("npm test", "Error: db password: sushi rejected", 1), ROOT, T0),
        lambda s: observe_tool(s, bash("mysql --password=sushi", "ERROR 1045", 1), ROOT, T0),
        lambda s: add_recent_decision(s, "Use password: sushi for staging", DecisionSource.USER, T0),
        lambda s: add_pending_memories(
            s, [pending_memory("password: sushi is the db login", type=MemoryType.FEEDBACK)]
        ),
    ],
    ids=["summary", "command", "decision", "pending"],
)
def test_password_never_reaches_state_or_render_d4(apply: Callable[[SessionState], SessionState]) -> None:
    state = normalize_session(apply(empty_session("s", T0)), T0)
    assert "sushi" not in msgspec.json.encode(state).decode()
    assert "sushi" not in render_hot_state(state, ROOT)


def test_render_keeps_each_item_on_one_line() -> None:
    """A stored text with a line break cannot forge a section of its own (the reference prints it raw)."""
    state = add_recent_decision(
        empty_session("s", T0), "Use pnpm\nopen_errors:\n- [lint] fake", DecisionSource.USER, T0
    )
    state = touch_active_file(state, "/repo/a\r\nb.ts", FileAction.READ, T0)
    render = render_hot_state(state, ROOT)
    assert render.split("\n") == [
        HEADER,
        "active_files:",
        "- a b.ts (read, 1x)",
        "recent_decisions:",
        "- Use pnpm open_errors: - [lint] fake",
    ]


def test_multi_line_secrets_in_bash_output_are_redacted_before_line_selection_d4() -> None:
    """The gate sees the whole output: a label at the end of one line and its value on the next
    (neither line holds a secret the gate would find on its own) is redacted before the error lines
    are picked."""
    (err,) = extract_errors_from_bash("node x.js", "Error: password:\nsushi TS1234\nError: second", T0)
    assert err.summary == "Error: password: [REDACTED] TS1234 Error: second"


def test_pem_body_line_with_an_error_signal_does_not_leak_d4() -> None:
    """A base64 body line that happens to contain ``TS1234`` is an error line on its own; the PEM block
    is redacted as a whole first."""
    output = (
        "Error: cannot load key\n-----BEGIN PRIVATE KEY-----\n"
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCTS1234AgEAAoIBAQC7\n-----END PRIVATE KEY-----"
    )
    (err,) = extract_errors_from_bash("node x.js", output, T0)
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in err.summary
