"""The service's steps for freshness (docs/decisions.md#d18): the files memories cite are read here,
in the shell, and what was seen is handed to the pure core in the command.

- ``remember``: the citations the door parsed (``--cite PATH[:LINE[-LINE]]``) and the paths the text
  names that are files of the workspace root are read now: a span is stored with the hash of its
  whitespace-normalised text, a whole file with the identifiers the memory names that occur in it.
- a session start: the citations of the store (listed in a small cache beside the store, refreshed
  after each commit that changed them) are observed — a file whose size and mtime are what they were
  at the last look is not read again — and a :class:`domain.reverify.Reverify` command runs first, in
  the same transaction. At most :data:`MAX_READS` files are read per session start and none larger
  than :data:`MAX_FILE_BYTES`; a citation left unobserved leaves its memory as it is.

Only the shell's own cache file is written here; a failure to read or write it costs the check, never
the command.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Final

import msgspec
from msgspec.structs import replace

from adapters.jsonl import atomic_write
from domain.commands import Batch, Command, OpenSession, Remember
from domain.freshness import MAX_CITES, code_identifiers, path_candidates, span_hash
from domain.model import Citation
from domain.reverify import CiteKey, Observed, Reverify, cite_key

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.model import WorkspaceStore
    from domain.operations import OpResult

CACHE_FILE: Final = "freshness-cache.json"
#: Files read again per session start, at most.
MAX_READS: Final = 200
#: A larger file is never read (its citations stay unobserved).
MAX_FILE_BYTES: Final = 1 << 20

_WORD: Final = re.compile(r"\w+")


class _Seen(msgspec.Struct, frozen=True, array_like=True):
    """One file at its last look: size, mtime, the citations of it that were asked about and what
    each saw (in the same order)."""

    size: int
    mtime_ns: int
    cites: tuple[Citation, ...] = ()
    observed: tuple[Observed, ...] = ()


class _Cache(msgspec.Struct, frozen=True, kw_only=True):
    version: int = 1
    #: the citations of the store (without their hashes), as the last commit left them
    cites: tuple[Citation, ...] = ()
    files: dict[str, _Seen] = msgspec.field(default_factory=dict)


def cache_path(ws: Workspace) -> Path:
    return ws.paths.directory / CACHE_FILE


def _load(ws: Workspace) -> _Cache:
    try:
        return msgspec.json.decode(cache_path(ws).read_bytes(), type=_Cache)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return _Cache()


def _save(ws: Workspace, cache: _Cache) -> None:

    if ws.paths.directory.is_dir():
        atomic_write(cache_path(ws), msgspec.json.encode(cache))


def _inside(root: str, path: str) -> Path | None:
    """``path`` (relative to ``root``) as a file path inside ``root``; ``None`` when it leaves it."""
    base = Path(root).resolve()
    found = (base / path).resolve()
    return found if found == base or base in found.parents else None


def _relative(root: str, path: str) -> str | None:
    """``path`` under ``root`` without resolving links (one ``stat`` per file at a session start):
    an absolute path or one with a ``..`` part, which could leave the root, is never looked at. The
    citations were resolved inside the root when they were remembered."""
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or "\\" in path:
        return None
    return os.path.join(root, path)


def _text(file: Path | str) -> str | None:
    try:
        with open(file, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > MAX_FILE_BYTES else data.decode("utf-8", errors="replace")


def _observe(cite: Citation, text: str, words: set[str]) -> Observed:
    if cite.start_line is not None:
        lines = text.splitlines()[cite.start_line - 1 : cite.end_line or cite.start_line]
        return Observed(
            path=cite.path, start_line=cite.start_line, end_line=cite.end_line, span_hash=span_hash(lines)
        )
    present = tuple(name for name in cite.identifiers if name in words)
    return Observed(path=cite.path, present=present)


# ---------------------------------------------------------------------------------------------------
# remember: read what the memory cites
# ---------------------------------------------------------------------------------------------------


def resolved(root: str, text: str, explicit: Iterable[Citation]) -> tuple[Citation, ...]:
    """The citations of a memory remembered now: the explicit ones, then the files its text names,
    each read now (a file that cannot be read is cited without a baseline)."""
    wanted = list(explicit)
    named = {c.path for c in wanted}
    for token in path_candidates(text):
        file = _inside(root, token)
        if token not in named and file is not None and file.is_file():
            wanted.append(Citation(path=token))
            named.add(token)
    names = code_identifiers(text)
    found: list[Citation] = []
    for cite in wanted[:MAX_CITES]:
        file = _inside(root, cite.path)
        content = _text(file) if file is not None and file.is_file() else None
        if content is None:
            found.append(cite)
            continue
        words = set(_WORD.findall(content))
        if cite.start_line is not None:
            found.append(replace(cite, span_hash=_observe(cite, content, words).span_hash))
        else:
            found.append(replace(cite, identifiers=tuple(n for n in names if n in words)))
    return tuple(found)


# ---------------------------------------------------------------------------------------------------
# a session start: observe what the store cites
# ---------------------------------------------------------------------------------------------------


def observe(root: str, cache: _Cache) -> tuple[tuple[Observed, ...], _Cache]:
    """What the store's citations look like now, and the cache after this look (module docstring)."""
    by_path: dict[str, list[Citation]] = {}
    for cite in cache.cites:
        by_path.setdefault(cite.path, []).append(cite)
    observed: list[Observed] = []
    files: dict[str, _Seen] = {}
    reads = 0
    for path, cites in by_path.items():
        file = _relative(root, path)
        try:
            stat = os.stat(file) if file is not None else None
        except OSError:
            stat = None
        if stat is None or not S_ISREG(stat.st_mode):
            observed.extend(
                Observed(path=path, start_line=c.start_line, end_line=c.end_line, gone=True) for c in cites
            )
            continue
        before = cache.files.get(path)
        asked = tuple(cites)
        if (
            before is not None
            and before.size == stat.st_size
            and before.mtime_ns == stat.st_mtime_ns
            and before.cites == asked
        ):
            observed.extend(before.observed)
            files[path] = before
            continue
        if reads >= MAX_READS or file is None:
            continue
        reads += 1
        content = _text(file)
        if content is None:
            continue
        words = set(_WORD.findall(content))
        seen = tuple(_observe(c, content, words) for c in cites)
        observed.extend(seen)
        files[path] = _Seen(stat.st_size, stat.st_mtime_ns, asked, seen)
    return tuple(observed), replace(cache, files=files)


