"""``explain [ID]`` and ``trace ID`` (docs/decisions.md#diagnostics-explain-and-trace): why a memory
is (not) in the block, in words, and its lifecycle with readable times. An id nothing knows is exit
3 with one line, as at every command that takes an id. Read-only."""

from __future__ import annotations

import argparse
from typing import Any

from adapters.commands import EXIT_OK, EXIT_REJECTED, CommandError, write, write_json
from adapters.commands.diagnostics import load_workspace
from domain import diagnostics as diag
from domain.diagnostics.words import explain_all, explained_json, format_explained


def _unknown(memory_id: str) -> CommandError:
    return CommandError(f"no memory with id {memory_id} (see `workmem list --all`)", EXIT_REJECTED)


def explain(args: argparse.Namespace) -> int:
    loaded = load_workspace(args)
    found = explain_all(loaded.src, loaded.now_ms, args.id, raw=args.raw)
    if args.id is not None and not found:
        raise _unknown(args.id)
    if args.verbose and not args.json:  # the status and evidence behind each verdict
        write(diag.format_explain(loaded.src, loaded.now_ms, args.id))
    elif args.json:
        write_json({"memories": [explained_json(item) for item in found]})
    elif not found:
        write("No memories stored.")
    else:
        write("\n".join(format_explained(item) for item in found))
    aside = len(loaded.src.quarantined_files)
    if aside and args.id is None and not args.json and not args.verbose:
        write(f"{aside} damaged file(s) were set aside: `workmem recover` lists them")
    return EXIT_OK


def _event_json(event: Any) -> dict[str, Any]:
    return {
        "id": event.event_id,
        "time": event.created_at,
        "type": str(event.type),
        "outcome": str(event.outcome),
        "reasons": [str(code) for code in event.reason_codes],
        "related": [
            {"role": str(r.role), "id": r.memory.memory_id} for r in event.relations if r.memory is not None
        ],
    }


def trace(args: argparse.Namespace) -> int:
    loaded = load_workspace(args)
    report = diag.trace_report(loaded.src, args.id, loaded.now_ms)
    if report.status == diag.DiagnosticStatus.UNKNOWN and not report.events:
        raise _unknown(args.id)
    if args.json:
        write_json(
            {
                "id": report.memory_id,
                "status": str(report.status),
                "events": [_event_json(ev) for ev in report.events],
                "supersededBy": list(report.superseded_by),
                "reinforcedBy": list(report.reinforced_by),
            }
        )
    else:
        write(diag.format_trace(report))
    return EXIT_OK
