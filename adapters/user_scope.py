"""The user's own store (docs/decisions.md#d17): memories of scope ``user`` — a person's standing
preferences, true in every workspace — kept once, in the workspace ``<data home>/user``, and shown in
the block of every workspace within its caps.

The service routes here: a ``remember`` of scope ``user`` is stored in the user's store; a
``forget``/``supersede``/``restore`` of an id the workspace does not know is tried there; a ``user``
memory promoted in a workspace (``remember for all projects: …`` said in a session) is handed over to
the user's store after the commit. The user's store shares its memories like any workspace:
``workmem sync --user`` gives it a ``.workmem/`` projection, which can be a git repository of its own
(``adapters/git_sync.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from adapters.filestore import Workspace
from adapters.jsonl import ensure_private_dir
from adapters.paths import workspace_paths
from domain.commands import Command, Forget, Remember, Restore, Supersede
from domain.enums import MemoryStatus, Scope
from domain.model import MemoryEntry
from domain.operations import CommandOutcome
from domain.projection.scopes import scope_of

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.operations import OpResult

#: The user's own store is the workspace ``<data home>/user``.
USER_DIR: Final = "user"


def user_root(home: Path) -> Path:
    """The root of the user's own store (``user`` memories, docs/decisions.md#d17)."""
    return home / USER_DIR


def is_user(ws: Workspace) -> bool:
    return ws.root == str(user_root(ws.home))


def user_workspace(ws: Workspace) -> Workspace:
    """The user's own store, under the same data home (its root directory is created 0700)."""

    root = user_root(ws.home)
    ensure_private_dir(root, fix_mode=False, no_symlink=True)
    return Workspace(ws.home, str(root), lock_timeout_s=ws.lock_timeout_s, cache=ws.cache)


def routed(ws: Workspace, command: Command) -> Workspace:
    """Where ``command`` runs: a ``remember`` of scope ``user`` runs in the user's store."""
    if isinstance(command, Remember) and command.scope is Scope.USER and not is_user(ws):
        return user_workspace(ws)
    return ws


def retry_in_user_store(ws: Workspace, command: Command, result: OpResult) -> bool:
    """Whether an edit of an id unknown to the workspace should be tried in the user's store."""
    if is_user(ws) or not isinstance(command, Forget | Supersede | Restore):
        return False
    return result.outcome is CommandOutcome.UNKNOWN and os.path.exists(user_workspace_store(ws))


def user_workspace_store(ws: Workspace) -> str:

    return str(workspace_paths(ws.home, str(user_root(ws.home))).store)


def shared_entries(ws: Workspace, now_ms: int) -> tuple[MemoryEntry, ...]:
    """The active memories of the user's store, for the block of ``ws`` (read-only; nothing when
    there is no user store, or ``ws`` is it)."""
    if is_user(ws) or not os.path.exists(user_workspace_store(ws)):
        return ()

    user = Workspace(ws.home, str(user_root(ws.home)), cache=ws.cache)
    loaded = user.read_store(now_ms)
    return tuple(e for e in loaded.value.entries if e.status is MemoryStatus.ACTIVE)


def _handed_over(entry: MemoryEntry, before: MemoryEntry | None) -> bool:
    if entry.status is not MemoryStatus.ACTIVE or scope_of(entry) is not Scope.USER:
        return False
    if before is None or (entry.pinned and not before.pinned):  # a pin travels too (docs/decisions.md#d20)
        return True
    return (before.text, before.type, before.scope, before.status) != (
        entry.text,
        entry.type,
        entry.scope,
        entry.status,
    )


def handover(
    ws: Workspace, command: Command, result: OpResult, now_ms: int
) -> list[tuple[Workspace, Command]]:
    """After a commit: a ``user`` memory that is new or changed in a workspace is stored in the
    user's store too (through the same gate; the same memory there is reinforced, not doubled): the
    ``Remember`` commands the service runs on the user's store next."""
    basis = result.basis.store if result.basis is not None else None
    if is_user(ws) or basis is None or result.store is basis:
        return []
    before = {e.id: e for e in basis.entries}
    moving = [e for e in result.store.entries if _handed_over(e, before.get(e.id))]
    if not moving:
        return []
    user = user_workspace(ws)
    return [
        (
            user,
            Remember(
                text=entry.text,
                type=entry.type,
                importance=entry.user_importance,
                rationale=entry.rationale,
                scope=Scope.USER,
                pin=entry.pinned,  # within the user's store's own pinned budget (docs/decisions.md#d20)
                force=True,  # admitted in the workspace already (docs/decisions.md#d20)
            ),
        )
        for entry in moving
    ]
