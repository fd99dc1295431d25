"""Where workmem keeps its files (docs/decisions.md#data-home-and-workspace-paths).

Layout under the data home (``WORKMEM_HOME``, else the platform's user data directory for ``workmem``)::

    workspaces/<key>/workspace-memory.json          the durable store
    workspaces/<key>/workspace-pending-journal.json the pending journal
    workspaces/<key>/sessions/<sha256(id)[:32]>.json one file per session (hot state)
    workspaces/<key>/evidence/events.jsonl          the evidence log
    workspaces/<key>/archive.jsonl                  memories moved out of the store (docs/decisions.md#d2)
    workspaces/<key>/workspace.lock                 the workspace's cross-process lock
    workspaces/<key>/projection-manifest.json       what this machine knows of .workmem/
    workspaces/<key>/projection.lock                the lock of the projection's files
    user/                                           the root of the user's own store (scope user)
    extraction-rejections.jsonl                     global log of rejected candidates
    migration-logs/<migration id>.jsonl             audit lines of store migrations

``<key>`` is ``sha256(realpath(root))[:16]``, or the hash of the raw root when it does not exist.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, NamedTuple

from domain.ids import sha256

APP_NAME: Final = "workmem"
HOME_ENV: Final = "WORKMEM_HOME"

STORE_FILE: Final = "workspace-memory.json"
JOURNAL_FILE: Final = "workspace-pending-journal.json"
SESSIONS_DIR: Final = "sessions"
EVIDENCE_DIR: Final = "evidence"
EVIDENCE_FILE: Final = "events.jsonl"
ARCHIVE_FILE: Final = "archive.jsonl"
LOCK_FILE: Final = "workspace.lock"
LOCK_HOLDER_FILE: Final = "workspace.lock.holder"
REJECTION_FILE: Final = "extraction-rejections.jsonl"
MIGRATION_DIR: Final = "migration-logs"

_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")


def data_home(env: Mapping[str, str] | None = None, override: str | None = None) -> Path:
    """The directory that holds every workspace.

    ``override`` wins when non-empty; then ``WORKMEM_HOME`` when non-empty; then the platform's user
    data directory for ``workmem``, which honours an absolute ``XDG_DATA_HOME`` (an empty or relative
    value counts as unset, as the XDG specification says). ``env`` defaults to the process environment.
    """
    if override:
        return Path(override).expanduser()
    if env is None:
        env = os.environ
    value = env.get(HOME_ENV, "")
    if value:
        return Path(value).expanduser()
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / APP_NAME
    if sys.platform not in ("win32", "darwin"):
        # platformdirs' Unix default, computed here so that an explicit ``env`` is not mixed with
        # the process environment's XDG_DATA_HOME.
        return Path(os.path.expanduser("~/.local/share")) / APP_NAME
    import platformdirs  # start-up time: not on XDG platforms

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


#: The folder of a workspace's shared projection (docs/decisions.md#d17).
PROJECTION_DIR: Final = ".workmem"

#: What marks a workspace root, looked for from a directory upwards (docs/decisions.md#d15): a
#: ``.workmem`` folder (the shared projection, or a root someone marked by hand) or ``.git`` (a git work
#: tree; a worktree's or a submodule's ``.git`` is a file).
ROOT_MARKERS: Final = (PROJECTION_DIR, ".git")


class NoSuchWorkspace(ValueError):
    """A workspace directory that does not exist (or is not a path); the message is one line."""


def workspace_root_of(path: str) -> str:
    """The workspace a directory belongs to: the nearest directory from ``path`` upwards (``path``
    included) that holds a :data:`ROOT_MARKERS` entry, else ``path`` itself (made absolute, ``~``
    expanded). So ``proj/src`` and ``proj`` of one repository are one workspace. Raises
    :class:`NoSuchWorkspace` when ``path`` names no directory."""
    if "\x00" in path:
        raise NoSuchWorkspace("the workspace is not a path (it holds a NUL character)")
    start = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(start):
        raise NoSuchWorkspace(f"the workspace directory {start} does not exist")
    current = start
    while True:
        if any(os.path.lexists(os.path.join(current, marker)) for marker in ROOT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def resolved_root(root: str) -> str:
    """``realpath(root)`` when the root exists, else the raw string (the reference's fallback)."""
    try:
        return os.path.realpath(root, strict=True)
    except (OSError, ValueError):
        return root


def _hash(value: str, width: int) -> str:
    return sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:width]


def workspace_key(root: str) -> str:
    """``sha256(realpath(root))[:16]``; the raw root is hashed when it does not exist."""
    return _hash(resolved_root(root), 16)


def workspace_root_hash(root: str) -> str:
    """The ``workspaceRootHash`` of evidence records: a hash of the resolved root that is *not* the
    workspace key (the reference writes the key twice, docs/decisions.md#b8), so the two fields carry
    distinct values."""
    return _hash("root:" + resolved_root(root), 16)


class WorkspacePaths(NamedTuple):
    directory: Path
    store: Path
    journal: Path
    sessions: Path
    evidence: Path
    archive: Path
    lock: Path
    lock_holder: Path
    evidence_dir: Path


def workspace_dir(home: Path, key: str) -> Path:
    return home / "workspaces" / key


def workspace_paths_for_key(home: Path, key: str) -> WorkspacePaths:
    directory = workspace_dir(home, key)
    evidence_dir = directory / EVIDENCE_DIR
    return WorkspacePaths(
        directory=directory,
        store=directory / STORE_FILE,
        journal=directory / JOURNAL_FILE,
        sessions=directory / SESSIONS_DIR,
        evidence=evidence_dir / EVIDENCE_FILE,
        archive=directory / ARCHIVE_FILE,
        lock=directory / LOCK_FILE,
        lock_holder=directory / LOCK_HOLDER_FILE,
        evidence_dir=evidence_dir,
    )


def workspace_paths(home: Path, root: str) -> WorkspacePaths:
    return workspace_paths_for_key(home, workspace_key(root))


def session_file_name(session_id: str) -> str:
    """``sha256(session_id)[:32] + ".json"``; the raw id never appears in a file name."""
    return _hash(session_id, 32) + ".json"


def session_file(paths: WorkspacePaths, session_id: str) -> Path:
    return paths.sessions / session_file_name(session_id)


def rejection_log(home: Path) -> Path:
    return home / REJECTION_FILE


def safe_file_stem(value: str) -> str:
    """``value`` with every character outside ``[A-Za-z0-9_.-]`` replaced by ``_`` (never empty,
    never a relative-path component)."""
    stem = _UNSAFE_NAME.sub("_", value)[:120]
    if not stem or set(stem) <= {"."}:
        stem = "_" + stem
    return stem


def migration_log(home: Path, migration_id: str) -> Path:
    return home / MIGRATION_DIR / f"{safe_file_stem(migration_id)}.jsonl"
