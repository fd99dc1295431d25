"""Workspace cleanup (docs/decisions.md#workspace-cleanup): the reference's acceptance cases 1-7 plus the
fixes docs/decisions.md#b22 and docs/decisions.md#b23."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import msgspec
import pytest

from adapters.cleanup import cleanup, scan
from domain.cleanup import (
    Classification,
    CleanupReason,
    Residue,
    StoreState,
    WorkspaceFacts,
    classify,
    format_report,
    is_candidate,
    is_temp_root,
    known_test_prefix,
    quarantine_name,
)
from domain.timeutil import parse_iso_ms

NOW_ISO = "2026-04-28T12:00:00.000Z"
NOW = parse_iso_ms(NOW_ISO) or 0


def write_store(home: Path, key: str, root: str | None, *, json_key: str | None = None) -> Path:
    directory = home / "workspaces" / key
    directory.mkdir(parents=True, exist_ok=True)
    workspace: dict[str, str] = {"key": json_key or key}
    if root is not None:
        workspace["root"] = root
    store = {
        "version": 1,
        "workspace": workspace,
        "limits": {"maxRenderedChars": 3600, "maxEntries": 28},
        "entries": [],
        "updatedAt": NOW_ISO,
    }
    (directory / "workspace-memory.json").write_text(json.dumps(store, indent=2))
    return directory


def result_for(results: tuple[Residue, ...], key: str) -> Residue:
    return next(r for r in results if r.workspace_key == key)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def missing_temp_root(name: str) -> str:
    return os.path.join(tempfile.gettempdir(), name)


# ---------------------------------------------------------------------------------------------
# The reference's acceptance cases
# ---------------------------------------------------------------------------------------------


def test_case1_missing_temp_root_with_test_prefix_is_definite(home: Path) -> None:
    write_store(home, "k1", missing_temp_root("memory-plugin-test-missing-root"))
    results, _ = scan(home, NOW, min_age_ms=0)
    r = result_for(results, "k1")
    assert r.classification is Classification.TEST_TEMP_DEFINITE
    assert r.root_exists is False
    assert "root_missing" in r.reasons
    assert any(x.startswith("root_under_temp") for x in r.reasons)
    assert "test_prefix_memory-plugin-test" in r.reasons


def test_case2_existing_root_is_live(home: Path) -> None:
    live = tempfile.mkdtemp(prefix="wm-quality-live-root-")
    try:
        write_store(home, "k2", live)
        results, candidates = scan(home, NOW, min_age_ms=0, include_orphans=True)
        r = result_for(results, "k2")
        assert r.classification is Classification.LIVE_OR_EXISTING
        assert r.root_exists is True
        assert candidates == ()
    finally:
        os.rmdir(live)


def test_case3_missing_non_temp_root_is_orphan(home: Path) -> None:
    write_store(home, "k3", f"/definitely-not-temp-opencode-working-memory-test-{NOW}")
    results, candidates = scan(home, NOW, min_age_ms=0)
    r = result_for(results, "k3")
    assert r.classification is Classification.ORPHAN_UNKNOWN
    assert "root_missing" in r.reasons
    assert candidates == ()


def test_case4_invalid_json_is_never_quarantined(home: Path) -> None:
    directory = home / "workspaces" / "k4"
    directory.mkdir(parents=True)
    (directory / "workspace-memory.json").write_text("{ invalid")
    results, _ = scan(home, NOW, min_age_ms=0)
    r = result_for(results, "k4")
    assert r.classification is Classification.INVALID_OR_UNREADABLE
    assert "invalid_json" in r.reasons
    run = cleanup(home, NOW, mode="quarantine", min_age_ms=0, include_orphans=True)
    assert run.quarantined == ()
    assert directory.exists()


def test_case5_dry_run_lists_but_moves_nothing(home: Path) -> None:
    directory = write_store(home, "k5", missing_temp_root("wm-accounting-missing-root"))
    before = snapshot(home)
    run = cleanup(home, NOW, min_age_ms=0)
    assert run.mode == "dry-run"
    assert len(run.candidates) == 1
    assert run.quarantined == ()
    assert run.quarantine_dir is None
    assert directory.exists()
    assert snapshot(home) == before  # A dry run changes nothing (docs/decisions.md#workspace-cleanup)


def test_case6_quarantine_moves_only_definite_residue(home: Path) -> None:
    missing = missing_temp_root("wm-redact-missing-root")
    definite = write_store(home, "definite", missing)
    orphan = write_store(home, "orphan", f"/not-temp-root-{NOW}")
    run = cleanup(home, NOW, mode="quarantine", min_age_ms=0)
    assert [q.workspace_key for q in run.quarantined] == ["definite"]
    assert not definite.exists()
    assert orphan.exists()
    assert run.quarantine_dir is not None
    assert run.quarantine_dir.name == "workspace-cleanup-20260428T120000Z"
    assert (run.quarantine_dir / "workspaces" / "definite" / "workspace-memory.json").exists()
    lines = (run.quarantine_dir / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["workspaceKey"] == "definite"
    assert record["classification"] == "test_temp_definite"
    assert record["root"] == missing
    assert record["from"] == str(definite)
    assert record["quarantinedAt"] == NOW_ISO


def test_case7_recent_directory_is_not_a_candidate(home: Path) -> None:
    directory = write_store(home, "recent", missing_temp_root("wm-ordering-missing-root"))
    mtime_ms = int(directory.stat().st_mtime * 1000)
    results, candidates = scan(home, mtime_ms + 1000, min_age_ms=600_000)
    assert candidates == ()
    r = result_for(results, "recent")
    assert r.classification is Classification.TEST_TEMP_DEFINITE
    assert "recent_workspace_dir" in r.reasons


# ---------------------------------------------------------------------------------------------
# The fixes docs/decisions.md#b22 and docs/decisions.md#b23
# ---------------------------------------------------------------------------------------------


def test_b22_wm_prefix_outside_temp_is_not_definite_residue(home: Path) -> None:
    """docs/decisions.md#b22: the reference calls any missing root named ``wm-*`` anywhere on disk
    definite test residue. workmem requires the root to be under a temp directory; the prefix is only a
    hint."""
    write_store(home, "proj", "/home/someone/projects/wm-notes")
    results, candidates = scan(home, NOW, min_age_ms=0)
    r = result_for(results, "proj")
    assert r.classification is Classification.ORPHAN_UNKNOWN
    assert "test_prefix_wm" in r.reasons
    assert candidates == ()


def test_b22_most_specific_prefix_is_named() -> None:
    """docs/decisions.md#b22: ``wm-`` no longer shadows the more specific prefixes in the reason text."""
    assert known_test_prefix("/tmp/wm-quality-live-root-abc") == "wm-quality"
    assert known_test_prefix("/tmp/wm-x") == "wm"
    assert known_test_prefix("/tmp/memory-plugin-prompt-1") == "memory-plugin-prompt"
    assert known_test_prefix("/tmp/project") is None


