"""The projection as the store sees it (docs/decisions.md#d17): which memories have a file, what each
file says, and what an export writes or removes given what is on disk.

Only what should travel is written: the frontmatter of :mod:`domain.projection.document`. Strength,
reinforcement, use and render times, sessions and epochs are this machine's and stay in its store.
A file's ``status`` is ``active``, ``superseded`` (another memory replaced it) or ``forgotten``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

import msgspec

from domain.enums import MemoryStatus, Scope
from domain.ids import hash16, sha256
from domain.model import MemoryEntry, WorkspaceStore
from domain.projection.document import MemoryFile, file_path, render
from domain.projection.freshness_keys import freshness_fields
from domain.projection.frontmatter import Value
from domain.projection.reasons import FileStatus
from domain.projection.scopes import projects, scope_of
from domain.text import memory_key

#: Where an entry keeps the frontmatter keys workmem does not know (written back as they were).
FIELDS_KEY: Final = "projectionFields"
#: Set on an entry a file called ``superseded`` without naming what replaced it.
STATUS_KEY: Final = "projectionStatus"
#: Between a memory's id and the suffix of one of its earlier texts.
REVISION_MARK: Final = ".r"


def text_hash(text: str) -> str:
    """The hash the projection compares file contents by (hex SHA-256 of the UTF-8 bytes)."""
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def identity_of(entry: MemoryEntry) -> str:
    """The ``identity`` of a memory: the hash of its exact key (the tombstones' ``key_hash``)."""
    return hash16(memory_key(entry.type, entry.text))


def file_status(entry: MemoryEntry) -> FileStatus:
    if entry.status is MemoryStatus.ACTIVE:
        return FileStatus.ACTIVE
    if entry.superseded_by is not None or entry.extras.get(STATUS_KEY) == FileStatus.SUPERSEDED.value:
        return FileStatus.SUPERSEDED
    return FileStatus.FORGOTTEN


def revision_id(memory_id: str, suffix: str) -> str:
    """The id of an earlier text of ``memory_id``, kept when a file's text was edited."""
    return f"{memory_id}{REVISION_MARK}{suffix}"


def is_revision_of(entry: MemoryEntry, memory_id: str) -> bool:
    return entry.id.startswith(memory_id + REVISION_MARK)


def superseded_index(entries: Iterable[MemoryEntry]) -> dict[str, tuple[str, ...]]:
    """For each memory id, the ids of the memories it replaced (``superseded_by`` links; not its own
    earlier texts, which are this machine's history and have no file)."""
    found: dict[str, set[str]] = {}
    for entry in entries:
        by = entry.superseded_by
        if by is not None and entry.status is MemoryStatus.SUPERSEDED and not is_revision_of(entry, by):
            found.setdefault(by, set()).add(entry.id)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def extra_fields(entry: MemoryEntry) -> tuple[tuple[str, Value], ...]:
    """The unknown frontmatter keys an entry keeps, as the frontmatter writes them."""
    raw: Any = entry.extras.get(FIELDS_KEY)
    if not isinstance(raw, dict):
        return ()
    out: list[tuple[str, Value]] = []
    for key, value in raw.items():
        if isinstance(value, str):
            out.append((str(key), value))
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out.append((str(key), tuple(value)))
    return tuple(sorted(out))


def _with_freshness(
    extras: tuple[tuple[str, Value], ...], entry: MemoryEntry
) -> tuple[tuple[str, Value], ...]:
    """The file's other keys: the memory's freshness (docs/decisions.md#d18) and the unknown keys it
    keeps (a freshness key it keeps unread gives way to the memory's own value)."""
    fresh = freshness_fields(entry)
    if not fresh:
        return extras
    taken = {key for key, _ in fresh}
    return tuple(sorted([*(kv for kv in extras if kv[0] not in taken), *fresh]))


def file_of(entry: MemoryEntry, superseded: Mapping[str, tuple[str, ...]]) -> MemoryFile:
    """What the file of ``entry`` says (``superseded``: :func:`superseded_index` of its store)."""
    replaced = set(entry.supersedes or ()) | set(superseded.get(entry.id, ()))
    return MemoryFile(
        id=entry.id,
        type=entry.type,
        scope=scope_of(entry),
        status=file_status(entry),
        created=entry.created_at,
        source=entry.source,
        pinned=entry.pinned,
        supersedes=tuple(sorted(replaced)),
        rationale=entry.rationale,
        identity=identity_of(entry),
        extras=_with_freshness(extra_fields(entry), entry),
        body=entry.text,
    )


class Wanted(NamedTuple):
    """The text of a memory's file; ``active``: written even where no file was ever exported."""

    text: str
    active: bool


def wanted_files(
    entries: Iterable[MemoryEntry], store: WorkspaceStore, projected: Scope
) -> dict[str, Wanted]:
    """The files of ``entries`` (entries of ``store``) that belong in a projection of ``projected``."""
    index = superseded_index(store.entries)
    return {
        file_path(e.type, e.id): Wanted(render(file_of(e, index)), e.status is MemoryStatus.ACTIVE)
        for e in entries
        if projects(e, projected)
    }


class ExportPlan(msgspec.Struct, frozen=True):
    """What an export does: files to write (path -> text), files to remove, and the files it agreed
    with (path -> hash of what is now on disk) whose base can be recorded."""

    writes: dict[str, str]
    removes: tuple[str, ...]
    agreed: dict[str, str]


def plan_export(
    wanted: Mapping[str, Wanted],
    unwanted: Iterable[str],
    disk: Mapping[str, str | None],
    base: Mapping[str, str],
) -> ExportPlan:
    """What to write and remove. ``disk`` is the hash of each file now (``None``: missing), ``base``
    the hash recorded when the store and the file last agreed. A file that changed since then is a
    person's edit or a merge that sync has not imported yet (or a file sync turned down): it is never
    overwritten or removed. A file that is gone but has a base was deleted, which the next import
    turns into a forget: it is not written again. A memory that is no longer active gets a file only
    where it has one already (its status changes there)."""
    writes: dict[str, str] = {}
    removes: list[str] = []
    agreed: dict[str, str] = {}
    for path, (text, active) in wanted.items():
        now, was = disk.get(path), base.get(path)
        digest = text_hash(text)
        if now == digest:
            agreed[path] = digest
        elif (now is None and was is None and active) or (now is not None and now == was):
            writes[path] = text
    for path in unwanted:
        if path in wanted:
            continue
        now = disk.get(path)
        if now is not None and now == base.get(path):
            removes.append(path)
    return ExportPlan(writes=writes, removes=tuple(sorted(set(removes))), agreed=agreed)
