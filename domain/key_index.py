"""Where keys and ids stand in a sequence of stored entries (docs/performance.md, "Simulation").

A promotion looks up its few pending keys in the store before and after the merge, and a store
holds up to 500 active entries: scanning it per pending key, or building key sets at every step,
would dominate the step. :func:`stored_index` builds one index per entries tuple and files it in the
caller's :class:`~domain.caches.Caches` (docs/decisions.md#d14); an index depends on the entries
alone. Sequences that are not tuples (tests build lists) are indexed without the cache.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.caches import Caches, StoredIndex
from domain.enums import MemoryStatus
from domain.keys import entry_keys
from domain.model import MemoryEntry


def build_index(entries: Sequence[MemoryEntry], caches: Caches | None = None) -> StoredIndex:
    """The index of ``entries``, built from their keys."""
    first_exact: dict[str, int] = {}
    first_identity: dict[str, int] = {}
    last_exact: dict[str, int] = {}
    first_id: dict[str, int] = {}
    for position, entry in enumerate(entries):
        first_id.setdefault(entry.id, position)
        if entry.status is MemoryStatus.SUPERSEDED:
            continue
        exact, identity = entry_keys(entry, caches)
        first_exact.setdefault(exact, position)
        first_identity.setdefault(identity, position)
        last_exact[exact] = position
    return StoredIndex(entries, first_exact, first_identity, last_exact, first_id)


def _same_keys(a: MemoryEntry, b: MemoryEntry) -> bool:
    """What an index reads of an entry is the same in ``a`` and ``b``: id, status, type and text."""
    return a.id == b.id and a.status is b.status and a.type is b.type and a.text == b.text


def _derived(entries: tuple[MemoryEntry, ...], caches: Caches) -> StoredIndex | None:
    """The index of ``entries`` when they hold, position by position, entries with the same id,
    status, type and text as those of the last index looked up (a store whose entries were
    re-stamped or reinforced in place): the same positions, without building it again."""
    last = caches.last_index
    if last is None or len(last.entries) != len(entries):
        return None
    for a, b in zip(last.entries, entries, strict=True):
        if a is not b and not _same_keys(a, b):
            return None
    return last._replace(entries=entries)


def stored_index(entries: Sequence[MemoryEntry], caches: Caches | None = None) -> StoredIndex:
    """The index of ``entries`` (filed in ``caches`` for tuples)."""
    if caches is None or not isinstance(entries, tuple):
        return build_index(entries, caches)
    index = caches.indexes.get(entries)
    if index is None:
        index = _derived(entries, caches) or build_index(entries, caches)
        caches.indexes.put(entries, index)
    caches.last_index = index
    return index


def derive_index(
    before: tuple[MemoryEntry, ...],
    after: tuple[MemoryEntry, ...],
    fresh: Sequence[MemoryEntry],
    caches: Caches,
) -> None:
    """Record the index of ``after``, a settled store's entries that normalisation made from the
    entries ``before`` (the same objects, in any order) and the ``fresh`` ones, when ``before`` has an
    index: made from it, looking up only the fresh entries' keys. The caller, the delta pass
    (``domain/consolidation/delta.py``), has just checked what this needs: no two entries of
    ``after`` share an id, nor two of its active entries an exact or identity key. The positions are
    those :func:`build_index` would find (a property test compares the two)."""
    hit = caches.indexes.get(before)
    if hit is None or after is before:
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
            exact, identity = entry_keys(entry, caches)
            first_exact[exact] = position
            first_identity[identity] = position
    caches.indexes.put(after, StoredIndex(after, first_exact, first_identity, dict(first_exact), first_id))