def test_b23_destination_uses_directory_name_not_json_key(home: Path) -> None:
    """docs/decisions.md#b23: the reference names the destination after ``workspace.key`` in the JSON;
    two directories with the same JSON key collided. workmem uses the directory name."""
    a = write_store(home, "dir-a", missing_temp_root("wm-a-gone"), json_key="same")
    b = write_store(home, "dir-b", missing_temp_root("wm-b-gone"), json_key="same")
    run = cleanup(home, NOW, mode="quarantine", min_age_ms=0)
    assert run.quarantine_dir is not None
    moved = sorted(p.name for p in (run.quarantine_dir / "workspaces").iterdir())
    assert moved == ["dir-a", "dir-b"]
    assert not a.exists() and not b.exists()
    assert {q.workspace_key for q in run.quarantined} == {"dir-a", "dir-b"}
    assert {q.store_key for q in run.quarantined} == {"same"}


def test_b23_missing_store_is_missing_store_not_invalid_json(home: Path) -> None:
    """docs/decisions.md#b23: a directory without ``workspace-memory.json`` is reported as
    ``missing_store``."""
    (home / "workspaces" / "empty" / "sessions").mkdir(parents=True)
    results, _ = scan(home, NOW, min_age_ms=0, include_orphans=True)
    r = result_for(results, "empty")
    assert r.classification is Classification.INVALID_OR_UNREADABLE
    assert r.reasons == ("missing_store",)


