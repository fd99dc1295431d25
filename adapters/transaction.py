"""The workspace transaction (docs/decisions.md#d5): what a command reads and changes while it holds
the workspace lock, written back on a clean exit. :meth:`adapters.filestore.Workspace.transaction`
creates it; the guarantees are listed in :mod:`adapters.filestore`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec
from msgspec.structs import replace

from adapters.evidence_log import describe_os_error, warn
from adapters.jsonl import (
    append_records,
    atomic_write,
    ensure_private_dir,
    keep_previous,
    previous_of,
    rotate_if_larger,
)
from adapters.paths import migration_log, rejection_log, session_file_name
from adapters.storage_io import (
    KIND_JOURNAL,
    KIND_SESSION,
    KIND_STORE,
    SESSION_FILE_NAME,
    StaleWrite,
    StorageError,
    cached_decode,
    disk_revision,
    move_aside,
    read_file,
    salvage_file,
    salvage_report,
    set_aside,
    storage_event,
    unavailable,
)
from domain.codec import DecodeFailure, decode, decode_store_head, encode_pretty
from domain.enums import EventType, Outcome
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.recovery import stored_ids

if TYPE_CHECKING:
    from adapters.storage_io import WorkspaceFiles
    from domain.salvage import Salvaged

S = TypeVar("S", bound=msgspec.Struct)


class Transaction:
    """What a command may read and change while it holds the workspace lock. Valid only inside the
    ``with`` block that created it."""

    def __init__(self, workspace: WorkspaceFiles, now_ms: int) -> None:
        self.workspace = workspace
        self.now_ms = now_ms
        self._open = True
        self._store: WorkspaceStore | None = None
        self._store_put: WorkspaceStore | None = None
        self._journal: PendingJournal | None = None
        self._journal_put: PendingJournal | None = None
        self._sessions: dict[str, SessionState | None] = {}
        self._sessions_put: dict[str, SessionState] = {}
        self._sessions_deleted: set[str] = set()
        self._archive: dict[str, MemoryEntry] | None = None
        self._events: list[EvidenceInput] = []
        self._always: list[EvidenceInput] = []
        self._always_flushed = False
        self._archive_out: list[MemoryEntry] = []
        self._audit: list[msgspec.Struct] = []
        self._rejections: list[msgspec.Struct] = []
        #: damaged files whose salvaged value must be written back, with the bytes they held (``None``:
        #: the file was moved aside, so none)
        self._salvaged: dict[Path, bytes | None] = {}
        #: files read whole: their bytes become their last good generation when the commit replaces
        #: them (docs/decisions.md#last-good-generation)
        self._clean: set[Path] = set()
        #: kinds (``pending_journal``, ...) found damaged in this transaction: moved aside or salvaged
        self.damaged: set[str] = set()
        #: values as written by the commit, with their new revisions: ``workspace_memory``,
        #: ``pending_journal`` and ``session:<id>``
        self.written: dict[str, msgspec.Struct] = {}

    # ---- reading inside the lock ----------------------------------------------------------------

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("the transaction is closed; use it only inside its with-block")

    def _load(
        self,
        path: Path,
        kind: str,
        tp: type[S],
        empty: S | None = None,
        settled: Callable[[], frozenset[str]] | None = None,
    ) -> S | None:
        """The file's value as read inside the lock; a damaged file salvaged (with its last good
        generation, less the ids ``settled`` gives), else moved aside (``None``)."""
        data = read_file(path)
        if data is None:
            return None
        result = cached_decode(self.workspace.cache, path, data, lambda raw: decode(raw, tp))
        value: S | None = result.value_or(None)
        if value is not None:
            self._clean.add(path)
            return value
        salvaged, previous = salvage_file(path, data, tp, empty, settled)
        if salvaged is not None:
            self._keep_original(path, kind, data, salvaged, previous)
            return salvaged.value
        self._quarantine(path, kind, result.swap().value_or(DecodeFailure("invalid_json", "")))
        return None

    def _keep_original(
        self, path: Path, kind: str, data: bytes, salvaged: Salvaged[S], previous: str | None
    ) -> None:
        """A damaged file was salvaged (docs/decisions.md#last-good-generation): it is kept aside
        (:func:`adapters.storage_io.set_aside`) until the salvaged value replaces it at commit, with a
        warning and an event."""
        try:
            target, moved = set_aside(path, data, self.now_ms)
        except OSError as exc:
            raise unavailable("keep a copy of damaged", path, exc) from None
        self._salvaged[path] = None if moved else data
        self.damaged.add(kind)
        message, found = salvage_report(path, kind, salvaged, target, previous)
        warn(message)
        self._always.append(found)

    def _quarantine(self, path: Path, kind: str, failure: DecodeFailure) -> None:
        message, found = move_aside(path, kind, failure, self.now_ms)
        warn(message)
        self.damaged.add(kind)
        self._always.append(found)

    @property
    def store(self) -> WorkspaceStore:
        """The workspace store as last put in this transaction, else as read inside the lock."""
        self._check_open()
        if self._store_put is not None:
            return self._store_put
        if self._store is None:
            empty = self.workspace.empty_store(self.now_ms)
            loaded = self._load(self.workspace.paths.store, KIND_STORE, WorkspaceStore, empty)
            self._store = loaded if loaded is not None else self.workspace.empty_store(self.now_ms)
        return self._store

    def store_head(self) -> WorkspaceStore | None:
        """The store without its entries (``domain.codec.decode_store_head``), for an operation that
        only reads its workspace and activity time; ``None`` when only a full read will do. Never a
        value to write back: :func:`adapters.service.execute` re-runs a command that changed it on
        the full store."""
        self._check_open()
        if self._store_put is not None or self._store is not None:
            return self.store

        data = read_file(self.workspace.paths.store)
        return decode_store_head(data) if data is not None else None

    @property
    def journal(self) -> PendingJournal:
        """The pending journal as last put in this transaction, else as read inside the lock."""
        self._check_open()
        if self._journal_put is not None:
            return self._journal_put
        if self._journal is None:
            empty_journal = self.workspace.empty_journal(self.now_ms)
            loaded = self._load(
                self.workspace.paths.journal, KIND_JOURNAL, PendingJournal, empty_journal, self._stored_ids
            )
            self._journal = loaded if loaded is not None else self.workspace.empty_journal(self.now_ms)
        return self._journal

    def _stored_ids(self) -> frozenset[str]:
        """What a damaged journal must not get back from its last good generation: the memories the
        store already holds (promoted since)."""

        return stored_ids(self.store)

    def _session_by_file(self, name: str) -> SessionState | None:
        if name in self._sessions_deleted:
            return None
        if name in self._sessions_put:
            return self._sessions_put[name]
        if name not in self._sessions:
            path = self.workspace.paths.sessions / name
            self._sessions[name] = self._load(path, KIND_SESSION, SessionState)
        return self._sessions[name]

    def session(self, session_id: str) -> SessionState | None:
        """The state of one session, or ``None`` when it has none (or it was deleted here)."""
        self._check_open()
        return self._session_by_file(session_file_name(session_id))

    def sessions(self) -> list[SessionState]:
        """Every session of the workspace (for idle-owner adoption), in file-name order."""
        self._check_open()
        try:
            listed = self.workspace.paths.sessions.iterdir()
            names = {p.name for p in listed if SESSION_FILE_NAME.match(p.name)}
        except FileNotFoundError:
            names = set()
        except OSError as exc:
            raise unavailable("list", self.workspace.paths.sessions, exc) from None
        names |= set(self._sessions_put)
        found = (self._session_by_file(name) for name in sorted(names))
        return [state for state in found if state is not None]

    def archive(self) -> Mapping[str, MemoryEntry]:
        """Archived memories by :func:`archive_key` (loaded on first use)."""
        self._check_open()
        if self._archive is None:
            self._archive = self.workspace.read_archive()
        return self._archive

    # ---- changes --------------------------------------------------------------------------------

    def put_store(self, store: WorkspaceStore) -> None:
        _ = self.store  # read (and quarantine if needed) before replacing
        self._store_put = store

    def put_journal(self, journal: PendingJournal) -> None:
        _ = self.journal
        self._journal_put = journal

    def put_session(self, state: SessionState) -> None:
        self._check_open()
        name = session_file_name(state.session_id)
        self._sessions_deleted.discard(name)
        self._session_by_file(name)
        self._sessions_put[name] = state

    def delete_session(self, session_id: str) -> None:
        self._check_open()
        name = session_file_name(session_id)
        self._sessions_put.pop(name, None)
        self._session_by_file(name)
        self._sessions_deleted.add(name)

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        self._check_open()
        self._events.extend(events)

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        self._check_open()
        self._archive_out.extend(entries)

    def append_migration_audit(self, records: Iterable[msgspec.Struct]) -> None:
        """Audit lines; each record's ``migration_id`` picks its file under ``migration-logs/``."""
        self._check_open()
        self._audit.extend(records)

    def append_rejections(self, records: Iterable[msgspec.Struct]) -> None:
        """Lines for the global extraction-rejection log."""
        self._check_open()
        self._rejections.extend(records)

    # ---- commit ---------------------------------------------------------------------------------

    def _checked(self, path: Path, kind: str, value: S, base: int | None) -> S:
        """``value`` with its next revision, after checking that the disk is still at ``base``."""
        expected = base or 0
        if path in self._salvaged:
            # a salvaged file has no readable revision: it must still hold the bytes salvaged from
            found: int | None = expected if read_file(path) == self._salvaged[path] else None
        else:
            found = disk_revision(path)
        if found != expected:
            self._always.append(
                storage_event(
                    EventType.STORAGE_STALE_WRITE_REJECTED,
                    Outcome.REJECTED,
                    "stale_revision",
                    {
                        "storeKind": kind,
                        "expectedRevision": expected,
                        "foundRevision": -1 if found is None else found,
                    },
                )
            )
            shown = "unreadable" if found is None else str(found)
            raise StaleWrite(
                f"stale write rejected: {kind} on disk is at revision {shown}, "
                f"the update was based on revision {expected}"
            )
        return replace(value, revision=expected + 1)

    def _commit(self) -> None:
        ws = self.workspace
        # (path, label in ``written``, value with its new revision), in write order: store first, so a
        # crash between files can only leave pending entries that the next promotion absorbs.
        plan: list[tuple[Path, str, msgspec.Struct]] = []
        salvaged = self._salvaged
        store = self._store_put if self._store_put is not None else self._store
        if store is not None and (store != self._store or ws.paths.store in salvaged):
            new_store = self._checked(ws.paths.store, KIND_STORE, store, store.revision)
            plan.append((ws.paths.store, KIND_STORE, new_store))
        journal = self._journal_put if self._journal_put is not None else self._journal
        if journal is not None and (journal != self._journal or ws.paths.journal in salvaged):
            new_journal = self._checked(ws.paths.journal, KIND_JOURNAL, journal, journal.revision)
            plan.append((ws.paths.journal, KIND_JOURNAL, new_journal))
        damaged_sessions = {
            path.name: state
            for path in salvaged
            if path.parent == ws.paths.sessions
            and path.name not in self._sessions_deleted
            and (state := self._sessions.get(path.name)) is not None
        }
        for name in sorted({**damaged_sessions, **self._sessions_put}):
            state = self._sessions_put.get(name) or damaged_sessions[name]
            path = ws.paths.sessions / name
            if state != self._sessions.get(name) or path in salvaged:
                new_state = self._checked(path, KIND_SESSION, state, state.revision)
                plan.append((path, f"session:{state.session_id}", new_state))
        deletions = [name for name in sorted(self._sessions_deleted) if self._sessions.get(name) is not None]

        # Encode everything before the first byte is written: a value that cannot be encoded must
        # fail the whole transaction, not leave the store written and the journal behind.
        try:
            encoded = [(path, label, value, encode_pretty(value)) for path, label, value in plan]
        except (msgspec.EncodeError, UnicodeError, ValueError) as exc:
            raise StorageError(f"cannot encode the update: {type(exc).__name__}") from None
        if self._archive_out:
            try:
                append_records(ws.paths.archive, self._archive_out, durable=True)
            except OSError as exc:
                raise unavailable("append to", ws.paths.archive, exc) from None
        if any(label.startswith("session:") for _, label, _ in plan):
            try:
                ensure_private_dir(ws.paths.sessions, no_symlink=True)
            except OSError as exc:
                raise unavailable("create", ws.paths.sessions, exc) from None
        for path, label, value, data in encoded:
            if ws.cache is not None:
                ws.cache.drop(path)
            try:
                if path in self._clean:
                    keep_previous(path)
                atomic_write(path, data)
            except OSError as exc:
                raise unavailable("write", path, exc) from None
            self.written[label] = value
            if ws.cache is not None:
                # the value these very bytes decode to (the codec round-trips every value it writes),
                # so the next transaction of this process need not decode what it just wrote
                ws.cache.put(path, data, value)
        for name in deletions:
            path = ws.paths.sessions / name
            try:
                path.unlink(missing_ok=True)
                previous_of(path).unlink(missing_ok=True)
            except OSError as exc:
                raise unavailable("delete", path, exc) from None

        self._flush_always(extra=self._events)
        self._append_logs()

    def _flush_always(self, extra: Iterable[EvidenceInput] = ()) -> None:
        batch = [*([] if self._always_flushed else self._always), *extra]
        self._always_flushed = True
        if batch:
            self.workspace.evidence.append(batch, self.now_ms)

    def _append_logs(self) -> None:
        home = self.workspace.home
        by_migration: dict[str, list[msgspec.Struct]] = {}
        for record in self._audit:
            migration_id = getattr(record, "migration_id", None)
            by_migration.setdefault(str(migration_id or "unknown"), []).append(record)
        targets: list[tuple[Path, list[msgspec.Struct]]] = [
            (migration_log(home, mid), records) for mid, records in by_migration.items()
        ]
        if self._rejections:
            targets.append((rejection_log(home), self._rejections))
        for path, records in targets:
            try:
                rotate_if_larger(path)
                append_records(path, records)
            except OSError as exc:
                warn(f"failed to append to {path.name}: {describe_os_error(exc)}")

    def _close(self) -> None:
        """End of the with-block: storage evidence (quarantine, recovery, stale write) is appended
        even when the block failed."""
        if self._open:
            self._open = False
            self._flush_always()
