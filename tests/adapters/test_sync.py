"""``workmem sync`` and the projection on disk (docs/decisions.md#d17, docs/sync.md): who creates
``.workmem/``, the export after every write, edits taken back at a session start, files turned down
and never overwritten, ``health``, ``--dry-run``, a lost store, and stores written before scopes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from adapters import paths
from tests.support.cli import Cli, events, layout, one_line_error

DECISION: Final = "Use exponential backoff with jitter for HTTP retries"
PROJECT: Final = "The staging database is refreshed every Monday at 6am"
FEEDBACK: Final = "I like answers that start with the code"


def _files(cli: Cli) -> dict[str, str]:
    base = cli.workspace / ".workmem" / "memories"
    return {str(p.relative_to(base)): p.read_text() for p in sorted(base.rglob("*.md"))}


def _file_of(cli: Cli, memory_id: str) -> Path:
    (found,) = (cli.workspace / ".workmem" / "memories").rglob(f"{memory_id}.md")
    return found


def _remember(cli: Cli, text: str, type_: str, *more: str) -> str:
    return str(cli.ok("remember", "--json", "--type", type_, *more, text).json()["id"])


def test_only_sync_creates_the_folder(cli: Cli) -> None:
    _remember(cli, DECISION, "decision")
    cli.ok("open-session", "--session", "s1")
    cli.ok("sync", "--dry-run")
    assert not (cli.workspace / ".workmem").exists()
    run = cli.ok("sync")
    assert run.out.startswith("create .workmem/ in this repository")
    assert {p.name for p in (cli.workspace / ".workmem").iterdir()} == {"README.md", ".gitignore", "memories"}


def test_team_memories_are_exported_and_personal_ones_stay_here(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    feedback = _remember(cli, FEEDBACK, "feedback")
    shared_feedback = _remember(cli, "Always run pnpm lint before committing", "feedback", "--scope", "team")
    cli.ok("sync")
    assert sorted(_files(cli)) == [f"decision/{decision}.md", f"feedback/{shared_feedback}.md"]
    assert feedback not in "".join(_files(cli))
    text = _file_of(cli, decision).read_text()
    assert text.startswith(f"---\nid: {decision}\ntype: decision\nscope: team\nstatus: active\n")
    assert text.endswith(f"---\n{DECISION}\n")
    assert "strength" not in text and "reinforce" not in text.lower()  # per-machine state stays out


def test_every_write_exports_what_it_changed(cli: Cli) -> None:
    cli.ok("sync")
    decision = _remember(cli, DECISION, "decision")
    assert _file_of(cli, decision).read_text().endswith(DECISION + "\n")
    cli.ok("forget", decision)
    assert "status: forgotten" in _file_of(cli, decision).read_text()
    tombstone = json.loads((cli.workspace / ".workmem" / "tombstones.jsonl").read_text())
    assert tombstone["id"] == decision and tombstone["reason"] == "forgotten_by_user"
    assert DECISION not in (cli.workspace / ".workmem" / "tombstones.jsonl").read_text()
    cli.ok("restore", decision)
    assert "status: active" in _file_of(cli, decision).read_text()


def test_a_session_start_imports_what_changed_in_the_folder(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    cli.ok("sync")
    path = _file_of(cli, decision)
    path.write_text(path.read_text().replace("HTTP retries", "HTTP retries, capped at 5 attempts"))
    (cli.workspace / ".workmem" / "memories" / "project" / "staging.md").parent.mkdir(exist_ok=True)
    (cli.workspace / ".workmem" / "memories" / "project" / "staging.md").write_text(
        f"---\ntype: project\n---\n{PROJECT}\n"
    )
    context = cli.ok("open-session", "--session", "s1").out
    assert "capped at 5 attempts" in context and PROJECT in context
    files = _files(cli)
    assert "project/staging.md" not in files  # given an id and moved to its path
    assert any(f.startswith("project/mem_") for f in files)
    assert cli.ok("sync").out == "this repository: nothing to sync\n"


def test_a_file_turned_down_is_reported_kept_and_never_overwritten(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    cli.ok("sync")
    path = _file_of(cli, decision)
    secret = path.read_text().replace("HTTP retries", "HTTP retries; the deploy password is hunter2")
    path.write_text(secret)
    run = cli("sync")
    assert run.code == 3
    relative = f".workmem/memories/decision/{decision}.md"
    assert f"rejected {relative}:10 credential" in run.out
    cli.ok("forget", decision)  # a write: the export leaves the turned-down file alone
    assert path.read_text() == secret
    assert [m["text"] for m in cli.memories("--all")] == [DECISION]
    health = cli.ok("health").out
    assert f"{relative}:10 rejected credential" in health
    assert "hunter2" not in health and "hunter2" not in run.out
    assert json.loads(cli.ok("health", "--json").out)["projection"]["notImported"][0]["line"] == 10
    path.write_text(secret.replace("; the deploy password is hunter2", ", capped at 5 attempts"))
    assert cli("sync").code == 0
    assert "every file imported" in cli.ok("health").out


def test_a_conflicted_file_is_quarantined_with_its_line(cli: Cli) -> None:
    cli.ok("sync")
    path = cli.workspace / ".workmem" / "memories" / "decision" / "mem_1_a.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "---\nid: mem_1_a\ntype: decision\n---\n<<<<<<< ours\nA one\n=======\nB two\n>>>>>>> theirs\n"
    )
    run = cli("sync")
    assert run.code == 3
    assert "quarantined .workmem/memories/decision/mem_1_a.md:5 conflict_markers" in run.out
    assert cli.memories("--all") == []


def test_a_deleted_file_forgets_its_memory(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    cli.ok("sync")
    _file_of(cli, decision).unlink()
    cli.ok("sync")
    (row,) = cli.memories("--all")
    assert row["status"] == "superseded"
    assert not list((cli.workspace / ".workmem" / "memories").rglob("*.md"))  # not written again


def test_dry_run_and_a_second_sync_change_nothing(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    cli.ok("sync")
    store = layout(cli).store
    before, logged = store.read_bytes(), len(events(cli))
    path = _file_of(cli, decision)
    path.write_text(path.read_text().replace("HTTP", "gRPC"))
    run = cli.ok("sync", "--dry-run")
    assert f"would import .workmem/memories/decision/{decision}.md (text)" in run.out
    assert store.read_bytes() == before and len(events(cli)) == logged
    path.write_text(path.read_text().replace("gRPC", "HTTP"))
    assert cli.ok("sync").out == "this repository: nothing to sync\n"
    assert store.read_bytes() == before and len(events(cli)) == logged


def test_a_lost_store_is_filled_again_from_the_folder(cli: Cli) -> None:
    decision = _remember(cli, DECISION, "decision")
    cli.ok("sync")
    layout(cli).store.unlink()
    cli.ok("sync")
    assert [m["id"] for m in cli.memories()] == [decision]


def test_a_store_written_before_scopes_is_shared_by_type(cli: Cli) -> None:
    """docs/decisions.md#d11: an opencode-working-memory (or earlier workmem) store has no scopes."""
    key = paths.workspace_key(str(cli.workspace))
    stamp = "2026-04-01T00:00:00.000Z"
    entry = {"confidence": 1, "createdAt": stamp, "updatedAt": stamp}
    entry |= {"source": "explicit", "status": "active"}
    store = {
        "version": 1,
        "workspace": {"root": str(cli.workspace), "key": key},
        "updatedAt": "2026-04-01T00:00:00.000Z",
        "entries": [
            {**entry, "id": "mem_1_dec", "type": "decision", "text": DECISION},
            {**entry, "id": "mem_2_fb", "type": "feedback", "text": FEEDBACK},
        ],
    }
    target = layout(cli).store
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(store))
    cli.ok("sync")
    assert list(_files(cli)) == ["decision/mem_1_dec.md"]


