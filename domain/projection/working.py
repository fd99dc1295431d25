"""A store being changed by an import of the projection (docs/decisions.md#d17): the entries and
tombstones as lists that one import edits in place before it builds the new store, with the steps every
change is made of — keep an entry, retire it (forgotten or superseded), lift or add a tombstone, set
the status a file states, link what a file ``supersedes``. Local to one call of
:func:`domain.projection.importing.import_projection`; nothing here outlives it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from msgspec.structs import replace

from domain import evidence
from domain.enums import MemoryStatus, Scope
from domain.keys import exact_key, key_hash
from domain.model import EvidenceInput, MemoryEntry, Tombstone, WorkspaceStore
from domain.projection.reasons import FileStatus
from domain.projection.records import TombstoneLine
from domain.projection.scopes import projects
from domain.projection.tombstones import tombstone_of
from domain.projection.view import STATUS_KEY
from domain.retention import Tuning
from domain.timeutil import iso_from_ms

#: The tombstone reasons of a forget (``forgotten_by_user``, ``forgotten_in_projection``,
#: ``deleted_in_projection``), as opposed to a supersession.
_FORGETTING: Final = ("forgotten", "deleted")


class Working:
    """A store being changed by one import: its entries and tombstones as lists, the evidence found,
    and the ``supersedes`` of files to link once every file is in."""

    def __init__(self, store: WorkspaceStore, now_ms: int, projected: Scope, tuning: Tuning) -> None:
        self.now_ms = now_ms
        self.stamp = iso_from_ms(now_ms)
        self.projected = projected
        self.tuning = tuning
        self.entries = list(store.entries)
        self.position: dict[str, int] = {}
        for index, entry in enumerate(self.entries):
            self.position.setdefault(entry.id, index)
        self.tombstones = list(store.tombstones)
        self.absorbed = {a for e in store.entries for a in e.absorbed_ids or ()}
        self.archived = {m.memory_id for m in store.archived}
        self.found: list[EvidenceInput] = []
        self.changed = False
        #: files whose ``supersedes`` are linked once every file is in
        self.links: list[tuple[str, tuple[str, ...]]] = []

    def get(self, memory_id: str) -> MemoryEntry | None:
        index = self.position.get(memory_id)
        return self.entries[index] if index is not None else None

    def put(self, entry: MemoryEntry) -> None:
        index = self.position.get(entry.id)
        if index is None:
            self.position[entry.id] = len(self.entries)
            self.entries.append(entry)
        else:
            self.entries[index] = entry
        self.changed = True

    def emit(self, *found: EvidenceInput) -> None:
        self.found.extend(found)

    def key_hashes(self, entry: MemoryEntry) -> str:
        return key_hash(exact_key(entry))

    def lift(self, identities: Iterable[str]) -> None:
        gone = set(identities)
        kept = [t for t in self.tombstones if t.key_hash not in gone]
        if len(kept) != len(self.tombstones):
            self.tombstones = kept
            self.changed = True

    def bury(self, lines: Iterable[TombstoneLine]) -> None:
        """Tombstones another clone added: kept here (the fact is not extracted again), and a fact
        another clone forgot is forgotten here too (a superseded one is replaced by its file)."""
        for line in lines:
            if any(t.key_hash == line.identity for t in self.tombstones):
                continue
            self.tombstones.append(tombstone_of(line))
            self.changed = True
            if not line.reason.startswith(_FORGETTING):
                continue
            for entry in list(self.entries):
                active = entry.status is MemoryStatus.ACTIVE and projects(entry, self.projected)
                if active and self.key_hashes(entry) == line.identity:
                    self.put(self._retired(entry, None))
                    self.emit(evidence.forgotten(entry, "forgotten_in_projection", entry.text))

    def tombstone(self, entry: MemoryEntry, reason: str) -> None:
        digest = self.key_hashes(entry)
        stone = Tombstone(key_hash=digest, memory_id=entry.id, reason=reason, created_at=self.stamp)
        self.tombstones = [*(t for t in self.tombstones if t.key_hash != digest), stone]
        self.changed = True

    def _retired(self, entry: MemoryEntry, by: str | None, *, marked: bool = False) -> MemoryEntry:
        """``entry`` superseded (by ``by``, else forgotten); one with a replacement keeps no pin
        (docs/decisions.md#d20)."""
        extras = {k: v for k, v in entry.extras.items() if k != STATUS_KEY}
        if marked:
            extras[STATUS_KEY] = FileStatus.SUPERSEDED.value
        return replace(
            entry,
            status=MemoryStatus.SUPERSEDED,
            superseded_by=by,
            updated_at=self.stamp,
            extras=extras,
            pinned=entry.pinned and by is None,
        )

    def _status(self, entry: MemoryEntry, status: FileStatus) -> MemoryEntry:
        if status is FileStatus.ACTIVE:
            digest = self.key_hashes(entry)
            self.tombstones = [t for t in self.tombstones if t.key_hash != digest]
            revived = replace(
                self._unmarked(entry),
                status=MemoryStatus.ACTIVE,
                superseded_by=None,
                updated_at=self.stamp,
                retention_clock=self.now_ms,
            )
            self.put(revived)
            self.emit(evidence.restored(revived))
            return revived
        marked = status is FileStatus.SUPERSEDED and entry.superseded_by is None
        retired = self._retired(entry, entry.superseded_by, marked=marked)
        self.put(retired)
        reason = f"{status.value}_in_projection"
        self.tombstone(entry, reason)
        if status is FileStatus.FORGOTTEN:
            self.emit(evidence.forgotten(retired, reason, entry.text))
        else:
            self.emit(evidence.superseded(retired, None, reason))
        return retired

    def _unmarked(self, entry: MemoryEntry) -> MemoryEntry:
        if STATUS_KEY not in entry.extras:
            return entry
        return replace(entry, extras={k: v for k, v in entry.extras.items() if k != STATUS_KEY})

    def link(self) -> None:
        """Each file's ``supersedes``: the memories it names are superseded by it."""
        for new_id, olds in self.links:
            for old_id in olds:
                old = self.get(old_id)
                if old is None or old_id == new_id or old.superseded_by == new_id:
                    continue
                if old.status is MemoryStatus.ACTIVE:
                    self.tombstone(old, "superseded_in_projection")
                retired = self._retired(old, new_id)
                self.put(retired)
                self.emit(evidence.superseded(retired, self.get(new_id), "superseded_in_projection"))
