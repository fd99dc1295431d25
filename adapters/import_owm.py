"""Copy existing opencode-working-memory data into the workmem home (docs/decisions.md#d11).

The originals are only read, never modified, moved or locked. Each JSON file is decoded with the
codec (unknown fields are kept and written back) and written to the same relative place under the
workmem home; a file that already exists there is never overwritten (it is reported as kept). A file
that is not valid UTF-8 or holds a lone surrogate is salvaged (the damage replaced by U+FFFD and
reported); one that cannot be read or decoded at all is skipped and reported. Evidence, rejection
and migration logs are JSON lines: their valid lines are copied verbatim and invalid lines are
counted.

Where a store names its workspace root, the workspace lands in the directory workmem computes for
that root (the same ``sha256(realpath(root))[:16]`` rule as the reference, so normally the same
name); otherwise it keeps its directory name.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

import msgspec
from returns.result import Result, Success

from adapters import jsonl, locking, paths
from domain.codec import (
    DecodeFailure,
    decode_journal,
    decode_session,
    decode_store,
    encode_line,
    encode_pretty,
)
from domain.evidence_records import parse_event_line, sanitize_imported
from domain.model import PendingJournal, SessionState, WorkspaceStore
from domain.salvage import describe_salvage, salvage_document

OWM_DIR_NAME: Final = "opencode-working-memory"

COPIED: Final = "copied"
KEPT: Final = "kept existing (not overwritten)"
INVALID: Final = "skipped (unreadable or invalid)"


class ImportedFile(NamedTuple):
    source: Path
    destination: Path
    action: str
    detail: str = ""


class ImportReport(NamedTuple):
    source: Path
    home: Path
    files: tuple[ImportedFile, ...]

    def count(self, action: str) -> int:
        return sum(1 for f in self.files if f.action == action)


class ImportSourceError(ValueError):
    """The source directory holds no opencode-working-memory data."""


def default_source(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/opencode-working-memory`` when ``XDG_DATA_HOME`` is set and non-empty, else
    ``~/.local/share/opencode-working-memory``."""
    source = os.environ if env is None else env
    xdg = source.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg else Path(os.path.expanduser("~/.local/share"))
    return base / OWM_DIR_NAME


def resolve_source(directory: Path) -> Path:
    """Accept the plugin's own directory or the data home that contains it."""
    if (directory / "workspaces").is_dir() or (directory / "extraction-rejections.jsonl").is_file():
        return directory
    nested = directory / OWM_DIR_NAME
    if nested.is_dir():
        return nested
    raise ImportSourceError(f"no opencode-working-memory data found at {directory}")


def _write_new(target: Path, data: bytes) -> bool:
    """Write ``data`` to ``target`` only if it does not exist (durable, 0600). ``False`` when an
    existing file was kept."""
    jsonl.ensure_private_dir(target.parent, fix_mode=False)
    if target.exists():
        return False
    tmp = jsonl.temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, jsonl.FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, target)  # atomic and never replaces an existing file
        except FileExistsError:
            return False
        except OSError:
            if target.exists():
                return False
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    jsonl.fsync_dir(target.parent)
    return True


Decoder = Callable[[bytes], Result[Any, DecodeFailure]]


_DOCUMENT_TYPES: Final[dict[Decoder, type[msgspec.Struct]]] = {
    decode_store: WorkspaceStore,
    decode_journal: PendingJournal,
    decode_session: SessionState,
}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _copy_json(source: Path, target: Path, decoder: Decoder) -> ImportedFile:
    data = _read(source)
    if data is None:
        return ImportedFile(source, target, INVALID, "unreadable")
    decoded = decoder(data)
    detail = ""
    if not isinstance(decoded, Success):
        # invalid UTF-8 or a lone surrogate (the reference's 260-unit cut can split an emoji):
        # import what can be read, with the damage replaced by U+FFFD, and say so
        salvaged = salvage_document(data, _DOCUMENT_TYPES[decoder])
        if salvaged is None:
            return ImportedFile(source, target, INVALID, decoded.failure().kind)
        value: msgspec.Struct = salvaged.value
        detail = describe_salvage(salvaged)
    else:
        value = decoded.unwrap()
    written = _write_new(target, encode_pretty(value))
    return ImportedFile(source, target, COPIED if written else KEPT, detail)


def _valid_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _sanitized_event(line: bytes) -> bytes | None:
    """An imported evidence line, re-sanitised like workmem's own (docs/decisions.md#d6), or ``None``
    if invalid."""
    event = parse_event_line(line)
    return None if event is None else encode_line(sanitize_imported(event))


