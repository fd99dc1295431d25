"""Stores of this repository kept under an old sub-directory (docs/decisions.md#d15).

Before a workspace was the repository, ``workmem`` run in ``proj/src`` kept its memories under the key
of ``proj/src`` (``workspaces/<sha256(realpath(proj/src))[:16]>/``). Each store records the root it was
made for (its ``workspace.root``), so the stores whose root lies strictly inside this repository are
found here. ``workmem health`` says so, and ``workmem workspaces merge`` brings their memories in
(:class:`domain.workspace_merge.MergeWorkspace`); the old store stays where it was, marked merged by
:data:`MERGED_MARKER`, and is not offered again. Only read here, except the marker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final, NamedTuple

import msgspec

from adapters import jsonl, paths
from domain.codec import decode_journal, decode_store
from domain.model import WorkspaceRef
from domain.recovery import Held

#: The file that marks an old store as merged (what it was merged into, and when).
MERGED_MARKER: Final = "merged-into.json"


class OldStore(NamedTuple):
    """One store of an old sub-directory: its key, the root it was made for, that root relative to
    the repository, its memories (``stored``) and its pending journal (``pending``), and whether it
    was merged already."""

    key: str
    directory: Path
    root: str
    relative: str
    stored: Held
    pending: Held
    merged: bool

    @property
    def memories(self) -> int:
        return len(self.stored.entries)


def _inside(root: str, repository: str) -> bool:
    inner, outer = paths.resolved_root(root), paths.resolved_root(repository)
    if not os.path.isabs(inner) or inner == outer:
        return False
    try:
        return os.path.commonpath([inner, outer]) == outer
    except ValueError:  # different drives
        return False


class _Head(msgspec.Struct):
    """Only the root a store was made for (decoding it skips the entries: ``health`` reads every
    store of the data home)."""

    workspace: WorkspaceRef


def _root_of(data: bytes) -> str:
    try:
        return msgspec.json.decode(data, type=_Head).workspace.root
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""


def old_stores(home: Path, repository: str, *, include_merged: bool = False) -> tuple[OldStore, ...]:
    """The stores under ``home`` made for a directory strictly inside ``repository``, by relative
    path (merged ones only with ``include_merged``). An unreadable store is skipped."""
    base = home / "workspaces"
    own = paths.workspace_key(repository)
    try:
        directories = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return ()
    found: list[OldStore] = []
    for directory in directories:
        if directory.name == own:
            continue
        merged = (directory / MERGED_MARKER).exists()
        if merged and not include_merged:
            continue
        try:
            data = jsonl.read_bytes(directory / paths.STORE_FILE)
            if data is None or not _inside(_root_of(data), repository):
                continue
            journal_data = jsonl.read_bytes(directory / paths.JOURNAL_FILE)
        except OSError:
            continue
        store = decode_store(data).value_or(None)
        if store is None:
            continue
        journal = decode_journal(journal_data).value_or(None) if journal_data is not None else None
        outer = paths.resolved_root(repository)
        found.append(
            OldStore(
                key=directory.name,
                directory=directory,
                root=store.workspace.root,
                relative=os.path.relpath(paths.resolved_root(store.workspace.root), outer),
                stored=Held(entries=store.entries, pending=False),
                pending=Held(entries=journal.entries if journal is not None else (), pending=True),
                merged=merged,
            )
        )
    return tuple(sorted(found, key=lambda s: (s.relative, s.key)))


def mark_merged(old: OldStore, into_key: str, when: str) -> None:
    """Mark ``old`` merged into the workspace ``into_key`` (a private file beside its store)."""
    record = {"into": into_key, "mergedAt": when, "root": old.root}
    jsonl.atomic_write(old.directory / MERGED_MARKER, json.dumps(record).encode() + b"\n")
