"""Pinned memories (docs/decisions.md#d20): a memory the user pins is shown first in every block and
never archived, within a small budget of its own.

The budget is :data:`PIN_MAX_ENTRIES` memories and :data:`PIN_MAX_CHARS` characters of block lines
(what :func:`pin_chars` counts: the ``- `` line of the memory without its staleness note). A pin past
it is refused, naming what is pinned (:func:`set_pinned`); pinned memories that came in another way
(a request said in chat, an edited projection file) and do not fit are ranked as usual by the block
(:func:`split_pinned`), and ``health`` says so.

The commands :class:`~domain.operations.pinning.Pin` and :class:`~domain.operations.pinning.Unpin`
are members of :data:`domain.commands.Command`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from domain.enums import MemoryStatus
from domain.limits import LongTermLimits
from domain.model import MemoryEntry, WorkspaceStore
from domain.text import single_line, truncate

#: At most this many pinned memories are shown first (a block holds 28 memories in all).
PIN_MAX_ENTRIES: Final = 5
#: ... and at most this many characters of their lines (a sixth of the 3600-character block).
PIN_MAX_CHARS: Final = 600
#: The reason a pin past the budget is refused with.
PIN_BUDGET_FULL: Final = "pin_budget_full"


def pin_chars(entry: MemoryEntry) -> int:
    """The characters ``entry`` takes of the pinned budget: its ``- `` line in the block, without
    the staleness note (which depends on the day)."""
    line = single_line(truncate(entry.text, LongTermLimits.MAX_ENTRY_TEXT_CHARS))
    if entry.rationale:
        line += " Why: " + single_line(truncate(entry.rationale, LongTermLimits.MAX_RATIONALE_CHARS))
    return 2 + len(line)


class PinBudget(NamedTuple):
    """What the pinned memories of a store take of the budget, and the ones that do not fit."""

    entries: int
    chars: int
    over: tuple[MemoryEntry, ...]

    def line(self) -> str:
        """``2/5 memories, 180/600 characters`` (and what does not fit)."""
        text = f"{self.entries}/{PIN_MAX_ENTRIES} memories, {self.chars}/{PIN_MAX_CHARS} characters"
        return text + (
            f"; {len(self.over)} more pinned ranked as usual (over the budget)" if self.over else ""
        )


def split_pinned(ranked: Sequence[MemoryEntry]) -> tuple[list[MemoryEntry], list[MemoryEntry]]:
    """The active pinned memories of ``ranked`` (in its order) that fit the budget, and every other
    entry (in its order). A pinned memory that does not fit is ranked as usual."""
    shown: list[MemoryEntry] = []
    rest: list[MemoryEntry] = []
    chars = 0
    for entry in ranked:
        if entry.pinned and entry.status is MemoryStatus.ACTIVE and len(shown) < PIN_MAX_ENTRIES:
            cost = pin_chars(entry)
            if chars + cost <= PIN_MAX_CHARS:
                shown.append(entry)
                chars += cost
                continue
        rest.append(entry)
    return shown, rest


def pinned_of(store: WorkspaceStore) -> list[MemoryEntry]:
    """The active pinned memories of ``store``, in store order."""
    return [e for e in store.entries if e.pinned and e.status is MemoryStatus.ACTIVE]


def pin_budget(store: WorkspaceStore) -> PinBudget:
    """What the pinned memories of ``store`` take of the budget."""
    pinned = pinned_of(store)
    shown, _ = split_pinned(pinned)
    kept = {id(e) for e in shown}
    return PinBudget(len(shown), sum(map(pin_chars, shown)), tuple(e for e in pinned if id(e) not in kept))


def fits(store: WorkspaceStore, entry: MemoryEntry) -> bool:
    """Whether pinning ``entry`` keeps every pinned memory of ``store`` within the budget."""
    pinned = [e for e in pinned_of(store) if e.id != entry.id]
    return (
        len(pinned) + 1 <= PIN_MAX_ENTRIES and sum(map(pin_chars, pinned)) + pin_chars(entry) <= PIN_MAX_CHARS
    )
