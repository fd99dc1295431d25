"""``workmem sync`` and ``workmem merge-file`` (docs/decisions.md#d17, docs/sync.md).

``sync [--dry-run] [--json]`` shares the workspace's memories through ``.workmem/`` (created on the
first sync) and then syncs the user's own store when it shares too; ``sync --user [--remote URL]``
syncs only the user's store, making it a git repository that follows its remote. Exit 3 when a file
was turned down or set aside (each is listed with its line), else 0.

``merge-file BASE OURS THEIRS [PATH]`` is the git merge driver ``workmem install git`` registers: the
field-wise merge of one memory file, written to OURS; exit 1 when a conflict remains (written with
markers), 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from adapters.commands import EXIT_OK, EXIT_REJECTED, CommandError, context, memory, write, write_json
from adapters.exit_codes import EXIT_CONFLICT

if TYPE_CHECKING:
    from adapters.sync import SyncReport


def add_commands(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    """The parsers of ``sync`` and ``merge-file`` (called by :func:`adapters.cli.build_parser`)."""
    p = command(
        sub,
        "sync",
        "sync:sync_cmd",
        "share memories through .workmem/ (import edits, export)",
        json_flag=True,
    )
    p.add_argument("--dry-run", action="store_true", help="report what would move, write nothing")
    p.add_argument("--user", action="store_true", help="only the user's own store (a git repository)")
    p.add_argument("--remote", metavar="URL", help="with --user: the git remote the user's store follows")
    p = command(sub, "merge-file", "sync:merge_file", "git merge driver for .workmem files (install git)")
    for name in ("base", "ours", "theirs"):
        p.add_argument(name, metavar=name.upper())
    p.add_argument("path", nargs="?", default="", metavar="PATH", help="the file's path in the repository")


# ---------------------------------------------------------------------------------------------------
# sync
# ---------------------------------------------------------------------------------------------------


def report_lines(report: SyncReport) -> list[str]:
    """The text form of one store's sync."""
    lines: list[str] = []
    where = "your own store" if report.projected == "user" else "this repository"
    verb = "would " if report.dry_run else ""
    if report.created:
        lines.append(f"{verb}create .workmem/ in {where} (commit it to share these memories)")
    for note in report.imported:
        change = ", ".join(note.reasons)
        lines.append(f"{verb}import {note.file} ({change})" + (f" as {note.memory}" if note.memory else ""))
    if report.written:
        lines.append(f"{verb}export {len(report.written)} file(s)")
    if report.removed:
        lines.append(f"{verb}remove {len(report.removed)} file(s): " + ", ".join(report.removed))
    for note in report.flagged:
        detail = f": {note.message}" if note.message else ""
        lines.append(f"{note.outcome} {note.file}:{note.line} {','.join(note.reasons)}{detail}")
    lines += list(report.git)
    if not lines:
        lines.append(f"{where}: nothing to sync")
    return lines


def _user_report(args: argparse.Namespace, *, required: bool) -> SyncReport | None:
    # start-up time: building the parser imports this module; git and the projection load only here
    from adapters.git_sync import sync_user_store
    from adapters.projection import exists
    from adapters.user_scope import user_root

    ctx = context(args)
    if not required and not exists(user_root(ctx.home)):
        return None
    if args.dry_run and not exists(user_root(ctx.home)):
        raise CommandError("the user's store does not share its memories yet (run `workmem sync --user`)")
    return sync_user_store(ctx.home, ctx.now_ms, dry_run=args.dry_run, remote=args.remote)


def sync_cmd(args: argparse.Namespace) -> int:
    if args.remote and not args.user:
        raise CommandError("--remote goes with --user (the git remote of the user's own store)")
    reports: list[SyncReport] = []
    if not args.user:
        reports.append(memory(context(args)).sync(dry_run=args.dry_run))
    user = _user_report(args, required=args.user)
    if user is not None:
        reports.append(user)
    if args.json:
        write_json({"stores": [msgspec.to_builtins(r) for r in reports]})
    else:
        lines = [line for r in reports for line in report_lines(r)]
        if args.dry_run:
            lines.append("(dry run: nothing was written)")
        write("\n".join(lines))
    return EXIT_OK if all(r.clean for r in reports) else EXIT_REJECTED


# ---------------------------------------------------------------------------------------------------
# merge-file
# ---------------------------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "surrogateescape")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None


def merge_file(args: argparse.Namespace) -> int:
    # start-up time: building the parser imports this module; the merge loads only here
    from domain.projection.merge import merge_files

    texts: Sequence[str] = [_read(p) for p in (args.base, args.ours, args.theirs)]
    merged = merge_files(texts[0], texts[1], texts[2], _relative(args.path))
    try:
        with open(args.ours, "wb") as handle:
            handle.write(merged.text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise CommandError(f"cannot write {args.ours}: {exc.strerror or type(exc).__name__}") from None
    return EXIT_CONFLICT if merged.conflicts else EXIT_OK


def _relative(path: str) -> str:
    """The path inside ``.workmem/`` of a repository path (git passes ``%P``)."""
    marker = ".workmem/"
    return path[path.index(marker) + len(marker) :] if marker in path else path
