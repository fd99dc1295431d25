"""The shared projection on disk (docs/decisions.md#d17): ``.workmem/`` in the workspace root.

::

    .workmem/ (a README)                    what the folder is, written by workmem
    .workmem/.gitignore                      what is derived (temp files)
    .workmem/memories/<type>/<id>.md         one file per memory (domain/projection/document.py)
    .workmem/tombstones.jsonl                hash-only forgets (domain/projection/tombstones.py)

What this machine knows about the files — the size, modification time and hash of each file when
the store and the file last agreed (its *base*), and the files sync turned down — is kept in the data
home (``workspaces/<key>/projection-manifest.json``), never in the repository. A file whose size and
time match its base is not read at all, so checking an unchanged projection costs one ``stat`` per
file. The pure steps (what a file says, what to import, what to write) are :mod:`domain.projection`;
this module reads and writes the files, under ``workspaces/<key>/projection.lock``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec

from adapters.jsonl import atomic_write, ensure_private_dir
from adapters.paths import PROJECTION_DIR
from adapters.user_scope import user_root
from domain.enums import Scope
from domain.ids import sha256
from domain.projection import tombstones as tombstone_lines
from domain.projection.document import MEMORIES_DIR, path_parts
from domain.projection.records import ProjectionFile, TombstoneLine
from domain.projection.tombstones import TOMBSTONES_FILE

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.commands import ImportProjection

DIRECTORY: Final = PROJECTION_DIR
MANIFEST_FILE: Final = "projection-manifest.json"
LOCK_FILE: Final = "projection.lock"
LOCK_TIMEOUT_S: Final = 10.0
FILE_MODE: Final = 0o600
GITIGNORE: Final = "# derived by workmem on each machine, never shared\n*.tmp\n"


class Stamp(NamedTuple):
    size: int
    mtime_ns: int
    sha: str


class Flag(msgspec.Struct, frozen=True, kw_only=True):
    """A file sync did not import: quarantined (it cannot be read) or rejected (the gate refused it)."""

    size: int
    mtime_ns: int
    sha: str
    line: int
    reasons: tuple[str, ...]
    outcome: str
    message: str = ""


class Manifest(msgspec.Struct, kw_only=True):
    """This machine's record of the projection (in the data home, never in the repository)."""

    version: int = 1
    files: dict[str, tuple[int, int, str]] = msgspec.field(default_factory=dict)
    flagged: dict[str, Flag] = msgspec.field(default_factory=dict)
    tombstones: tuple[int, int, str] | None = None
    #: the identities ``tombstones.jsonl`` held when it last agreed with the store
    buried: tuple[str, ...] = ()
    #: the store revision every file agreed with after the last full export, kept current by the
    #: exports after each write (``None``: unknown; the next ``sync`` exports every memory again)
    revision: int | None = None


class Layout(NamedTuple):
    root: Path
    directory: Path
    manifest: Path
    lock: Path
    projected: Scope


def layout_of(ws: Workspace) -> Layout:
    root = Path(ws.root)
    projected = Scope.USER if root == user_root(ws.home) else Scope.TEAM
    return Layout(
        root, root / DIRECTORY, ws.paths.directory / MANIFEST_FILE, ws.paths.directory / LOCK_FILE, projected
    )


def exists(root: str | Path) -> bool:
    """Whether the workspace shares its memories (one ``stat``)."""
    return os.path.isdir(os.path.join(root, DIRECTORY))


# ---------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------


def readme() -> str:
    from adapters.projection_readme import README

    return README


def create(layout: Layout) -> bool:
    """Create ``.workmem/`` with its README and .gitignore; True when it did not exist."""
    created = not layout.directory.is_dir()
    ensure_private_dir(layout.directory / MEMORIES_DIR, fix_mode=False)
    for name, text in (("README.md", readme()), (".gitignore", GITIGNORE)):
        path = layout.directory / name
        with contextlib.suppress(FileNotFoundError):
            if path.read_text(encoding="utf-8") == text:
                continue
        write_text(path, text)
    return created