def test_second_run_in_same_second_never_overwrites(home: Path) -> None:
    write_store(home, "again", missing_temp_root("wm-again-1"))
    first = cleanup(home, NOW, mode="quarantine", min_age_ms=0)
    write_store(home, "again", missing_temp_root("wm-again-2"))
    second = cleanup(home, NOW, mode="quarantine", min_age_ms=0)
    assert first.quarantine_dir == second.quarantine_dir
    assert second.quarantine_dir is not None
    names = sorted(p.name for p in (second.quarantine_dir / "workspaces").iterdir())
    assert names == ["again", "again-2"]
    assert len((second.quarantine_dir / "manifest.jsonl").read_text().splitlines()) == 2


def test_locked_workspace_is_never_a_candidate(home: Path) -> None:
    directory = write_store(home, "locked", missing_temp_root("wm-locked-gone"))
    (directory / "workspace-memory.json.lock").write_text("999999\n0\n")
    results, candidates = scan(home, NOW, min_age_ms=0)
    assert "lock_present" in result_for(results, "locked").reasons
    assert candidates == ()


def test_held_workmem_lock_is_detected(home: Path) -> None:
    import filelock

    directory = write_store(home, "held", missing_temp_root("wm-held-gone"))
    lock = filelock.FileLock(str(directory / "workspace.lock"))
    with lock:
        results, candidates = scan(home, NOW, min_age_ms=0)
        assert "lock_present" in result_for(results, "held").reasons
        assert candidates == ()
    # released: the leftover lock file alone does not block
    results, candidates = scan(home, NOW, min_age_ms=0)
    assert "lock_present" not in result_for(results, "held").reasons
    assert len(candidates) == 1


def test_include_orphans_makes_orphans_candidates(home: Path) -> None:
    write_store(home, "o", f"/not-temp-{NOW}")
    _, candidates = scan(home, NOW, min_age_ms=0, include_orphans=True)
    assert [c.workspace_key for c in candidates] == ["o"]


def test_missing_workspaces_dir_gives_empty_scan(home: Path) -> None:
    assert scan(home, NOW) == ((), ())


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ("/tmp", True),
        ("/tmp/", True),
        ("/tmp/x/y", True),
        ("/tmpfoo/x", False),
        ("/private/tmp/x", True),
        ("/var/folders/ab/cdef/T/x", True),
        ("/private/var/folders/ab/cdef/T", True),
        ("/var/folders/ab/cdef/X/x", False),
        ("/srv/scratch/x", False),
        ("relative/tmp/x", False),
        ("/tmp/../home/x", False),
    ],
)
def test_is_temp_root(root: str, expected: bool) -> None:
    assert is_temp_root(root) is expected


def test_is_temp_root_honours_platform_temp_dir() -> None:
    assert is_temp_root("/scratch/t/abc", ["/scratch/t"])
    assert not is_temp_root("/scratch/tt/abc", ["/scratch/t"])


def test_unreadable_directory_drops_other_reasons() -> None:
    facts = WorkspaceFacts(dir_name="x", workspace_dir="/h/x", readable=False, lock_present=True)
    r = classify(facts, NOW)
    assert r.reasons == ("workspace_dir_unreadable",)
    assert r.classification is Classification.INVALID_OR_UNREADABLE
    assert not is_candidate(r, include_orphans=True)