def _opens_session(command: Command) -> bool:
    steps = command.steps if isinstance(command, Batch) else (command,)
    return any(isinstance(c, OpenSession) and c.parent is None for c in steps)


def before(ws: Workspace, command: Command, now_ms: int) -> Command:
    """Before the transaction: a ``remember`` gets its citations read; a session start gets the
    observations of every cited file, as a :class:`Reverify` run first."""
    try:
        if isinstance(command, Remember):
            cites = resolved(ws.root, command.text, command.cites)
            return replace(command, cites=cites) if cites != command.cites else command
        if not _opens_session(command):
            return command
        cache = _load(ws)
        if not cache.cites:
            return command
        observed, after = observe(ws.root, cache)
        if after != cache:
            _save(ws, after)
    except (OSError, RuntimeError):  # a file that cannot be read or a link loop costs the check only
        return command
    if not observed:
        return command
    steps = command.steps if isinstance(command, Batch) else (command,)
    return Batch(steps=(Reverify(observed=observed), *steps))


def _store_cites(store: WorkspaceStore) -> tuple[Citation, ...]:
    found: dict[CiteKey, Citation] = {}
    for entry in store.entries:
        for cite in entry.cites or ():
            key = cite_key(cite)
            known = found.get(key)
            names = tuple(dict.fromkeys((*(known.identifiers if known else ()), *cite.identifiers)))
            found[key] = Citation(
                path=cite.path, start_line=cite.start_line, end_line=cite.end_line, identifiers=names
            )
    return tuple(found[k] for k in sorted(found, key=lambda k: (k[0], k[1] or 0, k[2] or 0)))


def record_cites(ws: Workspace, store: WorkspaceStore) -> None:
    """Keep the cache's list of the citations of ``store`` (written only when it changed)."""
    cites = _store_cites(store)
    cache = _load(ws)
    if cites != cache.cites:
        _save(ws, replace(cache, cites=cites))


def after(ws: Workspace, command: Command, result: OpResult, now_ms: int) -> None:
    """After a commit that changed the store: keep the cache's list of citations current."""
    basis = result.basis.store if result.basis is not None else None
    if basis is None or result.store is not basis:
        record_cites(ws, result.store)
