"""The search index of a workspace (docs/decisions.md#d16): derived from the store, never the truth.

One SQLite file beside the store (``search-index.sqlite3``, 0600, in the workspace's 0700
directory), holding per memory the terms :mod:`domain.search.tokens` makes of it twice over, and the
store revision it describes: an FTS5 table with the tokenizer ``porter unicode61 remove_diacritics
2`` and a vocabulary (which memories hold a term: recall's first look at a prompt,
:func:`term_rows`), and a postings table (term, memory id, how often, the memory's length: what
BM25 needs, which FTS5 with ``detail=none`` does not keep).

- :func:`narrowed` (a service ``BEFORE`` step): a ``search`` carries what the postings say of its
  terms (:func:`postings`, the core's :class:`~domain.search.rank.Holders`) and the index's revision;
  the core ranks and filters from them itself (:mod:`domain.search.rank`), so an answer with the
  index equals the answer without it. A missing, stale or unreadable index carries nothing: the core
  reads every memory and says the index was stale.
- :func:`after` (a service ``AFTER_COMMIT`` updater): after a write, the memories whose text changed
  are updated in place when the index was at the revision the write read; otherwise, and after a
  search that found it stale, the index is built again from the store (an evidence event says so).
- Just-in-time recall's lookup of a prompt is :mod:`adapters.recall_lookup`.
- Without FTS5 in this Python's SQLite (probed once per process) there is no index: every search
  scans, with the same answers.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from adapters.evidence_log import append_events
from adapters.paths import workspace_root_hash
from domain.commands import Batch, Command
from domain.enums import EventType, Outcome, Phase
from domain.evidence.build import event
from domain.search.commands import STALE_INDEX, Search
from domain.search.disclosure import DEFAULT_DISCLOSURE, Disclosure
from domain.search.rank import PREFIX_MIN, Corpus, Holders, document
from domain.search.tokens import fts_literal, query_terms, terms

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.model import MemoryEntry, WorkspaceStore
    from domain.operations import OpResult

INDEX_FILE: Final = "search-index.sqlite3"
TOKENIZER: Final = "porter unicode61 remove_diacritics 2"
SCHEMA: Final = 4


def disclosure(environ: Mapping[str, str] | None = None) -> Disclosure:
    """The user's settings of progressive disclosure: ``WORKMEM_BLOCK=reference`` restores the
    reference's block byte for byte, ``WORKMEM_RECALL=off`` turns just-in-time recall off
    (docs/decisions.md#d16). Any other value keeps the default."""
    env = os.environ if environ is None else environ
    tags = env.get("WORKMEM_BLOCK", "").strip().lower() != "reference"
    recall = env.get("WORKMEM_RECALL", "").strip().lower() not in ("off", "0", "no", "false")
    return DEFAULT_DISCLOSURE if tags and recall else Disclosure(tags=tags, recall=recall)


@functools.cache
def has_fts5() -> bool:
    """Whether this Python's SQLite has FTS5 (probed once per process)."""
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as db:
            db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        return True
    except sqlite3.Error:
        return False


def index_path(ws: Workspace) -> Path:
    return ws.paths.directory / INDEX_FILE


@contextlib.contextmanager
def _open(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=2.0, isolation_level=None)
    try:
        yield db
    finally:
        db.close()


class IndexState:
    """What the index file says about itself: the store revision, the number of memories, their
    total number of terms; ``None`` fields when it cannot be read."""

    def __init__(self, revision: int, documents: int, total: int) -> None:
        self.revision = revision
        self.documents = documents
        self.total = total


def _state(db: sqlite3.Connection) -> IndexState:
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    if int(meta.get("schema", -1)) != SCHEMA or meta.get("tokenizer") != TOKENIZER:
        raise sqlite3.DatabaseError("another index schema")
    return IndexState(int(meta["revision"]), int(meta["documents"]), int(meta["total"]))


def postings(path: Path, wanted: Sequence[str]) -> tuple[Holders, int] | None:
    """What the index keeps of the memories holding each of ``wanted`` (the core's
    :class:`~domain.search.rank.Holders`: a query term finds itself and, from
    :data:`~domain.search.rank.PREFIX_MIN` letters, every longer term it begins) and the store revision
    it describes; ``None`` when the index is missing or unreadable."""
    if not path.is_file():
        return None
    try:
        with _open(path) as db:
            state = _state(db)
            counts: dict[str, dict[str, int]] = {}
            lengths: dict[str, int] = {}
            for term in wanted:
                if len(term) >= PREFIX_MIN:
                    rows = db.execute(_PREFIX, (term, term + "\U0010ffff")).fetchall()
                else:
                    rows = db.execute(_EXACT, (term,)).fetchall()
                table = dict(map(_ID_TF, rows))
                if len(table) < len(rows):  # a memory holds more than one of the terms it begins
                    table = {}
                    for memory_id, tf, _ in rows:
                        table[memory_id] = table.get(memory_id, 0) + tf
                counts[term] = table
                lengths.update(map(_ID_LENGTH, rows))
            return Holders(counts, lengths, Corpus(state.documents, state.total)), state.revision
    except (sqlite3.Error, ValueError, KeyError, TypeError, OSError):
        return None


_PREFIX: Final = "SELECT id, tf, length FROM post WHERE term >= ? AND term < ?"
_EXACT: Final = "SELECT id, tf, length FROM post WHERE term = ?"
_ID_TF: Final = operator.itemgetter(0, 1)
_ID_LENGTH: Final = operator.itemgetter(0, 2)


def narrowed(ws: Workspace, command: Command, now_ms: int) -> Command:
    """A ``search`` with what the index keeps of its terms (module docstring); any other command as
    it is."""
    if not isinstance(command, Search) or not has_fts5():
        return command
    started = time.perf_counter()
    found = postings(index_path(ws), query_terms(command.query))
    if found is None:
        return command
    return replace(
        command, found=found[0], revision=found[1], index_ms=(time.perf_counter() - started) * 1000
    )


def _expanded(db: sqlite3.Connection, wanted: Iterable[str]) -> list[str]:
    """The query terms and every stored term they begin (:func:`domain.search.rank.prefix_matches`),
    found in the index's vocabulary; each is then an exact FTS5 term on both sides."""
    found: dict[str, None] = {}
    for term in wanted:
        found.setdefault(term, None)
        if len(term) >= PREFIX_MIN:
            upper = term + "\U0010ffff"
            for (longer,) in db.execute("SELECT term FROM vocab WHERE term > ? AND term < ?", (term, upper)):
                found.setdefault(longer, None)
    return list(found)


def term_rows(path: Path, wanted: Iterable[str]) -> tuple[dict[str, set[int]], IndexState] | None:
    """For each term, the rows of the memories holding it; ``None`` when the index cannot be read."""
    if not path.is_file():
        return None
    try:
        with _open(path) as db:
            state = _state(db)
            rows: dict[str, set[int]] = {}
            for term in wanted:
                match = " OR ".join(fts_literal(t) for t in _expanded(db, (term,)))
                rows[term] = {r[0] for r in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (match,))}
            return rows, state
    except (sqlite3.Error, ValueError, KeyError, TypeError, OSError):
        return None


