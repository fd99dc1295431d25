"""Dedupe: connected components over exact and identity keys, one survivor per group chosen by the
reference's preference with a deterministic tie-break, and the absorption accounting
(docs/decisions.md#dedupe, docs/decisions.md#d9)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import msgspec
from msgspec.structs import replace

from domain import evidence
from domain.consolidation.results import ABSORBED_EXACT, ABSORBED_IDENTITY, Absorption, DedupeResult
from domain.enums import MemoryStatus, MemoryType
from domain.freshness import volatility_of
from domain.ids import stable_suffix
from domain.keys import entry_keys, exact_key
from domain.model import EvidenceInput, MemoryEntry
from domain.retention import (
    DEFAULT_TUNING,
    USER_IMPORTANCE_FACTOR,
    Tuning,
    reinforce,
    reinforcement_count,
    retention_start_ms,
    source_priority,
)
from domain.timeutil import parse_iso_ms

if TYPE_CHECKING:
    from domain.caches import Caches

_ENTITY: Final = "entity"
_SUPERSESSION: Final = "supersession"


def _mode(entry: MemoryEntry) -> str:
    return _SUPERSESSION if entry.type is MemoryType.DECISION else _ENTITY


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _preference(a: MemoryEntry, b: MemoryEntry, mode: str) -> int | None:
    """``> 0`` when ``a`` is better, ``< 0`` when ``b`` is, ``0`` on a tie, and ``None`` where the
    reference's answer hinges on an invalid ``createdAt`` (it then keeps the existing entry)."""
    priority = source_priority(a) - source_priority(b)
    if priority:
        return _sign(priority)
    if a.confidence != b.confidence:
        return 1 if a.confidence > b.confidence else -1
    created_a, created_b = parse_iso_ms(a.created_at), parse_iso_ms(b.created_at)
    valid = created_a is not None and created_b is not None
    if mode == _SUPERSESSION:
        if not valid:
            return None
        if created_a != created_b:
            return 1 if (created_a or 0) > (created_b or 0) else -1
        return _sign(len(a.text) - len(b.text))
    length = len(a.text) - len(b.text)
    if abs(length) > 10:
        return _sign(length)
    if not valid:
        return None
    return _sign((created_a or 0) - (created_b or 0))


def choose_better(incoming: MemoryEntry, existing: MemoryEntry, mode: str) -> MemoryEntry:
    """``chooseBetterMemory``: source priority, then confidence, then by ``mode`` — ``"supersession"``
    (decisions): newer ``createdAt``, then longer text; ``"entity"`` (feedback, project, reference):
    longer by more than 10 code points, else newer. Ties, and any comparison of dates where one
    ``createdAt`` is invalid, keep ``existing``."""
    preference = _preference(incoming, existing, mode)
    return incoming if preference is not None and preference > 0 else existing


def _canonical(entry: MemoryEntry) -> tuple[str, str, bytes]:
    """A total order on entries used wherever a choice must not depend on input order."""
    return (exact_key(entry), entry.id, msgspec.json.encode(entry))


def _beats(a: MemoryEntry, b: MemoryEntry) -> bool:
    """``choose_better``'s verdict where it has one, else the deterministic tie-break: smaller exact
    key, then smaller id (by code point), then the canonical encoding."""
    preference = _preference(a, b, _mode(a))
    if preference:
        return preference > 0
    return _canonical(a) < _canonical(b)


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _components(entries: Sequence[MemoryEntry], caches: Caches | None = None) -> list[list[int]]:
    """Index groups of entries that share an exact key, or (project/reference) an identity key;
    groups in order of their first member, members in input order."""
    pairs = [entry_keys(entry, caches) for entry in entries]
    exact = [pair[0] for pair in pairs]
    identity = [pair[1] for pair in pairs]
    if len(set(exact)) == len(exact) and len(set(identity)) == len(identity):
        return [[index] for index in range(len(entries))]  # no key seen twice (the common case)
    groups = _UnionFind(len(entries))
    # exact and identity keys are looked up separately: an exact key never meets an identity key
    for keys_ in (exact, identity):
        first_seen: dict[str, int] = {}
        for index, key in enumerate(keys_):
            seen = first_seen.setdefault(key, index)
            if seen != index:
                groups.union(seen, index)
    members: dict[int, list[int]] = {}
    for index in range(len(entries)):
        members.setdefault(groups.find(index), []).append(index)
    return sorted(members.values(), key=lambda group: group[0])


