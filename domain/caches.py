"""The speed state of the core, as one explicit value (docs/decisions.md#d14).

A long simulated life runs the same pure steps thousands of times on the same frozen objects
(docs/performance.md, "Simulation"), and they keep deriving the same facts from them: an entry's
keys and key hashes, whether normalisation would leave it as it is, the parts of its retention key
that do not depend on the instant; where keys and ids stand in an entries tuple; the key hashes of a
tuple of archive markers; which stores a second normalisation would leave alone; the last ranking.
:class:`Caches` remembers those facts for **one owner**. It is passed in, never found in a module:

- the owner is the long-lived caller of one workspace — the simulator's workspace, an
  :class:`~domain.workspace_port.InMemoryWorkspace`, a ``WorkingMemory`` (so ``workmem serve``, one
  per workspace), the hook server (one per workspace, used only inside that workspace's transaction,
  docs/architecture.md "Speed without changing a result"); a one-shot caller passes a fresh one, and
  every function that takes one makes a fresh one when it is not given any;
- it reaches the operations through the :class:`~domain.operations.Snapshot` and the lower-level
  functions as a parameter (``caches=``);
- each table is bounded (emptied when full) and :meth:`Caches.clear` empties them all;
- it never changes a result: every fact is derived from the value it is filed under, and a property
  test compares each step run with a warm cache and with a fresh one (``property_tests/
  test_memo_properties.py``, ``test_delta_properties.py``). Two caches compare equal, so a
  :class:`~domain.operations.Snapshot` compares by its values alone.

The tables are keyed by object identity with the object kept in the entry (frozen structs that hold a
dict cannot be hashed, and equal entries would cost a full comparison): a hit is only a hit for the
very same object, and an ``id`` cannot be reused by another object while it is filed. This module
only stores; what a fact is, and when a step may record one, is said where it is computed
(``domain/keys.py``, ``domain/key_index.py``, ``domain/ranking.py``, ``domain/consolidation/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Generic, NamedTuple, TypeVar

from domain.enums import Volatility
from domain.model import ArchiveMarker, MemoryEntry
from domain.retention import Dormancy, Tuning

# The facts the tables hold. They are defined here, below every module that derives them
# (domain/keys.py, domain/key_index.py, domain/ranking.py, domain/consolidation/archive.py), so that
# those modules import the cache and its facts from one place and nothing here imports them back.


class StoredIndex(NamedTuple):
    """Positions in ``entries``: the first active entry with each exact and identity key, the last
    active entry with each exact key, and the first entry (of any status) with each id."""

    entries: Sequence[MemoryEntry]
    first_exact: dict[str, int]
    first_identity: dict[str, int]
    last_exact: dict[str, int]
    first_id: dict[str, int]


class MarkerIndex(NamedTuple):
    markers: tuple[ArchiveMarker, ...]
    #: key hash -> the markers with that exact (``key_hash``) or identity hash
    exact: dict[str, tuple[ArchiveMarker, ...]]
    identity: dict[str, tuple[ArchiveMarker, ...]]


#: what the retention order files per entry (domain.ranking; the bool: ``high`` importance,
#: docs/decisions.md#d20)
StaticParts = tuple[
    MemoryEntry, float | None, float, tuple[int, Volatility], bool, tuple[int, float, str], float
]


class Ranking(NamedTuple):
    """One ranking: the instant, dormancy and tuning, and the entries strongest first."""

    at: float
    dormancy: Dormancy
    tuning: Tuning
    ranked: list[MemoryEntry]


K = TypeVar("K")
V = TypeVar("V")

#: Facts per entry object: a store holds at most a few thousand entries, and each operation makes a
#: few new ones.
ENTRY_LIMIT: Final = 16384
#: Facts per entries or markers tuple: a step looks at a handful of versions of one store.
INDEX_LIMIT: Final = 16
SETTLED_LIMIT: Final = 64


class IdentityMemo(Generic[K, V]):
    """Values derived from objects, filed by the object's identity; bounded: emptied when a new value
    would exceed ``limit``. ``table`` is open for bulk lookups in a hot loop
    (``hit = table.get(id(obj)); hit is not None and hit[0] is obj``)."""

    __slots__ = ("limit", "table")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.table: dict[int, tuple[K, V]] = {}

    def get(self, key: K) -> V | None:
        hit = self.table.get(id(key))
        return hit[1] if hit is not None and hit[0] is key else None

    def __contains__(self, key: K) -> bool:
        hit = self.table.get(id(key))
        return hit is not None and hit[0] is key

    def put(self, key: K, value: V) -> V:
        if len(self.table) >= self.limit:
            self.table.clear()
        self.table[id(key)] = (key, value)
        return value

    def __len__(self) -> int:
        return len(self.table)

    def clear(self) -> None:
        self.table.clear()


class Settled(NamedTuple):
    """A store normalisation leaves as it is (``domain/consolidation/settled.py``): its entries and
    archive markers (the very tuples), and its number of active entries."""

    entries: tuple[MemoryEntry, ...]
    archived: tuple[ArchiveMarker, ...]
    active: int


class Caches:
    """The speed state of one owner (module docstring). Every table is public to the module that
    computes its facts, and to nothing else."""

    __slots__ = (
        "clean",
        "indexes",
        "key_hashes",
        "keys",
        "last_index",
        "last_ranking",
        "last_settled",
        "markers",
        "settled",
        "static",
    )

    def __init__(self) -> None:
        #: ``(exact key, identity key)`` and their 16-hex hashes, by entry (``domain/keys.py``)
        self.keys: IdentityMemo[MemoryEntry, tuple[str, str]] = IdentityMemo(ENTRY_LIMIT)
        self.key_hashes: IdentityMemo[MemoryEntry, tuple[str, str]] = IdentityMemo(ENTRY_LIMIT)
        #: entries that redaction, backfill and truncation leave as they are
        #: (``domain/consolidation/cleaning.py``)
        self.clean: IdentityMemo[MemoryEntry, bool] = IdentityMemo(ENTRY_LIMIT)
        #: what the retention order needs of an entry that does not depend on the instant
        #: (``domain/ranking.py``)
        self.static: IdentityMemo[MemoryEntry, StaticParts] = IdentityMemo(ENTRY_LIMIT)
        #: positions of keys and ids, by entries tuple, and the last one looked up
        #: (``domain/key_index.py``)
        self.indexes: IdentityMemo[tuple[MemoryEntry, ...], StoredIndex] = IdentityMemo(INDEX_LIMIT)
        self.last_index: StoredIndex | None = None
        #: key hashes of archive markers, by markers tuple (``domain/consolidation/archive.py``)
        self.markers: IdentityMemo[tuple[ArchiveMarker, ...], MarkerIndex] = IdentityMemo(SETTLED_LIMIT)
        #: settled stores, by entries tuple, and the last one recorded or found
        #: (``domain/consolidation/settled.py``)
        self.settled: IdentityMemo[tuple[MemoryEntry, ...], Settled] = IdentityMemo(SETTLED_LIMIT)
        self.last_settled: Settled | None = None
        #: the last ranking (``domain/ranking.py``)
        self.last_ranking: Ranking | None = None

    def clear(self) -> None:
        """Forget everything (the next step derives every fact again)."""
        for memo in (self.keys, self.key_hashes, self.clean, self.static, self.indexes, self.markers):
            memo.clear()
        self.settled.clear()
        self.last_index = self.last_settled = self.last_ranking = None

    def __eq__(self, other: object) -> bool:
        # The cache is not part of any value it travels with: it never changes a result.
        return isinstance(other, Caches)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"Caches(entries={len(self.keys)}, settled={len(self.settled)})"
