"""``tombstones.jsonl``: the hash-only record of forgotten memories that travels with the projection
(docs/decisions.md#d17), so that a fact one clone forgot is not brought back by another.

One JSON object per line, keys in name order (``created``, ``id``, ``identity``, ``reason``), lines
sorted by identity then id, one newline after each. ``identity`` is the hash of the memory's exact key
(``domain.keys.key_hash``), the same value the store's tombstones keep; the text is never written.
Git merges the file with its ``union`` driver: the file is a set, so line order after a merge does not
matter and the next export sorts it again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Final

import msgspec

from domain.enums import Scope
from domain.model import MemoryEntry, Tombstone, WorkspaceStore
from domain.projection.document import Diagnostic
from domain.projection.reasons import FileReason
from domain.projection.records import TombstoneLine
from domain.projection.scopes import projects

TOMBSTONES_FILE: Final = "tombstones.jsonl"
_HEX16: Final = re.compile(r"[0-9a-f]{16}\Z")


def line_of(tombstone: Tombstone) -> TombstoneLine:
    return TombstoneLine(
        identity=tombstone.key_hash,
        id=tombstone.memory_id,
        reason=tombstone.reason,
        created=tombstone.created_at,
    )


def tombstone_of(line: TombstoneLine) -> Tombstone:
    return Tombstone(key_hash=line.identity, memory_id=line.id, reason=line.reason, created_at=line.created)


def projected_tombstones(store: WorkspaceStore, projected: Scope) -> tuple[TombstoneLine, ...]:
    """The store's tombstones that travel: those of projected memories, and those of memories this
    store does not hold (they came from the projection, or their memory left the store)."""
    by_id: dict[str, MemoryEntry] = {e.id: e for e in store.entries}
    kept = (
        line_of(t)
        for t in store.tombstones
        if (entry := by_id.get(t.memory_id)) is None or projects(entry, projected)
    )
    return tuple(sorted(set(kept), key=lambda line: (line.identity, line.id)))


def render(lines: Iterable[TombstoneLine]) -> str:
    ordered = sorted(set(lines), key=lambda line: (line.identity, line.id))
    return "".join(
        json.dumps(msgspec.to_builtins(line), sort_keys=True, ensure_ascii=False) + "\n" for line in ordered
    )


def parse(text: str) -> tuple[tuple[TombstoneLine, ...], tuple[Diagnostic, ...]]:
    """The lines of ``tombstones.jsonl`` (one per identity: the first), and one diagnostic per line
    that is not a tombstone (skipped, never fatal: the others still count)."""
    found: dict[str, TombstoneLine] = {}
    problems: list[Diagnostic] = []
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not raw.strip():
            continue
        try:
            line = msgspec.json.decode(raw, type=TombstoneLine)
        except (msgspec.DecodeError, msgspec.ValidationError):
            line = None
        if line is None or not _HEX16.match(line.identity) or not line.id:
            problems.append(
                Diagnostic(TOMBSTONES_FILE, number, FileReason.BAD_FRONTMATTER.value, "not a tombstone line")
            )
            continue
        found.setdefault(line.identity, line)
    return tuple(found.values()), tuple(problems)