def _unique_ids(
    entries: Sequence[MemoryEntry], reserved: set[str]
) -> tuple[list[MemoryEntry], list[EvidenceInput]]:
    """Entries that share an id but say different things get distinct ids instead of one of them
    vanishing (docs/decisions.md#s14). Among active entries holding one id, the group with the
    smallest exact key keeps it (unless a superseded entry holds it); every other group gets
    ``<id>_<suffix>`` derived from its exact key, with a ``memory_migrated`` event. Entries sharing
    both id and exact key stay as they are and are merged by dedupe."""
    ids = {entry.id for entry in entries}
    if len(ids) == len(entries) and ids.isdisjoint(reserved):
        return list(entries), []  # every id held once and none by a superseded entry: no rename
    by_id: dict[str, set[str]] = {}
    for entry in entries:
        by_id.setdefault(entry.id, set()).add(exact_key(entry))
    taken = set(reserved) | set(by_id)
    renames: dict[tuple[str, str], str] = {}
    for old_id, keys in by_id.items():
        ordered = sorted(keys)
        movers = ordered if old_id in reserved else ordered[1:]
        for key in movers:
            new_id = f"{old_id}_{stable_suffix(old_id, key)}"
            attempt = 0
            while new_id in taken:
                attempt += 1
                new_id = f"{old_id}_{stable_suffix(old_id, key, attempt)}"
            taken.add(new_id)
            renames[(old_id, key)] = new_id
    if not renames:
        return list(entries), []
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    announced: set[tuple[str, str]] = set()
    for entry in entries:
        slot = (entry.id, exact_key(entry))
        target = renames.get(slot)
        if target is None:
            out.append(entry)
            continue
        renamed = replace(entry, id=target)
        out.append(renamed)
        if slot not in announced:
            announced.add(slot)
            events.append(evidence.renamed(renamed, entry.id))
    return out, events


def _merge_ids(*groups: Iterable[str] | None, exclude: str) -> tuple[str, ...] | None:
    merged: list[str] = []
    for group in groups:
        for item in group or ():
            if item != exclude and item not in merged:
                merged.append(item)
    return tuple(merged) or None


def _never_weaker(
    survivor: MemoryEntry, members: Sequence[MemoryEntry], now_ms: int, tuning: Tuning
) -> MemoryEntry:
    """The survivor of a merge is never weaker than the strongest member of its group at that moment:
    it keeps the most recent retention clock of the group (a duplicate's recent activity is not
    thrown away), the highest user importance, a pin (docs/decisions.md#d20) and the volatility that
    decays slowest (docs/decisions.md#d18: copies of one text differ in volatility only where one was
    set explicitly, and the merge must not shorten the group's half-life). Members share their
    type (identity keys include it), and the survivor has the highest source priority, so with the
    highest count (inherited above) no member can outlast it."""
    latest = max(retention_start_ms(m, now_ms) for m in members)
    if latest > retention_start_ms(survivor, now_ms):
        survivor = replace(survivor, retention_clock=int(latest) if float(latest).is_integer() else latest)
    strongest = max(members, key=lambda m: USER_IMPORTANCE_FACTOR.get(m.user_importance or "normal", 1.0))
    factor = USER_IMPORTANCE_FACTOR.get
    if factor(strongest.user_importance or "normal", 1.0) > factor(survivor.user_importance or "normal", 1.0):
        survivor = replace(survivor, user_importance=strongest.user_importance)
    if not survivor.pinned and any(m.pinned for m in members):
        survivor = replace(survivor, pinned=True)
    factors = tuning.volatility_factors
    slowest = max(members, key=lambda m: factors.get(volatility_of(m), 1.0))
    if factors.get(volatility_of(slowest), 1.0) > factors.get(volatility_of(survivor), 1.0):
        survivor = replace(survivor, volatility=volatility_of(slowest))
    return survivor


