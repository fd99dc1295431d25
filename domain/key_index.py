"""Where keys and ids stand in a sequence of stored entries (docs/performance.md, "Simulation").

A promotion looks up its few pending keys in the store before and after the merge, and a store
holds up to 500 active entries: scanning it per pending key, or building key sets at every step,
would dominate the step. :func:`stored_index` builds one index per entries tuple and remembers it.
The memo is keyed by ``id`` with the tuple kept in the value (a hit is only a hit for the very same
tuple), bounded, and invisible: an index depends on the entries alone. Sequences that are not tuples
(tests build lists) are indexed without the memo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from domain.keys import entry_keys
from domain.model import MemoryEntry, MemoryStatus


class StoredIndex(NamedTuple):
    """Positions in ``entries``: the first active entry with each exact and identity key, the last
    active entry with each exact key, and the first entry (of any status) with each id."""

    entries: Sequence[MemoryEntry]
    first_exact: dict[str, int]
    first_identity: dict[str, int]
    last_exact: dict[str, int]
    first_id: dict[str, int]


def _build(entries: Sequence[MemoryEntry]) -> StoredIndex:
    first_exact: dict[str, int] = {}
    first_identity: dict[str, int] = {}
    last_exact: dict[str, int] = {}
    first_id: dict[str, int] = {}
    for position, entry in enumerate(entries):
        first_id.setdefault(entry.id, position)
        if entry.status is MemoryStatus.SUPERSEDED:
            continue
        exact, identity = entry_keys(entry)
        first_exact.setdefault(exact, position)
        first_identity.setdefault(identity, position)
        last_exact[exact] = position
    return StoredIndex(entries, first_exact, first_identity, last_exact, first_id)


_LIMIT: Final = 16
_INDEXES: Final[dict[int, StoredIndex]] = {}


def _remember(index: StoredIndex) -> StoredIndex:
    if len(_INDEXES) >= _LIMIT:
        _INDEXES.clear()
    _INDEXES[id(index.entries)] = index
    return index


def stored_index(entries: Sequence[MemoryEntry]) -> StoredIndex:
    """The index of ``entries`` (remembered for tuples)."""
    if not isinstance(entries, tuple):
        return _build(entries)
    hit = _INDEXES.get(id(entries))
    if hit is not None and hit.entries is entries:
        return hit
    return _remember(_build(entries))


def carry_index(before: tuple[MemoryEntry, ...], after: tuple[MemoryEntry, ...]) -> None:
    """``after`` holds, position by position, entries with the same id, status, type and text as
    ``before`` (only other fields changed): when ``before`` has an index, ``after`` gets the same
    positions without building it again."""
    hit = _INDEXES.get(id(before))
    if hit is not None and hit.entries is before:
        _remember(hit._replace(entries=after))
