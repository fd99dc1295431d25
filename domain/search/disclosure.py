"""Progressive disclosure in the injected block (docs/decisions.md#d16): each entry tagged with its
short id, and a closing line saying how many more memories exist and how to reach them.

:class:`Disclosure` holds the two settings a user may turn off (read by the shell from the
environment, ``WORKMEM_BLOCK=reference`` and ``WORKMEM_RECALL=off``): without ``tags`` the block is
the reference's, byte for byte (docs/compatibility.md); without ``recall`` a prompt never adds
memories to its turn (:mod:`domain.search.recall`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from domain.enums import MemoryStatus
from domain.model import WorkspaceStore
from domain.render import PINNED_SECTION, RENDER_HEADER, RenderResult, render_entry_line
from domain.search.shortids import label, numbering


class Disclosure(msgspec.Struct, frozen=True, kw_only=True):
    #: tag block entries with their short id and close the block with what is not shown
    tags: bool = True
    #: add memories matching a prompt to that turn's context (just-in-time recall)
    recall: bool = True


DEFAULT_DISCLOSURE: Final = Disclosure()
#: the reference's block, and no recall
REFERENCE_DISCLOSURE: Final = Disclosure(tags=False, recall=False)


def closing_line(more: int) -> str:
    noun, them = ("memory", "it") if more == 1 else ("memories", "them")
    return (
        f"({more} more stored {noun} not shown: find {them} with the search tool or "
        "`workmem search QUERY`; `workmem show R12` gives one in full.)"
    )


def tagged_block(result: RenderResult, store: WorkspaceStore, now_ms: int) -> str:
    """The block of ``result`` with each line's short id (``- [R12] text``) and the closing line; the
    same selection, so the block may exceed the character budget by the tags (docs/decisions.md#d16).
    An entry the store does not hold (a memory of the user's own store) is shown untagged."""
    if not result.text:
        return result.text
    numbers = numbering(store)
    known = result.lines if result.at_ms == now_ms and len(result.lines) == len(result.rendered) else None
    lines = [RENDER_HEADER]
    current: str | None = None
    pinned = {id(e) for e in result.selection.pinned}
    for position, entry in enumerate(result.rendered):
        title = PINNED_SECTION if id(entry) in pinned else f"{entry.type.value}:"
        if title != current:  # the sections of the block: pinned first (docs/decisions.md#d20)
            current = title
            lines.append(title)
        body = known[position] if known is not None else render_entry_line(entry, now_ms)
        number = numbers.get(entry.id)
        lines.append(f"- [{label(number)}] {body}" if number is not None else f"- {body}")
    shown = {e.id for e in result.rendered}
    more = sum(1 for e in store.entries if e.status is MemoryStatus.ACTIVE and e.id not in shown)
    if more:
        lines.append(closing_line(more))
    return "\n".join(lines)
