"""The shared projection held as values, for the tests: what a full export of a store writes (path ->
text, ``tombstones.jsonl`` included) and the import command of such a set of files, both with the
pure steps of :mod:`domain.projection` (the shell's scan and writes are tested on real files)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from domain.commands import ImportProjection
from domain.enums import Scope
from domain.model import PendingJournal, WorkspaceRef, WorkspaceStore
from domain.projection import tombstones
from domain.projection.records import ProjectionFile
from domain.projection.tombstones import TOMBSTONES_FILE, projected_tombstones
from domain.projection.view import text_hash, wanted_files
from domain.workspace_port import InMemoryWorkspace

EPOCH_ISO: Final = "2026-01-01T00:00:00.000Z"


def empty_workspace(root: str = "/srv/project") -> InMemoryWorkspace:
    ref = WorkspaceRef(root=root, key="0123456789abcdef")
    return InMemoryWorkspace(
        WorkspaceStore(workspace=ref, updated_at=EPOCH_ISO),
        PendingJournal(workspace=ref, updated_at=EPOCH_ISO),
    )


def exported(store: WorkspaceStore, projected: Scope = Scope.TEAM) -> dict[str, str]:
    """What a first export of ``store`` writes: every projected memory that is active or has a file
    already (a first export writes the active ones), and the tombstones."""
    files = {p: w.text for p, w in wanted_files(store.entries, store, projected).items() if w.active}
    lines = projected_tombstones(store, projected)
    if lines:
        files[TOMBSTONES_FILE] = tombstones.render(lines)
    return files


def every_file(store: WorkspaceStore, projected: Scope = Scope.TEAM) -> dict[str, str]:
    """The files of every projected memory, active or not (a projection that has seen them all)."""
    files = {p: w.text for p, w in wanted_files(store.entries, store, projected).items()}
    lines = projected_tombstones(store, projected)
    if lines:
        files[TOMBSTONES_FILE] = tombstones.render(lines)
    return files


def import_of(files: Mapping[str, str], projected: Scope = Scope.TEAM, **more: object) -> ImportProjection:
    """The command that imports ``files`` (all new since the last sync)."""
    lines, _ = tombstones.parse(files.get(TOMBSTONES_FILE, ""))
    return ImportProjection(
        files=tuple(
            ProjectionFile(path=p, text=t, sha=text_hash(t))
            for p, t in sorted(files.items())
            if p != TOMBSTONES_FILE
        ),
        tombstones_added=lines,
        projected=projected,
        **more,  # type: ignore[arg-type]
    )
