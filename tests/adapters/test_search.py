"""Search, show, short ids, the derived index, the tagged block and just-in-time recall
(docs/decisions.md#d16)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapters.api import WorkingMemory
from adapters.search_index import INDEX_FILE, disclosure
from adapters.serve import Server
from domain.render import RENDER_HEADER
from domain.search import shortids
from domain.search.tokens import query_terms, stem, terms
from domain.search.values import MatchMode, Verdict
from tests.support.cli import T0, Cli, layout, one_line_error

MIN = 60_000
REFERENCES = (
    "The API reference for payments is at docs/api/payments.md",
    "Grafana dashboards for the checkout service are in ops/grafana/checkout.json",
    "The design system tokens are documented in packages/ui/TOKENS.md",
    "Feature flag definitions live in config/flags.yaml",
    "The on-call rotation schedule is kept in the team wiki under Operations",
    "Release notes template is at .github/RELEASE_TEMPLATE.md",
)
RUNBOOK = "The staging database failover runbook lives in docs/runbooks/failover.md"
PROMPT = "where is the failover runbook for the staging database?"


def memory(tmp_path: Path) -> WorkingMemory:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return WorkingMemory(project, home=tmp_path / "home", clock=lambda: T0)


def beyond_the_block(m: WorkingMemory) -> str:
    """Six references fill the reference cap; a weaker seventh is stored but not shown."""
    for text in REFERENCES:
        m.remember(text, type="reference")
    kept = m.remember(RUNBOOK, type="reference", importance="low")
    assert kept.id is not None
    return kept.id


# ---------------------------------------------------------------------------------------------------
# Word forms and any text as a query
# ---------------------------------------------------------------------------------------------------


def test_word_forms_meet_in_one_term() -> None:
    assert {stem(w) for w in ("deploy", "deploys", "deployed", "deploying")} == {"deploi"}
    assert stem("migrations") == stem("migrate")
    assert terms("Café crème") == ["cafe", "creme"]  # diacritics removed
    assert terms("使用中文") == ["使用", "用中", "中文"]  # CJK as character pairs
    assert query_terms("how do we deploy the importer?") == ("deploi", "import")
    assert query_terms("the") == ("the",)  # a query of stop words keeps them


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a:b -c *d ?e (f) NEAR/2 AND OR NOT", "\x00\x00", "\ud800 lone", "é" * (1 << 20), ""],
)
def test_any_text_is_a_valid_query(tmp_path: Path, query: str) -> None:
    m = memory(tmp_path)
    m.remember("We deploy the importer with blue-green deploys", type="project")
    answer = m.search(query)
    assert answer.verdict in set(Verdict)


# ---------------------------------------------------------------------------------------------------
# The answer
# ---------------------------------------------------------------------------------------------------


def test_all_terms_first_then_any_term_saying_so(tmp_path: Path) -> None:
    m = memory(tmp_path)
    m.remember("We deploy the importer with blue-green deploys, never on Fridays", type="project")
    m.remember("The CSV importer skips empty rows in src/importer/csv.py", type="project")
    both = m.search("importer deployed")
    assert both.mode is MatchMode.ALL and len(both.hits) == 1
    assert "**deploy**" in both.hits[0].snippet and "**importer**" in both.hits[0].snippet
    either = m.search("deploy rows fridays")
    assert either.mode is MatchMode.ANY and either.verdict is Verdict.MATCH
    assert "any word counts" in _text(m, "deploy rows fridays")


def _text(m: WorkingMemory, query: str) -> str:
    from adapters.search_door import format_search

    return format_search(m.search(query))


def test_no_match_is_told_apart_from_below_the_threshold(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES:
        m.remember(text, type="reference")
    nothing = m.search("kubernetes autoscaling")
    assert nothing.verdict is Verdict.NO_MATCH and nothing.hits == ()
    weak = m.search("payments kubernetes autoscaling helm")  # one common word of four rare ones
    assert weak.verdict is Verdict.BELOW_THRESHOLD and weak.below_threshold == 1
    assert _text(m, "kubernetes autoscaling").startswith("no match:")
    assert _text(m, "payments kubernetes autoscaling helm").startswith("no match above the threshold")


def test_superseded_and_forgotten_are_hidden_unless_all(tmp_path: Path) -> None:
    m = memory(tmp_path)
    first = m.remember("Deploy the importer on Tuesdays", type="project").id
    second = m.remember("The importer reads CSV files", type="project").id
    assert first is not None and second is not None
    m.supersede(first, "Deploy the importer on Wednesdays")
    m.forget(second)
    answer = m.search("importer")
    assert [h.status for h in answer.hits] == ["active"] and answer.hidden == 2
    everything = m.search("importer", include_all=True)
    assert [h.status for h in everything.hits].count("superseded") == 2  # forgotten is superseded by none
    assert everything.hidden == 0


def test_type_and_limit(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES:
        m.remember(text, type="reference")
    m.remember("We chose the docs folder for every design record", type="decision")
    assert len(m.search("docs", limit=1).hits) == 1
    assert {h.type for h in m.search("docs", type="decision").hits} == {"decision"}


def test_the_query_is_never_stored_raw(tmp_path: Path) -> None:
    m = memory(tmp_path)
    m.remember("The importer reads CSV files", type="project")
    m.search("secret-project-zebra importer")
    log = Path(m.workspace().paths.evidence).read_text(encoding="utf-8")
    assert "zebra" not in log
    found = [json.loads(line) for line in log.splitlines() if '"search_answered"' in line]
    assert found and set(found[-1]["details"]) >= {"queryHash", "hits", "hidden", "searched", "limit"}


# ---------------------------------------------------------------------------------------------------
# Short ids
# ---------------------------------------------------------------------------------------------------


def test_short_ids_are_stored_stable_and_never_reused(tmp_path: Path) -> None:
    m = memory(tmp_path)
    ids = [m.remember(text, type="reference").id for text in REFERENCES[:3]]
    store, _ = m.normalized_store()
    assert [e.short_id for e in store.entries] == [1, 2, 3] and store.last_short_id == 3
    assert ids[1] is not None
    m.forget(ids[1])
    m.remember(REFERENCES[3], type="reference")
    store, _ = m.normalized_store()
    assert {e.id: e.short_id for e in store.entries}[str(ids[0])] == 1
    assert sorted(e.short_id or 0 for e in store.entries) == [1, 2, 3, 4]
    assert m.show("R2").id == ids[1] and m.show("r2").id == ids[1]


def test_a_store_without_short_ids_shows_the_numbers_its_next_write_keeps(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES[:3]:
        m.remember(text, type="reference")
    store, _ = m.normalized_store()
    old = msgspec.structs.replace(
        store,
        entries=tuple(msgspec.structs.replace(e, short_id=None) for e in store.entries),
        last_short_id=None,
    )
    shown = shortids.numbering(old)
    assert shortids.numbering(shortids.numbered(old)) == shown
    assert sorted(shown.values()) == [1, 2, 3]


# ---------------------------------------------------------------------------------------------------
# The index: derived, private, repaired, never needed for an answer
# ---------------------------------------------------------------------------------------------------


def _answers(m: WorkingMemory, queries: tuple[str, ...]) -> list[Any]:
    return [msgspec.to_builtins(msgspec.structs.replace(m.search(q), indexed=False)) for q in queries]


def test_the_index_is_private_and_deleting_it_changes_no_answer(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in (*REFERENCES, RUNBOOK):
        m.remember(text, type="reference")
    path = Path(m.workspace().paths.directory) / INDEX_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    queries = ("docs", "staging failover", "grafana checkout dashboards", "nothing here")
    assert m.search("docs").indexed
    with_index = _answers(m, queries)
    path.unlink()
    assert _answers(m, queries) == with_index


def test_a_corrupt_index_is_rebuilt_with_an_event(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES:
        m.remember(text, type="reference")
    path = Path(m.workspace().paths.directory) / INDEX_FILE
    path.write_bytes(b"not a database")
    first = m.search("grafana")
    assert not first.indexed and len(first.hits) == 1  # answered by the scan
    assert m.search("grafana").indexed  # rebuilt after the first search
    log = Path(m.workspace().paths.evidence).read_text(encoding="utf-8")
    assert '"search_index_rebuilt"' in log


def test_the_index_takes_only_counts_a_search_can_use(tmp_path: Path) -> None:
    """The postings a search ranks by: a count or a length that is not a positive integer is refused
    by the index itself, whoever writes it."""
    m = memory(tmp_path)
    m.remember(REFERENCES[0], type="reference")
    path = Path(m.workspace().paths.directory) / INDEX_FILE
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM post").fetchone()[0] > 0
        for tf, length in (("many", 3), (0, 3), (2, -1), (2, None), (1.5, 3)):
            with pytest.raises(sqlite3.IntegrityError):
                db.execute("INSERT INTO post VALUES ('extra', 'mem_x', ?, ?)", (tf, length))
    assert m.search("payments").indexed and len(m.search("payments").hits) == 1


def test_a_stale_index_is_detected_and_repaired(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES[:2]:
        m.remember(text, type="reference")
    path = Path(m.workspace().paths.directory) / INDEX_FILE
    saved = path.read_bytes()
    m.remember(REFERENCES[2], type="reference")
    path.write_bytes(saved)  # an index of an older revision
    assert not m.search("tokens").indexed and len(m.search("tokens").hits) == 1
    m.remember(REFERENCES[3], type="reference")
    assert m.search("flags").indexed


# ---------------------------------------------------------------------------------------------------
# Doors: the command line, serve, show
# ---------------------------------------------------------------------------------------------------


def test_the_command_line(cli: Cli) -> None:
    for text in REFERENCES:
        cli.ok("remember", "--type", "reference", text)
    out = cli.ok("search", "grafana dashboards").out
    assert out.startswith("1 of 1 matches, limit 5")
    assert "R2 [reference]" in out and "ops/grafana/checkout.json" in out
    data = cli.ok("search", "docs", "--json").json()
    assert data["verdict"] == "match" and data["limit"] == 5 and data["hits"][0]["short_id"].startswith("R")
    shown = cli.ok("show", "R2", "--json").json()
    assert shown["text"] == REFERENCES[1] and shown["explain"].startswith("workmem explain")
    assert "workmem trace" in cli.ok("show", shown["id"]).out
    one_line_error(cli("show", "R99"), 3)
    one_line_error(cli("search", "x", "--limit", "0"), 2)
    assert cli("search", "x", "--type", "opinion").code == 2
    assert cli.ok("search", '"\x01--*').out.startswith("no match")


def test_serve_ops(tmp_path: Path) -> None:
    m = memory(tmp_path)
    for text in REFERENCES:
        m.remember(text, type="reference")
    server = Server(tmp_path / "home", lock_timeout_s=5.0, clock=lambda: T0)
    where = str(tmp_path / "project")
    found = json.loads(
        server.answer(json.dumps({"id": 1, "op": "search", "workspace": where, "query": "flags"}).encode())
    )
    hit = found["result"]["hits"][0]
    assert hit["short_id"] == "R4"
    shown = json.loads(
        server.answer(json.dumps({"id": 2, "op": "show", "workspace": where, "memory": "R4"}).encode())
    )
    assert shown["result"]["found"] and shown["result"]["text"] == REFERENCES[3]
    bad = json.loads(
        server.answer(json.dumps({"id": 3, "op": "search", "workspace": where, "query": 7}).encode())
    )
    assert "error" in bad


def test_show_gives_the_supersede_chain_and_reinforcement(tmp_path: Path) -> None:
    m = memory(tmp_path)
    old = m.remember("Deploy the importer on Tuesdays", type="project").id
    assert old is not None
    new = m.supersede(old, "Deploy the importer on Wednesdays").id
    assert new is not None
    assert m.show(old).superseded_by == (new,)
    assert m.show(new).supersedes == (old,)
    assert m.show(new).reinforcement is not None
    assert not m.show("mem_nope").found


# ---------------------------------------------------------------------------------------------------
# L0: the tagged block, and the reference's block under the setting
# ---------------------------------------------------------------------------------------------------


def test_the_block_tags_entries_and_says_what_more_exists(tmp_path: Path) -> None:
    m = memory(tmp_path)
    beyond_the_block(m)
    text = m.open_session("s1").block
    lines = text.split("\n")
    assert lines[0] == RENDER_HEADER and lines[1] == "reference:"
    assert all(line.startswith("- [R") for line in lines[2:8])
    assert lines[-1].startswith("(1 more stored memory not shown: find it with the search tool")


def test_the_setting_restores_the_reference_block_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from domain.render import render_workspace_block

    monkeypatch.setenv("WORKMEM_BLOCK", "reference")
    assert not disclosure().tags
    m = memory(tmp_path)
    beyond_the_block(m)
    store, now = m.normalized_store()
    expected = render_workspace_block(store, now).text
    assert m.open_session("s1").block == expected
    assert "[R" not in expected and "more stored" not in expected


# ---------------------------------------------------------------------------------------------------
# Just-in-time recall
# ---------------------------------------------------------------------------------------------------


def test_recall_adds_a_matching_memory_once_per_session(tmp_path: Path) -> None:
    m = memory(tmp_path)
    runbook = beyond_the_block(m)
    frozen = m.open_session("s1").block
    first = str(m.user_message("s1", PROMPT).recalled)
    assert RUNBOOK in first and "[R7]" in first
    assert not m.user_message("s1", PROMPT + " again").recalled  # once per session
    assert m.current_injection("s1").block == frozen  # the frozen block is untouched
    assert not m.user_message("s2", "what is for lunch today?").recalled
    log = Path(m.workspace().paths.evidence).read_text(encoding="utf-8")
    recalled = [json.loads(line) for line in log.splitlines() if '"memory_recalled"' in line]
    assert [e["memory"]["memoryId"] for e in recalled] == [runbook]
    assert "failover" not in json.dumps(recalled[0]["details"])


def test_a_block_entry_is_never_recalled(tmp_path: Path) -> None:
    m = memory(tmp_path)
    beyond_the_block(m)
    m.open_session("s1")
    assert not m.user_message("s1", "where are the grafana dashboards of the checkout service?").recalled


def test_the_setting_turns_recall_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKMEM_RECALL", "off")
    m = memory(tmp_path)
    beyond_the_block(m)
    m.open_session("s1")
    assert not m.user_message("s1", PROMPT).recalled


def _claude_hook(cli: Cli, event: str, **fields: Any) -> str:
    payload = {"session_id": "S1", "cwd": str(cli.workspace), "hook_event_name": event, **fields}
    run = cli("hook", "claude-code", stdin=json.dumps(payload), workspace=False)
    assert run.code == 0 and run.err == "", run
    return str(json.loads(run.out)["hookSpecificOutput"]["additionalContext"]) if run.out else ""


def test_recall_in_claude_code(cli: Cli) -> None:
    for text in REFERENCES:
        cli.ok("remember", "--type", "reference", text)
    cli.ok("remember", "--type", "reference", "--importance", "low", RUNBOOK)
    start = _claude_hook(cli, "SessionStart", source="startup")
    assert RUNBOOK not in start
    cli.at_ms(T0 + MIN)
    added = _claude_hook(cli, "UserPromptSubmit", prompt=PROMPT)
    assert RUNBOOK in added
    cli.at_ms(T0 + 2 * MIN)
    assert RUNBOOK not in _claude_hook(cli, "UserPromptSubmit", prompt=PROMPT + " please")


def test_recall_in_codex(cli: Cli) -> None:
    for text in REFERENCES:
        cli.ok("remember", "--type", "reference", text)
    cli.ok("remember", "--type", "reference", "--importance", "low", RUNBOOK)
    base = {"session_id": "C1", "cwd": str(cli.workspace), "model": "gpt-5", "transcript_path": None}
    run = cli(
        "hook",
        "codex",
        stdin=json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}),
        workspace=False,
    )
    assert run.code == 0, run
    cli.at_ms(T0 + MIN)
    payload = {**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT, "turn_id": "t1"}
    run = cli("hook", "codex", stdin=json.dumps(payload), workspace=False)
    assert run.code == 0 and run.err == "", run
    assert RUNBOOK in json.loads(run.out)["hookSpecificOutput"]["additionalContext"]
    assert os.path.exists(layout(cli).directory / INDEX_FILE)


def test_the_mcp_tools(tmp_path: Path) -> None:
    pytest.importorskip("mcp")  # the extra (CI installs it)
    import anyio

    from tests.adapters.test_mcp_server import call_tools

    project = tmp_path / "project"
    project.mkdir()
    for text in REFERENCES:
        WorkingMemory(project, home=tmp_path / "home").remember(text, type="reference")
    found, shown = anyio.run(
        call_tools,
        tmp_path / "home",
        project,
        [("search", {"query": "grafana checkout"}), ("show", {"id": "R2"})],
    )
    assert found.startswith("1 of 1 matches") and "R2 [reference]" in found
    assert REFERENCES[1] in shown and "workmem trace" in shown
