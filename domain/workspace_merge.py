"""Merging a store kept under an old sub-directory of the repository into the repository's store
(docs/decisions.md#d15): before a workspace was the repository, ``workmem`` run in ``proj/src`` kept
its memories under the key of ``proj/src``. :class:`MergeWorkspace` brings them in through the one
service, by the path of any restored memory (:func:`domain.recovery.restore_held`): stored memories
are appended as they were and the store is normalised (redaction, dedupe, the archive rule), pending
ones are promoted like any pending memory. Nothing the repository already holds is added twice, and
a memory the repository forgot stays forgotten. Pure."""

from __future__ import annotations

from typing import Final

import msgspec

from domain.operations.values import OpResult, Snapshot
from domain.recovery import Held, restore_held

#: Reason code of a memory brought in from a store of an old sub-directory.
REASON_MERGED: Final = "merged_from_sub_directory_store"


class MergeWorkspace(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="workspaces"):
    """Bring in what the store of an old sub-directory holds (``stored``: its entries, ``pending``:
    its pending journal) that this workspace lacks; ``source`` names the old store (its directory,
    relative to the repository)."""

    stored: Held
    pending: Held
    source: str


def merged(snap: Snapshot, command: MergeWorkspace, now_ms: int) -> OpResult:
    """The old store's stored memories first, then its pending ones, brought in as one result (the
    way a set-aside file's memories are restored, docs/decisions.md#d15)."""
    first = restore_held(snap, command.stored, command.source, now_ms, reason=REASON_MERGED)
    return first.then(
        lambda following: restore_held(
            following, command.pending, command.source, now_ms, reason=REASON_MERGED
        )
    )
