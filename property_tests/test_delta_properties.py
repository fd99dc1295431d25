"""Normalising a store made from a settled one looks only at what changed, and gives what the full
pass gives (docs/performance.md, "Simulation").

:func:`domain.consolidation.normalize_store` with ``base=`` takes a shortcut when ``base`` is
settled: only the replaced and appended entries are redacted, checked against the archive markers,
renamed and merged. These properties build such a store from a settled one — new memories,
reinforced ones, exact and identity duplicates of stored memories, duplicates of archived ones,
repeated ids, credentials, superseded entries — and require the shortcut to equal a cold full pass,
events, absorptions, archive and revivals included. A stored-active limit below the store's size
makes the archive rule act too. The shortcut runs with the cache the base was settled in; the full
pass with a fresh one (docs/decisions.md#d14).
"""

from __future__ import annotations

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain import consolidation
from domain.caches import Caches
from domain.consolidation import NormalizeResult, normalize_store
from domain.key_index import build_index
from domain.keys import exact_key, key_hash
from domain.model import DAY_MS, MemoryEntry, MemoryStatus, MemoryType, WorkspaceStore
from domain.retention import Tuning, reinforce
from domain.timeutil import iso_from_ms
from property_tests.store_strategies import NOW_MS, entries, stores


def _settled_base(
    store: WorkspaceStore, limit: int, caches: Caches
) -> tuple[WorkspaceStore, dict[str, MemoryEntry], Tuning]:
    """``store`` normalised twice under a stored-active limit (the second pass settles what the first
    left), with ``caches``, and the archive its passes produced."""
    tuning = Tuning(max_stored_active=limit)
    first = normalize_store(store, NOW_MS, tuning=tuning, caches=caches)
    archive = {key_hash(exact_key(e)): e for e in first.archived}
    second = normalize_store(first.store, NOW_MS, archive=archive, tuning=tuning, caches=caches)
    archive.update((key_hash(exact_key(e)), e) for e in second.archived)
    return second.store, archive, tuning


@st.composite
def _changes(
    draw: st.DrawFn, base: WorkspaceStore, archive: dict[str, MemoryEntry], at: int
) -> tuple[MemoryEntry, ...]:
    """A store's entries after a promotion-like step: some stored entries replaced (reinforced, or
    re-stamped), then new ones appended — fresh memories and duplicates of stored or archived ones."""
    stored = list(base.entries)
    active = [i for i, e in enumerate(stored) if e.status is not MemoryStatus.SUPERSEDED]
    for i in draw(st.lists(st.sampled_from(active), max_size=3, unique=True)) if active else []:
        if draw(st.booleans()):
            stored[i] = reinforce(stored[i], "ses_delta", at)
        else:
            stored[i] = replace(stored[i], last_rendered_at=at)
    appended: list[MemoryEntry] = []
    kinds = draw(st.lists(st.integers(0, 5), max_size=4))
    twin_of_archived: bool = bool(archive) and draw(st.booleans())
    if twin_of_archived:
        kinds.insert(draw(st.integers(0, len(kinds))), 4)
    for kind in kinds:
        if kind <= 1 or not active:
            fresh = draw(entries(at))
        elif kind == 2:  # the same memory in other capitals: an exact duplicate
            twin = stored[draw(st.sampled_from(active))]
            fresh = replace(twin, id=f"dup_{len(appended)}", text=twin.text.upper() + "!")
        elif kind == 3:  # the same path or URL in other words: an identity duplicate
            twin = stored[draw(st.sampled_from(active))]
            fresh = replace(twin, id=f"ident_{len(appended)}", text=f"{twin.text} (see the notes)")
        elif kind == 4 and archive:  # brings an archived memory back
            gone = draw(st.sampled_from(sorted(archive.values(), key=lambda e: e.id)))
            fresh = replace(gone, id=f"back_{len(appended)}", text=gone.text.lower() + ".")
        else:  # a repeated id, or a superseded entry: the shortcut declines, the full pass runs
            twin = stored[draw(st.sampled_from(active))]
            other = draw(entries(at, types=(MemoryType.PROJECT,)))
            fresh = replace(other, id=twin.id) if draw(st.booleans()) else other
        appended.append(replace(fresh, created_at=iso_from_ms(at)))
    return (*stored, *appended)


def _same(quick: NormalizeResult, full: NormalizeResult) -> None:
    assert quick.store == full.store
    assert quick.events == full.events
    assert quick.absorptions == full.absorptions
    assert quick.archived == full.archived
    assert quick.revived == full.revived
    assert quick.audit == full.audit


@given(stores(), st.integers(1, 30), st.integers(0, 45), st.data())
def test_the_shortcut_from_a_settled_store_is_the_full_pass(
    store: WorkspaceStore, limit: int, days_later: int, data: st.DataObject
) -> None:
    warm = Caches()
    base, archive, tuning = _settled_base(store, limit, warm)
    if not consolidation._is_settled(base, tuning, warm):
        return  # nothing recorded settled: the shortcut would decline at once
    at = NOW_MS + days_later * DAY_MS
    changed = replace(base, entries=data.draw(_changes(base, archive, at)))
    quick = normalize_store(changed, at, archive=archive, tuning=tuning, base=base, caches=warm)
    derived = warm.indexes.get(quick.store.entries)
    if derived is not None:  # made from the base's index
        assert derived == build_index(quick.store.entries)
    full = normalize_store(changed, at, archive=archive, tuning=tuning, caches=Caches())
    _same(quick, full)


@given(stores(), st.integers(1, 30), st.data())
def test_what_the_shortcut_records_settled_is_a_fixed_point(
    store: WorkspaceStore, limit: int, data: st.DataObject
) -> None:
    warm = Caches()
    base, archive, tuning = _settled_base(store, limit, warm)
    if not consolidation._is_settled(base, tuning, warm):
        return
    at = NOW_MS + DAY_MS
    changed = replace(base, entries=data.draw(_changes(base, archive, at)))
    archive_after = dict(archive)
    quick = normalize_store(changed, at, archive=archive, tuning=tuning, base=base, caches=warm)
    archive_after.update((key_hash(exact_key(e)), e) for e in quick.archived)
    if consolidation._is_settled(quick.store, tuning, warm):
        for later in (at, at + 40 * DAY_MS):
            again = normalize_store(quick.store, later, archive=archive_after, tuning=tuning, caches=Caches())
            assert again.store == quick.store
            assert again.events == () and again.absorptions == () and again.archived == ()
