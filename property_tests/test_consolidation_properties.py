"""Properties of dedupe and normalisation (docs/decisions.md#dedupe,
docs/decisions.md#normalisation-and-migrations; docs/decisions.md#d2, docs/decisions.md#d6,
docs/decisions.md#d9)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain.consolidation import NormalizeResult, dedupe, normalize_store
from domain.enums import EventType, MemoryStatus, MemoryType
from domain.keys import exact_key, identity_key, key_hash
from domain.limits import LongTermLimits
from domain.model import MemoryEntry, WorkspaceStore
from domain.retention import REINFORCEMENT_MAX_COUNT, strength
from domain.timeutil import iso_from_ms
from property_tests.store_strategies import NOW_MS, big_stores, entry_lists, stores

ENTITY = (MemoryType.PROJECT, MemoryType.REFERENCE)


def _active(store: WorkspaceStore) -> list[MemoryEntry]:
    return [e for e in store.entries if e.status is not MemoryStatus.SUPERSEDED]


def _named(result: NormalizeResult, event_type: EventType) -> set[str]:
    return {
        e.memory.memory_id
        for e in result.events
        if e.type is event_type and e.memory is not None and e.memory.memory_id is not None
    }


def _renames(result: NormalizeResult) -> dict[str, str]:
    """previous id -> new id, from the duplicate-id events (docs/decisions.md#s14)."""
    out: dict[str, str] = {}
    for e in result.events:
        if e.type is EventType.MEMORY_MIGRATED and e.memory is not None and e.memory.memory_id:
            previous = e.details.get("previousId")
            if isinstance(previous, str):
                out.setdefault(previous, e.memory.memory_id)
    return out


@given(stores())
def test_normalisation_is_idempotent(store: WorkspaceStore) -> None:
    first = normalize_store(store, NOW_MS)
    second = normalize_store(first.store, NOW_MS)
    assert second.store == first.store
    assert second.events == () and second.audit == () and second.absorptions == ()
    assert second.archived == () and second.revived == ()


@given(stores())
def test_no_duplicates_survive(store: WorkspaceStore) -> None:
    active = _active(normalize_store(store, NOW_MS).store)
    exact = Counter(exact_key(e) for e in active)
    assert max(exact.values(), default=0) <= 1
    identity = Counter(identity_key(e) for e in active if e.type in ENTITY)
    assert max(identity.values(), default=0) <= 1
    ids = Counter(e.id for e in active)
    assert max(ids.values(), default=0) <= 1


@given(stores())
def test_conservation(store: WorkspaceStore) -> None:
    """Every active input entry is kept, absorbed into a kept (or archived) entry, archived or
    superseded, and everything that is not kept has an event naming it."""
    result = normalize_store(store, NOW_MS)
    renames = _renames(result)
    after = {e.id: e for e in result.store.entries}
    kept_ids = {e.id for e in _active(result.store)}
    archived_ids = {e.id for e in result.archived}
    absorbed = {a.absorbed.id: a.survivor_id for a in result.absorptions}
    absorbed_events = _named(result, EventType.MEMORY_ABSORBED)
    superseded_events = _named(result, EventType.MEMORY_SUPERSEDED)
    archived_events = _named(result, EventType.MEMORY_ARCHIVED)
    for entry in _active(store):
        ids = {entry.id, renames.get(entry.id, entry.id)}
        if ids & kept_ids:
            continue
        if any(i in absorbed for i in ids):
            survivor = next(absorbed[i] for i in ids if i in absorbed)
            assert survivor in kept_ids or survivor in archived_ids
            assert ids & absorbed_events
            continue
        if ids & archived_ids:
            assert ids & archived_events
            continue
        now = next(after[i] for i in ids if i in after)
        assert now.status is MemoryStatus.SUPERSEDED
        assert ids & superseded_events


@given(stores())
def test_caps_never_reduce_the_stored_active_count(store: WorkspaceStore) -> None:
    """Caps never delete (docs/decisions.md#d2, docs/decisions.md#s2): with at most 500 actives, only dedupe
    and the migrations reduce the active count."""
    result = normalize_store(store, NOW_MS)
    before = len(_active(store))
    migrated = sum(1 for e in result.events if e.type is EventType.MEMORY_SUPERSEDED)
    assert len(_active(result.store)) == before - len(result.absorptions) - migrated
    assert result.archived == ()


@given(stores(), st.randoms(use_true_random=False))
def test_survivors_do_not_depend_on_input_order(store: WorkspaceStore, rnd: object) -> None:
    import random

    assert isinstance(rnd, random.Random)
    shuffled = list(store.entries)
    rnd.shuffle(shuffled)
    a = _active(normalize_store(store, NOW_MS).store)
    b = _active(normalize_store(replace(store, entries=tuple(shuffled)), NOW_MS).store)
    assert {exact_key(e) for e in a} == {exact_key(e) for e in b}
    assert {e.id for e in a} == {e.id for e in b}


@given(entry_lists(status=MemoryStatus.ACTIVE), st.permutations(range(32)))
def test_dedupe_survivor_set_is_order_independent(entries: list[MemoryEntry], order: list[int]) -> None:
    permuted = [entries[i] for i in order if i < len(entries)]
    a, b = dedupe(entries, NOW_MS), dedupe(permuted, NOW_MS)
    assert sorted(e.id for e in a.kept) == sorted(e.id for e in b.kept)
    assert {exact_key(e) for e in a.kept} == {exact_key(e) for e in b.kept}


@given(stores())
def test_reinforcement_never_exceeds_six(store: WorkspaceStore) -> None:
    result = normalize_store(store, NOW_MS)
    for entry in result.store.entries:
        assert (entry.reinforcement_count or 0) <= REINFORCEMENT_MAX_COUNT


@given(stores())
def test_normalisation_invariants(store: WorkspaceStore) -> None:
    """No entry is created; a superseded entry is never revived and stays in order after the
    actives; explicit/manual never superseded; every clock finite; texts within 260."""
    result = normalize_store(store, NOW_MS)
    entries = result.store.entries
    statuses = [e.status is MemoryStatus.SUPERSEDED for e in entries]
    assert statuses == sorted(statuses)
    before_superseded = [e.id for e in store.entries if e.status is MemoryStatus.SUPERSEDED]
    after_superseded = [e.id for e in entries if e.status is MemoryStatus.SUPERSEDED]
    remaining = iter(after_superseded)
    assert all(any(i == j for j in remaining) for i in before_superseded)  # an ordered subsequence
    assert len(entries) <= len(store.entries)
    for entry in entries:
        assert isinstance(entry.retention_clock, int | float)
        assert entry.retention_clock == entry.retention_clock and entry.retention_clock >= 0
    for entry in _active(result.store):
        assert len(entry.text) <= LongTermLimits.MAX_ENTRY_TEXT_CHARS
    superseded_now = {e.id for e in entries if e.status is MemoryStatus.SUPERSEDED} - set(before_superseded)
    assert all(e.source.value == "compaction" for e in entries if e.id in superseded_now)
    assert result.store.migrations[: len(store.migrations)] == store.migrations
    assert len(set(result.store.migrations)) == len(result.store.migrations)
    assert result.store.last_activity_at == store.last_activity_at


@given(big_stores(), st.data())
def test_archive_above_the_limit_and_revival(store: WorkspaceStore, data: st.DataObject) -> None:
    """The archive (docs/decisions.md#d2): above 500 actives the weakest eligible entries move out (never
    below 500), each with a marker and an event. A later duplicate of an archived memory revives it: the two
    merge and the marker goes."""
    first = normalize_store(store, NOW_MS)
    active = len(_active(first.store))
    assert active >= LongTermLimits.MAX_STORED_ACTIVE
    assert active + len(first.archived) == len(store.entries)
    assert {m.memory_id for m in first.store.archived} == {e.id for e in first.archived}
    assert _named(first, EventType.MEMORY_ARCHIVED) == {e.id for e in first.archived}
    assert first.archived  # big_stores() has more than enough weak entries to archive

    target = data.draw(st.sampled_from(first.archived))
    archive = {key_hash(exact_key(e)): e for e in first.archived}
    later = NOW_MS + 86_400_000
    duplicate = replace(
        target, id="mem_duplicate", text=target.text.upper() + "!", created_at=iso_from_ms(later)
    )
    incoming = replace(first.store, entries=(*first.store.entries, duplicate))
    second = normalize_store(incoming, later, archive=archive)
    assert [e.id for e in second.revived] == [target.id]
    assert _named(second, EventType.MEMORY_REVIVED) == {target.id}
    assert target.id not in {m.memory_id for m in second.store.archived} - {e.id for e in second.archived}
    active_after = _active(second.store)
    assert Counter(exact_key(e) for e in active_after).most_common(1)[0][1] == 1
    survivors = [e for e in active_after if e.id in (target.id, "mem_duplicate")]
    if survivors:
        (survivor,) = survivors
        other = "mem_duplicate" if survivor.id == target.id else target.id
        assert other in (survivor.absorbed_ids or ())


@given(entry_lists(status=MemoryStatus.ACTIVE, duplicate_ids=False, min_size=1))
def test_a_merged_survivor_is_never_weaker_than_any_member(entries: list[MemoryEntry]) -> None:
    """The survivor of a merge keeps the group's freshest clock, highest count and highest
    importance, so at the moment of the merge it is at least as strong as each member
    (docs/decisions.md#dedupe)."""
    result = dedupe(entries, NOW_MS)
    originals = {e.id: e for e in entries}
    for survivor in result.kept:
        members = [a.absorbed for a in result.absorptions if a.survivor_id == survivor.id]
        if not members:
            continue
        if survivor.id in originals and exact_key(originals[survivor.id]) == exact_key(survivor):
            members.append(originals[survivor.id])
        floor = max(strength(m, NOW_MS) for m in members)
        assert strength(survivor, NOW_MS) >= floor * (1 - 1e-9)
