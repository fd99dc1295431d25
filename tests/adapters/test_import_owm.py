"""``workmem import-owm`` (docs/decisions.md#d11): existing opencode-working-memory stores are copied,
never modified."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from adapters import paths
from adapters.cli import main
from adapters.import_owm import (
    COPIED,
    INVALID,
    KEPT,
    ImportSourceError,
    default_source,
    format_report,
    import_owm,
)
from domain.codec import decode_store

NOW_ISO = "2026-05-01T12:00:00.000Z"


def checksums(root: Path) -> dict[str, tuple[str, int, float]]:
    out: dict[str, tuple[str, int, float]] = {}
    for p in sorted(root.rglob("*")):
        st = p.stat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
        out[str(p.relative_to(root))] = (digest, stat.S_IMODE(st.st_mode), st.st_mtime)
    return out


def entry(i: int, **extra: object) -> dict[str, object]:
    return {
        "id": f"mem_{i}",
        "type": "feedback",
        "text": f"Always run the linter before committing, variant {i}",
        "source": "explicit",
        "confidence": 1,
        "status": "active",
        "createdAt": NOW_ISO,
        "updatedAt": NOW_ISO,
        **extra,
    }


def event_line(i: int) -> str:
    return json.dumps(
        {
            "version": 1,
            "eventId": f"evt_{1000 + i}_abcdefgh",
            "createdAt": NOW_ISO,
            "workspaceKey": "k",
            "workspaceRootHash": "k",
            "type": "promotion_promoted",
            "phase": "promotion",
            "outcome": "promoted",
            "reasonCodes": ["new_memory"],
        }
    )


@pytest.fixture
def owm(tmp_path: Path) -> tuple[Path, str, str]:
    """An opencode-working-memory data directory with one workspace; returns (dir, root, key)."""
    root = tmp_path / "project"
    root.mkdir()
    key = paths.workspace_key(str(root))
    base = tmp_path / "xdg" / "opencode-working-memory"
    ws = base / "workspaces" / key
    (ws / "sessions").mkdir(parents=True)
    (ws / "evidence").mkdir()
    store = {
        "version": 1,
        "workspace": {"root": str(root), "key": key, "futureField": {"a": 1}},
        "limits": {"maxRenderedChars": 3600, "maxEntries": 28},
        "entries": [entry(1, pluginOnlyField="kept"), entry(2)],
        "migrations": ["2026-04-26-p0-cleanup"],
        "updatedAt": NOW_ISO,
        "lastActivityAt": NOW_ISO,
        "someNewTopLevel": [1, 2, 3],
    }
    (ws / "workspace-memory.json").write_text(json.dumps(store, indent=2))
    journal = {
        "version": 1,
        "workspace": {"root": str(root), "key": key},
        "entries": [entry(3, pendingOwnerSessionID="ses_a")],
        "updatedAt": NOW_ISO,
    }
    (ws / "workspace-pending-journal.json").write_text(json.dumps(journal, indent=2))
    session = {
        "version": 1,
        "sessionID": "ses_a",
        "turn": 3,
        "updatedAt": NOW_ISO,
        "activeFiles": [],
        "openErrors": [],
        "recentDecisions": [],
        "pendingMemories": [],
    }
    (ws / "sessions" / paths.session_file_name("ses_a")).write_text(json.dumps(session))
    (ws / "evidence" / "events.jsonl").write_text(
        event_line(1) + "\n{not valid json\n" + event_line(2) + "\n"
    )
    (base / "extraction-rejections.jsonl").write_text(
        json.dumps({"timestamp": NOW_ISO, "type": "feedback", "text": "x", "reasons": ["too_short"]}) + "\n"
    )
    (base / "migration-logs").mkdir()
    (base / "migration-logs" / "2026-04-28-quality-cleanup.jsonl").write_text('{"entryId":"m"}\n')
    return base, str(root), key


def test_copies_everything_and_leaves_originals_untouched(owm: tuple[Path, str, str], tmp_path: Path) -> None:
    base, _, key = owm
    home = tmp_path / "home"
    before = checksums(base)
    report = import_owm(base, home)
    assert checksums(base) == before  # byte-identical, same modes and mtimes
    assert report.count(COPIED) == 6
    assert report.count(INVALID) == 0
    layout = paths.workspace_paths_for_key(home, key)
    store = decode_store(layout.store.read_bytes()).unwrap()
    assert [e.id for e in store.entries] == ["mem_1", "mem_2"]
    raw = json.loads(layout.store.read_text())
    assert raw["someNewTopLevel"] == [1, 2, 3]  # unknown fields are kept
    assert raw["workspace"]["futureField"] == {"a": 1}
    assert raw["entries"][0]["pluginOnlyField"] == "kept"
    assert layout.journal.exists()
    assert (layout.sessions / paths.session_file_name("ses_a")).exists()
    assert len(layout.evidence.read_text().splitlines()) == 2  # invalid line dropped
    assert paths.rejection_log(home).exists()
    assert (home / "migration-logs" / "2026-04-28-quality-cleanup.jsonl").exists()
    assert stat.S_IMODE(layout.store.stat().st_mode) == 0o600
    assert stat.S_IMODE(layout.directory.stat().st_mode) == 0o700


def test_existing_workmem_files_are_not_overwritten(owm: tuple[Path, str, str], tmp_path: Path) -> None:
    base, _, key = owm
    home = tmp_path / "home"
    layout = paths.workspace_paths_for_key(home, key)
    layout.directory.mkdir(parents=True)
    layout.store.write_text('{"mine": true}')
    report = import_owm(base, home)
    assert layout.store.read_text() == '{"mine": true}'
    kept = [f for f in report.files if f.action == KEPT]
    assert [f.destination for f in kept] == [layout.store]
    assert "kept existing (not overwritten): 1" in format_report(report)
    # a second import keeps everything it wrote the first time
    again = import_owm(base, home)
    assert again.count(COPIED) == 0
    assert again.count(KEPT) == len(again.files)


def test_invalid_store_is_skipped_and_reported(owm: tuple[Path, str, str], tmp_path: Path) -> None:
    base, _, key = owm
    store_path = base / "workspaces" / key / "workspace-memory.json"
    store_path.write_text("{ truncated")
    report = import_owm(base, tmp_path / "home")
    invalid = [f for f in report.files if f.action == INVALID]
    assert [f.source for f in invalid] == [store_path]
    assert store_path.read_text() == "{ truncated"


def test_data_home_parent_is_accepted(owm: tuple[Path, str, str], tmp_path: Path) -> None:
    base, _, _ = owm
    report = import_owm(base.parent, tmp_path / "home")
    assert report.source == base


def test_missing_source_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError):
        import_owm(tmp_path / "nothing", tmp_path / "home")


def test_default_source_follows_xdg(tmp_path: Path) -> None:
    assert default_source({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "opencode-working-memory"
    expected = Path(os.path.expanduser("~/.local/share/opencode-working-memory"))
    assert default_source({"XDG_DATA_HOME": ""}) == expected
    assert default_source({}) == expected


def test_cli_import_owm(
    owm: tuple[Path, str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, root, _ = owm
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_DATA_HOME", str(base.parent))
    before = checksums(base)
    assert main(["--home", str(home), "import-owm"]) == 0
    out = capsys.readouterr().out
    assert "copied: 6" in out
    assert "The originals were not modified." in out
    assert checksums(base) == before
    # the imported memories are visible to workmem at once
    assert main(["--home", str(home), "--workspace", root, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(m["id"] for m in listed["memories"]) == ["mem_1", "mem_2"]


def test_cli_import_owm_missing_dir_is_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--home", str(tmp_path / "h"), "import-owm", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("workmem: ") and err.count("\n") == 1


def test_imported_evidence_is_sanitised_like_workmems_own_d6(
    owm: tuple[Path, str, str], tmp_path: Path
) -> None:
    """Raw session ids are hashed, reference hashes (16 hex) kept, previews and details redacted and
    without absolute paths — even though the original line was written by another tool."""
    base, _, key = owm
    line = json.loads(event_line(3))
    line.update(
        {
            "type": "hook_failed",
            "sessionHash": "ses_RAW_SESSION",
            "messageHash": "0123456789abcdef",
            "textPreview": "password: hunter2 leaked",
            "details": {"message": "Invalid JSON in /home/alice/.local/share/x.json: password=hunter2"},
        }
    )
    events_file = next(base.rglob("events.jsonl"))
    events_file.write_text(json.dumps(line) + "\n")
    import_owm(base, tmp_path / "home")
    written = paths.workspace_paths_for_key(tmp_path / "home", key).evidence.read_text()
    assert "ses_RAW_SESSION" not in written and "hunter2" not in written and "/home/alice" not in written
    record = json.loads(written.splitlines()[0])
    assert record["messageHash"] == "0123456789abcdef"
    assert len(record["sessionHash"]) == 16
