"""Importing the projection (docs/decisions.md#d17): what changed in ``.workmem/`` since the last sync,
taken into the store through the same gate as every other write.

* A new file is a new memory; a file with the same identity as a memory of the store (the same fact
  written in two clones) folds into it: the one created first (then the smaller id) stays, the other
  is kept as superseded by it, and the one that stays is reinforced.
* An edited file changes its memory: a new text or type is checked by :func:`domain.safety.admit` and
  replaces the old one in place, the old text kept as a superseded revision; a new ``status`` forgets,
  supersedes or restores; ``scope``, ``supersedes``, ``rationale`` and unknown keys are taken as they
  are (a rationale passes the injection and credential checks too).
* A deleted file forgets its memory (superseded, with a tombstone): nothing is ever deleted.
* Tombstone lines added elsewhere forget the same fact here; lines removed lift the tombstone.
* A file that cannot be read is quarantined, one the gate refuses is rejected (a credential typed into
  a file is refused, never stored redacted): each gets an event with the file and the line, and the
  store keeps what it had.

A file that says what the store says changes nothing and leaves no event, so importing an unchanged
projection is a no-op.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace
from returns.result import Failure, Success

from domain import evidence
from domain.consolidation import normalize_store
from domain.emitted import Emitted, events
from domain.enums import MemoryStatus, Scope
from domain.ids import memory_id, stable_suffix
from domain.model import Citation, MemoryEntry
from domain.operations.values import OpResult, Snapshot, operation, unchanged
from domain.projection import events as projection_events
from domain.projection.checks import gate
from domain.projection.document import Diagnostic, MemoryFile, Parsed, file_stem, parse, path_parts
from domain.projection.freshness_keys import FRESHNESS_KEYS, ReadFreshness, cite_text, stored_texts
from domain.projection.reasons import FileReason, FileStatus
from domain.projection.records import ProjectionFile, TombstoneLine
from domain.projection.scopes import projects, stored_scope
from domain.projection.view import FIELDS_KEY, file_of, revision_id, superseded_index
from domain.projection.working import Working
from domain.retention import reinforce, reinforcement_count


class _Import(Working):
    """One import of projection files (local to :func:`import_projection`)."""

    # ---- the entries ------------------------------------------------------------------------------

    # ---- tombstones -------------------------------------------------------------------------------

    # ---- files ------------------------------------------------------------------------------------

    def deleted(self, path: str) -> None:
        parts = path_parts(path)
        if parts is None:
            return
        entry = next((e for e in self.entries if file_stem(e.id) == parts[1]), None)
        if entry is None or entry.status is not MemoryStatus.ACTIVE or not projects(entry, self.projected):
            return
        self.put(self._retired(entry, None))
        self.tombstone(entry, "deleted_in_projection")
        forgotten = self.get(entry.id) or entry
        self.emit(
            evidence.forgotten(forgotten, "deleted_in_projection", entry.text),
            projection_events.imported(forgotten, path, ("deleted",)),
        )

    def quarantine(self, diagnostic: Diagnostic) -> None:
        self.emit(projection_events.quarantined(diagnostic))

    def reject(self, path: str, line: int, reasons: Sequence[str], text: str) -> None:
        self.emit(projection_events.rejected(path, line, reasons, text))

    def admitted(self, path: str, parsed: Parsed) -> str | None:
        """The text to store for a file, or ``None`` when the gate turned it down (reported)."""
        checked = gate(parsed.file, parsed.body_line)
        if isinstance(checked, Failure):
            line, reasons = checked.failure()
            self.reject(path, line, reasons, parsed.file.body)
            return None
        return checked.unwrap()

    def take(self, path: str, parsed: Parsed) -> None:
        file = parsed.file
        parts = path_parts(path)
        own = file.id is not None and parts is not None and parts[1] == file_stem(file.id)
        if own and file.id is not None:
            if file.id in self.absorbed or (file.id in self.archived and self.get(file.id) is None):
                why = FileReason.ARCHIVED.value
                self.reject(path, 1, (why,), file.body)
                return
            existing = self.get(file.id)
            if existing is not None:
                self.edit(path, parsed, existing)
                return
        self.new(path, parsed, file.id if own else None)

    # ---- an edited file ---------------------------------------------------------------------------

    def edit(self, path: str, parsed: Parsed, entry: MemoryEntry) -> None:
        file = parsed.file
        index = superseded_index(self.entries)
        current = file_of(entry, index)
        if replace(file, identity=current.identity) == current:
            return
        text = self.admitted(path, parsed)
        if text is None:
            return
        changes: list[str] = []
        updated = entry
        if text != entry.text or file.type is not entry.type:
            updated = self._revise(entry, file, text)
            changes.append("text")
        fields = self._fields(file)
        stored = _field_values(updated)
        if any(stored[k] != v for k, v in fields.items()):
            updated = _with_fields(updated, fields)
            changes.append("fields")
        if file.supersedes != current.supersedes:
            self.links.append((entry.id, file.supersedes))
            changes.append("supersedes")
        self.put(updated)
        if file.status is not current.status:
            updated = self._status(updated, file.status)
            changes.append("status")
        self.emit(projection_events.imported(updated, path, changes or ("fields",)))

    def _revise(self, entry: MemoryEntry, file: MemoryFile, text: str) -> MemoryEntry:
        """The text (or type) of ``entry`` changes in place; the old one is kept as a superseded
        revision whose id derives from the memory and its old text (the same in every clone)."""
        earlier = revision_id(entry.id, stable_suffix(entry.type, entry.text))
        old = replace(self._retired(entry, entry.id), id=earlier, extras={}, absorbed_ids=None)
        if self.get(earlier) is None:
            self.put(old)
            self.tombstone(old, "edited_in_projection")
        revised = replace(
            entry, text=text, type=file.type, updated_at=self.stamp, retention_clock=self.now_ms
        )
        self.emit(evidence.superseded(old, revised, "edited_in_projection"))
        return revised

    def _fields(self, file: MemoryFile) -> dict[str, object]:
        read = ReadFreshness(dict(file.extras))
        extras = {k: v for k, v in file.extras if k not in FRESHNESS_KEYS} | read.unread
        fields: dict[str, object] = {
            "volatility": read.volatility,
            "verified": read.verified,
            "valid_until": read.valid_until,
            "cites": read.cites,
            "scope": stored_scope(file.type, file.scope),
            "source": file.source,
            "rationale": file.rationale,
            "supersedes": file.supersedes or None,
            "pinned": file.pinned,
            "extras_fields": {k: list(v) if isinstance(v, tuple) else v for k, v in extras.items()},
        }
        if file.created is not None:
            fields["created_at"] = file.created
        return fields

    # ---- a new file -------------------------------------------------------------------------------

    def new(self, path: str, parsed: Parsed, own_id: str | None) -> None:
        file = parsed.file
        text = self.admitted(path, parsed)
        if text is None:
            return
        new_id = own_id if own_id is not None else memory_id(self.now_ms, "projection", path, text)
        entry = MemoryEntry(
            id=new_id,
            type=file.type,
            text=text,
            source=file.source,
            confidence=1.0,
            status=MemoryStatus.ACTIVE,
            created_at=file.created or self.stamp,
            updated_at=self.stamp,
            retention_clock=self.now_ms,
            stale_after_days=_stale_after_days(file),
        )
        entry = _with_fields(entry, self._fields(file))
        if file.status is not FileStatus.ACTIVE:
            entry = self._retired(entry, None, marked=file.status is FileStatus.SUPERSEDED)
            entry = replace(entry, updated_at=self.stamp)
        elif self._tombstoned(entry):
            entry = self._retired(entry, None)
        else:
            entry = self._fold(entry)
        self.put(entry)
        if file.supersedes:
            self.links.append((entry.id, file.supersedes))
        self.emit(projection_events.imported(entry, path, ("new",)))

    def _tombstoned(self, entry: MemoryEntry) -> bool:
        digest = self.key_hashes(entry)
        return any(t.key_hash == digest and t.memory_id != entry.id for t in self.tombstones)

    def _fold(self, entry: MemoryEntry) -> MemoryEntry:
        """The same fact created in another clone: one of the two stays (docs/decisions.md#d17)."""
        digest = self.key_hashes(entry)
        other = next(
            (
                e
                for e in self.entries
                if e.status is MemoryStatus.ACTIVE and e.id != entry.id and self.key_hashes(e) == digest
            ),
            None,
        )
        if other is None:
            return entry
        shared = projects(other, self.projected)
        if shared and (other.created_at, other.id) <= (entry.created_at, entry.id):
            kept = reinforce(
                replace(other, pinned=other.pinned or entry.pinned), None, self.now_ms, self.tuning
            )
            self.put(kept)
            folded = self._retired(entry, other.id)
            self.emit(evidence.superseded(folded, kept, "same_identity"))
            if reinforcement_count(kept) > reinforcement_count(other):
                self.emit(evidence.reinforced(kept, folded, "duplicate_exact", path="projection"))
            return folded
        inherited = replace(
            entry,
            retention_clock=other.retention_clock,
            reinforcement_count=other.reinforcement_count,
            last_reinforced_at=other.last_reinforced_at,
            user_importance=other.user_importance,
            pinned=entry.pinned or other.pinned,  # the pin goes to the memory that stays
        )
        kept = reinforce(inherited, None, self.now_ms, self.tuning)
        retired = self._retired(other, entry.id)
        self.put(retired)
        self.emit(evidence.superseded(retired, kept, "same_identity"))
        if reinforcement_count(kept) > reinforcement_count(inherited):
            self.emit(evidence.reinforced(kept, retired, "duplicate_exact", path="projection"))
        return kept

    # ---- after every file -------------------------------------------------------------------------


def _stale_after_days(file: MemoryFile) -> int | None:
    from domain.extraction import stale_after_days_for

    return stale_after_days_for(file.type)


def _field_values(entry: MemoryEntry) -> dict[str, object]:
    raw = entry.extras.get(FIELDS_KEY)
    stored = stored_texts(entry)
    values: dict[str, object] = {
        "volatility": stored["volatility"],
        "verified": stored["verified"],
        "valid_until": stored["valid_until"],
        "cites": _unread(entry.cites) if entry.cites else None,
        "scope": entry.scope,
        "source": entry.source,
        "rationale": entry.rationale,
        "supersedes": entry.supersedes,
        "pinned": entry.pinned,
        "extras_fields": raw if isinstance(raw, dict) else {},
    }
    return values | {"created_at": entry.created_at}


def _with_fields(entry: MemoryEntry, fields: dict[str, object]) -> MemoryEntry:
    values = dict(fields)
    cites = values.get("cites")
    if isinstance(cites, tuple) and entry.cites and _cite_texts(cites) == _cite_texts(entry.cites):
        values["cites"] = entry.cites  # the same files and lines: this machine's baseline stays
    extra = values.pop("extras_fields")
    extras = {k: v for k, v in entry.extras.items() if k != FIELDS_KEY}
    if isinstance(extra, dict) and extra:
        extras[FIELDS_KEY] = extra
    return replace(entry, extras=extras, **values)


@operation
def import_projection(
    snap: Snapshot,
    files: Sequence[ProjectionFile],
    now_ms: int,
    *,
    deleted: Sequence[str] = (),
    tombstones_added: Sequence[TombstoneLine] = (),
    tombstones_removed: Sequence[str] = (),
    projected: Scope = Scope.TEAM,
) -> OpResult:
    """Take what changed in the projection into the store (see the module documentation)."""
    work = _Import(snap.store, now_ms, projected, snap.tuning)
    work.lift(tombstones_removed)
    work.bury(tombstones_added)
    for path in sorted(set(deleted)):
        work.deleted(path)
    parsed: list[tuple[str, Parsed]] = []
    for file in sorted(files, key=lambda f: f.path):
        if file.text is None:
            work.quarantine(Diagnostic(file.path, 1, FileReason.NOT_UTF8.value, "the file is not UTF-8 text"))
            continue
        match parse(file.text, file.path):
            case Failure(Diagnostic() as problem):
                work.quarantine(problem)
            case Success(Parsed() as found):
                parsed.append((file.path, found))
    # files of memories this store holds first, so that a new file folds into what they now say
    parsed.sort(key=lambda item: (item[1].file.id is None or work.get(item[1].file.id) is None, item[0]))
    for path, found in parsed:
        work.take(path, found)
    work.link()
    if not work.changed:
        return replace(unchanged(snap), emitted=events(tuple(work.found)))
    store = replace(
        snap.store,
        entries=tuple(work.entries),
        tombstones=tuple(work.tombstones),
        updated_at=work.stamp,
    )
    normalized = normalize_store(store, now_ms, archive=snap.archive, tuning=snap.tuning)
    return OpResult(
        store=normalized.store,
        journal=snap.journal,
        session=snap.session,
        emitted=Emitted(events=tuple(work.found)) + normalized.emitted,
    )


__all__ = ["ProjectionFile", "import_projection"]


def _unread(cites: tuple[Citation, ...]) -> tuple[Citation, ...]:
    """Citations as a file gives them: files and lines, not this machine's hash or identifiers."""
    return tuple(Citation(path=c.path, start_line=c.start_line, end_line=c.end_line) for c in cites)


def _cite_texts(cites: tuple[Citation, ...]) -> tuple[str, ...]:
    return tuple(cite_text(c) for c in cites)
