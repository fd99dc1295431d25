"""The speed state never changes a result (docs/decisions.md#d14, docs/performance.md "Simulation").

Normalisation files stores it settled (outputs that a second pass would leave as they are) in the
caller's :class:`~domain.caches.Caches`, and derives that a store re-stamped or reinforced in place
from a settled one is settled too; promotion files key indexes per entries tuple; the retention sort
files the static parts of each entry and its last ranking. These properties run the same step with a
warm cache — one that earlier steps filled — and with a fresh one, and require the same answer: for
normalisation and for every operation under random host traffic.
"""

from __future__ import annotations

from typing import Final

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain import consolidation
from domain.caches import Caches
from domain.commands import Command, footprint, handle
from domain.consolidation import NormalizeResult, normalize_store
from domain.enums import MemoryStatus
from domain.key_index import build_index, stored_index
from domain.keys import exact_key, key_hash
from domain.limits import DAY_MS
from domain.model import MemoryEntry, WorkspaceStore
from domain.operations import OpResult, stamp_rendered
from domain.retention import DEFAULT_TUNING, reinforce
from domain.timeutil import iso_from_ms
from property_tests.store_strategies import NOW_MS, big_stores, stores
from property_tests.test_operations_properties import runs
from tests.support.world import Op, World


def _settled(store: WorkspaceStore, caches: Caches) -> bool:
    return consolidation.is_settled(store, DEFAULT_TUNING, caches)


def _assert_fixed_point(
    store: WorkspaceStore, now_ms: int, archive: dict[str, MemoryEntry], warm: Caches
) -> None:
    """``store`` is filed settled in ``warm``: normalising it with a fresh cache, now or later,
    changes nothing, as it does with the warm one."""
    for at in (now_ms, now_ms + 40 * DAY_MS):
        hot = normalize_store(store, at, archive=archive, caches=warm)
        cold = normalize_store(store, at, archive=archive, caches=Caches())
        assert _quiet(hot) and _quiet(cold)
        assert cold.store == store and hot.store == store


def _quiet(result: NormalizeResult) -> bool:
    return (
        result.events == ()
        and result.audit == ()
        and result.absorptions == ()
        and result.archived == ()
        and result.revived == ()
    )


def _reinforced(store: WorkspaceStore, count: int, now_ms: int) -> WorkspaceStore:
    """``store`` with its first ``count`` active entries reinforced in place (same id and text)."""
    entries = list(store.entries)
    positions = [i for i, e in enumerate(entries) if e.status is not MemoryStatus.SUPERSEDED][:count]
    for i in positions:
        entries[i] = reinforce(entries[i], "ses_memo", now_ms)
    return replace(store, entries=tuple(entries))


@given(stores(), st.integers(0, 3), st.booleans())
def test_a_settled_output_and_what_is_derived_from_it_are_fixed_points(
    store: WorkspaceStore, changed: int, stamp: bool
) -> None:
    warm = Caches()
    first = normalize_store(store, NOW_MS, caches=warm)
    out = first.store
    was_settled = _settled(out, warm)
    if changed:
        active = [e for e in out.entries if e.status is not MemoryStatus.SUPERSEDED]
        out = (
            stamp_rendered(out, active[:changed], NOW_MS + 1)
            if stamp
            else _reinforced(out, changed, NOW_MS + 1)
        )
    if was_settled:
        # re-stamping or reinforcing in place keeps every entry clean: the cache derives it settled
        assert _settled(out, warm)
    if _settled(out, warm):
        _assert_fixed_point(out, NOW_MS + 1, {}, warm)
        # the index derived for the changed entries is the one built from scratch
        assert stored_index(out.entries, warm) == build_index(out.entries)
    # with a warm cache or a fresh one, the first pass is the same
    assert normalize_store(store, NOW_MS, caches=Caches()) == first
    assert normalize_store(store, NOW_MS, caches=warm) == first


#: How one entry of a settled store is replaced in place: the first two leave the store settled (the
#: cache derives it); the others change what normalisation reads, so it must not be derived.
IN_PLACE: Final = ("stamp", "reinforce", "twin", "secret", "superseded", "clock", "id", "long")


