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
from adapters.commands import EXIT_OK, CommandError, context, write, write_json
from adapters.diagnostics_input import load_input, read_rejections
from domain import diagnostics as diag
from domain.codec import decode_store
from domain.diagnostics import AuditRecord, DiagInput, NormalizedRejection

T = TypeVar("T")


class _Loaded(msgspec.Struct, frozen=True, kw_only=True):
    src: DiagInput
    now_ms: int
    home: Path
    rejection_log: Path
    invalid_rejection_lines: int
    all_rejections: tuple[NormalizedRejection, ...]


def _load(args: argparse.Namespace) -> _Loaded:
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
    for name in names:
        layout = paths.workspace_paths_for_key(ctx.home, name)
        data = jsonl.read_bytes(layout.store)
        store = decode_store(data).value_or(None) if data is not None else None
        root = store.workspace.root if store is not None else ""
        src = load_input(layout, root, name)
        blocks.append(
            diag.format_health(diag.health_report(src, ctx.now_ms), raw=args.raw, include_title=False)
        )
    body = "\n\n".join(blocks) if blocks else "No workspace stores found."
    write(f"Workspace memory health\n\n{body}")
    return EXIT_OK


def health_cmd(args: argparse.Namespace) -> int:
    if args.all:
        if args.workspace:
            raise CommandError("Use either --all or --workspace, not both")
        if args.json:
            raise CommandError("health --json does not support --all")
        return _health_all(args)
    loaded = _load(args)
    from adapters.commands import open_workspace
    from adapters.sync import flagged_notes, health_lines

    notes = flagged_notes(open_workspace(context(args)))
    if args.json:
        found = diag.health_json(loaded.src, loaded.now_ms)
        if notes is not None:
            found["projection"] = {"notImported": [msgspec.to_builtins(n) for n in notes]}
        write_json(found)
    else:
        text = diag.format_health(diag.health_report(loaded.src, loaded.now_ms), raw=args.raw)
        write("\n".join([text, "", *health_lines(notes)]) if notes is not None else text)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# explain, trace
# ---------------------------------------------------------------------------------------------


def explain(args: argparse.Namespace) -> int:
    from adapters.commands import memory

    write(memory(context(args)).explain(args.id).text)
    return EXIT_OK


def trace(args: argparse.Namespace) -> int:
    loaded = _load(args)
    write(diag.format_trace(diag.trace_report(loaded.src, args.id, loaded.now_ms)))
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
    loaded = _load(args)
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
    return _report(
        args,
        diag.disappearance_rows,
        lambda rows, now_ms: diag.disappearances_json(rows, now_ms, explain=args.explain),
        lambda rows: diag.format_disappearances(rows, explain=args.explain, raw=args.raw),
    )


# ---------------------------------------------------------------------------------------------
# rejections
# ---------------------------------------------------------------------------------------------


def rejections(args: argparse.Namespace) -> int:
    if args.json and not args.quality:
        raise CommandError("rejections --json requires --quality")
    loaded = _load(args)
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
