"""The values of the Python API (:mod:`adapters.api`): what its methods return (frozen
``msgspec.Struct`` results), the account of decisions made from evidence events, the memory rows of
``list``, and the checks its arguments pass (:class:`InvalidInput`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

import msgspec
from msgspec.structs import force_setattr

from adapters.storage_io import StorageUnavailable
from domain.enums import EventType, Importance, MemoryStatus, MemoryType, Outcome, Scope, Volatility
from domain.freshness import grade, parse_cite, parse_until, verified_ms, volatility_of
from domain.model import Citation, EvidenceInput
from domain.operations import CommandOutcome, context_text
from domain.operations.common import render_block, with_shared
from domain.pinning import pin_budget, pinned_of
from domain.projection.scopes import scope_of
from domain.ranking import sort_by_retention
from domain.retention import dormancy_at, strength
from domain.safety.redaction import REDACTED
from domain.session import render_hot_state
from domain.text import one_line

if TYPE_CHECKING:
    from domain.commands import Remember
    from domain.model import MemoryEntry, SessionState, WorkspaceStore
    from domain.operations import OpResult


class InvalidInput(ValueError):
    """An argument the API cannot act on; the message is one line. Nothing was read or written."""


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


class Injection(msgspec.Struct, frozen=True, rename="camel"):
    """What a host puts into the prompt: ``text`` is the frozen workspace ``block``, then the
    ``hot_state``, separated by a blank line (a host that keeps system entries apart may inject the
    two separately). All empty for a sub-agent session."""

    text: str
    block: str = ""
    hot_state: str = ""


def injection_of(state: SessionState | None, root: str) -> Injection:

    if state is None or state.parent_session_id is not None:
        return Injection("")
    hot = render_hot_state(state, root)
    return Injection(context_text(state, root), block=state.frozen_block or "", hot_state=hot)


class CompactionPrompt(msgspec.Struct, frozen=True):
    """The prompt a host sends when it compacts (asks for a ``Memory candidates:`` section)."""

    text: str


class Explanation(msgspec.Struct, frozen=True):
    """Why each memory is (or is not) in the block, as ``workmem explain`` prints it."""

    text: str


def _plain_codes(value: Decision | Remembered | Edit | Pinning) -> None:
    """Keep an API value's reason codes plain strings: the core gives them as enumeration members
    (equal to their codes), and a caller that prints a result sees ``('prompt_injection',)``."""
    force_setattr(value, "reasons", tuple(str(code) for code in value.reasons))


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one memory in an operation: ``action`` is ``pending``, ``accept``,
    ``promoted``, ``absorbed``, ``superseded``, ``retry``, ``exhausted`` (kept) or ``ignored``,
    ``reject``, ``rejected`` (refused, with ``reasons``). ``text`` is a redacted preview."""

    action: str
    text: str
    type: str | None = None
    reasons: tuple[str, ...] = ()
    rejected: bool = False

    def __post_init__(self) -> None:
        _plain_codes(self)

    def line(self) -> str:
        """The one-line form the CLI prints."""
        if self.rejected:
            return f"{self.action} {','.join(self.reasons) or 'rejected'}: {self.text}".rstrip()
        return f"{self.action} [{self.type or '?'}] {self.text}".rstrip()


class Observed(msgspec.Struct, frozen=True):
    """The result of observing a message, a tool result, a compaction or a session end. ``note``:
    what a message's requests to forget or correct memories did, for the host to hand the agent
    (docs/decisions.md#d19); unset (falsy, and left out of a ``serve`` answer) when there were none."""

    decisions: tuple[Decision, ...] = ()
    note: str | msgspec.UnsetType = msgspec.UNSET
    #: for a message: the memories just-in-time recall adds to this turn's context (unset, and left
    #: out of JSON, when none; docs/decisions.md#d16)
    recalled: str | msgspec.UnsetType = msgspec.UNSET


class Remembered(msgspec.Struct, frozen=True, kw_only=True):
    """``outcome``: ``promoted`` (new), ``absorbed`` (reinforced an existing memory), ``superseded``
    or ``rejected`` (by the safety gate; ``reasons`` says why, ``id`` is ``None``). ``text``: the
    memory as stored (redacted; for ``absorbed``, the memory it reinforced), ``redactions``: how many
    secrets were taken out of it, ``pinned``: whether it is pinned (a pin past the budget leaves
    ``pin_budget_full`` in ``reasons``), ``forced``: kept although the quality gate refused it
    (docs/decisions.md#d20)."""

    outcome: str
    id: str | None
    type: str
    reasons: tuple[str, ...] = ()
    text: str | None = None
    redactions: int = 0
    pinned: bool = False
    forced: bool = False

    def __post_init__(self) -> None:
        _plain_codes(self)


