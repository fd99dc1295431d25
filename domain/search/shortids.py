"""Short ids (``R12``): a number per memory, stable and unique in its store (docs/decisions.md#d16).

The number is stored on the entry (``shortId``) and the store keeps the last number it gave
(``lastShortId``), so a number is never given twice, even after its memory is gone. A store written
before short ids (or by the reference) has entries without one: they are numbered after the last
given number, oldest first (``createdAt``, then id), and that is the numbering every reader shows
until the next write stores it — the write stores exactly those numbers, so an id shown once stays
the same. The letter is ``R`` (record): ``M1`` is the position label of the compaction prompt
(docs/decisions.md#d10), which a short id must not be mistaken for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from msgspec.structs import replace

from domain.model import WorkspaceStore

PREFIX: Final = "R"


def numbering(store: WorkspaceStore) -> dict[str, int]:
    """Each entry id of ``store`` → its short number (stored, else the one the next write stores)."""
    found: dict[str, int] = {}
    missing = []
    for entry in store.entries:
        if entry.short_id is not None and entry.short_id > 0 and entry.id not in found:
            found[entry.id] = entry.short_id
        else:
            missing.append(entry)
    if not missing:
        return found
    last = max((store.last_short_id or 0, *found.values()))
    taken = set(found.values())
    for entry in sorted(missing, key=lambda e: (e.created_at, e.id)):
        if entry.id in found:
            continue
        if entry.short_id is not None and entry.short_id > 0 and entry.short_id not in taken:
            found[entry.id] = entry.short_id
            taken.add(entry.short_id)
            continue
        last += 1
        found[entry.id] = last
    return found


def numbered(store: WorkspaceStore) -> WorkspaceStore:
    """``store`` with every entry's number stored (the same store when nothing was missing)."""
    if all(e.short_id is not None for e in store.entries) and store.last_short_id is not None:
        return store
    numbers = numbering(store)
    entries = tuple(
        e if e.short_id == numbers[e.id] else replace(e, short_id=numbers[e.id]) for e in store.entries
    )
    last = max((store.last_short_id or 0, *numbers.values()))
    return replace(store, entries=entries, last_short_id=last)


def label(number: int) -> str:
    return f"{PREFIX}{number}"


def parse(text: str) -> int | None:
    """The number of a short id (``R12``, ``r12``); ``None`` for anything else."""
    cleaned = text.strip()
    if len(cleaned) < 2 or cleaned[0] not in (PREFIX, PREFIX.lower()) or not cleaned[1:].isdigit():
        return None
    if not cleaned[1:].isascii() or len(cleaned) > 12:
        return None
    return int(cleaned[1:])


def resolve(store: WorkspaceStore, wanted: str, numbers: Mapping[str, int] | None = None) -> str | None:
    """The memory id ``wanted`` names: a memory id of the store, or a short id."""
    cleaned = wanted.strip()
    if any(e.id == cleaned for e in store.entries):
        return cleaned
    number = parse(cleaned)
    if number is None:
        return None
    table = numbering(store) if numbers is None else numbers
    return next((i for i, n in table.items() if n == number), None)
