"""The service's steps for the shared projection (docs/decisions.md#d17): before a session opens,
what changed in ``.workmem/`` is imported (through a command, in the same transaction); after every
commit, the memories that changed are exported. Where the workspace root holds no ``.workmem/``,
each step costs one ``stat``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from adapters.paths import PROJECTION_DIR
from domain.commands import Batch, Command, ImportProjection, OpenSession

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.operations import OpResult


def _steps(command: Command) -> tuple[Command, ...]:
    return command.steps if isinstance(command, Batch) else (command,)


def _opens_session(command: Command) -> bool:
    return any(isinstance(c, OpenSession) and c.parent is None for c in _steps(command))


def shares(root: str) -> bool:
    """Whether the workspace shares its memories (one ``stat``; nothing else is imported before)."""
    return os.path.isdir(os.path.join(root, PROJECTION_DIR))


def before(ws: Workspace, command: Command, now_ms: int) -> Command:
    """At a session start in a workspace that shares its memories: the projection's changes since the
    last sync are imported first, in the same transaction (a stat per file when nothing changed)."""
    if not _opens_session(command) or not shares(ws.root):
        return command
    # start-up time: a workspace that shares nothing never loads the projection (docs/performance.md)
    from adapters import projection

    layout = projection.layout_of(ws)
    found = projection.scan(layout, projection.read_manifest(layout))
    if found.touched or (found.tombstones is not None and not found.changed):
        with projection.locked(layout) as manifest:
            projection.refresh(layout, manifest, found)
            if found.tombstones is not None and not found.changed:
                seen = found.tombstones
                manifest.tombstones = (seen.size, seen.mtime_ns, seen.sha) if seen.sha else None
    imported = projection.import_command(found, layout.projected)
    return command if imported is None else Batch(steps=(imported, command))


def after(ws: Workspace, command: Command, result: OpResult, now_ms: int) -> None:
    """After a commit: record what an import took in, and export the memories that changed."""
    if not shares(ws.root):
        return

    imports = [c for c in _steps(command) if isinstance(c, ImportProjection)]
    basis = result.basis.store if result.basis is not None else None
    if not imports and (basis is None or result.store is basis):
        return
    # start-up time: a workspace that shares nothing never loads the projection (docs/performance.md)
    from adapters import projection, projection_export

    layout = projection.layout_of(ws)
    with projection.locked(layout) as manifest:
        also: list[str] = []
        for imported in imports:
            projection_export.record_import(manifest, imported, result.events)
            also += [f.path for f in imported.files]
        projection_export.export(layout, manifest, result.store, basis, also=also)
