"""Find and quarantine leftover workspace directories (the file-system half of ``workmem cleanup``).

Dry-run by default: a scan only reads. ``quarantine`` *moves* candidate directories to
``<home>/quarantine/workspace-cleanup-<stamp>/workspaces/<directory name>/`` and appends one line per
move to ``manifest.jsonl`` next to ``workspaces/``. Nothing is ever deleted. The rules that decide what
is a candidate live in :mod:`domain.cleanup`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from adapters import jsonl, paths
from domain.cleanup import (
    DEFAULT_MIN_AGE_MS,
    QuarantineRecord,
    Residue,
    StoreState,
    WorkspaceFacts,
    classify,
    is_candidate,
    quarantine_name,
    quarantine_record,
)

#: The reference's per-file lock; its presence means a writer is (or was) at work.
LEGACY_LOCK_SUFFIX = ".lock"

try:  # POSIX advisory locks: how ``filelock`` holds ``workspace.lock`` on Unix
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class CleanupRun(NamedTuple):
    mode: str
    results: tuple[Residue, ...]
    candidates: tuple[Residue, ...]
    quarantined: tuple[QuarantineRecord, ...]
    quarantine_dir: Path | None


def workspaces_root(home: Path) -> Path:
    return home / "workspaces"


def temp_dirs() -> tuple[str, ...]:
    """The platform's temporary directory, as configured and as resolved (they differ on macOS)."""
    base = tempfile.gettempdir()
    return tuple(dict.fromkeys((os.path.abspath(base), os.path.realpath(base))))


def _lock_held(lock: Path) -> bool:
    """Is ``workspace.lock`` held by a live process right now? Checked with a shared, non-blocking
    advisory lock on an existing file opened read-only, so the check itself changes nothing."""
    if fcntl is None:
        return lock.exists()
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def gather_facts(directory: Path) -> WorkspaceFacts:
    """Look at one workspace directory without changing anything."""
    layout = paths.workspace_paths_for_key(directory.parent.parent, directory.name)
    try:
        st = os.stat(directory)
        os.listdir(directory)
    except OSError:
        return WorkspaceFacts(dir_name=directory.name, workspace_dir=str(directory), readable=False)
    lock_present = Path(str(layout.store) + LEGACY_LOCK_SUFFIX).exists() or _lock_held(layout.lock)
    state = StoreState.MISSING
    store: Any = None
    try:
        data = jsonl.read_bytes(layout.store)
    except OSError:
        data = b""
        state = StoreState.INVALID
    if data is not None and state is not StoreState.INVALID:
        try:
            store = json.loads(data)
            state = StoreState.OK
        except ValueError:
            state = StoreState.INVALID
    root_exists: bool | None = None
    if isinstance(store, dict):
        workspace = store.get("workspace")
        root = workspace.get("root") if isinstance(workspace, dict) else None
        if isinstance(root, str) and root:
            root_exists = os.path.exists(root)
    return WorkspaceFacts(
        dir_name=directory.name,
        workspace_dir=str(directory),
        lock_present=lock_present,
        dir_mtime_ms=st.st_mtime_ns / 1_000_000,
        store_state=state,
        store=store,
        root_exists=root_exists,
    )


def scan(
    home: Path, now_ms: int, *, min_age_ms: int = DEFAULT_MIN_AGE_MS, include_orphans: bool = False
) -> tuple[tuple[Residue, ...], tuple[Residue, ...]]:
    """Classify every workspace directory under ``home`` (sorted by name); returns (results,
    candidates). A missing ``workspaces/`` directory gives nothing."""
    root = workspaces_root(home)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return (), ()
    tmp = temp_dirs()
    results: list[Residue] = []
    for name in names:
        directory = root / name
        if not directory.is_dir() or directory.is_symlink():
            continue
        results.append(classify(gather_facts(directory), now_ms, min_age_ms=min_age_ms, temp_dirs=tmp))
    candidates = tuple(r for r in results if is_candidate(r, include_orphans=include_orphans))
    return tuple(results), candidates


def _free_destination(parent: Path, name: str) -> Path:
    """``parent/name``, or ``parent/name-2``, ``-3``, … when that is taken (never overwrite)."""
    dest = parent / name
    counter = 2
    while dest.exists():
        dest = parent / f"{name}-{counter}"
        counter += 1
    return dest


def cleanup(
    home: Path,
    now_ms: int,
    *,
    mode: str = "dry-run",
    min_age_ms: int = DEFAULT_MIN_AGE_MS,
    include_orphans: bool = False,
) -> CleanupRun:
    """Scan, and in ``quarantine`` mode move every candidate aside. A failed move raises ``OSError``
    after the earlier moves (each already recorded in the manifest); nothing is rolled back or deleted."""
    results, candidates = scan(home, now_ms, min_age_ms=min_age_ms, include_orphans=include_orphans)
    if mode == "dry-run" or not candidates:
        return CleanupRun(mode, results, candidates, (), None)
    quarantine_dir = home / "quarantine" / quarantine_name(now_ms)
    target_parent = quarantine_dir / "workspaces"
    jsonl.ensure_private_dir(target_parent, fix_mode=False)
    done: list[QuarantineRecord] = []
    for candidate in candidates:
        source = Path(candidate.workspace_dir)
        dest = _free_destination(target_parent, source.name)
        os.rename(source, dest)
        jsonl.fsync_dir(target_parent)
        record = quarantine_record(candidate, str(source), str(dest), now_ms)
        jsonl.append_records(quarantine_dir / "manifest.jsonl", (record,), durable=True)
        done.append(record)
    with contextlib.suppress(OSError):
        jsonl.fsync_dir(workspaces_root(home))
    return CleanupRun(mode, results, candidates, tuple(done), quarantine_dir)
