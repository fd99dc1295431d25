"""Scopes (docs/decisions.md#d17): who a memory is for, and which memories a projection holds."""

from __future__ import annotations

from typing import Final

from domain.enums import MemoryType, Scope
from domain.model import MemoryEntry

#: A memory's scope when it names none: a person's feedback is theirs; decisions, project facts and
#: references belong to the team.
DEFAULT_SCOPE: Final[dict[MemoryType, Scope]] = {
    MemoryType.FEEDBACK: Scope.PERSONAL,
    MemoryType.PROJECT: Scope.TEAM,
    MemoryType.DECISION: Scope.TEAM,
    MemoryType.REFERENCE: Scope.TEAM,
}


def default_scope(type_: MemoryType) -> Scope:
    return DEFAULT_SCOPE[type_]


def scope_of(entry: MemoryEntry) -> Scope:
    """The scope ``entry`` has: its own, else the default of its type."""
    return entry.scope if entry.scope is not None else DEFAULT_SCOPE[entry.type]


def stored_scope(type_: MemoryType, scope: Scope | None) -> Scope | None:
    """What an entry stores for ``scope``: ``None`` when it is the default of ``type_`` (so a type
    change keeps following the defaults, and stores written before scopes read the same)."""
    return None if scope is None or scope is DEFAULT_SCOPE[type_] else scope


def projects(entry: MemoryEntry, projected: Scope) -> bool:
    """Whether ``entry`` belongs in a projection of ``projected`` memories (``team`` in a
    repository, ``user`` in the user's own store)."""
    return scope_of(entry) is projected