def _copy_events(source: Path, target: Path) -> ImportedFile:
    data = _read(source)
    if data is None:
        return ImportedFile(source, target, INVALID, "unreadable")
    lines = jsonl.split_lines(data)
    good = [clean for clean in (_sanitized_event(line) for line in lines) if clean is not None]
    dropped = len(lines) - len(good)
    detail = f"{len(good)} lines" + (f", {dropped} invalid lines skipped" if dropped else "")
    written = _write_new(target, b"".join(line + b"\n" for line in good))
    return ImportedFile(source, target, COPIED if written else KEPT, detail)


def _copy_lines(source: Path, target: Path, valid: Callable[[bytes], bool]) -> ImportedFile:
    data = _read(source)
    if data is None:
        return ImportedFile(source, target, INVALID, "unreadable")
    lines = jsonl.split_lines(data)
    good = [line for line in lines if valid(line)]
    dropped = len(lines) - len(good)
    detail = f"{len(good)} lines" + (f", {dropped} invalid lines skipped" if dropped else "")
    written = _write_new(target, b"".join(line + b"\n" for line in good))
    return ImportedFile(source, target, COPIED if written else KEPT, detail)


def _destination_key(workspace_dir: Path) -> str:
    data = _read(workspace_dir / paths.STORE_FILE)
    if data is not None:
        with contextlib.suppress(ValueError):
            raw = json.loads(data)
            root = raw.get("workspace", {}).get("root") if isinstance(raw, dict) else None
            if isinstance(root, str) and root:
                return paths.workspace_key(root)
    return workspace_dir.name


def _import_workspace(source_dir: Path, home: Path) -> list[ImportedFile]:
    layout = paths.workspace_paths_for_key(home, _destination_key(source_dir))
    jsonl.ensure_private_dir(layout.directory, fix_mode=False)
    done: list[ImportedFile] = []
    with locking.FileLock(str(layout.lock), timeout=locking.DEFAULT_LOCK_TIMEOUT_S, mode=0o600):
        if (source_dir / paths.STORE_FILE).is_file():
            done.append(_copy_json(source_dir / paths.STORE_FILE, layout.store, decode_store))
        if (source_dir / paths.JOURNAL_FILE).is_file():
            done.append(_copy_json(source_dir / paths.JOURNAL_FILE, layout.journal, decode_journal))
        sessions = source_dir / paths.SESSIONS_DIR
        if sessions.is_dir():
            for item in sorted(sessions.glob("*.json")):
                done.append(_copy_json(item, layout.sessions / item.name, decode_session))
        events = source_dir / paths.EVIDENCE_DIR / paths.EVIDENCE_FILE
        if events.is_file():
            done.append(_copy_events(events, layout.evidence))
    return done


def import_owm(source: Path, home: Path) -> ImportReport:
    """Copy every workspace and the global logs from ``source`` into ``home``."""
    source = resolve_source(source)
    files: list[ImportedFile] = []
    workspaces = source / "workspaces"
    if workspaces.is_dir():
        for directory in sorted(workspaces.iterdir()):
            if directory.is_dir() and not directory.is_symlink():
                files.extend(_import_workspace(directory, home))
    rejections = source / paths.REJECTION_FILE
    if rejections.is_file():
        files.append(_copy_lines(rejections, paths.rejection_log(home), _valid_object))
    migrations = source / paths.MIGRATION_DIR
    if migrations.is_dir():
        for item in sorted(migrations.glob("*.jsonl")):
            files.append(_copy_lines(item, home / paths.MIGRATION_DIR / item.name, _valid_object))
    return ImportReport(source, home, tuple(files))


def format_report(report: ImportReport) -> str:
    lines = [
        f"Imported opencode-working-memory data from {report.source}",
        f"into {report.home}",
        "",
        f"copied: {report.count(COPIED)}",
        f"kept existing (not overwritten): {report.count(KEPT)}",
        f"skipped (unreadable or invalid): {report.count(INVALID)}",
        "The originals were not modified.",
    ]
    if report.files:
        lines.append("")
    for item in report.files:
        try:
            shown = item.destination.relative_to(report.home)
        except ValueError:
            shown = item.destination
        suffix = f" ({item.detail})" if item.detail else ""
        lines.append(f"- {shown}: {item.action}{suffix}")
    return "\n".join(lines)
