"""What a block leaves out besides its caps (docs/decisions.md#d22): a memory the host's instruction
files already say and the weaker of two near-duplicates. The block is rendered again without them,
so their places go to the next memories, at most :data:`LEAVE_OUT_PASSES` times.

The session start covers with the host's files (``domain.operations.common.render_block``); the
diagnostics cover with what the last session start said (``domain.diagnostics.snapshot``), since
they do not read the host's files. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from msgspec.structs import replace

from domain.caches import Caches
from domain.consolidation.near_duplicates import fold_rendered, folded_event
from domain.model import EvidenceInput, MemoryEntry, WorkspaceStore
from domain.render import RenderResult, render_workspace_block
from domain.retention import DEFAULT_TUNING, Tuning

#: A render is repeated at most this many times to leave out what the host's instruction files say and
#: the weaker of two near-duplicates; past it, the rest shows.
LEAVE_OUT_PASSES: Final = 8

#: Which of the memories a block shows are covered elsewhere (by id), each with its ``render_omitted``
#: event.
Covered = Callable[[Sequence[MemoryEntry]], dict[str, EvidenceInput]]


def render_leaving_out(
    store: WorkspaceStore,
    now_ms: int,
    covered: Covered,
    tuning: Tuning = DEFAULT_TUNING,
    caches: Caches | None = None,
) -> tuple[RenderResult, tuple[EvidenceInput, ...]]:
    """The store's render without what ``covered`` names and without the weaker of two
    near-duplicates, and a ``render_omitted`` event for each memory left out (reason
    ``in_host_instructions`` or ``near_duplicate``), in the order they were left out."""
    result = render_workspace_block(store, now_ms, tuning, caches)
    left_out: list[EvidenceInput] = []
    for _ in range(LEAVE_OUT_PASSES):  # each pass leaves out at least one more memory, or stops
        gone = covered(result.rendered)
        folds = fold_rendered([e for e in result.rendered if e.id not in gone])
        gone.update((e.id, folded_event(e, folds[e.id])) for e in result.rendered if e.id in folds)
        if not gone:
            break
        left_out.extend(gone.values())
        store = replace(store, entries=tuple(e for e in store.entries if e.id not in gone))
        result = render_workspace_block(store, now_ms, tuning, caches)
    return result, tuple(left_out)
