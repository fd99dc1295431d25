"""After an import, and the export (docs/decisions.md#d17): what this machine now agrees with in the
shared projection (:func:`record_import`), and writing the store's memories into it (:func:`export`)
by the plan of :func:`domain.projection.view.plan_export` — never over a file that changed since it
last agreed with the store. Also what other parts ask of the projection: the files sync did not
import (:func:`flagged`) and the file and line of a memory (:func:`location`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from adapters.jsonl import ensure_private_dir
from adapters.projection import (
    DIRECTORY,
    Flag,
    Layout,
    Manifest,
    Stamp,
    memory_files,
    read_hashed,
    read_manifest,
    stamp_of,
    write_text,
)
from domain.enums import Outcome as FileOutcome
from domain.projection import tombstones as tombstone_lines
from domain.projection.document import MEMORIES_DIR, file_path, file_stem, path_parts
from domain.projection.tombstones import TOMBSTONES_FILE, projected_tombstones
from domain.projection.view import Wanted, plan_export, text_hash, wanted_files

if TYPE_CHECKING:
    from domain.commands import ImportProjection
    from domain.model import MemoryEntry, WorkspaceStore


# ---------------------------------------------------------------------------------------------------
# After an import: what this machine now agrees with
# ---------------------------------------------------------------------------------------------------


class Outcome(NamedTuple):
    outcome: str
    line: int
    reasons: tuple[str, ...]
    message: str


def outcomes(found: Iterable[object]) -> dict[str, Outcome]:
    """The outcome of each file an import looked at (only those that changed something or were
    turned down), from the import's events."""
    from domain.enums import EventType
    from domain.model import EvidenceInput

    out: dict[str, Outcome] = {}
    kinds = {
        EventType.PROJECTION_FILE_IMPORTED: FileOutcome.IMPORTED,
        EventType.PROJECTION_FILE_REJECTED: FileOutcome.REJECTED,
        EventType.PROJECTION_FILE_QUARANTINED: FileOutcome.QUARANTINED,
    }
    for event in found:
        if not isinstance(event, EvidenceInput) or event.type not in kinds:
            continue
        path = event.details.get("file")
        if not isinstance(path, str):
            continue
        line = event.details.get("line")
        message = event.details.get("message")
        out[path] = Outcome(
            kinds[event.type],
            line if isinstance(line, int) else 1,
            event.reason_codes,
            message if isinstance(message, str) else (event.text_preview or ""),
        )
    return out


def record_import(manifest: Manifest, command: ImportProjection, found: Iterable[object]) -> None:
    """Keep what ``command`` imported as the files' bases, and flag the files it turned down (their
    base stays: deleting a turned-down file still forgets its memory)."""
    seen = outcomes(found)
    for file in command.files:
        result = seen.get(file.path)
        if result is not None and result.outcome != FileOutcome.IMPORTED:
            manifest.flagged[file.path] = Flag(
                size=file.size,
                mtime_ns=file.mtime_ns,
                sha=file.sha,
                line=result.line,
                reasons=result.reasons,
                outcome=result.outcome,
                message=result.message,
            )
            continue
        manifest.flagged.pop(file.path, None)
        manifest.files[file.path] = (file.size, file.mtime_ns, file.sha)
    for path in command.deleted:
        manifest.files.pop(path, None)
        manifest.flagged.pop(path, None)
    seen_tombstones = command.tombstones_file
    if seen_tombstones is not None:
        if seen_tombstones.sha:
            manifest.tombstones = (seen_tombstones.size, seen_tombstones.mtime_ns, seen_tombstones.sha)
        else:
            manifest.tombstones = None
        buried = (set(manifest.buried) | {t.identity for t in command.tombstones_added}) - set(
            command.tombstones_removed
        )
        manifest.buried = tuple(sorted(buried))


# ---------------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------------


class Exported(NamedTuple):
    written: tuple[str, ...]
    removed: tuple[str, ...]


def _disk_hash(layout: Layout, manifest: Manifest, rel: str) -> str | None:
    path = os.path.join(layout.directory, rel)
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    base = manifest.files.get(rel) if rel != TOMBSTONES_FILE else manifest.tombstones
    if base is not None and base[0] == st.st_size and base[1] == st.st_mtime_ns:
        return base[2]
    read = read_hashed(path)
    return read[1] if read is not None else None


def _changed_entries(store: WorkspaceStore, previous: WorkspaceStore) -> tuple[list[MemoryEntry], set[str]]:
    """The entries of ``store`` that differ from ``previous``, and the files their earlier versions
    (or the entries that left the store) had."""
    before = {e.id: e for e in previous.entries}
    changed = [e for e in store.entries if (old := before.get(e.id)) is not e and old != e]
    paths = {file_path(e.type, e.id) for e in changed}
    paths |= {file_path(old.type, old.id) for e in changed if (old := before.get(e.id)) is not None}
    now = {e.id for e in store.entries}
    paths |= {file_path(old.type, old.id) for old in previous.entries if old.id not in now}
    return changed, paths


