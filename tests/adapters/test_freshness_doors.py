"""Freshness at the doors (docs/decisions.md#d18): ``remember --volatility/--valid-until/--cite`` and
the paths a text names, re-verification at each session start through the service's BEFORE step
(with its stat cache), and the grades ``list``, ``explain`` and ``health`` show."""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapters import freshness_steps
from adapters.filestore import Workspace
from tests.adapters.test_serve import Client
from tests.support.cli import T0, Cli

DAY = 86_400_000
SOURCE = "def import_rows(path):\n    return load_csv(path)\n\n\ndef other():\n    pass\n"


def _project(cli: Cli) -> Path:
    src = cli.workspace / "src"
    src.mkdir()
    (src / "importer.py").write_text(SOURCE, encoding="utf-8")
    return src / "importer.py"


def _block(cli: Cli, session: str) -> str:
    return cli.ok("open-session", "--session", session).out


def test_a_cited_span_that_changes_makes_its_memory_stale(cli: Cli) -> None:
    file = _project(cli)
    mid = cli.ok(
        "remember", "Rows are loaded with the CSV loader", "--cite", "src/importer.py:1-2"
    ).out.split()[0]
    cli.at_ms(T0 + DAY)
    assert "verify]" not in _block(cli, "s1")
    [row] = cli.memories()
    assert (row["grade"], row["verified"]) == ("fresh", T0 + DAY)  # unchanged: verified moves to today

    file.write_text(SOURCE.replace("def other", "def another"), encoding="utf-8")  # outside the span
    cli.at_ms(T0 + 2 * DAY)
    assert "verify]" not in _block(cli, "s2")

    file.write_text(SOURCE.replace("load_csv", "read_csv"), encoding="utf-8")
    cli.at_ms(T0 + 3 * DAY)
    block = _block(cli, "s3")
    assert "[code changed since verified: src/importer.py:1-2, verify]" in block
    [row] = cli.memories()
    assert (
        row["grade"] == "stale" and row["staleReason"] == "code changed since verified: src/importer.py:1-2"
    )
    assert "grade=stale" in cli.ok("list").out
    explained = cli.ok("explain", mid).out
    assert "verified 1 d ago, code changed since verified: src/importer.py:1-2" in explained
    evidence = cli.ok("explain", "--verbose", mid).out  # the evidence behind the sentence
    assert "memory_freshness_changed" in evidence and "cited_code_changed" in evidence
    assert "freshness: fresh 0, aging 0, stale 1, expired 0" in cli.ok("health", "--verbose").out


def test_identifiers_a_text_names_in_a_file_it_names(cli: Cli) -> None:
    file = _project(cli)
    cli.ok("remember", "import_rows in src/importer.py always calls load_csv first", "--type", "decision")
    [row] = cli.memories()
    assert row["grade"] == "fresh"
    file.write_text(SOURCE + "\n\ndef more():\n    pass\n", encoding="utf-8")  # an edit elsewhere
    cli.at_ms(T0 + DAY)
    assert "verify]" not in _block(cli, "s1")
    file.write_text(SOURCE.replace("load_csv", "read_csv"), encoding="utf-8")
    cli.at_ms(T0 + 2 * DAY)
    assert "(load_csv gone), verify]" in _block(cli, "s2")
    file.unlink()
    cli.at_ms(T0 + 3 * DAY)
    assert "[cited file gone: src/importer.py, verify]" in _block(cli, "s3")
    assert len(cli.memories()) == 1  # never deleted


def test_a_file_whose_size_and_mtime_did_not_change_is_not_read_again(cli: Cli) -> None:
    """The stat cache, seen from outside: an edit that keeps the file's size and mtime is not seen (the
    file is not read again); the same edit with a new mtime is."""
    file = _project(cli)
    cli.ok("remember", "Rows are loaded with the CSV loader", "--cite", "src/importer.py:1-2")
    assert "verify]" not in _block(cli, "s1")
    stat = file.stat()
    file.write_text(SOURCE.replace("load_csv", "read_csv"), encoding="utf-8")  # same size, in the span
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file.stat().st_size == stat.st_size
    cli.at_ms(T0 + DAY)
    assert "verify]" not in _block(cli, "s2")
    assert [m["grade"] for m in cli.memories()] == ["fresh"]
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    cli.at_ms(T0 + 2 * DAY)
    assert "[code changed since verified: src/importer.py:1-2, verify]" in _block(cli, "s3")


def test_expired_memories_are_not_shown_and_bad_input_is_one_line(cli: Cli) -> None:
    _project(cli)
    cli.ok("remember", "Code freeze for the audit is in force", "--valid-until", "2026-05-02")
    assert "Code freeze" in _block(cli, "s1")
    cli.at_ms(T0 + 2 * DAY)
    assert "Code freeze" not in _block(cli, "s2")
    assert [m["grade"] for m in cli.memories()] == ["expired"]
    for args, message in [
        (("--cite", "nope.py"), "cited file not found in the workspace: nope.py"),
        (("--cite", "../outside.py"), "cited file not found in the workspace"),
        (("--cite", "src/importer.py:9-3"), "a citation is PATH[:LINE[-LINE]]"),
        (("--valid-until", "soon"), "valid-until must be a date YYYY-MM-DD"),
    ]:
        run = cli("remember", "A memory with a bad argument", *args)
        assert run.code == 2 and message in run.err and run.err.count("\n") == 1, run


def test_volatility_given_at_the_cli(cli: Cli) -> None:
    cli.ok(
        "remember", "The release branch is cut on Mondays", "--volatility", "volatile", "--type", "project"
    )
    [row] = cli.memories()
    assert row["volatility"] == "volatile"
    cli.at_ms(T0 + 8 * DAY)
    assert "[unverified 8 d]" in _block(cli, "s1")


def test_serve_remember_takes_the_freshness_fields(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    client = Client(tmp_path / "home")
    try:
        kept = client.call(
            id=1,
            op="remember",
            workspace=str(project),
            text="The constant x in src/a.py is one",
            volatility="volatile",
            validUntil="2030-01-01",
            cite=["src/a.py:1"],
        )
        assert kept["outcome"] == "promoted"
        [row] = client.call(id=2, op="list", workspace=str(project))["memories"]
        assert (row["volatility"], row["validUntil"]) == ("volatile", 1893542400000)
        answer = client.raw(
            json.dumps(
                {"id": 3, "op": "remember", "workspace": str(project), "text": "A b c d", "cite": ["z.py"]}
            ).encode()
        )
        assert answer["error"]["code"] == "invalid_request" and "z.py" in answer["error"]["message"]
    finally:
        client.close()


def test_a_damaged_stat_cache_costs_the_check_never_the_session(cli: Cli) -> None:
    _project(cli)
    cli.ok("remember", "Rows are loaded with the CSV loader", "--cite", "src/importer.py:1-2")
    cache = freshness_steps.cache_path(cli_workspace(cli))
    cache.write_bytes(b"{not json")
    assert "Rows are loaded" in _block(cli, "s1")
    cli.ok("remember", "Another memory to write the store again", "--type", "project")
    assert b"src/importer.py" in cache.read_bytes()  # the next commit lists the citations again


def cli_workspace(cli: Cli) -> Workspace:
    return Workspace(cli.home, str(cli.workspace))
