"""The read-only diagnostics: ``health``, ``explain``, ``trace``, ``quality``, ``coverage``,
``disappearances``, ``rejections`` and ``audit`` (docs/decisions.md#diagnostics).

This module only loads files and prints; every number and every line of output comes from the pure
functions of :mod:`domain.diagnostics`. Nothing here writes: the store, journal, evidence log and rejection
log are read as they are on disk (the store is decoded with defaults filled in, not rewritten).
Output is redacted by default; ``--raw`` shows paths and unredacted text.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from adapters import jsonl, paths
from adapters.commands import EXIT_OK, CommandError, context, open_workspace, write, write_json
from adapters.diagnostics_input import load_input, read_rejections
from adapters.old_stores import old_stores
from adapters.sync import flagged_notes, health_lines
from domain import diagnostics as diag
from domain.codec import decode_store
from domain.diagnostics import AuditRecord, DiagInput, NormalizedRejection
from domain.diagnostics.left_block import format_left_block, left_block_json, left_block_rows
from domain.diagnostics.summary import OldStoreCount, summary_json, summary_lines

T = TypeVar("T")


class _Loaded(msgspec.Struct, frozen=True, kw_only=True):
    src: DiagInput
    now_ms: int
    home: Path
    rejection_log: Path
    invalid_rejection_lines: int
    all_rejections: tuple[NormalizedRejection, ...]


def load_workspace(args: argparse.Namespace) -> _Loaded:
    ctx = context(args)
    key = paths.workspace_key(ctx.root)
    layout = paths.workspace_paths_for_key(ctx.home, key)
    records, invalid, log = read_rejections(ctx.home)
    normalized = diag.normalize_rejections(records)
    scoped = tuple(r for r in records if not r.workspace_key or r.workspace_key == key)
    return _Loaded(
        src=load_input(layout, ctx.root, key, scoped),
        now_ms=ctx.now_ms,
        home=ctx.home,
        rejection_log=log,
        invalid_rejection_lines=invalid,
        all_rejections=normalized,
    )


# ---------------------------------------------------------------------------------------------
# health
# ---------------------------------------------------------------------------------------------


def _health_all(args: argparse.Namespace) -> int:
    ctx = context(args)
    base = ctx.home / "workspaces"
    try:
        names = sorted(p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        names = []
    blocks: list[str] = []
    found: list[dict[str, Any]] = []
    for name in names:
        layout = paths.workspace_paths_for_key(ctx.home, name)
        data = jsonl.read_bytes(layout.store)
        store = decode_store(data).value_or(None) if data is not None else None
        root = store.workspace.root if store is not None else ""
        src = load_input(layout, root, name)
        if args.json:
            found.append(diag.health_json(src, ctx.now_ms))
            continue
        report = diag.health_report(src, ctx.now_ms)
        blocks.append(diag.format_health(report, raw=args.raw, include_title=False, verbose=args.verbose))
    if args.json:
        write_json({"workspaces": found})
        return EXIT_OK
    body = "\n\n".join(blocks) if blocks else "No workspace stores found."
    write(f"Workspace memory health\n\n{body}")
    return EXIT_OK


def _old_stores(loaded: _Loaded) -> tuple[OldStoreCount, ...]:

    return tuple(
        OldStoreCount(directory=old.relative, memories=old.memories, pending=len(old.pending.entries))
        for old in old_stores(loaded.home, loaded.src.root)
    )


def health_cmd(args: argparse.Namespace) -> int:
    if args.all:
        if args.workspace:
            raise CommandError("Use either --all or --workspace, not both")
        return _health_all(args)
    loaded = load_workspace(args)

    notes = flagged_notes(open_workspace(context(args)))
    report = diag.health_report(loaded.src, loaded.now_ms)
    old = _old_stores(loaded)
    if args.json:
        found = diag.health_json(loaded.src, loaded.now_ms)
        found["verdict"] = summary_json(report, old)
        if notes is not None:
            found["projection"] = {"notImported": [msgspec.to_builtins(n) for n in notes]}
        write_json(found)
    else:
        text = diag.format_health(report, raw=args.raw, include_title=False, verbose=args.verbose)
        head = ["Workspace memory health", "", *summary_lines(report, old), ""]
        write("\n".join([*head, text, *(["", *health_lines(notes)] if notes is not None else [])]))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# quality, coverage, disappearances
# ---------------------------------------------------------------------------------------------


def _report(
    args: argparse.Namespace,
    build: Callable[[Any], T],
    as_json: Callable[[T, int], object],
    as_text: Callable[[T], str],
) -> int:
    """One report of the inspected workspace: ``build`` it, then print it as JSON or text."""
    loaded = load_workspace(args)
    report = build(diag.inspect(loaded.src, loaded.now_ms))
    if args.json:
        write_json(as_json(report, loaded.now_ms))
    else:
        write(as_text(report))
    return EXIT_OK


def quality(args: argparse.Namespace) -> int:
    return _report(args, diag.quality_report, diag.quality_json, diag.format_quality)


def coverage(args: argparse.Namespace) -> int:
    return _report(
        args,
        lambda inspected: diag.coverage_rows(inspected, args.include_historical),
        diag.coverage_json,
        diag.format_coverage,
    )


def disappearances(args: argparse.Namespace) -> int:
    """Memories gone from the store (known only from evidence), then those that left the block but
    are still stored (:mod:`domain.diagnostics.left_block`)."""

    loaded = load_workspace(args)
    inspected = diag.inspect(loaded.src, loaded.now_ms)
    rows = diag.disappearance_rows(inspected)
    left = left_block_rows(inspected.snapshot)
    if args.json:
        found = diag.disappearances_json(rows, loaded.now_ms, explain=args.explain)
        write_json({**found, "leftTheBlock": left_block_json(left, raw=args.raw)})
    else:
        gone = diag.format_disappearances(rows, explain=args.explain, raw=args.raw)
        write(f"{gone}\n\n{format_left_block(left, raw=args.raw)}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# rejections
# ---------------------------------------------------------------------------------------------


def rejections(args: argparse.Namespace) -> int:
    loaded = load_workspace(args)
    since_ms: int | None = None
    if args.since is not None:
        parsed = diag.parse_since(args.since, loaded.now_ms)
        since_ms = parsed.value_or(None)
        if since_ms is None:
            raise CommandError(parsed.failure())
    records = diag.filter_rejections(
        loaded.all_rejections,
        workspace_key=loaded.src.key,
        since_ms=since_ms,
        soft_only=args.soft_only,
        trigger_only=args.trigger_only,
        reason=args.reason,
    )
    log_path = str(loaded.rejection_log)
    if args.quality:
        summary = diag.rejection_quality(records)
        if args.json:
            write_json(diag.rejection_quality_json(summary, loaded.now_ms))
        else:
            write(
                diag.format_rejection_quality(
                    summary, log_path=log_path, invalid_lines=loaded.invalid_rejection_lines, raw=args.raw
                )
            )
        return EXIT_OK
    shown = diag.unique_rejections(records) if args.unique else records
    if args.json:
        write_json(diag.rejections_json(shown, loaded.now_ms, raw=args.raw))
        return EXIT_OK
    write(
        diag.format_rejections(
            shown, log_path=log_path, invalid_lines=loaded.invalid_rejection_lines, raw=args.raw
        )
    )
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# audit (docs/decisions.md#diagnostics-audit)
# ---------------------------------------------------------------------------------------------


class AuditFiles(msgspec.Struct, frozen=True, kw_only=True):
    records: tuple[AuditRecord, ...]
    damaged_lines: int
    skipped_files: int  # symbolic links, never followed
    directory: Path


def read_audit_records(home: Path) -> AuditFiles:
    """Every record of ``migration-logs/*.jsonl`` and of their rotated ``*.jsonl.1``, file by file in
    name order. A missing directory reads as empty, a damaged line is counted and skipped, a symbolic
    link (the directory or a file) is not followed. Other read errors propagate."""
    directory = home / paths.MIGRATION_DIR
    try:
        linked = directory.is_symlink()
        names = [] if linked else sorted(p.name for p in directory.iterdir())
    except FileNotFoundError:
        linked, names = False, []
    records: list[AuditRecord] = []
    damaged = 0
    skipped = int(linked)
    for name in names:
        if not name.endswith((".jsonl", ".jsonl.1")):
            continue
        try:
            data = jsonl.read_bytes(directory / name)
        except jsonl.SymlinkRefused:
            skipped += 1
            continue
        except IsADirectoryError:
            continue
        for line in jsonl.split_lines(data or b""):
            record = diag.parse_audit_line(line)
            if record is None:
                damaged += 1
            else:
                records.append(record)
    return AuditFiles(
        records=tuple(records), damaged_lines=damaged, skipped_files=skipped, directory=directory
    )


def audit(args: argparse.Namespace) -> int:
    if args.all and args.workspace:
        raise CommandError("Use either --all or --workspace, not both")
    ctx = context(args)
    found = read_audit_records(ctx.home)
    report = diag.audit_report(
        found.records,
        workspace_key=None if args.all else paths.workspace_key(ctx.root),
        log_dir=str(found.directory),
        damaged_lines=found.damaged_lines,
        skipped_files=found.skipped_files,
    )
    if args.json:
        write_json(diag.audit_json(report, ctx.now_ms))
    else:
        write(diag.format_audit(report, raw=args.raw))
    return EXIT_OK
