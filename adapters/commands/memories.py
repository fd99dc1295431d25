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
    open_workspace,
    write,
    write_json,
)
from adapters.commands.pinning import not_pinned
from adapters.evidence_log import warn
from domain.pinning import PIN_BUDGET_FULL
from domain.text import one_line

if TYPE_CHECKING:
    from adapters.api import Edit
    from domain.model import MemoryEntry


def _note_set_aside(args: argparse.Namespace) -> None:
    """An empty listing says so when earlier stores of this workspace were moved aside."""

    ws = open_workspace(context(args))
    aside = [p for p in ws.quarantined_files() if p.name.startswith(ws.paths.store.name + ".corrupt-")]
    if aside:
        warn(f"{len(aside)} damaged store file(s) of this workspace were moved aside in {ws.paths.directory}")


def _pending(args: argparse.Namespace) -> tuple[MemoryEntry, ...]:
    """The requests waiting in the pending journal (stored when their session compacts or ends)."""
    ctx = context(args)
    return open_workspace(ctx).read_journal(ctx.now_ms).value.entries


def _pending_json(entry: MemoryEntry) -> dict[str, object]:
    return {
        "id": entry.id,
        "type": entry.type.value,
        "text": entry.text,
        "source": entry.source.value,
        "session": entry.pending_owner_session_id,
        "createdAt": entry.created_at,
    }


def list_memories(args: argparse.Namespace) -> int:
    rows = memory(context(args)).list(include_all=args.all)
    pending = _pending(args)
    if args.json:
        write_json({"memories": msgspec.to_builtins(rows), "pending": [_pending_json(e) for e in pending]})
        return EXIT_OK
    if not rows and not pending:
        write("No memories stored.")
        _note_set_aside(args)
        return EXIT_OK
    for r in rows:
        shown = "yes" if r.rendered else "no"
        status = "" if r.status == "active" else f" status={r.status}"
        status += " pinned" if r.pinned else ""
        status += " scope=user" if r.scope == "user" else ""
        write(
            f"{r.id} [{r.type}] {r.source} strength={r.strength:.3f} "
            f"rendered={shown}{status} grade={r.grade}  {one_line(r.text)}"
        )
    for e in pending:
        owner = f"session {e.pending_owner_session_id}" if e.pending_owner_session_id else "no session"
        when = f"{owner}: stored when it compacts or ends"
        write(f"{e.id} [{e.type.value}] {e.source.value} pending ({when})  {one_line(e.text)}")
    return EXIT_OK


def _report(args: argparse.Namespace, edit: Edit) -> int:
    if edit.outcome == "unknown":
        raise CommandError(f"no memory with id {edit.target} (see `workmem list --all`)", EXIT_REJECTED)
    unpinned = edit.outcome == "restored" and PIN_BUDGET_FULL in edit.reasons
    if args.json:
        write_json(msgspec.to_builtins(edit))
    if unpinned:  # restored, unpinned: said like ``remember --pin`` says it (docs/decisions.md#d20)
        raise not_pinned(args, f"{edit.target} restored")
    if args.json:
        return EXIT_REJECTED if edit.outcome == "rejected" else EXIT_OK
    if edit.outcome == "rejected":
        write(f"rejected: {','.join(edit.reasons) or 'rejected'}")
        return EXIT_REJECTED
    if edit.outcome == "superseded":
        write(f"{edit.target} superseded by {edit.id}")
    else:
        write(f"{edit.id or edit.target} {edit.outcome}")
    return EXIT_OK


def forget(args: argparse.Namespace) -> int:
    return _report(args, memory(context(args)).forget(args.id))


def supersede(args: argparse.Namespace) -> int:
    return _report(args, memory(context(args)).supersede(args.id, args.text))


def restore(args: argparse.Namespace) -> int:
    return _report(args, memory(context(args)).restore(args.id))
