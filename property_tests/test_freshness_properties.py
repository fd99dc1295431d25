"""Properties of freshness (docs/decisions.md#d18): an expired memory is never rendered; a grade never
improves without a verification; re-verification is deterministic and never deletes."""

from __future__ import annotations

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain.enums import Grade
from domain.freshness import grade, is_expired
from domain.limits import DAY_MS
from domain.model import Citation, MemoryEntry, WorkspaceStore
from domain.render import render_workspace_block
from domain.reverify import Observed, reverify_store
from property_tests.store_strategies import NOW_MS, entries, stores

#: worst last: a later grade of the same entry is never earlier in this order
_ORDER = {Grade.FRESH: 0, Grade.AGING: 1, Grade.STALE: 2, Grade.EXPIRED: 3}
PATHS = ("src/a.py", "src/b.py", "lib/c.py")


@given(stores())
def test_expired_entries_are_never_rendered(store: WorkspaceStore) -> None:
    result = render_workspace_block(store, NOW_MS)
    assert not any(is_expired(e, NOW_MS) for e in result.rendered)
    shown = {id(e) for e in result.rendered}
    for entry in store.entries:
        if is_expired(entry, NOW_MS):
            assert id(entry) not in shown


@given(entries(), st.integers(0, 400 * DAY_MS), st.integers(0, 400 * DAY_MS))
def test_a_grade_never_improves_with_time_alone(entry: MemoryEntry, first: int, later: int) -> None:
    a, b = sorted((first, later))
    assert _ORDER[grade(entry, NOW_MS + a)] <= _ORDER[grade(entry, NOW_MS + b)]


@st.composite
def cited_entries(draw: st.DrawFn) -> MemoryEntry:
    base = draw(entries())
    cites = []
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            start = draw(st.integers(1, 20))
            cites.append(
                Citation(
                    path=path,
                    start_line=start,
                    end_line=start + draw(st.integers(0, 5)),
                    span_hash=draw(st.sampled_from((None, "h1", "h2"))),
                )
            )
        else:
            cites.append(
                Citation(path=path, identifiers=tuple(draw(st.sets(st.sampled_from(("f", "g", "K"))))))
            )
    return replace(base, cites=tuple(cites))


@st.composite
def observations(draw: st.DrawFn, store: WorkspaceStore) -> tuple[Observed, ...]:
    """What the shell may see of the store's citations: some observed (unchanged, changed, gone),
    some not observed at all."""
    found: list[Observed] = []
    for entry in store.entries:
        for cite in entry.cites or ():
            kind = draw(st.integers(0, 3))
            if kind == 0:
                continue
            found.append(
                Observed(
                    path=cite.path,
                    start_line=cite.start_line,
                    end_line=cite.end_line,
                    gone=kind == 3,
                    span_hash=draw(st.sampled_from(("h1", "h2"))) if cite.start_line is not None else None,
                    present=tuple(draw(st.sets(st.sampled_from(("f", "g", "K"))))),
                )
            )
    return tuple(found)


@given(st.data(), st.lists(cited_entries(), max_size=8), st.integers(0, 30 * DAY_MS))
def test_reverification_is_deterministic_never_deletes_and_improves_only_by_verifying(
    data: st.DataObject, body: list[MemoryEntry], later: int
) -> None:
    store = data.draw(stores(entries=st.just(body)))
    observed = data.draw(observations(store))
    now = NOW_MS + later
    after, notes = reverify_store(store, observed, now)
    again, notes_again = reverify_store(store, observed, now)
    assert after == again and notes == notes_again  # same files, same grades
    assert [(e.id, e.status, e.text) for e in after.entries] == [
        (e.id, e.status, e.text) for e in store.entries
    ]
    for before, now_entry in zip(store.entries, after.entries, strict=True):
        if _ORDER[grade(now_entry, now)] < _ORDER[grade(before, now)]:
            assert now_entry.verified == now  # only a verification improves a grade
