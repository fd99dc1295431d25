"""``workmem workspaces list`` and ``workmem workspaces merge [--dry-run] [--json]``: the stores this
repository kept under an old sub-directory (:mod:`adapters.old_stores`, docs/decisions.md#d15), and
bringing their memories in through the one service (:class:`domain.workspace_merge.MergeWorkspace`).
A merged store is never deleted: it stays in its directory, marked merged."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from adapters.commands import EXIT_OK, Context, context, open_workspace, write, write_json
from adapters.old_stores import mark_merged, old_stores
from adapters.service import execute
from domain.recovery import missing_from
from domain.timeutil import iso_from_ms
from domain.workspace_merge import MergeWorkspace

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from adapters.old_stores import OldStore


def workspaces_cmd(args: argparse.Namespace) -> int:

    ctx = context(args)
    if args.action == "list":
        found = old_stores(ctx.home, ctx.root, include_merged=True)
        if args.json:
            write_json({"root": ctx.root, "oldStores": [_row(old) for old in found]})
            return EXIT_OK
        if not found:
            write("No store of this repository is kept under a sub-directory.")
            return EXIT_OK
        write("Stores of this repository kept under a sub-directory:")
        for old in found:
            state = "merged" if old.merged else "not merged: `workmem workspaces merge` brings it in"
            write(f"  {old.relative}: {_counts(old)} ({state})")
        return EXIT_OK
    return _merge(args, ctx, old_stores(ctx.home, ctx.root))


def _counts(old: OldStore) -> str:
    pending = f", {len(old.pending.entries)} pending" if old.pending.entries else ""
    return f"{old.memories} memories{pending}"


def _row(old: OldStore, **more: Any) -> dict[str, Any]:
    return {
        "directory": old.relative,
        "key": old.key,
        "memories": old.memories,
        "pending": len(old.pending.entries),
        "merged": old.merged,
        **more,
    }


def _missing(ws: Workspace, old: OldStore, now_ms: int) -> tuple[int, int]:
    """(stored, pending) memories of ``old`` the workspace lacks now."""

    store, journal = ws.read_store(now_ms).value, ws.read_journal(now_ms).value
    return len(missing_from(store, journal, old.stored)), len(missing_from(store, journal, old.pending))


def _merge(args: argparse.Namespace, ctx: Context, found: tuple[OldStore, ...]) -> int:

    ws = open_workspace(ctx)
    rows: list[dict[str, Any]] = []
    for old in found:
        stored, pending = _missing(ws, old, ctx.now_ms)
        if not args.dry_run:
            execute(
                ws, MergeWorkspace(stored=old.stored, pending=old.pending, source=old.relative), ctx.now_ms
            )
            mark_merged(old, ws.key, iso_from_ms(ctx.now_ms))
            left_out = sum(_missing(ws, old, ctx.now_ms))
        else:
            left_out = 0
        held = len(old.stored.entries) + len(old.pending.entries)
        rows.append(
            _row(
                old,
                broughtIn=stored + pending - left_out,
                alreadyHere=held - stored - pending,
                notBroughtIn=left_out,
            )
        )
    if args.json:
        write_json({"root": ctx.root, "dryRun": bool(args.dry_run), "merged": rows})
        return EXIT_OK
    if not found:
        write("Nothing to merge: no store of this repository is kept under a sub-directory.")
        return EXIT_OK
    verb = "would bring in" if args.dry_run else "brought in"
    for old, row in zip(found, rows, strict=True):
        refused = f", {row['notBroughtIn']} refused by the safety gate" if row["notBroughtIn"] else ""
        kept = "" if args.dry_run else f"; the old store stays in {old.directory}, marked merged"
        here = f" ({row['alreadyHere']} already here)" if row["alreadyHere"] else ""
        write(f"{old.relative}: {verb} {row['broughtIn']} of {_counts(old)}{here}{refused}{kept}")
    return EXIT_OK