def export(
    layout: Layout,
    manifest: Manifest,
    store: WorkspaceStore,
    previous: WorkspaceStore | None = None,
    also: Iterable[str] = (),
    *,
    write: bool = True,
) -> Exported:
    """Write the files of the store's memories that changed since ``previous`` (``None``: all of
    them), remove the files of memories no longer projected, and keep ``tombstones.jsonl`` current.
    A file that changed since its base is left alone (the plan of :func:`domain.projection.plan_export`).
    ``also``: more paths that may be removed (hand-made files an import moved to their memory's path).
    ``write=False``: only say what would be written and removed."""
    if previous is None:
        entries: Iterable[MemoryEntry] = store.entries
        unwanted = set(memory_files(layout.directory)) | set(manifest.files)
    else:
        entries, unwanted = _changed_entries(store, previous)
    held, archived = known_stems(store)
    removable = held - archived
    unwanted = {rel for rel in unwanted if _removable(rel, removable)} | set(also)
    wanted: dict[str, Wanted] = wanted_files(entries, store, layout.projected)
    disk = {rel: _disk_hash(layout, manifest, rel) for rel in set(wanted) | unwanted}
    base = {rel: manifest.files[rel][2] for rel in disk if rel in manifest.files}
    plan = plan_export(wanted, unwanted, disk, base)
    if not write:
        tombstones = _export_tombstones(layout, manifest, store, write=False) if previous is None else ()
        return Exported(tuple(sorted(plan.writes)) + tombstones, plan.removes)
    made: set[str] = set()
    for rel, text in plan.writes.items():
        target = os.path.join(layout.directory, rel)
        folder = os.path.dirname(target)
        if folder not in made:
            ensure_private_dir(Path(folder), fix_mode=False)
            made.add(folder)
        size, mtime_ns = write_text(target, text)
        manifest.files[rel] = (size, mtime_ns, text_hash(text))
    for rel in plan.removes:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(layout.directory / rel)
        manifest.files.pop(rel, None)
    for rel, sha in plan.agreed.items():
        _keep(manifest, rel, stamp_of(layout.directory / rel, sha))
        manifest.flagged.pop(rel, None)
    written = tuple(sorted(plan.writes))
    if previous is None or store.tombstones != previous.tombstones:
        written += _export_tombstones(layout, manifest, store)
    if previous is None:
        manifest.revision = store.revision
    return Exported(written, plan.removes)


def known_stems(store: WorkspaceStore) -> tuple[set[str], set[str]]:
    """The file stems of the store's entries (and of the duplicates they absorbed), and of its
    archived memories."""
    held = {file_stem(e.id) for e in store.entries}
    held |= {file_stem(a) for e in store.entries for a in e.absorbed_ids or ()}
    return held, {file_stem(m.memory_id) for m in store.archived}


def _removable(rel: str, held: set[str]) -> bool:
    """A file an export may remove: that of a memory the store holds (``held``: their stems) but no
    longer projects, or absorbed into another. The file of a memory the store does not know — its
    store was lost, or it came from another clone and is not imported yet — and of an archived
    memory stays."""
    parts = path_parts(rel)
    return parts is not None and parts[1] in held


def _keep(manifest: Manifest, rel: str, stamp: Stamp | None) -> None:
    if stamp is not None:
        manifest.files[rel] = (stamp.size, stamp.mtime_ns, stamp.sha)


def _export_tombstones(
    layout: Layout, manifest: Manifest, store: WorkspaceStore, *, write: bool = True
) -> tuple[str, ...]:
    lines = projected_tombstones(store, layout.projected)
    text = tombstone_lines.render(lines)
    target = layout.directory / TOMBSTONES_FILE
    now = _disk_hash(layout, manifest, TOMBSTONES_FILE)
    was = manifest.tombstones[2] if manifest.tombstones is not None else None
    digest = text_hash(text)
    wrote: tuple[str, ...] = ()
    if now != digest:
        if not ((now is None and was is None and text) or (now is not None and now == was)):
            return ()  # changed since it last agreed: the next import reads it first
        if not write:
            return (TOMBSTONES_FILE,)
        write_text(target, text)
        wrote = (TOMBSTONES_FILE,)
    stamp = stamp_of(target, digest)
    manifest.tombstones = (stamp.size, stamp.mtime_ns, stamp.sha) if stamp is not None else None
    manifest.buried = tuple(sorted({line.identity for line in lines}))
    return wrote


# ---------------------------------------------------------------------------------------------------
# What other parts ask
# ---------------------------------------------------------------------------------------------------


def flagged(layout: Layout) -> dict[str, Flag]:
    """The files sync did not import, by path inside ``.workmem/`` (read-only)."""
    manifest = read_manifest(layout)
    return {rel: flag for rel, flag in sorted(manifest.flagged.items()) if (layout.directory / rel).exists()}


def location(root: str | Path, memory_id: str) -> tuple[Path, int] | None:
    """The projection file of ``memory_id`` in the workspace ``root`` and the line its text starts
    on, if the memory has a file (for citations: ``.workmem/memories/<type>/<id>.md:<line>``)."""
    from domain.enums import MemoryType

    directory = Path(root) / DIRECTORY / MEMORIES_DIR
    for type_ in MemoryType:
        path = directory / type_.value / f"{file_stem(memory_id)}.md"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.split("\n")
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if lines[0].rstrip() == "---" and end is not None:
            return path, end + 2
    return None
