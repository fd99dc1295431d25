"""One projection file (docs/decisions.md#d17): ``memories/<type>/<id>.md``, frontmatter then the text.

::

    ---
    id: mem_1777626000000_k3x9q2
    type: decision
    scope: team
    status: active
    created: 2026-05-01T09:00:00.000Z
    source: manual
    supersedes: [mem_1777539600000_a81bz0]
    identity: 5f1c0e8a9d2b7c44
    ---
    Use exponential backoff with jitter for HTTP retries.

:func:`render` is deterministic: the known keys in this order (``supersedes`` and ``rationale`` only
when set), then every other key in name order, then the text and one newline. :func:`parse` reads a
file back into a :class:`MemoryFile` or says, with the line, why it cannot (:class:`Diagnostic`):
conflict markers, frontmatter it cannot read, a type it does not know. Keys it does not know are kept
as they are (a newer workmem's fields, or a person's own) and written back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import msgspec
from returns.result import Failure, Result, Success

from domain.enums import MemorySource, MemoryType, Scope
from domain.ids import hash16
from domain.projection import frontmatter
from domain.projection.frontmatter import Value
from domain.projection.reasons import FileReason, FileStatus
from domain.projection.scopes import default_scope
from domain.timeutil import parse_iso_ms

#: The folder of memory files inside the projection directory.
MEMORIES_DIR: Final = "memories"
SUFFIX: Final = ".md"
KNOWN_KEYS: Final = (
    "id",
    "type",
    "scope",
    "status",
    "created",
    "source",
    "supersedes",
    "rationale",
    "identity",
)
_SAFE_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,119}\Z")
#: git's conflict markers: a file holds a conflict when it has an opening and a closing marker line.
_CONFLICT_OPEN: Final = re.compile(r"^<{7}(?:[ \t]|$)", re.MULTILINE)
_CONFLICT_CLOSE: Final = re.compile(r"^>{7}(?:[ \t]|$)", re.MULTILINE)


class MemoryFile(msgspec.Struct, frozen=True, kw_only=True):
    """What one projection file says. ``id`` is ``None`` for a file a person wrote without one;
    ``extras`` are the keys workmem does not know, by name."""

    id: str | None
    type: MemoryType
    scope: Scope
    status: FileStatus = FileStatus.ACTIVE
    created: str | None = None
    source: MemorySource = MemorySource.MANUAL
    supersedes: tuple[str, ...] = ()
    rationale: str | None = None
    identity: str | None = None
    extras: tuple[tuple[str, Value], ...] = ()
    body: str


class Diagnostic(msgspec.Struct, frozen=True):
    """Why a file is not imported, with the line it is about (1 when it is about the whole file)."""

    path: str
    line: int
    reason: str
    message: str


class Parsed(msgspec.Struct, frozen=True):
    file: MemoryFile
    #: the line of the file where the memory's text starts
    body_line: int


# ---------------------------------------------------------------------------------------------------
# Where a memory's file is
# ---------------------------------------------------------------------------------------------------


def file_stem(memory_id: str) -> str:
    """The file name of ``memory_id`` without ``.md``: the id itself when it is a safe file name,
    else ``id-`` and a hash of it (the id itself is in the frontmatter)."""
    return memory_id if _SAFE_ID.match(memory_id) else "id-" + hash16(memory_id)


def file_path(type_: MemoryType, memory_id: str) -> str:
    """``memories/<type>/<stem>.md``, relative to the projection directory."""
    return f"{MEMORIES_DIR}/{type_.value}/{file_stem(memory_id)}{SUFFIX}"


def path_parts(path: str) -> tuple[str, str] | None:
    """``(type folder, stem)`` of a memory file path, ``None`` for any other path."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != MEMORIES_DIR or not parts[2].endswith(SUFFIX):
        return None
    return parts[1], parts[2][: -len(SUFFIX)]


# ---------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------


def render(file: MemoryFile) -> str:
    """The file's text: frontmatter, the memory's text, one newline. (The type, scope, status and
    source are plain words by construction; only the other values go through
    :func:`~domain.projection.frontmatter.scalar`.)"""
    scalar = frontmatter.scalar
    out = ["---\n"]
    if file.id is not None:
        out.append(f"id: {scalar(file.id)}\n")
    out.append(f"type: {file.type}\nscope: {file.scope}\nstatus: {file.status}\n")
    if file.created is not None:
        out.append(f"created: {scalar(file.created)}\n")
    out.append(f"source: {file.source}\n")
    rest: list[tuple[str, Value]] = []
    if file.supersedes:
        rest.append(("supersedes", file.supersedes))
    if file.rationale is not None:
        rest.append(("rationale", file.rationale))
    if file.identity is not None:
        rest.append(("identity", file.identity))
    rest += sorted(file.extras)
    out += (frontmatter.field_line(key, value) for key, value in rest)
    out.append(f"---\n{file.body}\n")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------


