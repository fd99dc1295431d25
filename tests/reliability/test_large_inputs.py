"""Large inputs: every command finishes in under 2 s on a 50 MB input, scans bounded windows and
records what it skipped."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from domain.bounds import (
    MAX_COMPACTION_CANDIDATES,
    MAX_EXPLICIT_REQUESTS,
    Window,
    complete_lines,
    cut_at_whitespace,
    head_and_tail,
    message_window,
)
from domain.extraction import extract_explicit, parse_compaction_candidates
from domain.safety import preview, stored_text
from tests.reliability.corpus import failed_tool
from tests.support.cli import Cli, events

NOW = 1_777_626_000_000
SIZE = 50 * 1000 * 1000
WORDS = (
    "the a we use build test deploy config server client module value error fix always never prefer "
    "project team token password secret: key= Error: failed"
)


def prose(size: int, prefix: str = "", seed: int = 7) -> str:
    """``size`` characters of lines of random words (credential labels included, no memory trigger)."""
    rng = random.Random(seed)
    words = WORDS.split()
    line_count = size // 90 + 1
    lines = [prefix + " ".join(rng.choice(words) for _ in range(14)) for _ in range(2000)]
    return "\n".join(lines[i % 2000] for i in range(line_count)) + "\n"


@pytest.fixture(scope="module")
def big_prompt() -> str:
    return prose(SIZE) + "remember: always run the linter before pushing\n"


# ---- the pure bounds ------------------------------------------------------------------------------


def test_head_and_tail_keeps_short_text_whole_and_cuts_long_text_at_lines() -> None:
    assert head_and_tail("short", 10, 10).text == "short"
    text = "".join(f"line {i}\n" for i in range(10_000))
    window = head_and_tail(text, 100, 100)
    assert window.text.startswith("line 0\n") and window.text.endswith("line 9999\n")
    assert all(line.startswith("line ") for line in window.text.splitlines())
    assert window.skipped == len(text) - len(window.text) + 1  # the joining newline


def test_cut_at_whitespace_never_splits_a_token() -> None:
    token = "ghp_" + "A" * 40
    text = "x" * 95 + " " + token + " tail"
    assert cut_at_whitespace(text, 100) == "x" * 95 + " " + token
    assert cut_at_whitespace("short", 100) == "short"


def test_a_request_at_the_end_of_a_huge_message_is_found_and_the_gap_recorded(big_prompt: str) -> None:
    started = time.perf_counter()
    result = extract_explicit(big_prompt, NOW)
    assert time.perf_counter() - started < 2.0
    assert "always run the linter before pushing" in [e.text for e in result.entries]
    [skipped] = [e for e in result.events if e.reason_codes == ("input_window",)]
    assert skipped.details["skippedChars"] == message_window(big_prompt).skipped
    assert message_window(big_prompt).skipped > len(big_prompt) - 200_000


def test_requests_beyond_the_limit_are_counted_not_examined() -> None:
    text = "\n".join(f"remember: always keep rule number {i} in mind" for i in range(60))
    result = extract_explicit(text, NOW)
    assert len(result.entries) == MAX_EXPLICIT_REQUESTS
    [limit] = [e for e in result.events if e.reason_codes == ("request_limit",)]
    assert limit.details["skippedRequests"] == 60 - MAX_EXPLICIT_REQUESTS


def test_candidates_beyond_the_limit_are_counted_not_examined() -> None:
    lines = "\n".join(
        f"- [project] the service number {i} listens on its own port always" for i in range(150)
    )
    result = parse_compaction_candidates("Memory candidates:\n" + lines, NOW)
    examined = [e for e in result.events if e.reason_codes != ("candidate_limit",)]
    assert len(examined) == MAX_COMPACTION_CANDIDATES
    [limit] = [e for e in result.events if e.reason_codes == ("candidate_limit",)]
    assert limit.details == {"skippedCandidates": 50, "examinedCandidates": MAX_COMPACTION_CANDIDATES}


def test_a_candidate_block_deep_inside_a_huge_summary_is_found() -> None:
    summary = prose(SIZE // 5) + "Memory candidates:\n- [feedback] Always use pnpm for installs here\n"
    started = time.perf_counter()
    result = parse_compaction_candidates(summary, NOW)
    assert time.perf_counter() - started < 2.0
    assert [e.text for e in result.entries] == ["Always use pnpm for installs here"]


def test_previews_and_stored_texts_of_huge_texts_are_fast_and_redacted() -> None:
    text = "token: s3cr3tv4lu3 " + prose(SIZE // 5)
    started = time.perf_counter()
    assert preview(text, 40).startswith("token: [REDACTED]")
    assert stored_text(text).startswith("token: [REDACTED]")
    assert time.perf_counter() - started < 1.0


# ---- every command, 50 MB, under 2 s ------------------------------------------------------------------


def _timed(cli: Cli, *args: str, stdin: str | None = None) -> float:
    started = time.perf_counter()
    run = cli(*args, stdin=stdin)
    elapsed = time.perf_counter() - started
    assert run.code in (0, 3), run.err
    return elapsed


def test_every_command_finishes_in_under_two_seconds_on_50_mb(
    cli: Cli, tmp_path: Path, big_prompt: str
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("Memory candidates:\n" + prose(SIZE, "- [project] "))
    output = tmp_path / "output.txt"
    output.write_text(big_prompt)
    timings = {
        "message": _timed(cli, "message", "--session", "s1", "-", stdin=big_prompt),
        "compacted": _timed(cli, "compacted", "--session", "s1", str(summary)),
        "tool": _timed(cli, *failed_tool("bash", '{"command": "npm test"}', str(output))),
        "remember": _timed(cli, "remember", "-", stdin=big_prompt),
        "check": _timed(cli, "check", "-", stdin=big_prompt),
        "context": _timed(cli, "context", "--session", "s1"),
        "end-session": _timed(cli, "end-session", "--session", "s1"),
    }
    slow = {name: round(t, 2) for name, t in timings.items() if t >= 2.0}
    assert not slow, slow
    reasons = {r for e in events(cli) for r in e["reasonCodes"]}
    assert {"input_window", "candidate_limit"} <= reasons


# ---- smaller findings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Please fix the bug from now onwards if possible",
        "from now on, if possible.",
        "going forwards please, thanks!",
        "remember: if you can",
    ],
)
def test_a_bare_hedge_after_a_trigger_is_not_a_memory(text: str) -> None:
    result = extract_explicit(text, NOW)
    assert result.entries == ()
    assert [e.reason_codes for e in result.events] == [("hedge_only",)]


def test_a_real_rule_with_a_hedge_is_still_a_memory() -> None:
    result = extract_explicit("from now onwards use pnpm for installs if possible", NOW)
    assert [e.text for e in result.entries] == ["use pnpm for installs if possible"]


def test_list_json_prints_strengths_at_full_precision(cli: Cli) -> None:
    cli.ok("remember", "always use pnpm for installs")
    cli.at_ms(cli.now_ms + 3 * 86_400_000 + 12_345)
    [row] = cli.memories()
    text = cli.ok("list", "--json").out
    assert repr(row["strength"]) in text and len(repr(row["strength"]).split(".")[1]) > 6
    assert f"strength={row['strength']:.3f}" in cli.ok("list").out


def test_a_file_tail_keeps_only_whole_lines() -> None:
    assert complete_lines('{"a": 1}\n{"b": 2}\n', started_mid_file=False).text == '{"a": 1}\n{"b": 2}\n'
    window = complete_lines('tail of a line"}\n{"b": 2}\n', started_mid_file=True)
    assert window.text == '{"b": 2}\n' and window.skipped == len('tail of a line"}\n')
    assert complete_lines("no newline at all", started_mid_file=True) == Window("", skipped=17)