class Edit(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``forget``, ``supersede`` or ``restore``. ``outcome``: ``forgotten``,
    ``superseded`` (``id`` is the new memory), ``restored``, ``unchanged``, ``rejected`` (the new
    text of a supersede was refused, see ``reasons``) or ``unknown`` (no memory with ``target``)."""

    outcome: str
    target: str
    id: str | None = None
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _plain_codes(self)


class Pinning(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``pin`` or ``unpin``: ``outcome`` is ``pinned``, ``unpinned``, ``unchanged``,
    ``rejected`` (``pin_budget_full`` in ``reasons``: the pinned budget has no room) or ``unknown``.
    ``pinned``: every pinned memory after the call, as ``ID: text``; ``budget``: what they take of
    the pinned budget (docs/decisions.md#d20)."""

    outcome: str
    target: str
    reasons: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    budget: str = ""

    def __post_init__(self) -> None:
        _plain_codes(self)


class Memory(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One stored memory as ``workmem list --json`` shows it."""

    id: str
    type: str
    text: str
    source: str
    status: str
    strength: float
    rendered: bool
    reinforcement_count: int
    created_at: str
    updated_at: str
    user_importance: str | None = None
    rationale: str | None = None
    superseded_by: str | None = None
    pinned: bool = False
    #: freshness (docs/decisions.md#d18): fresh, aging, stale or expired, and why
    grade: str | None = None
    volatility: str | None = None
    verified: int | None = None
    valid_until: int | None = None
    stale_reason: str | None = None
    #: ``team``, ``personal`` or ``user`` (docs/decisions.md#d17); ``user`` rows after the
    #: workspace's own may come from the user's own store
    scope: str | None = None


# ---------------------------------------------------------------------------------------------------
# Event → decision
# ---------------------------------------------------------------------------------------------------

_KEPT: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_DETECTED: "pending",
    EventType.EXTRACTION_CANDIDATE_ACCEPTED: "accept",
    EventType.PROMOTION_PROMOTED: "promoted",
    EventType.PROMOTION_ABSORBED_EXACT: "absorbed",
    EventType.PROMOTION_ABSORBED_IDENTITY: "absorbed",
    EventType.PROMOTION_SUPERSEDED: "superseded",
    EventType.MEMORY_SUPERSEDED: "superseded",
    EventType.PROMOTION_RETRY_SCHEDULED: "retry",
    EventType.PROMOTION_RETRY_EXHAUSTED: "exhausted",
}
_REFUSED: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_IGNORED: "ignored",
    EventType.EXTRACTION_CANDIDATE_REJECTED: "reject",
    EventType.PROMOTION_REJECTED_CAPACITY: "rejected",
}


def decisions(events: Iterable[EvidenceInput]) -> tuple[Decision, ...]:
    """A short, redacted account of what happened to each memory (one per relevant event)."""
    found: list[Decision] = []
    for ev in events:
        preview = one_line(ev.text_preview or "")
        kind = ev.memory.type if ev.memory is not None and ev.memory.type else None
        if ev.type in _KEPT and ev.outcome != Outcome.REJECTED:
            found.append(Decision(action=_KEPT[ev.type], text=preview, type=kind))
        elif ev.type in _REFUSED or (ev.type in _KEPT and ev.outcome == Outcome.REJECTED):
            found.append(
                Decision(
                    action=_REFUSED.get(ev.type, "rejected"),
                    text=preview,
                    type=kind,
                    reasons=tuple(ev.reason_codes),
                    rejected=True,
                )
            )
    return tuple(found)


E = TypeVar("E", bound=StrEnum)


def _member(kind: type[E], value: E | str | None, what: str) -> E | None:
    """The member of ``kind`` a caller named (``None`` stays ``None``); else :class:`InvalidInput`."""
    if value is None or isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise InvalidInput(f"unknown {what} {str(value)[:40]!r} (one of: {allowed})") from None


def memory_type_of(value: MemoryType | str | None) -> MemoryType | None:
    """A memory type named by a caller (``None``: the core classifies the text)."""
    return _member(MemoryType, value, "memory type")


def scope_of_value(value: Scope | str | None) -> Scope | None:
    """A scope named by a caller (``None``: the default of the memory's type)."""
    return _member(Scope, value, "scope")


def importance_of(value: Importance | str | None) -> Importance | None:
    return _member(Importance, value, "importance")


def volatility_of_value(value: Volatility | str | None) -> Volatility | None:
    return _member(Volatility, value, "volatility")


def valid_until_of(value: str | int | None) -> int | None:
    """A hard expiry named by a caller: ms, or a date (``YYYY-MM-DD``: valid through that day, UTC)."""

    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    found = parse_until(value) if isinstance(value, str) else None
    if found is None:
        raise InvalidInput(f"valid-until must be a date YYYY-MM-DD, not {str(value)[:40]!r}")
    return found


def citations_of(root: str, specs: Sequence[str]) -> tuple[Citation, ...]:
    """``PATH[:LINE[-LINE]]`` citations of files inside the workspace root (read by the service)."""

    if isinstance(specs, str):
        specs = (specs,)
    found: list[Citation] = []
    for spec in specs:
        cite = parse_cite(spec) if isinstance(spec, str) else None
        if cite is None:
            raise InvalidInput(f"a citation is PATH[:LINE[-LINE]], not {str(spec)[:60]!r}")
        base = Path(root).resolve()
        file = (base / cite.path).resolve()
        if base not in file.parents or not file.is_file():
            raise InvalidInput(f"cited file not found in the workspace: {cite.path[:80]}")
        found.append(msgspec.structs.replace(cite, path=file.relative_to(base).as_posix()))
    return tuple(found)


def checked_session_id(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("a session id must be a non-empty string")
    return value


def checked_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    return value


def storage_error_from(exc: OSError) -> StorageUnavailable:
    reason = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    return StorageUnavailable(" ".join(f"{reason}{where}".split()))


def memory_rows(
    store: WorkspaceStore, now_ms: int, *, include_all: bool, shared: Sequence[MemoryEntry] = ()
) -> tuple[Memory, ...]:
    """The store as ``list`` shows it: active memories strongest first, then (with ``include_all``)
    the others, then the user's own memories (``shared``, scope ``user``) the block shows beside
    them, strongest first — each once: the workspace's own copy wins, as in the block
    (docs/decisions.md#d17). ``store`` should already be normalised (in memory)."""

    dormancy = dormancy_at(store, now_ms)
    merged = with_shared(store, shared)
    # what the next session start shows: a near-duplicate once (docs/decisions.md#d22)
    rendered = {e.id for e in render_block(merged, now_ms).rendered}
    active = [e for e in store.entries if e.status is MemoryStatus.ACTIVE]
    ordered: list[MemoryEntry] = sort_by_retention(active, now_ms, dormancy)
    if include_all:
        ordered += [e for e in store.entries if e.status is not MemoryStatus.ACTIVE]
    ordered += sort_by_retention(merged.entries[len(store.entries) :], now_ms, dormancy)
    return tuple(
        Memory(
            id=entry.id,
            type=entry.type.value,
            text=entry.text,
            source=entry.source.value,
            status=entry.status.value,
            strength=strength(entry, now_ms, dormancy),  # full precision: rounding is for people
            rendered=entry.id in rendered,
            reinforcement_count=entry.reinforcement_count or 0,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            user_importance=entry.user_importance.value if entry.user_importance is not None else None,
            rationale=entry.rationale or None,
            superseded_by=entry.superseded_by or None,
            pinned=entry.pinned,
            grade=grade(entry, now_ms).value,
            volatility=volatility_of(entry).value,
            verified=None if (at := verified_ms(entry)) is None else int(at),
            valid_until=None if entry.valid_until is None else int(entry.valid_until),
            stale_reason=entry.stale_reason,
            scope=scope_of(entry).value,
        )
        for entry in ordered
    )


def remembered_of(result: OpResult | None, command: Remember) -> Remembered:
    """What ``remember`` stored, as the caller sees it (:class:`Remembered`)."""

    assert result is not None  # a workspace command always runs
    rejected = result.outcome is CommandOutcome.REJECTED
    stored = None if rejected else next((e for e in result.store.entries if e.id == result.memory_id), None)
    text = stored.text if stored is not None else None
    return Remembered(
        outcome=result.outcome.value if result.outcome is not None else "unknown",
        id=None if rejected else result.memory_id,
        type=(stored.type if stored is not None else command.type or MemoryType.FEEDBACK).value,
        reasons=result.reasons,
        text=text,
        redactions=max(0, text.count(REDACTED) - command.text.count(REDACTED)) if text is not None else 0,
        pinned=stored is not None and stored.pinned,
        forced=any(e.type is EventType.MEMORY_GATE_OVERRIDDEN for e in result.events),
    )


def pinning_of(result: OpResult | None, target: str) -> Pinning:
    """The :class:`Pinning` of a ``pin`` or ``unpin`` result."""

    assert result is not None  # a workspace command always runs
    return Pinning(
        outcome=result.outcome.value if result.outcome is not None else "unknown",
        target=target,
        reasons=result.reasons,
        pinned=tuple(f"{e.id}: {e.text}" for e in pinned_of(result.store)),
        budget=pin_budget(result.store).line(),
    )
