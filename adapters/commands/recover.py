"""``recover``: what was set aside in this workspace, and bringing memories back from it
(docs/decisions.md#last-good-generation).

Set aside are the damaged files a command kept (``<name>.corrupt-<ms>``: a copy of the damaged bytes,
or a directory or symbolic link moved out of the way) and the last good generation of each state file
(``<name>.prev``). ``workmem recover`` lists them with their kind, time and how many memories each
holds and how many of those the workspace lacks; ``workmem recover --restore NAME`` brings those back
through one transaction and the pure :func:`domain.recovery.restore_held` (``--dry-run``: only says
what it would bring back). A set-aside file is only ever read, never changed or deleted.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    CommandError,
    Context,
    context,
    open_workspace,
    write,
    write_json,
)

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.model import PendingJournal, WorkspaceStore
    from domain.operations import OpResult
    from domain.recovery import Held

#: the milliseconds in ``<name>.corrupt-<ms>`` (``corrupt-lines-<ms>`` for evidence lines)
_ASIDE_MS: Final = re.compile(r"\.corrupt-(?:lines-)?(\d{10,16})")
_SESSION: Final = re.compile(r"^[0-9a-f]{32}\.json\Z")


class Aside(NamedTuple):
    """One set-aside file: its name relative to the workspace directory, its kind (``store``,
    ``journal``, ``session``, ``evidence``, ``archive``, ``other``), what it is, when it was set
    aside (ms) and the memories it holds (``None``: not a file of memories)."""

    name: str
    path: Path
    kind: str
    what: str
    time_ms: int
    held: Held | None


def _kind(base: str) -> str:
    from adapters import paths

    known = {
        paths.STORE_FILE: "store",
        paths.JOURNAL_FILE: "journal",
        paths.EVIDENCE_FILE: "evidence",
        paths.ARCHIVE_FILE: "archive",
    }
    return known.get(base, "session" if _SESSION.match(base) else "other")


def _held(path: Path, kind: str, ws: Workspace, now_ms: int) -> Held | None:
    """The memories a set-aside store, journal or session file holds (salvaged when damaged)."""
    from adapters.jsonl import read_bytes
    from domain.model import PendingJournal, SessionState, WorkspaceStore
    from domain.recovery import Held
    from domain.salvage import salvage_document

    data = read_bytes(path) or b""
    if kind == "store":
        store = salvage_document(data, WorkspaceStore, ws.empty_store(now_ms))
        return Held(entries=store.value.entries if store else (), pending=False)
    if kind == "journal":
        journal = salvage_document(data, PendingJournal, ws.empty_journal(now_ms))
        return Held(entries=journal.value.entries if journal else (), pending=True)
    state = salvage_document(data, SessionState)
    return Held(entries=state.value.pending_memories if state else (), pending=True)


def _aside(entry: os.DirEntry[str], prefix: str, ws: Workspace, now_ms: int) -> Aside | None:
    from adapters.jsonl import PREVIOUS_SUFFIX

    name = entry.name
    if name.endswith(PREVIOUS_SUFFIX):
        base, what = name[: -len(PREVIOUS_SUFFIX)], "last good generation"
    elif ".corrupt-" in name:
        base, what = name.split(".corrupt-", 1)[0], "damaged copy"
    else:
        return None
    st = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        what = "symbolic link (never followed)"
    elif stat.S_ISDIR(st.st_mode):
        what = "directory"
    elif ".corrupt-lines-" in name:
        what = "invalid evidence lines"
    kind = _kind(base)
    stamp = _ASIDE_MS.search(name)
    time_ms = int(stamp.group(1)) if stamp else st.st_mtime_ns // 1_000_000
    path = Path(entry.path)
    memories = stat.S_ISREG(st.st_mode) and kind in ("store", "journal", "session")
    held = _held(path, kind, ws, now_ms) if memories else None
    return Aside(prefix + name, path, kind, what, time_ms, held)


def set_aside_files(ws: Workspace, now_ms: int) -> list[Aside]:
    """Every set-aside file of the workspace, newest first (then by name)."""
    found: list[Aside] = []
    for directory, prefix in (
        (ws.paths.directory, ""),
        (ws.paths.sessions, "sessions/"),
        (ws.paths.evidence_dir, "evidence/"),
    ):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        found.extend(row for entry in entries if (row := _aside(entry, prefix, ws, now_ms)) is not None)
    return sorted(found, key=lambda row: (-row.time_ms, row.name))


def _missing(row: Aside, store: WorkspaceStore, journal: PendingJournal) -> int | None:
    from domain.recovery import missing_from

    return None if row.held is None else len(missing_from(store, journal, row.held))


def recover(args: argparse.Namespace) -> int:
    ctx = context(args)
    ws = open_workspace(ctx)
    if args.dry_run and args.restore is None:
        raise CommandError("--dry-run goes with --restore NAME", EXIT_USAGE)
    rows = set_aside_files(ws, ctx.now_ms)
    if args.restore is not None:
        return _restore(args, ctx, ws, _find(rows, args.restore, ws))
    store, journal = ws.read_store(ctx.now_ms).value, ws.read_journal(ctx.now_ms).value
    if args.json:
        write_json({"files": [_row_json(row, _missing(row, store, journal)) for row in rows]})
        return EXIT_OK
    if not rows:
        write("Nothing is set aside in this workspace.")
        return EXIT_OK
    from domain.timeutil import iso_from_ms

    width = max(len(row.name) for row in rows)
    write("Set aside in this workspace (newest first):")
    for row in rows:
        missing = _missing(row, store, journal)
        holds = f": {len(row.held.entries)} memories, {missing} not in the workspace" if row.held else ""
        write(f"  {row.name.ljust(width)}  {row.kind}, {row.what}, {iso_from_ms(row.time_ms)}{holds}")
    write("Bring back what a file holds that the workspace lacks: workmem recover --restore NAME [--dry-run]")
    return EXIT_OK


def _row_json(row: Aside, missing: int | None) -> dict[str, Any]:
    from domain.timeutil import iso_from_ms

    held = None if row.held is None else len(row.held.entries)
    return {
        "name": row.name,
        "kind": row.kind,
        "what": row.what,
        "time": iso_from_ms(row.time_ms),
        "memories": held,
        "missing": missing,
    }


def _find(rows: list[Aside], wanted: str, ws: Workspace) -> Aside:
    """The set-aside file named ``wanted``: its name as listed, its bare file name when that is
    unique, or its path."""
    exact = [row for row in rows if row.name == wanted]
    bare = [row for row in rows if row.path.name == wanted]
    by_path = [row for row in rows if os.path.abspath(wanted) == os.path.abspath(row.path)]
    for found in (exact, bare if len(bare) == 1 else [], by_path):
        if found:
            return found[0]
    message = f"no set-aside file {wanted!r} in this workspace (see `workmem recover`)"
    raise CommandError(message, EXIT_REJECTED)


def _restore(args: argparse.Namespace, ctx: Context, ws: Workspace, row: Aside) -> int:
    from adapters.service import execute, preview
    from domain.commands import RestoreSetAside
    from domain.keys import exact_key
    from domain.recovery import missing_from

    held = row.held
    if held is None:
        raise CommandError(f"{row.name} is a {row.what}: it holds no memories to restore", EXIT_REJECTED)
    command = RestoreSetAside(held=held, source=row.name)
    result: OpResult | None
    result = (preview if args.dry_run else execute)(ws, command, ctx.now_ms)
    assert result is not None  # a workspace command always runs
    basis = result.basis
    missing = missing_from(basis.store, basis.journal, held) if basis is not None else ()
    now_held = (*result.store.entries, *result.archived)
    ids, keys = {entry.id for entry in now_held}, {exact_key(entry) for entry in now_held}
    restored = [entry.id for entry in missing if entry.id in ids or exact_key(entry) in keys]
    refused = [entry.id for entry in missing if entry.id not in restored]
    present = len({exact_key(entry) for entry in held.entries}) - len(missing)
    if args.json:
        write_json(
            {
                "file": row.name,
                "kind": row.kind,
                "dryRun": bool(args.dry_run),
                "held": len(held.entries),
                "alreadyPresent": present,
                "restored": restored,
                "notRestored": refused,
            }
        )
        return EXIT_OK
    verb = "would restore" if args.dry_run else "restored"
    note = f", {len(refused)} refused by the safety gate" if refused else ""
    write(
        f"{verb} {len(restored)} memories from {row.name} "
        f"({len(held.entries)} held, {present} already in the workspace{note})"
    )
    return EXIT_OK
