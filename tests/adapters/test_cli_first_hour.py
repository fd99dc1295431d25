"""The first hour of a new user (issue 24): a store kept under an old sub-directory is found and
merged, pending requests are visible, diagnostics answer in words, and the command line behaves the
same everywhere (``--json``, unknown ids, mistyped commands)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adapters.old_stores import MERGED_MARKER
from tests.support.cli import Cli, one_line_error, option_strings, subcommands

DECISIONS = [f"Decision {i}: the module m{i} uses the approach variant {i} for its caches" for i in range(12)]


def _old_store(cli: Cli) -> Path:
    """Memories stored from ``project/src`` before ``project`` was a repository (their own store),
    then ``project`` made a repository."""
    src = cli.workspace / "src"
    src.mkdir()
    for text in ("The release is cut with make release", "Use tabs in every Makefile"):
        run = cli("--workspace", str(src), "remember", text, "--type", "decision", workspace=False)
        assert run.code == 0, run
    run = cli("--workspace", str(src), "message", "--session", "s-old", "Remember this: CI runs on Linux")
    assert run.code == 0, run
    (cli.workspace / ".git").mkdir()
    cli.ok("remember", "Use tabs in every Makefile", "--type", "decision")  # already in both
    return src


# ---------------------------------------------------------------------------------------------------
# 1. stores of an old sub-directory
# ---------------------------------------------------------------------------------------------------


def test_a_store_of_an_old_sub_directory_is_found_and_merged_never_lost(cli: Cli) -> None:
    _old_store(cli)
    health = cli.ok("health").out
    assert "sub-directory src (2 memories, 1 pending)" in health
    assert "`workmem workspaces merge`" in health.split("\n\n")[1]  # in the summary, at the top
    verdict = cli.ok("health", "--json").json()["verdict"]
    assert verdict["status"] == "attention"
    assert verdict["oldStores"] == [{"directory": "src", "memories": 2, "pending": 1}]
    listed = cli.ok("workspaces", "list", "--json").json()["oldStores"]
    assert [(s["directory"], s["memories"], s["pending"], s["merged"]) for s in listed] == [
        ("src", 2, 1, False)
    ]

    dry = cli.ok("workspaces", "merge", "--dry-run", "--json").json()
    assert dry["dryRun"] is True and dry["merged"][0]["broughtIn"] == 2  # one decision is here already
    assert len(cli.memories()) == 1  # a dry run changes nothing

    done = cli.ok("workspaces", "merge").out
    assert "src: brought in 2 of 2 memories, 1 pending (1 already here)" in done
    texts = sorted(m["text"] for m in cli.memories())
    assert texts == ["CI runs on Linux", "The release is cut with make release", "Use tabs in every Makefile"]
    old = next(p for p in (cli.home / "workspaces").iterdir() if (p / MERGED_MARKER).exists())
    assert json.loads((old / "workspace-memory.json").read_text())["entries"]  # the old store is kept
    assert "sub-directory" not in cli.ok("health").out
    assert "Nothing to merge" in cli.ok("workspaces", "merge").out
    merged = cli.ok("workspaces", "list").out
    assert "src: 2 memories, 1 pending (merged)" in merged
    events = [e for e in cli.ok("trace", cli.memories()[0]["id"], "--json").json()["events"]]
    assert events


def test_merged_memories_go_through_the_restore_path_with_their_own_reason(cli: Cli) -> None:
    _old_store(cli)
    cli.ok("workspaces", "merge")
    release = next(m for m in cli.memories() if m["text"].startswith("The release"))
    reasons = [r for e in cli.ok("trace", release["id"], "--json").json()["events"] for r in e["reasons"]]
    assert "merged_from_sub_directory_store" in reasons


def test_a_memory_forgotten_in_the_repository_stays_forgotten_after_a_merge(cli: Cli) -> None:
    _old_store(cli)
    tabs = next(m for m in cli.memories() if m["text"].startswith("Use tabs"))
    cli.ok("forget", tabs["id"])
    cli.ok("workspaces", "merge")
    assert "Use tabs in every Makefile" not in [m["text"] for m in cli.memories()]


# ---------------------------------------------------------------------------------------------------
# 2. pending requests are visible, and never an alarm
# ---------------------------------------------------------------------------------------------------


def test_a_pending_request_is_listed_counted_and_never_a_disappearance(cli: Cli) -> None:
    cli.ok("message", "--session", "s1", "Remember this: we always use tabs in the Makefile")
    listed = cli.ok("list").out
    assert "No memories stored" not in listed
    assert re.search(r"pending \(session s1: stored when it compacts or ends\)  we always use tabs", listed)
    pending = cli.ok("list", "--json").json()["pending"]
    assert [(p["session"], p["text"]) for p in pending] == [("s1", "we always use tabs in the Makefile")]
    assert "quality is ok" in cli.ok("quality").out
    assert "Summary: nothing is wrong." in cli.ok("health").out
    assert "1 pending (stored when its session compacts or ends)" in cli.ok("health").out
    gone = cli.ok("disappearances", "--json").json()
    assert gone["disappearances"] == [] and gone["leftTheBlock"] == []
    assert "Pending: it is stored when session s1 compacts or ends" in cli.ok("explain", pending[0]["id"]).out


# ---------------------------------------------------------------------------------------------------
# 4. diagnostics in words
# ---------------------------------------------------------------------------------------------------


def _decisions(cli: Cli, count: int = len(DECISIONS)) -> list[str]:
    ids = []
    for i, text in enumerate(DECISIONS[:count]):
        cli.at_ms(cli.now_ms + 1000 * (i + 1))
        ids.append(cli.ok("remember", text, "--type", "decision", "--json").json()["id"])
    return ids


def test_explain_says_in_a_sentence_why_a_memory_is_not_in_the_block_and_what_to_do(cli: Cli) -> None:
    ids = _decisions(cli)
    out = cli.ok("explain", ids[0]).out
    assert out.startswith(
        f"Memory {ids[0]}: Not in the block: “{DECISIONS[0]}”, because the block shows at most 10"
    )
    assert "against 3.500 for the weakest decision memory shown" in out
    assert f"Outranked by: {ids[2]} (3.500)" in out
    assert f"`workmem pin {ids[0]}`" in out
    assert f"raise its importance: `workmem forget {ids[0]}`, then `workmem remember --importance high" in out
    for internal in ("type_cap", "within_caps", "omitted_"):
        assert internal not in out
    data = cli.ok("explain", ids[0], "--json").json()["memories"][0]
    assert data["inBlock"] is False and data["strength"] == pytest.approx(data["weakestShown"])
    assert [o["id"] for o in data["outrankedBy"]] == ids[2:5]
    shown = cli.ok("explain", ids[-1]).out
    assert shown.startswith(f"Memory {ids[-1]}: In the block: ")
    cli.ok("forget", ids[0])  # the remedy it names works
    raised = cli.ok("remember", "--importance", "high", "--type", "decision", DECISIONS[0], "--json").json()
    assert cli.ok("explain", raised["id"]).out.startswith(f"Memory {raised['id']}: In the block: ")


def test_a_forgotten_memory_says_forgotten_by_you_on_its_date(cli: Cli) -> None:
    ids = _decisions(cli)
    cli.ok("forget", ids[5])
    out = cli.ok("explain", ids[5]).out
    assert "Not in the block: forgotten by you on 2026-05-01" in out
    assert f"`workmem restore {ids[5]}`" in out


def test_trace_prints_readable_times_and_disappearances_covers_memories_that_left_the_block(cli: Cli) -> None:
    ids = _decisions(cli, 10)
    cli.ok("open-session", "--session", "a")  # the ten are shown
    cli.at_ms(cli.now_ms + 60_000)
    cli.ok("remember", "Decision eleven: billing uses the plain variant", "--type", "decision")
    trace = cli.ok("trace", ids[0]).out
    assert re.search(r"^- 2026-05-01 09:00:01 UTC  evt_", trace, re.MULTILINE)
    left = cli.ok("disappearances").out
    assert "Left the block (still stored" in left
    assert re.search(rf"{ids[0]} \[decision\] .*stronger memories of its type took every place", left)
    detail = cli.ok("explain", "--verbose", ids[0]).out  # one verdict, not yesterday's beside today's
    assert "- reasons: type_cap" in detail and "within_caps" not in detail


def test_health_leads_with_a_summary_and_keeps_internal_words_out(cli: Cli) -> None:
    _decisions(cli)
    out = cli.ok("health").out
    assert out.startswith("Workspace memory health\n\nSummary: ")
    assert "12 memories stored, 10 shown in the block (2 not shown: `workmem explain ID` says why)" in out
    assert "Retention monitoring:" not in out and "deprecated" not in out
    assert "Retention monitoring:" in cli.ok("health", "--verbose").out
    rejections = cli.ok("rejections").out
    assert "v1.5" not in rejections


# ---------------------------------------------------------------------------------------------------
# 5. one behaviour everywhere
# ---------------------------------------------------------------------------------------------------

#: Commands that speak a protocol of their own, or print nothing at all.
NO_JSON = {"serve", "mcp", "hook", "tour", "tool", "merge-file", "workspaces"}


def test_every_command_that_prints_takes_json() -> None:
    from adapters.cli import build_parser

    commands = subcommands(build_parser())
    missing = [
        name
        for name, parser in commands.items()
        if name not in NO_JSON and "--json" not in option_strings(parser)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("argv", "key"),
    [
        (("check", "Remember: always run the linter before a commit"), "kept"),
        (("open-session", "--session", "s"), "context"),
        (("context", "--session", "s"), "context"),
        (("compaction-prompt", "--session", "s"), "prompt"),
        (("message", "--session", "s", "hello"), "decisions"),
        (("end-session", "--session", "s"), "decisions"),
        (("rejections",), "records"),
        (("explain",), "memories"),
        (("install", "claude-code", "--dry-run"), "diff"),
    ],
)
def test_json_output_is_one_object(cli: Cli, argv: tuple[str, ...], key: str) -> None:
    cli.ok("remember", "Always run the linter before committing", "--type", "feedback")
    data = cli.ok(*argv, "--json").json()
    assert isinstance(data, dict) and key in data


def test_forget_and_trace_answer_in_json(cli: Cli) -> None:
    memory = cli.ok("remember", "Always run the linter before committing", "--json").json()
    assert cli.ok("forget", memory["id"], "--json").json()["outcome"] == "forgotten"
    events = cli.ok("trace", memory["id"], "--json").json()["events"]
    assert [e["type"] for e in events][-1] == "memory_forgotten"


@pytest.mark.parametrize(
    "argv",
    [
        ("explain", "nope"),
        ("trace", "nope"),
        ("forget", "nope"),
        ("restore", "nope"),
        ("explain", "nope", "--json"),
    ],
)
def test_an_unknown_id_is_exit_3_with_one_line(cli: Cli, argv: tuple[str, ...]) -> None:
    run = cli(*argv)
    one_line_error(run, 3)
    assert run.out == ""


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (("lst",), "did you mean list?"),
        (("helth",), "did you mean health?"),
        (("workspaces", "merg"), "did you mean merge?"),
    ],
)
def test_a_mistyped_command_suggests_the_nearest(cli: Cli, argv: tuple[str, ...], hint: str) -> None:
    run = cli(*argv)
    one_line_error(run, 2)
    assert hint in run.err


def test_health_of_every_workspace_answers_in_json(cli: Cli) -> None:
    cli.ok("remember", "Always run the linter before committing", "--type", "feedback")
    run = cli("health", "--all", "--json", workspace=False)
    assert run.code == 0, run
    [only] = run.json()["workspaces"]
    assert only["summary"]["storedActive"] == 1
