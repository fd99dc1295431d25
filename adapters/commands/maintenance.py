"""``import-owm`` (docs/decisions.md#d11) and ``cleanup`` (quarantine leftover test workspaces; nothing is
deleted, docs/decisions.md#workspace-cleanup)."""

from __future__ import annotations

import argparse
from pathlib import Path

from adapters.commands import EXIT_OK, CommandError, context, write, write_json


def import_owm(args: argparse.Namespace) -> int:
    from adapters.import_owm import ImportSourceError, default_source, format_report, import_owm as run_import

    ctx = context(args)
    source = Path(args.dir).expanduser() if args.dir else default_source()
    try:
        report = run_import(source, ctx.home)
    except ImportSourceError as exc:
        raise CommandError(str(exc)) from None
    write(format_report(report))
    return EXIT_OK


def cleanup(args: argparse.Namespace) -> int:
    from adapters.cleanup import cleanup as run_cleanup
    from domain.cleanup import DEFAULT_MIN_AGE_MS, format_report
    from domain.codec import to_builtins
    from domain.limits import DAY_MS

    ctx = context(args)
    mode = "quarantine" if args.quarantine else "dry-run"
    min_age_ms = DEFAULT_MIN_AGE_MS if args.older_than_days is None else int(args.older_than_days * DAY_MS)
    run = run_cleanup(
        ctx.home, ctx.now_ms, mode=mode, min_age_ms=min_age_ms, include_orphans=args.include_orphans
    )
    if args.json:
        write_json(
            {
                "mode": run.mode,
                "results": [to_builtins(r) for r in run.results],
                "candidates": [r.workspace_key for r in run.candidates],
                "quarantined": [to_builtins(q) for q in run.quarantined],
                "quarantineDir": str(run.quarantine_dir) if run.quarantine_dir else None,
            }
        )
    else:
        write(
            format_report(
                run.mode,
                run.results,
                run.candidates,
                run.quarantined,
                str(run.quarantine_dir) if run.quarantine_dir else None,
                include_orphans=args.include_orphans,
            )
        )
    return EXIT_OK
