"""The values an import command carries (docs/decisions.md#d17): a file of the projection and a line
of ``tombstones.jsonl``. Kept apart from the steps that read them, so that the command union
(``domain/commands.py``) costs a host hook nothing more to import."""

from __future__ import annotations

import msgspec


class ProjectionFile(msgspec.Struct, frozen=True, kw_only=True):
    """A file of the projection that changed since the last sync. ``path`` is relative to the
    projection directory; ``text`` is ``None`` when the bytes are not UTF-8. ``sha``, ``size`` and
    ``mtime_ns`` are what the shell saw (it records them once the import is kept); the core reads
    only ``path`` and ``text``."""

    path: str
    text: str | None
    sha: str = ""
    size: int = 0
    mtime_ns: int = 0


class TombstoneLine(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``tombstones.jsonl``: the hash of a forgotten memory's exact key, its id, why, and
    when."""

    identity: str
    id: str
    reason: str
    created: str
