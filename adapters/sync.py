"""``sync``: the shared projection in both directions (docs/decisions.md#d17).

:func:`sync_workspace` creates ``.workmem/`` when it is missing (the only way, with ``install git``,
that the folder comes to exist), imports what changed in it since the last sync — one
:class:`~domain.commands.ImportProjection` run by the service, so every file passes the same gate as
any other write — and exports the whole store, and reports what moved each way and every file it did
not import, with its line. ``dry_run`` computes the same with the pure steps and writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from adapters import projection, projection_export
from adapters.projection import DIRECTORY, Layout
from domain.enums import Outcome

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.commands import ImportProjection
    from domain.model import WorkspaceStore
    from domain.operations import OpResult


class FileNote(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One projection file sync took in or did not: ``file`` is its path from the workspace root."""

    file: str
    line: int
    outcome: str  # imported, rejected, quarantined
    reasons: tuple[str, ...] = ()
    memory: str | None = None
    message: str = ""


class SyncReport(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What one sync of one store moved. ``imported``: files that changed the store; ``flagged``:
    files it does not import (until they are fixed); ``written``/``removed``: files the export
    changed; ``git``: what happened in the git repository of the user's store."""

    root: str
    projected: str
    created: bool = False
    dry_run: bool = False
    imported: tuple[FileNote, ...] = ()
    flagged: tuple[FileNote, ...] = ()
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    git: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.flagged


def _where(rel: str) -> str:
    return f"{DIRECTORY}/{rel}"


def _imported(result: OpResult | None) -> tuple[FileNote, ...]:
    if result is None:
        return ()
    from domain.enums import EventType

    notes: list[FileNote] = []
    for event in result.events:
        if event.type is not EventType.PROJECTION_FILE_IMPORTED:
            continue
        path = event.details.get("file")
        if isinstance(path, str):
            memory = event.memory.memory_id if event.memory is not None else None
            notes.append(
                FileNote(
                    file=_where(path),
                    line=1,
                    outcome=Outcome.IMPORTED,
                    reasons=event.reason_codes,
                    memory=memory,
                )
            )
    return tuple(notes)


def _flagged(flags: dict[str, projection.Flag]) -> tuple[FileNote, ...]:
    return tuple(
        FileNote(file=_where(rel), line=f.line, outcome=f.outcome, reasons=f.reasons, message=f.message)
        for rel, f in sorted(flags.items())
    )


def flagged_notes(ws: Workspace) -> tuple[FileNote, ...] | None:
    """The files of the workspace's projection that sync did not import (``None``: the workspace
    shares nothing); read-only, for ``health``."""
    if not projection.exists(ws.root):
        return None
    return _flagged(projection_export.flagged(projection.layout_of(ws)))


def health_lines(notes: tuple[FileNote, ...]) -> list[str]:
    """What ``health`` says about the shared projection."""
    if not notes:
        return ["Shared projection (.workmem/): every file imported"]
    lines = [
        f"Shared projection (.workmem/): {len(notes)} file(s) not imported (fix them, then `workmem sync`)"
    ]
    for note in notes:
        detail = f": {note.message}" if note.message else ""
        lines.append(f"  - {note.file}:{note.line} {note.outcome} {','.join(note.reasons)}{detail}")
    return lines


def _dry_flagged(layout: Layout, result: OpResult | None) -> tuple[FileNote, ...]:
    found = dict(projection_export.flagged(layout))
    if result is not None:
        for rel, seen in projection_export.outcomes(result.events).items():
            if seen.outcome != Outcome.IMPORTED:
                found[rel] = projection.Flag(
                    size=0, mtime_ns=0, sha="", line=seen.line, reasons=seen.reasons,
                    outcome=seen.outcome, message=seen.message,
                )  # fmt: skip
            else:
                found.pop(rel, None)
    return _flagged(found)


def _scan(ws: Workspace, layout: Layout, now_ms: int) -> tuple[WorkspaceStore, projection.Scan]:
    store = ws.read_store(now_ms).value
    held, archived = projection_export.known_stems(store)
    return store, projection.scan(layout, projection.read_manifest(layout), held | archived)


def sync_workspace(ws: Workspace, now_ms: int, *, dry_run: bool = False) -> SyncReport:
    """Sync the projection of ``ws`` (see the module documentation)."""
    layout = projection.layout_of(ws)
    if dry_run:
        return _dry_run(ws, layout, now_ms)
    created = projection.create(layout)
    store, found = _scan(ws, layout, now_ms)
    with projection.locked(layout) as manifest:
        projection.refresh(layout, manifest, found)
    command = projection.import_command(found, layout.projected)
    result = None
    if command is not None:
        from adapters.service import execute

        result = execute(ws, command, now_ms)
        store = ws.read_store(now_ms).value
    with projection.locked(layout) as manifest:
        if command is None and found.tombstones is not None:
            _keep_tombstones(manifest, found.tombstones)
        # every file agrees with this revision already (the exports after each write kept them)
        current = manifest.revision is not None and manifest.revision == store.revision
        exported = projection_export.export(layout, manifest, store, store if current else None)
    return SyncReport(
        root=str(layout.root),
        projected=layout.projected.value,
        created=created,
        imported=_imported(result),
        flagged=_flagged(projection_export.flagged(layout)),
        written=tuple(_where(p) for p in exported.written),
        removed=tuple(_where(p) for p in exported.removed),
    )


def _keep_tombstones(manifest: projection.Manifest, seen: object) -> None:
    from domain.projection.importing import ProjectionFile

    if isinstance(seen, ProjectionFile):
        manifest.tombstones = (seen.size, seen.mtime_ns, seen.sha) if seen.sha else None


def _dry_run(ws: Workspace, layout: Layout, now_ms: int) -> SyncReport:
    from adapters.service import preview

    created = not projection.exists(layout.root)
    store, found = _scan(ws, layout, now_ms) if not created else (ws.read_store(now_ms).value, None)
    command: ImportProjection | None = None
    if found is not None:
        command = projection.import_command(found, layout.projected)
    result = None
    if command is not None:
        result = preview(ws, command, now_ms)
        assert result is not None  # a workspace command always runs
        store = result.store
    manifest = projection.read_manifest(layout)
    exported = projection_export.export(layout, manifest, store, write=False)
    return SyncReport(
        root=str(layout.root),
        projected=layout.projected.value,
        created=created,
        dry_run=True,
        imported=_imported(result),
        flagged=_dry_flagged(layout, result),
        written=tuple(_where(p) for p in exported.written),
        removed=tuple(_where(p) for p in exported.removed),
    )