def _in_place(store: WorkspaceStore, position: int, kind: str, now_ms: int) -> WorkspaceStore:
    entries = list(store.entries)
    entry, other = entries[position], entries[(position + 1) % len(entries)]
    changes = {
        "stamp": lambda: replace(entry, last_rendered_at=now_ms),
        "reinforce": lambda: reinforce(entry, "ses_memo", now_ms),
        "twin": lambda: replace(entry, type=other.type, text=other.text.upper()),
        "secret": lambda: replace(entry, text=entry.text + " password: hunter2"),
        "superseded": lambda: replace(entry, status=MemoryStatus.SUPERSEDED),
        "clock": lambda: replace(entry, retention_clock=-1),
        "id": lambda: replace(entry, id=other.id),
        "long": lambda: replace(entry, text=entry.text + " and more" * 40),
    }
    entries[position] = changes[kind]()
    return replace(store, entries=tuple(entries))


@given(stores(), st.data())
def test_a_store_changed_in_place_normalises_the_same_with_a_warm_cache(
    store: WorkspaceStore, data: st.DataObject
) -> None:
    """The cache derives a store changed in place from the last settled one only when that is sound:
    whatever the change, normalising with the warm cache gives what a fresh cache gives, and the key
    index it finds is the one built from scratch."""
    warm = Caches()
    base = normalize_store(normalize_store(store, NOW_MS, caches=warm).store, NOW_MS, caches=warm).store
    if not base.entries:
        return
    stored_index(base.entries, warm)
    _settled(base, warm)
    position = data.draw(st.integers(0, len(base.entries) - 1))
    changed = _in_place(base, position, data.draw(st.sampled_from(IN_PLACE)), NOW_MS + DAY_MS)
    assert stored_index(changed.entries, warm) == build_index(changed.entries)
    later = NOW_MS + DAY_MS
    assert normalize_store(changed, later, caches=warm) == normalize_store(changed, later, caches=Caches())


@given(big_stores(), st.data())
def test_settled_outputs_with_an_archive(store: WorkspaceStore, data: st.DataObject) -> None:
    """Archiving, then a new memory and a duplicate of an archived one: whatever the cache files as
    settled is a fixed point, and every step run with a fresh cache equals the warm one."""
    warm = Caches()
    first = normalize_store(store, NOW_MS, caches=warm)
    archive = {key_hash(exact_key(e)): e for e in first.archived}
    later = NOW_MS + DAY_MS
    fresh = replace(
        first.store.entries[0],
        id="mem_new",
        text="A brand new preference about tabs",
        created_at=iso_from_ms(later),
    )
    steps: list[WorkspaceStore] = [replace(first.store, entries=(*first.store.entries, fresh))]
    if first.archived:
        target = data.draw(st.sampled_from(first.archived))
        twin = replace(target, id="mem_twin", text=target.text.upper() + "!", created_at=iso_from_ms(later))
        steps.append(replace(first.store, entries=(*first.store.entries, twin)))
    for incoming in steps:
        hot = normalize_store(incoming, later, archive=archive, caches=warm)
        if _settled(hot.store, warm):
            _assert_fixed_point(hot.store, later, archive, warm)
        assert normalize_store(incoming, later, archive=archive, caches=Caches()) == hot


class _WarmAndCold(World):
    """Runs every command twice: on a snapshot with a fresh cache, then as the workspace runs it, with
    the cache it has kept since its first command; the two results must be equal."""

    def execute(self, command: Command, now_ms: int) -> OpResult | None:
        reads = footprint(command)
        cold = None
        if reads is not None:
            cold = handle(replace(self.snapshot(reads.session_id), caches=Caches()), command, now_ms)
        warm = super().execute(command, now_ms)
        assert warm == cold
        return warm


@given(runs())
def test_every_operation_gives_the_same_result_with_a_warm_cache_and_a_fresh_one(ops: list[Op]) -> None:
    world = _WarmAndCold(NOW_MS)
    for op in ops:
        world.apply(op)
