"""The read commands of search (docs/decisions.md#d16): ``search`` and ``show``, through the one
service like every other command, and what they answer.

``Search`` may carry what the shell's index keeps of the memories holding its terms (``found``) and
the store ``revision`` it was built from: the core uses them only when the revision and the
number of memories agree with the store it reads, else it scans every memory and says the index was
stale (the service's updater then builds it again). Either way the answer is the same.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec.structs import replace

from domain.emitted import Emitted
from domain.enums import EventType, MemoryType, Outcome, Phase
from domain.evidence.build import event
from domain.ids import Digest, hash16
from domain.model import MemoryEntry, WorkspaceStore
from domain.operations.values import OpResult, Snapshot, unchanged
from domain.render import age_days
from domain.retention import dormancy_at, strength
from domain.search import shortids
from domain.search.rank import DEFAULT_LIMIT, MIN_COVERAGE, Holders, cites, search
from domain.search.recall import MIN_RECALL_COVERAGE
from domain.search.values import Reinforcement, SearchAnswer, ShowAnswer
from domain.timeutil import iso_from_ms, timestamp_ms

#: the reason code of an answer computed without a usable index
STALE_INDEX: Final = "index_stale"


class Search(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="search"):
    """Find memories by their words. ``include_all``: superseded and forgotten ones too."""

    query: str
    type: MemoryType | None = None
    limit: int = DEFAULT_LIMIT
    include_all: bool = False
    #: set by the service from the index: what it keeps of the memories holding a query term
    #: (:class:`~domain.search.rank.Holders`) and the store revision it describes
    found: Holders | None = None
    revision: int | None = None
    #: milliseconds the index lookup took (for the evidence event)
    index_ms: float | None = None
    #: the text is a prompt of the session being run: recall what matches it (domain.search.recall)
    recall: bool = False


class Show(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="show"):
    """One memory in full, by its id or its short id (``R12``)."""

    memory_id: str


#: the commands that only read (and leave an evidence event)
ReadCommand = Search | Show


class Strengths:
    """A memory's current strength, worked out when first asked for (a search asks only for the
    matches it may show, not for every candidate)."""

    def __init__(self, store: WorkspaceStore, now_ms: int, snap: Snapshot) -> None:
        self._now_ms = now_ms
        self._dormancy = dormancy_at(store, now_ms, snap.tuning)
        self._tuning = snap.tuning
        self._known: dict[str, float] = {}

    def __call__(self, entry: MemoryEntry) -> float:
        found = self._known.get(entry.id)
        if found is None:
            found = self._known[entry.id] = strength(entry, self._now_ms, self._dormancy, self._tuning)
        return found


def index_usable(store: WorkspaceStore, command: Search) -> bool:
    """Whether the index the command carries describes ``store`` (same revision, same count)."""
    return (
        command.found is not None
        and command.revision == (store.revision or 0)
        and command.found.corpus.documents == len(store.entries)
    )


def run_search(snap: Snapshot, command: Search, now_ms: int) -> OpResult:
    store = snap.store
    usable = index_usable(store, command)
    answer = search(
        store.entries,
        command.query,
        now_ms,
        shortids.numbering(store),
        Strengths(store, now_ms, snap),
        type_=command.type,
        limit=command.limit,
        include_all=command.include_all,
        found=command.found if usable else None,
        indexed=usable,
        min_coverage=MIN_RECALL_COVERAGE if command.recall else MIN_COVERAGE,
    )
    if command.recall:
        from domain.search.recall import recall

        return recall(snap, answer)
    reasons = (answer.verdict.value, answer.mode.value) + (() if usable else (STALE_INDEX,))
    details: dict[str, str | int | float | bool | None] = {
        "queryHash": Digest(answer.query_hash),
        "terms": len(answer.terms),
        "hits": len(answer.hits),
        "matched": answer.matched,
        "hidden": answer.hidden,
        "belowThreshold": answer.below_threshold,
        "searched": answer.searched,
        "limit": answer.limit,
        "all": command.include_all,
        "indexed": usable,
    }
    if command.type is not None:
        details["type"] = command.type  # an enum: kept without redaction
    if command.index_ms is not None:
        details["indexMs"] = round(command.index_ms, 3)
    told = event(EventType.SEARCH_ANSWERED, Phase.SEARCH, Outcome.ANSWERED, reasons, details=details)
    result = unchanged(snap)
    return replace(result, answer=answer).emitting(Emitted(events=(told,)))


def _chain(store: WorkspaceStore, entry: MemoryEntry) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ids this memory replaced (oldest first) and the ids that replaced it (newest last)."""
    by_id = {e.id: e for e in store.entries}
    replaced: dict[str, list[str]] = {}
    for e in store.entries:
        if e.superseded_by:
            replaced.setdefault(e.superseded_by, []).append(e.id)
    back: list[str] = []
    todo = [*replaced.get(entry.id, ()), *(entry.supersedes or ())]
    while todo and len(back) < 50:
        old = todo.pop(0)
        if old in back or old == entry.id:
            continue
        back.append(old)
        found = by_id.get(old)
        todo.extend([*replaced.get(old, ()), *((found.supersedes or ()) if found is not None else ())])
    forward: list[str] = []
    at = entry
    while at.superseded_by and at.superseded_by not in forward and len(forward) < 50:
        forward.append(at.superseded_by)
        nxt = by_id.get(at.superseded_by)
        if nxt is None:
            break
        at = nxt
    return tuple(reversed(back)), tuple(forward)


def run_show(snap: Snapshot, command: Show, now_ms: int) -> OpResult:
    store = snap.store
    numbers = shortids.numbering(store)
    memory_id = shortids.resolve(store, command.memory_id, numbers)
    entry = next((e for e in store.entries if e.id == memory_id), None)
    if entry is None:
        return replace(unchanged(snap), answer=ShowAnswer(found=False, query=command.memory_id))
    from domain.render import render_workspace_block

    back, forward = _chain(store, entry)
    in_block = any(e.id == entry.id for e in render_workspace_block(store, now_ms, snap.tuning).rendered)
    answer = ShowAnswer(
        found=True,
        query=command.memory_id,
        id=entry.id,
        short_id=shortids.label(numbers[entry.id]),
        type=entry.type.value,
        status=entry.status.value,
        text=entry.text,
        rationale=entry.rationale,
        source=entry.source.value,
        scope=entry.scope.value if entry.scope is not None else None,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        strength=round(Strengths(store, now_ms, snap)(entry), 4),
        age_days=age_days(entry, now_ms),
        in_block=in_block,
        supersedes=back,
        superseded_by=forward,
        reinforcement=Reinforcement(
            count=entry.reinforcement_count or 0,
            last_at=_iso(entry.last_reinforced_at),
            last_session_hash=hash16(entry.last_reinforced_session_id)
            if entry.last_reinforced_session_id
            else None,
        ),
        cites=cites(entry.text),
        explain=f"workmem explain {entry.id}; workmem trace {entry.id}",
    )
    return replace(unchanged(snap), answer=answer)


def _iso(value: int | float | None) -> str | None:
    stamp = timestamp_ms(value) if value is not None else None
    return iso_from_ms(stamp) if stamp is not None else None


def run_read(snap: Snapshot, command: Search | Show, now_ms: int) -> OpResult:
    """What a read command answers (:func:`run_search`, :func:`run_show`)."""
    if isinstance(command, Search):
        return run_search(snap, command, now_ms)
    return run_show(snap, command, now_ms)


def answered(result: OpResult | None) -> SearchAnswer | None:
    answer = result.answer if result is not None else None
    return answer if isinstance(answer, SearchAnswer) else None
