"""Paths and on-disk layout (docs/decisions.md#data-home-and-workspace-paths)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from adapters.paths import (
    data_home,
    migration_log,
    rejection_log,
    resolved_root,
    session_file,
    workspace_key,
    workspace_paths,
    workspace_root_hash,
)


def sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def test_workmem_home_wins_when_set(tmp_path: Path) -> None:
    assert data_home({"WORKMEM_HOME": str(tmp_path), "XDG_DATA_HOME": "/elsewhere"}) == tmp_path


def test_override_wins_over_environment(tmp_path: Path) -> None:
    assert data_home({"WORKMEM_HOME": "/nope"}, override=str(tmp_path)) == tmp_path


def test_xdg_data_home_is_honoured() -> None:
    assert data_home({"XDG_DATA_HOME": "/data"}) == Path("/data/workmem")


def test_empty_values_count_as_unset_b1() -> None:
    """docs/decisions.md#b1: the reference used ``??`` so XDG_DATA_HOME="" gave relative paths."""
    home = data_home({"WORKMEM_HOME": "", "XDG_DATA_HOME": ""})
    assert home.is_absolute()
    assert home.name == "workmem"


def test_relative_xdg_data_home_is_ignored() -> None:
    home = data_home({"XDG_DATA_HOME": "relative/dir"})
    assert home.is_absolute()


def test_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WORKMEM_HOME", str(tmp_path))
    assert data_home() == tmp_path


def test_platformdirs_default_honours_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WORKMEM_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_home() == tmp_path / "workmem"


def test_workspace_key_hashes_the_realpath(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert workspace_key(str(link)) == sha(os.path.realpath(real))[:16]
    assert workspace_key(str(link)) == workspace_key(str(real))


def test_workspace_key_of_a_missing_root_hashes_the_raw_string() -> None:
    assert workspace_key("/no/such/root/xyz") == sha("/no/such/root/xyz")[:16]
    assert resolved_root("/no/such/root/xyz") == "/no/such/root/xyz"


def test_root_hash_differs_from_workspace_key_b8(tmp_path: Path) -> None:
    """docs/decisions.md#b8: the reference wrote the workspace key into workspaceRootHash too."""
    assert workspace_root_hash(str(tmp_path)) != workspace_key(str(tmp_path))
    assert workspace_root_hash(str(tmp_path)) == sha("root:" + os.path.realpath(tmp_path))[:16]


def test_workspace_layout(tmp_path: Path) -> None:
    root = str(tmp_path)
    home = Path("/h")
    paths = workspace_paths(home, root)
    key = workspace_key(root)
    assert paths.directory == home / "workspaces" / key
    assert paths.store == paths.directory / "workspace-memory.json"
    assert paths.journal == paths.directory / "workspace-pending-journal.json"
    assert paths.sessions == paths.directory / "sessions"
    assert paths.evidence == paths.directory / "evidence" / "events.jsonl"
    assert paths.archive == paths.directory / "archive.jsonl"
    assert paths.lock == paths.directory / "workspace.lock"


def test_session_file_uses_32_hex_of_sha256_b31() -> None:
    """docs/decisions.md#b31: the docs said sessions/{sessionID}.json; the name is sha256(id)[:32]."""
    paths = workspace_paths(Path("/h"), "/r")
    path = session_file(paths, "ses_../../etc")
    assert path.parent == paths.sessions
    assert path.name == sha("ses_../../etc")[:32] + ".json"


def test_global_logs() -> None:
    home = Path("/h")
    assert rejection_log(home) == home / "extraction-rejections.jsonl"
    assert migration_log(home, "2026-04-28-quality-cleanup") == home / "migration-logs" / (
        "2026-04-28-quality-cleanup.jsonl"
    )


@pytest.mark.parametrize("bad", ["../escape", "a/b", "..", ""])
def test_migration_log_names_stay_inside_the_log_directory(bad: str) -> None:
    path = migration_log(Path("/h"), bad)
    assert path.parent == Path("/h/migration-logs")
    assert path.name not in ("..jsonl", "...jsonl", ".jsonl")


def test_the_interpreter_digests_equal_hashlibs() -> None:
    import hashlib

    from domain.ids import sha1, sha256

    for data in (b"", b"workmem", "記住 \U0001f600".encode()):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert sha256(data).digest() == hashlib.sha256(data).digest()
        assert sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()


# ---------------------------------------------------------------------------------------------------
# A workspace is the repository, not the exact directory (docs/decisions.md#d15)
# ---------------------------------------------------------------------------------------------------


def test_a_directory_of_a_repository_belongs_to_its_root(tmp_path: Path) -> None:
    from adapters.paths import workspace_root_of

    repo = tmp_path / "proj"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert workspace_root_of(str(repo / "src" / "deep")) == str(repo)
    assert workspace_root_of(str(repo)) == str(repo)
    (repo / "src" / ".workmem").mkdir()  # a root marked by hand, nearer than the repository's
    assert workspace_root_of(str(repo / "src" / "deep")) == str(repo / "src")
    worktree = tmp_path / "wt"
    (worktree / "pkg").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    assert workspace_root_of(str(worktree / "pkg")) == str(worktree)
    loose = tmp_path / "loose" / "dir"
    loose.mkdir(parents=True)
    assert workspace_root_of(str(loose)) == str(loose)  # no marker anywhere: the directory itself


def test_a_workspace_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    from adapters.paths import NoSuchWorkspace, workspace_root_of

    for bad in (str(tmp_path / "gone"), str(tmp_path) + "\x00x", str(tmp_path / "file")):
        if bad.endswith("file"):
            Path(bad).write_text("x")
        with pytest.raises(NoSuchWorkspace):
            workspace_root_of(bad)
