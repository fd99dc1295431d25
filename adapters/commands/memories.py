"""``list`` (read-only) and the user's own edits: ``forget``, ``supersede``, ``restore``
(docs/decisions.md#d10), each one call of the Python API (:mod:`adapters.api`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import msgspec

from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    CommandError,
    context,
    memory,
    one_line,
    open_workspace,
    write,
    write_json,
)

if TYPE_CHECKING:
    from adapters.api import Edit


def _note_set_aside(args: argparse.Namespace) -> None:
    """An empty listing says so when earlier stores of this workspace were moved aside."""
    from adapters.evidence_log import warn

    ws = open_workspace(context(args))
    aside = [p for p in ws.quarantined_files() if p.name.startswith(ws.paths.store.name + ".corrupt-")]
    if aside:
        warn(f"{len(aside)} damaged store file(s) of this workspace were moved aside in {ws.paths.directory}")


def list_memories(args: argparse.Namespace) -> int:
    rows = memory(context(args)).list(include_all=args.all)
    if args.json:
        write_json({"memories": msgspec.to_builtins(rows)})
        return EXIT_OK
    if not rows:
        write("No memories stored.")
        _note_set_aside(args)
        return EXIT_OK
    for r in rows:
        shown = "yes" if r.rendered else "no"
        status = "" if r.status == "active" else f" status={r.status}"
        write(
            f"{r.id} [{r.type}] {r.source} strength={r.strength:.3f} "
            f"rendered={shown}{status} grade={r.grade}  {one_line(r.text)}"
        )
    return EXIT_OK


def _report(edit: Edit) -> int:
    if edit.outcome == "rejected":
        write(f"rejected: {','.join(edit.reasons) or 'rejected'}")
        return EXIT_REJECTED
    if edit.outcome == "unknown":
        raise CommandError(f"no memory with id {edit.target} (see `workmem list --all`)", EXIT_REJECTED)
    if edit.outcome == "superseded":
        write(f"{edit.target} superseded by {edit.id}")
    else:
        write(f"{edit.id or edit.target} {edit.outcome}")
    return EXIT_OK


def forget(args: argparse.Namespace) -> int:
    return _report(memory(context(args)).forget(args.id))


def supersede(args: argparse.Namespace) -> int:
    return _report(memory(context(args)).supersede(args.id, args.text))


def restore(args: argparse.Namespace) -> int:
    return _report(memory(context(args)).restore(args.id))
