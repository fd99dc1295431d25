"""The speed memos of normalisation never change a result (docs/performance.md, "Simulation").

Normalisation remembers stores it settled (outputs that a second pass would leave as they are) and
carries that through re-stamping ``lastRenderedAt``; promotion remembers key indexes per entries
tuple. These properties run the same step with the memos and, after emptying every memo, cold, and
require the same answer."""

from __future__ import annotations

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain import consolidation
from domain.consolidation import NormalizeResult, normalize_store
from domain.keys import exact_key, key_hash
from domain.model import DAY_MS, MemoryEntry, MemoryStatus, WorkspaceStore
from domain.operations import _stamp_rendered
from domain.retention import DEFAULT_TUNING
from domain.timeutil import iso_from_ms
from property_tests.memos import forget_memos
from property_tests.store_strategies import NOW_MS, big_stores, stores


def _settled(store: WorkspaceStore) -> bool:
    return consolidation._is_settled(store, DEFAULT_TUNING)


def _assert_fixed_point(store: WorkspaceStore, now_ms: int, archive: dict[str, MemoryEntry]) -> None:
    """``store`` is recorded settled: normalising it cold, now or later, changes nothing."""
    for at in (now_ms, now_ms + 40 * DAY_MS):
        warm = normalize_store(store, at, archive=archive)
        forget_memos()
        cold = normalize_store(store, at, archive=archive)
        assert _quiet(warm) and _quiet(cold)
        assert cold.store == store and warm.store == store


def _quiet(result: NormalizeResult) -> bool:
    return (
        result.events == ()
        and result.audit == ()
        and result.absorptions == ()
        and result.archived == ()
        and result.revived == ()
    )


@given(stores(), st.integers(0, 3))
def test_a_recorded_settled_output_is_a_fixed_point(store: WorkspaceStore, stamped: int) -> None:
    forget_memos()
    first = normalize_store(store, NOW_MS)
    out = first.store
    if stamped:
        active = [e for e in out.entries if e.status is not MemoryStatus.SUPERSEDED]
        out = _stamp_rendered(out, active[:stamped], NOW_MS + 1)
    if _settled(out):
        _assert_fixed_point(out, NOW_MS + 1, {})
    # with or without the memo, the first pass is what a cold pass gives
    forget_memos()
    assert normalize_store(store, NOW_MS) == first


@given(big_stores(), st.data())
def test_settled_outputs_with_an_archive(store: WorkspaceStore, data: st.DataObject) -> None:
    """Archiving, then a new memory and a duplicate of an archived one: whatever the memo records as
    settled is a fixed point, and the cold run of every step equals the warm one."""
    forget_memos()
    first = normalize_store(store, NOW_MS)
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
        warm = normalize_store(incoming, later, archive=archive)
        if _settled(warm.store):
            _assert_fixed_point(warm.store, later, archive)
        forget_memos()
        assert normalize_store(incoming, later, archive=archive) == warm