@pytest.mark.parametrize("conflict", [False, True])
def test_merge_file_writes_the_merge_to_ours(cli: Cli, tmp_path: Path, conflict: bool) -> None:
    base = "---\nid: m1\ntype: decision\nscope: team\nstatus: active\nsource: manual\n---\nUse retries\n"
    ours = base.replace("status: active", "status: forgotten")
    theirs = base.replace("scope: team", "scope: personal")
    if conflict:
        ours, theirs = (
            base.replace("Use retries", "Use 5 retries"),
            base.replace("Use retries", "Use 3 retries"),
        )
    files = []
    for name, text in (("O", base), ("A", ours), ("B", theirs)):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    run = cli("merge-file", *files, ".workmem/memories/decision/m1.md", workspace=False)
    assert run.code == (1 if conflict else 0)
    merged = (tmp_path / "A").read_text()
    assert ("<<<<<<< ours" in merged) is conflict
    if not conflict:
        assert "status: forgotten" in merged and "scope: personal" in merged


def test_merge_file_of_a_missing_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    one_line_error(cli("merge-file", "nope", "nope", "nope", workspace=False), 2)


def test_remote_without_user_is_a_usage_error(cli: Cli) -> None:
    one_line_error(cli("sync", "--remote", "https://example.invalid/x.git"), 2)


def test_serve_and_the_session_start_hook_take_the_same_path(cli: Cli) -> None:
    import msgspec

    from adapters.serve import Server

    decision = _remember(cli, DECISION, "decision")
    server = Server(cli.home, lock_timeout_s=5.0, clock=lambda: cli.now_ms)
    answer = json.loads(server.answer(msgspec.json.encode({"op": "sync", "workspace": str(cli.workspace)})))
    assert answer["result"]["created"] is True and answer["result"]["dryRun"] is False
    path = _file_of(cli, decision)
    path.write_text(path.read_text().replace("HTTP retries", "gRPC retries"))
    payload = {
        "session_id": "s1",
        "cwd": str(cli.workspace),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    run = cli("hook", "claude-code", stdin=json.dumps(payload), workspace=False)
    assert run.code == 0 and "gRPC retries" in json.loads(run.out)["hookSpecificOutput"]["additionalContext"]


def test_a_projection_that_cannot_be_written_never_fails_the_write(cli: Cli) -> None:
    cli.ok("sync")
    blocker = cli.workspace / ".workmem" / "memories" / "decision"
    blocker.write_text("not a folder")  # where the memory's file should go
    run = cli("remember", "--type", "decision", DECISION)
    assert run.code == 0 and "promoted" in run.out
    assert run.err.startswith("workmem: derived state not updated") and run.err.count("\n") == 1
    assert [m["text"] for m in cli.memories()] == [DECISION]
    blocker.unlink()
    cli.ok("sync")  # catches up
    assert len(_files(cli)) == 1


def test_the_file_and_line_of_a_memory_for_citations(cli: Cli) -> None:
    """``adapters.projection_export.location``: where a memory's text is, for a search to cite."""
    from adapters.projection_export import location

    decision = _remember(cli, DECISION, "decision")
    assert location(cli.workspace, decision) is None  # nothing shared yet
    cli.ok("sync")
    path, line = location(cli.workspace, decision) or (Path(), 0)
    assert path == _file_of(cli, decision) and path.read_text().split("\n")[line - 1] == DECISION