def test_cleanup_reasons_keep_their_codes_in_the_report_line() -> None:
    codes = (
        "workspace_dir_unreadable lock_present recent_workspace_dir missing_store invalid_json"
        " missing_workspace_root root_exists root_missing root_under_temp"
    )
    assert [r.value for r in CleanupReason] == codes.split()
    facts = WorkspaceFacts(
        dir_name="x", workspace_dir="/h/x", lock_present=True, store_state=StoreState.INVALID
    )
    line = b'{"workspaceKey":"x","workspaceDir":"/h/x","classification":"invalid_or_unreadable",'
    assert msgspec.json.encode(classify(facts, NOW)) == line + b'"reasons":["lock_present","invalid_json"]}'


def test_missing_root_in_store() -> None:
    facts = WorkspaceFacts(
        dir_name="x", workspace_dir="/h/x", store_state=StoreState.OK, store={"workspace": {}}
    )
    assert classify(facts, NOW).reasons == ("missing_workspace_root",)


def test_store_fields_are_reported() -> None:
    facts = WorkspaceFacts(
        dir_name="x",
        workspace_dir="/h/x",
        store_state=StoreState.OK,
        store={
            "workspace": {"root": "/tmp/gone", "key": "x"},
            "entries": [1, 2],
            "migrations": ["a", 3],
            "updatedAt": NOW_ISO,
        },
        root_exists=False,
    )
    r = classify(facts, NOW)
    assert (r.entry_count, r.migrations, r.updated_at, r.store_key) == (2, ("a",), NOW_ISO, None)


def test_quarantine_name() -> None:
    assert quarantine_name(NOW) == "workspace-cleanup-20260428T120000Z"


def test_report_format() -> None:
    definite = Residue(
        workspace_key="d",
        workspace_dir="/h/d",
        root="/tmp/gone",
        classification=Classification.TEST_TEMP_DEFINITE,
        reasons=("root_missing", "root_under_temp"),
    )
    orphan = Residue(workspace_key="o", workspace_dir="/h/o", classification=Classification.ORPHAN_UNKNOWN)
    text = format_report("dry-run", (definite, orphan), (definite,), (), None, include_orphans=False)
    assert text.splitlines() == [
        "Mode: dry-run",
        "Scanned: 2",
        "Candidates: 1",
        "",
        "Candidates:",
        "- d test_temp_definite root=/tmp/gone",
        "  reasons=root_missing,root_under_temp",
        "",
        "Unknown missing-root workspaces skipped: 1",
        "Use --include-orphans only after manually confirming they are safe to quarantine.",
    ]


# ---------------------------------------------------------------------------------------------
# Through the command line
# ---------------------------------------------------------------------------------------------


def test_cli_cleanup_dry_run_then_quarantine(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from adapters.cli import main

    monkeypatch.setenv("WORKMEM_NOW", NOW_ISO)
    definite = write_store(home, "definite", missing_temp_root("wm-cli-gone"))
    write_store(home, "orphan", f"/not-temp-{NOW}")
    capsys.readouterr()
    assert main(["--home", str(home), "cleanup", "--older-than-days", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mode: dry-run\nScanned: 2\nCandidates: 1\n")
    assert "- definite test_temp_definite root=" in out
    assert "Unknown missing-root workspaces skipped: 1" in out
    assert definite.exists()
    # the default recency guard (10 minutes) protects freshly written directories
    assert main(["--home", str(home), "cleanup", "--quarantine"]) == 0
    assert "Candidates: 0" in capsys.readouterr().out
    assert definite.exists()
    assert main(["--home", str(home), "cleanup", "--quarantine", "--older-than-days", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "quarantine"
    assert data["candidates"] == ["definite"]
    assert data["quarantineDir"].endswith("workspace-cleanup-20260428T120000Z")
    assert not definite.exists()
    assert (home / "workspaces" / "orphan").exists()
