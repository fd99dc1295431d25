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


def derive_index(
    before: tuple[MemoryEntry, ...], after: tuple[MemoryEntry, ...], fresh: Sequence[MemoryEntry]
) -> None:
    """``after`` holds entries of ``before`` (the same objects, in any order) and the ``fresh`` ones,
    and no two of its entries share an id, nor two of its active entries an exact or identity key
    (a settled store): when ``before`` has an index, ``after`` gets one made from it, looking up only
    the fresh entries' keys. The positions are those :func:`stored_index` would find."""
    hit = _INDEXES.get(id(before))
    if hit is None or hit.entries is not before or after is before:
        return
    at = {id(entry): position for position, entry in enumerate(after)}

    def moved(positions: dict[str, int]) -> dict[str, int]:
        return {key: at[id(before[p])] for key, p in positions.items() if id(before[p]) in at}

    first_exact, first_identity, first_id = (
        moved(hit.first_exact),
        moved(hit.first_identity),
        moved(hit.first_id),
    )
    for entry in fresh:
        position = at.get(id(entry))
        if position is None:
            continue
        first_id[entry.id] = position
        if entry.status is not MemoryStatus.SUPERSEDED:
            exact, identity = entry_keys(entry)
            first_exact[exact] = position
            first_identity[identity] = position
    _remember(StoredIndex(after, first_exact, first_identity, dict(first_exact), first_id))