def _row(entry: MemoryEntry) -> tuple[str, str, int]:
    found = terms(document(entry))
    return entry.id, " ".join(found), len(found)


def _postings(memory_id: str, found: str, length: int) -> list[tuple[str, str, int, int]]:
    """The postings rows of one memory: each distinct term, how often it holds it, its length."""
    return [(term, memory_id, tf, length) for term, tf in Counter(found.split()).items()]


def rebuild(path: Path, store: WorkspaceStore, revision: int) -> None:
    """Build the index of ``store`` (at ``revision``) in a new file and put it in place."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.executescript(
                f"""PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
                CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE docs(n INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, length INTEGER NOT NULL);
                CREATE TABLE vocab(term TEXT PRIMARY KEY) WITHOUT ROWID;
                CREATE TABLE post(term TEXT NOT NULL, id TEXT NOT NULL,
                    tf INTEGER NOT NULL CHECK(typeof(tf) = 'integer' AND tf > 0),
                    length INTEGER NOT NULL CHECK(typeof(length) = 'integer' AND length > 0),
                    PRIMARY KEY(term, id)) WITHOUT ROWID;
                CREATE VIRTUAL TABLE fts USING fts5(terms, tokenize='{TOKENIZER}', detail=none);"""
            )
            db.execute("BEGIN")
            rows = [_row(e) for e in _unique(store.entries)]
            db.executemany(
                "INSERT INTO docs VALUES (?, ?, ?)", [(n, i, k) for n, (i, _, k) in enumerate(rows, 1)]
            )
            db.executemany(
                "INSERT INTO fts(rowid, terms) VALUES (?, ?)", [(n, t) for n, (_, t, _) in enumerate(rows, 1)]
            )
            posts = sorted(p for row in rows for p in _postings(*row))
            db.executemany("INSERT INTO post VALUES (?, ?, ?, ?)", posts)
            vocab = {t for t, *_ in posts}
            db.executemany("INSERT INTO vocab VALUES (?)", [(t,) for t in sorted(vocab)])
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [
                    ("schema", str(SCHEMA)),
                    ("tokenizer", TOKENIZER),
                    ("revision", str(revision)),
                    ("documents", str(len(rows))),
                    ("total", str(sum(k for _, _, k in rows))),
                ],
            )
            db.execute("COMMIT")
        finally:
            db.close()
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _unique(entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
    seen: dict[str, MemoryEntry] = {}
    for entry in entries:
        seen.setdefault(entry.id, entry)
    return list(seen.values())


def _difference(
    before: Sequence[MemoryEntry], after_: Sequence[MemoryEntry]
) -> tuple[list[MemoryEntry], list[str]]:
    """The memories whose searched text is new or changed, and the ids that are gone. A write
    usually keeps every other memory as the same object in the same place: then only the places
    that differ are compared."""
    if len(before) == len(after_):
        moved = [(o, e) for o, e in zip(before, after_, strict=True) if o is not e]
        if all(o.id == e.id for o, e in moved) and len({e.id for _, e in moved}) == len(moved):
            return [e for o, e in moved if document(o) != document(e)], []
    old = {e.id: e for e in before}
    new = {e.id: e for e in after_}
    changed = [
        e for i, e in new.items() if (o := old.get(i)) is None or (o is not e and document(o) != document(e))
    ]
    return changed, [i for i in old if i not in new]


def update(path: Path, before: WorkspaceStore, after_: WorkspaceStore, revision: int) -> bool:
    """Bring the index from ``before`` (which it must describe) to ``after_`` at ``revision``;
    ``False`` when it described something else (the caller rebuilds it)."""
    with _open(path) as db:
        state = _state(db)
        if state.revision != (before.revision or 0):
            return False
        if state.documents != len(before.entries) and state.documents != len({e.id for e in before.entries}):
            return False  # (ids held twice are indexed once)
        changed, gone = _difference(before.entries, after_.entries)
        # The index is derived: a crash may lose its last write, never the store's (a stale or damaged
        # index is found by its revision or an error and rebuilt, docs/decisions.md#d16).
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN IMMEDIATE")
        documents, total = state.documents, state.total
        for memory_id in [*gone, *(e.id for e in changed)]:
            row = db.execute(
                "SELECT docs.rowid, length, terms FROM docs JOIN fts ON fts.rowid = docs.rowid WHERE id = ?",
                (memory_id,),
            ).fetchone()
            if row is not None:
                db.execute("DELETE FROM docs WHERE rowid = ?", row[:1])
                db.execute("DELETE FROM fts WHERE rowid = ?", row[:1])
                gone_posts = [(t, memory_id) for t in set(row[2].split())]
                db.executemany("DELETE FROM post WHERE term = ? AND id = ?", gone_posts)
                documents, total = documents - 1, total - row[1]
        for memory_id, found, length in map(_row, changed):
            rowid = db.execute("INSERT INTO docs(id, length) VALUES (?, ?)", (memory_id, length)).lastrowid
            db.execute("INSERT INTO fts(rowid, terms) VALUES (?, ?)", (rowid, found))
            db.executemany("INSERT INTO post VALUES (?, ?, ?, ?)", _postings(memory_id, found, length))
            db.executemany("INSERT OR IGNORE INTO vocab VALUES (?)", [(t,) for t in set(found.split())])
            documents, total = documents + 1, total + length
        db.executemany(
            "UPDATE meta SET value = ? WHERE key = ?",
            [(str(revision), "revision"), (str(documents), "documents"), (str(total), "total")],
        )
        db.execute("COMMIT")
    return True


def _searched_stale(command: Command, result: OpResult) -> bool:
    steps = command.steps if isinstance(command, Batch) else (command,)
    return any(isinstance(c, Search) for c in steps) and any(
        STALE_INDEX in e.reason_codes for e in result.events
    )


def after(ws: Workspace, command: Command, result: OpResult, now_ms: int) -> None:
    """Keep the index current after a commit (module docstring)."""
    if not has_fts5():
        return
    basis = result.basis.store if result.basis is not None else None
    path = index_path(ws)
    written = basis is not None and result.store is not basis and result.store != basis
    if written and basis is not None and path.is_file():
        try:
            if update(path, basis, result.store, (result.store.revision or 0) + 1):
                return
        except (sqlite3.Error, ValueError, KeyError, TypeError):
            pass
        _rebuild(ws, result.store, (result.store.revision or 0) + 1, now_ms, "stale")
    elif written:  # the first index of the workspace: made, not repaired (no event)
        rebuild(path, result.store, (result.store.revision or 0) + 1)
    elif _searched_stale(command, result):
        _rebuild(
            ws, result.store, result.store.revision or 0, now_ms, "missing" if not path.is_file() else "stale"
        )


def _rebuild(ws: Workspace, store: WorkspaceStore, revision: int, now_ms: int, why: str) -> None:
    started = time.perf_counter()
    rebuild(index_path(ws), store, revision)

    details = {
        "memories": len(store.entries),
        "revision": revision,
        "ms": round((time.perf_counter() - started) * 1000, 3),
    }
    append_events(
        ws.paths.evidence,
        [
            event(
                EventType.SEARCH_INDEX_REBUILT,
                Phase.SEARCH,
                Outcome.REBUILT,
                (f"index_{why}",),
                details=details,
            )
        ],
        now_ms=now_ms,
        workspace_key=ws.key,
        workspace_root_hash=workspace_root_hash(ws.root),
    )