def _diagnostic(path: str, line: int, reason: FileReason, message: str) -> Failure[Diagnostic]:
    return Failure(Diagnostic(path, line, reason.value, message))


def _one(fields: Mapping[str, frontmatter.Field], key: str) -> str | None:
    found = fields.get(key)
    if found is None:
        return None
    return found.value if isinstance(found.value, str) else None


def _choice(
    path: str,
    fields: Mapping[str, frontmatter.Field],
    key: str,
    allowed: type[MemorySource | Scope | FileStatus],
) -> Result[str | None, Diagnostic]:
    found = fields.get(key)
    if found is None:
        return Success(None)
    values = {m.value for m in allowed}
    if not isinstance(found.value, str) or found.value not in values:
        wanted = ", ".join(sorted(values))
        return _diagnostic(path, found.line, FileReason.BAD_FRONTMATTER, f"{key} must be one of {wanted}")
    return Success(found.value)


def parse(text: str, path: str) -> Result[Parsed, Diagnostic]:
    """The memory file at ``path`` (relative to the projection directory) whose text is ``text``."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    marker = _CONFLICT_OPEN.search(text)
    if marker is not None and _CONFLICT_CLOSE.search(text, marker.end()) is not None:
        line = text.count("\n", 0, marker.start()) + 1
        return _diagnostic(path, line, FileReason.CONFLICT_MARKERS, "the file holds merge conflict markers")
    lines = text.split("\n")
    if lines[0].rstrip() != frontmatter.FENCE:
        return _diagnostic(path, 1, FileReason.BAD_FRONTMATTER, "the file does not start with ---")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == frontmatter.FENCE), None)
    if end is None:
        return _diagnostic(path, 1, FileReason.BAD_FRONTMATTER, "the frontmatter has no closing ---")
    read = frontmatter.parse(lines[1:end], 2)
    if isinstance(read, Failure):
        error = read.failure()
        return _diagnostic(path, error.line, FileReason.BAD_FRONTMATTER, error.message)
    fields = {f.key: f for f in read.unwrap()}
    return _interpret(path, fields, "\n".join(lines[end + 1 :]), end + 2)


def _interpret(
    path: str, fields: Mapping[str, frontmatter.Field], body: str, body_line: int
) -> Result[Parsed, Diagnostic]:
    for key in ("id", "type", "created", "rationale", "identity"):
        found = fields.get(key)
        if found is not None and not isinstance(found.value, str):
            return _diagnostic(path, found.line, FileReason.BAD_FRONTMATTER, f"{key} must be one value")
    memory_id = _one(fields, "id") or None
    type_name = _one(fields, "type")
    if type_name is None:
        parts = path_parts(path)
        type_name = parts[0] if parts is not None else ""
    if type_name not in {t.value for t in MemoryType}:
        line = fields["type"].line if "type" in fields else 1
        wanted = ", ".join(t.value for t in MemoryType)
        return _diagnostic(
            path, line, FileReason.UNKNOWN_TYPE, f"unknown type {type_name!r} (one of {wanted})"
        )
    type_ = MemoryType(type_name)
    created = _one(fields, "created") or None
    if created is not None and parse_iso_ms(created) is None:
        line = fields["created"].line
        return _diagnostic(path, line, FileReason.BAD_FRONTMATTER, "created must be an ISO-8601 time")
    choices: dict[str, str | None] = {}
    for key, allowed in (("scope", Scope), ("status", FileStatus), ("source", MemorySource)):
        got = _choice(path, fields, key, allowed)
        if isinstance(got, Failure):
            return Failure(got.failure())
        choices[key] = got.unwrap()
    supersedes_field = fields.get("supersedes")
    supersedes: tuple[str, ...] = ()
    if supersedes_field is not None:
        value = supersedes_field.value
        supersedes = (
            (value,) if isinstance(value, str) and value else value if isinstance(value, tuple) else ()
        )
    extras = tuple(sorted((k, f.value) for k, f in fields.items() if k not in KNOWN_KEYS))
    file = MemoryFile(
        id=memory_id,
        type=type_,
        scope=Scope(choices["scope"]) if choices["scope"] else default_scope(type_),
        status=FileStatus(choices["status"]) if choices["status"] else FileStatus.ACTIVE,
        created=created,
        source=MemorySource(choices["source"]) if choices["source"] else MemorySource.MANUAL,
        supersedes=tuple(sorted(set(supersedes))),
        rationale=_one(fields, "rationale") or None,
        identity=_one(fields, "identity") or None,
        extras=extras,
        body=body.removesuffix("\n"),
    )
    return Success(Parsed(file, body_line))