def absorb_component(
    members: list[MemoryEntry], now_ms: int, tuning: Tuning
) -> tuple[MemoryEntry, list[Absorption], list[EvidenceInput]]:
    """The survivor of one group of duplicates, the absorptions and their evidence."""
    ordered = sorted(members, key=_canonical)
    winner = ordered[0]
    for candidate in ordered[1:]:
        if _beats(candidate, winner):
            winner = candidate
    losers = [m for m in ordered if m is not winner]

    # The losers' reinforcement moves to the survivor, never beyond the maximum count
    # (docs/decisions.md#d2).
    inherited = min(tuning.reinforcement_cap, max(reinforcement_count(m) for m in members))
    survivor = winner
    if inherited > reinforcement_count(winner):
        survivor = replace(survivor, reinforcement_count=inherited)
    survivor = _never_weaker(survivor, members, now_ms, tuning)
    survivor = replace(
        survivor,
        absorbed_ids=_merge_ids(
            winner.absorbed_ids,
            *((*(m.absorbed_ids or ()), m.id) for m in losers),
            exclude=winner.id,
        ),
    )

    absorptions: list[Absorption] = []
    events: list[EvidenceInput] = []
    survivor_key = exact_key(winner)
    for loser in losers:
        reason = ABSORBED_EXACT if exact_key(loser) == survivor_key else ABSORBED_IDENTITY
        absorptions.append(Absorption(absorbed=loser, survivor_id=winner.id, reason=reason))
        events.append(evidence.absorbed(loser, survivor, reason))
        session = loser.pending_owner_session_id
        if session is None:
            session = winner.pending_owner_session_id
        reinforced = reinforce(survivor, session, now_ms, tuning)
        if reinforcement_count(reinforced) > reinforcement_count(survivor):
            duplicate = "duplicate_identity" if reason == ABSORBED_IDENTITY else "duplicate_exact"
            events.append(evidence.reinforced(reinforced, loser, duplicate))
        survivor = reinforced
    return survivor, absorptions, events


def dedupe(
    entries: Sequence[MemoryEntry], now_ms: int, tuning: Tuning = DEFAULT_TUNING, caches: Caches | None = None
) -> DedupeResult:
    """Merge duplicates among the active entries: entries with equal exact keys always merge, and
    project/reference entries with equal identity keys merge too (transitively). One survivor per
    group, chosen by :func:`choose_better` with a deterministic tie-break, so the surviving exact
    keys and ids do not depend on input order. Every loser is absorbed: its id joins the survivor's
    ``absorbed_ids`` and it gets a ``memory_absorbed`` event; the survivor is reinforced by each
    duplicate as far as the reinforcement guards allow (``memory_reinforced``).

    Superseded entries are passed through untouched and in place. ``kept`` keeps input order, each
    survivor at the position of the first member of its group. ``caches``: the keys of entries seen
    before (docs/decisions.md#d14)."""
    superseded_ids = {e.id for e in entries if e.status is MemoryStatus.SUPERSEDED}
    active_positions = [i for i, e in enumerate(entries) if e.status is not MemoryStatus.SUPERSEDED]
    active, events = _unique_ids([entries[i] for i in active_positions], superseded_ids)

    groups = _components(active, caches)
    if len(groups) == len(active) and not events:
        # no duplicates and no id renamed: every entry stays as it is, in place
        return DedupeResult(kept=tuple(entries), absorptions=(), events=())
    replacement: dict[int, MemoryEntry | None] = {}
    absorptions: list[Absorption] = []
    for group in groups:
        if len(group) == 1:
            replacement[active_positions[group[0]]] = active[group[0]]
            continue
        survivor, absorbed, group_events = absorb_component([active[i] for i in group], now_ms, tuning)
        absorptions.extend(absorbed)
        events.extend(group_events)
        replacement[active_positions[group[0]]] = survivor
        for i in group[1:]:
            replacement[active_positions[i]] = None
    kept: list[MemoryEntry] = []
    for index, entry in enumerate(entries):
        if index in replacement:
            chosen = replacement[index]
            if chosen is not None:
                kept.append(chosen)
        else:
            kept.append(entry)
    return DedupeResult(kept=tuple(kept), absorptions=tuple(absorptions), events=tuple(events))
