"""What one host's hooks do differently from the others' (docs/hosts.md): the value each host adapter
hands to :mod:`adapters.hosts.hook_dialect`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from domain.model import SessionState


class Dialect(NamedTuple):
    """What one host does differently.

    ``summary(payload)`` is the PostCompact summary text (``""`` when none could be read);
    ``bash_exit_code(payload, tool_use_id)`` a PostToolUse exit code the payload lacks (``None``:
    unknown); ``pre_compact(session, root)`` what PreCompact prints (``None``: nothing, the host
    cannot use it)."""

    host: str
    known_events: frozenset[str]
    summary: Callable[[Mapping[str, Any]], str]
    pre_compact: Callable[[SessionState | None, str], str] | None = None
    bash_exit_code: Callable[[Mapping[str, Any], str | None], int | None] | None = None
