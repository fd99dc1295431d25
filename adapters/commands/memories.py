"""``list`` (read-only) and the user's own edits: ``forget``, ``supersede``, ``restore`` (D10)."""

from __future__ import annotations

import argparse
from typing import Any

from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_STORAGE,
    CommandError,
    context,
    one_line,
    open_workspace,
    write,
    write_json,
)
from adapters.commands._run import run_operation
from adapters.evidence_log import warn
from domain import operations
from domain.model import MemoryEntry, MemoryStatus, WorkspaceStore
from domain.operations import OpResult


def memory_rows(store: WorkspaceStore, now_ms: int, *, include_all: bool) -> list[dict[str, Any]]:
    """The store as ``list`` shows it: active memories strongest first, then (with ``--all``) the
    superseded ones. ``store`` should already be normalised (in memory)."""
    from domain.render import render_workspace_block
    from domain.retention import dormancy_at, sort_by_retention, strength

    dormancy = dormancy_at(store, now_ms)
    rendered = {e.id for e in render_workspace_block(store, now_ms).rendered}
    active = [e for e in store.entries if e.status is MemoryStatus.ACTIVE]
    ordered: list[MemoryEntry] = sort_by_retention(active, now_ms, dormancy)
    if include_all:
        ordered += [e for e in store.entries if e.status is not MemoryStatus.ACTIVE]

    def row(entry: MemoryEntry) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": entry.id,
            "type": entry.type.value,
            "text": entry.text,
            "source": entry.source.value,
            "status": entry.status.value,
            # full precision: rounding is for the human listing only
            "strength": strength(entry, now_ms, dormancy),
            "rendered": entry.id in rendered,
            "reinforcementCount": entry.reinforcement_count or 0,
            "createdAt": entry.created_at,
            "updatedAt": entry.updated_at,
        }
        if entry.user_importance is not None:
            item["userImportance"] = entry.user_importance.value
        if entry.rationale:
            item["rationale"] = entry.rationale
        if entry.superseded_by:
            item["supersededBy"] = entry.superseded_by
        return item

    return [row(e) for e in ordered]


def load_normalized(args: argparse.Namespace) -> tuple[WorkspaceStore, int]:
    """The workspace store as workmem would see it now, normalised in memory; nothing is written."""
    from domain.consolidation import normalize_store

    ctx = context(args)
    ws = open_workspace(ctx)
    loaded = ws.read_store(ctx.now_ms)
    if loaded.corrupt:
        # never show an unreadable store as an empty one; the next write moves it aside
        raise CommandError(
            f"the workspace store {ws.paths.store} cannot be read; it will be moved aside (not deleted) "
            "by the next command that writes",
            EXIT_STORAGE,
        )
    if loaded.damage:
        warn(loaded.damage)
    store = loaded.value
    archive = ws.read_archive() if store.archived else {}
    return normalize_store(store, ctx.now_ms, archive=archive).store, ctx.now_ms


def _note_set_aside(args: argparse.Namespace) -> None:
    """An empty listing says so when earlier stores of this workspace were moved aside."""
    ws = open_workspace(context(args))
    aside = [p for p in ws.quarantined_files() if p.name.startswith(ws.paths.store.name + ".corrupt-")]
    if aside:
        warn(f"{len(aside)} damaged store file(s) of this workspace were moved aside in {ws.paths.directory}")


def list_memories(args: argparse.Namespace) -> int:
    store, now_ms = load_normalized(args)
    rows = memory_rows(store, now_ms, include_all=args.all)
    if args.json:
        write_json({"memories": rows})
        return EXIT_OK
    if not rows:
        write("No memories stored.")
        _note_set_aside(args)
        return EXIT_OK
    for r in rows:
        shown = "yes" if r["rendered"] else "no"
        status = "" if r["status"] == "active" else f" status={r['status']}"
        write(
            f"{r['id']} [{r['type']}] {r['source']} strength={r['strength']:.3f} "
            f"rendered={shown}{status}  {one_line(r['text'])}"
        )
    return EXIT_OK


def _report(result: OpResult, target: str) -> int:
    if result.outcome == "rejected":
        write(f"rejected: {','.join(result.reasons) or 'rejected'}")
        return EXIT_REJECTED
    if result.outcome in ("unknown", ""):
        raise CommandError(f"no memory with id {target} (see `workmem list --all`)", EXIT_REJECTED)
    write(f"{result.memory_id or target} {result.outcome}")
    return EXIT_OK


def forget(args: argparse.Namespace) -> int:
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        None,
        lambda snap: operations.forget(snap, args.id, ctx.now_ms),
        with_others=False,
    )
    return _report(result, args.id)


def supersede(args: argparse.Namespace) -> int:
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        None,
        lambda snap: operations.supersede(snap, args.id, args.text, ctx.now_ms),
        with_others=False,
    )
    if result.outcome == "superseded":
        write(f"{args.id} superseded by {result.memory_id}")
        return EXIT_OK
    return _report(result, args.id)


def restore(args: argparse.Namespace) -> int:
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        None,
        lambda snap: operations.restore(snap, args.id, ctx.now_ms),
        with_others=False,
    )
    return _report(result, args.id)