_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def _write_fd(fd: int, data: bytes) -> tuple[int, int]:
    """Write ``data`` to ``fd`` and close it; its size and modification time as written."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_size, st.st_mtime_ns


def write_text(path: Path | str, text: str) -> tuple[int, int]:
    """Write ``text`` to ``path`` and return the file's size and modification time. A new file is
    created in place (it did not exist, so nobody can read half of it as a memory); an existing one
    is replaced through a temp file and a rename. The projection is derived from the store, so a file
    is not fsynced one by one."""
    data = text.encode("utf-8", "surrogatepass")
    target = os.fspath(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
    except FileExistsError:
        pass
    else:
        return _write_fd(fd, data)
    head, name = os.path.split(target)
    tmp = os.path.join(head, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, FILE_MODE)
        stamp = _write_fd(fd, data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return stamp


def stamp_of(path: Path, sha: str) -> Stamp | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return Stamp(st.st_size, st.st_mtime_ns, sha)


def read_manifest(layout: Layout) -> Manifest:
    try:
        data = layout.manifest.read_bytes()
    except OSError:
        return Manifest()
    try:
        return msgspec.json.decode(data, type=Manifest)
    except msgspec.MsgspecError:
        return Manifest()  # the next scan reads every file again: import never overwrites an edit


def write_manifest(layout: Layout, manifest: Manifest) -> None:
    ensure_private_dir(layout.manifest.parent, no_symlink=True)
    atomic_write(layout.manifest, msgspec.json.encode(manifest))


@contextlib.contextmanager
def locked(layout: Layout) -> Iterator[Manifest]:
    """Hold the projection lock; yields the manifest, written back when it changed."""
    from adapters.locking import FileLock

    ensure_private_dir(layout.lock.parent, no_symlink=True)
    with FileLock(layout.lock, timeout=LOCK_TIMEOUT_S):
        manifest = read_manifest(layout)
        before = msgspec.json.encode(manifest)
        yield manifest
        if msgspec.json.encode(manifest) != before:
            write_manifest(layout, manifest)


# ---------------------------------------------------------------------------------------------------
# Scanning: what changed since the last sync
# ---------------------------------------------------------------------------------------------------


class Scan(NamedTuple):
    files: tuple[ProjectionFile, ...]
    deleted: tuple[str, ...]
    tombstones: ProjectionFile | None
    added: tuple[TombstoneLine, ...]
    removed: tuple[str, ...]
    #: files whose content is their base or their flag, seen with a new size or time
    touched: dict[str, Stamp]

    @property
    def changed(self) -> bool:
        return bool(self.files or self.deleted or self.added or self.removed)


def _folders(directory: Path) -> list[tuple[str, str]]:
    """``(relative prefix, path)`` of ``memories/`` and of each folder in it."""
    base = os.path.join(directory, MEMORIES_DIR)
    found = [(f"{MEMORIES_DIR}/", base)]
    try:
        with os.scandir(base) as items:
            found += [(f"{MEMORIES_DIR}/{i.name}/", i.path) for i in items if i.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return found


def memory_stats(directory: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """``(relative path, path, lstat)`` of every regular ``.md`` file under ``memories/`` (one level
    of type folders, and the folder itself)."""
    regular = stat.S_ISREG
    for prefix, folder in _folders(directory):
        try:
            with os.scandir(folder) as items:
                for item in items:
                    name = item.name
                    if name.endswith(".md"):
                        st = item.stat(follow_symlinks=False)
                        if regular(st.st_mode):
                            yield prefix + name, item.path, st
        except OSError:
            continue


def memory_files(directory: Path) -> Iterator[str]:
    """The relative path of every ``.md`` file under ``memories/``."""
    for rel, _path, _st in memory_stats(directory):
        yield rel


def read_hashed(path: str) -> tuple[bytes, str] | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data, sha256(data).hexdigest()


def _decoded(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scan(layout: Layout, manifest: Manifest, known: set[str] | None = None) -> Scan:
    """What changed in ``.workmem/`` since the manifest was written (reads only changed files).
    ``known``: the file stems the store holds (:func:`known_stems`); a file of any other memory is
    read and imported even where it agrees with its base (the store was lost or replaced)."""
    files: list[ProjectionFile] = []
    touched: dict[str, Stamp] = {}
    seen: list[str] = []
    bases = manifest.files
    regular = stat.S_ISREG
    for prefix, folder in _folders(layout.directory):
        try:
            with os.scandir(folder) as items:
                for item in items:
                    if not item.name.endswith(".md"):
                        continue
                    st = item.stat(follow_symlinks=False)
                    rel = prefix + item.name
                    base = bases.get(rel)
                    if (
                        base is not None
                        and base[0] == st.st_size
                        and base[1] == st.st_mtime_ns
                        and known is None
                    ):
                        seen.append(rel)  # the common case: unchanged since it last agreed
                        continue
                    if regular(st.st_mode):
                        seen.append(rel)
                        _look(rel, item.path, st, base, known, manifest, files, touched)
        except OSError:
            continue
    present = set(seen)
    deleted = tuple(sorted(p for p in bases if p not in present))
    tomb, added, removed = _scan_tombstones(layout, manifest)
    return Scan(tuple(files), deleted, tomb, added, removed, touched)


def _look(
    rel: str,
    path: str,
    st: os.stat_result,
    base: tuple[int, int, str] | None,
    known: set[str] | None,
    manifest: Manifest,
    files: list[ProjectionFile],
    touched: dict[str, Stamp],
) -> None:
    """A file the manifest does not say is unchanged: read it when it may be, and keep what it is."""
    if known is not None and base is not None and (parts := path_parts(rel)) and parts[1] not in known:
        base = None
    if base is not None and base[0] == st.st_size and base[1] == st.st_mtime_ns:
        return
    flag = manifest.flagged.get(rel)
    if flag is not None and flag.size == st.st_size and flag.mtime_ns == st.st_mtime_ns:
        return
    read = read_hashed(path)
    if read is None:
        return
    data, sha = read
    if (base is not None and base[2] == sha) or (flag is not None and flag.sha == sha):
        touched[rel] = Stamp(st.st_size, st.st_mtime_ns, sha)
        return
    text = _decoded(data)
    files.append(ProjectionFile(path=rel, text=text, sha=sha, size=st.st_size, mtime_ns=st.st_mtime_ns))


def _scan_tombstones(
    layout: Layout, manifest: Manifest
) -> tuple[ProjectionFile | None, tuple[TombstoneLine, ...], tuple[str, ...]]:
    path = layout.directory / TOMBSTONES_FILE
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        st = None
    base = manifest.tombstones
    if st is None:
        if base is None:
            return None, (), ()
        return ProjectionFile(path=TOMBSTONES_FILE, text="", sha=""), (), manifest.buried
    if base is not None and base[0] == st.st_size and base[1] == st.st_mtime_ns:
        return None, (), ()
    read = read_hashed(str(path))
    if read is None:
        return None, (), ()
    data, sha = read
    seen = ProjectionFile(path=TOMBSTONES_FILE, text=None, sha=sha, size=st.st_size, mtime_ns=st.st_mtime_ns)
    if base is not None and base[2] == sha:
        return seen, (), ()
    lines, _problems = tombstone_lines.parse(_decoded(data) or "")
    before = set(manifest.buried)
    now = {line.identity for line in lines}
    added = tuple(line for line in lines if line.identity not in before)
    return seen, added, tuple(sorted(before - now))


def import_command(scan_: Scan, projected: Scope) -> ImportProjection | None:
    """The command that takes ``scan_`` into the store; ``None`` when nothing changed."""
    if not scan_.changed:
        return None
    from domain.commands import ImportProjection

    return ImportProjection(
        files=scan_.files,
        deleted=scan_.deleted,
        tombstones_added=scan_.added,
        tombstones_removed=scan_.removed,
        tombstones_file=scan_.tombstones,
        projected=projected,
    )


def refresh(layout: Layout, manifest: Manifest, scan_: Scan) -> None:
    """Record what a scan saw that needs no import: files whose content is their base (or their
    flag) with a new size or time, and flags of files that are gone."""
    for rel, stamp in scan_.touched.items():
        flag = manifest.flagged.get(rel)
        if flag is not None and flag.sha == stamp.sha:
            manifest.flagged[rel] = msgspec.structs.replace(flag, size=stamp.size, mtime_ns=stamp.mtime_ns)
        else:
            manifest.files[rel] = (stamp.size, stamp.mtime_ns, stamp.sha)
    seen = {f.path for f in scan_.files} | set(scan_.touched)
    for rel in [p for p in manifest.flagged if p not in seen and p not in manifest.files]:
        if not os.path.lexists(layout.directory / rel):
            manifest.flagged.pop(rel, None)
