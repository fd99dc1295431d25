"""Properties of the rendered workspace block (docs/decisions.md#the-workspace-block), plus the accounting
promises of docs/decisions.md#d2: every active entry is shown or omitted for exactly one reason)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain.consolidation import normalize_store
from domain.model import (
    DAY_MS,
    RETENTION_TYPE_MAX,
    SECTION_ORDER,
    ArchiveMarker,
    DormantSpan,
    EventType,
    Importance,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    StoreLimits,
    WorkspaceStore,
)
from domain.render import RENDER_HEADER, number_block, render_entry_line, render_workspace_block
from domain.retention import dormancy_at, strength
from domain.timeutil import iso_from_ms
from property_tests.store_strategies import entry_lists, stores as realistic_stores
from tests.support.builders import memory, store

NOW = 1_780_000_000_000  # 2026-05-28
REASONS = {"superseded", "archived", "type_cap", "global_cap", "char_budget", "empty_render_budget"}

words = st.sampled_from(
    [
        "use",
        "pnpm",
        "prefer",
        "small",
        "commits",
        "the",
        "API",
        "lives",
        "in",
        "src/api.ts",
        "日本語",
        "naïve",
        "\n",
        "- ",
        "feedback:",
        "Why:",
        "https://example.com/x",
        "  ",
        "\u2028",
        "ok.",
    ]
)
texts = st.lists(words, min_size=1, max_size=20).map(" ".join)


@st.composite
def entries(draw: st.DrawFn, index: int) -> MemoryEntry:
    age = draw(st.floats(min_value=0, max_value=400, allow_nan=False))
    created = draw(st.one_of(st.just(iso_from_ms(NOW - age * DAY_MS)), st.sampled_from(["garbage", ""])))
    return memory(
        id=f"mem_{index:03d}",
        type=draw(st.sampled_from(list(MemoryType))),
        text=draw(texts),
        source=draw(st.sampled_from(list(MemorySource))),
        confidence=0.75,
        status=draw(st.sampled_from([MemoryStatus.ACTIVE] * 5 + [MemoryStatus.SUPERSEDED])),
        created_at=created,
        updated_at=created,
        rationale=draw(st.one_of(st.none(), st.just(""), texts)),
        stale_after_days=draw(st.sampled_from([None, 0, 45, 60, 90])),
        retention_clock=draw(st.one_of(st.none(), st.just(NOW - age * DAY_MS))),
        reinforcement_count=draw(st.one_of(st.none(), st.integers(0, 8))),
        user_importance=draw(st.one_of(st.none(), st.sampled_from(list(Importance)))),
    )


@st.composite
def stores(draw: st.DrawFn, max_entries: int = 40) -> WorkspaceStore:
    count = draw(st.integers(0, max_entries))
    items = [draw(entries(i)) for i in range(count)]
    markers = tuple(
        ArchiveMarker(memory_id=f"arch_{i}", key_hash="0" * 16, identity_key_hash="1" * 16, archived_at="x")
        for i in range(draw(st.integers(0, 3)))
    )
    idle_days = draw(st.one_of(st.none(), st.floats(min_value=0, max_value=200, allow_nan=False)))
    span_starts = draw(st.lists(st.integers(1, 300), max_size=3))
    spans = tuple(
        DormantSpan(start=NOW - s * DAY_MS, end=NOW - s * DAY_MS + 10 * DAY_MS) for s in span_starts
    )
    return store(
        *items,
        root="/r",
        key="k",
        at=NOW,
        limits=StoreLimits(max_rendered_chars=draw(st.one_of(st.integers(0, 5000), st.just(3600)))),
        last_activity_at=iso_from_ms(NOW - idle_days * DAY_MS) if idle_days is not None else None,
        dormant_spans=spans,
        archived=markers,
    )


def check_shape(store: WorkspaceStore) -> None:
    result = render_workspace_block(store, NOW)
    budget = min(store.limits.max_rendered_chars, 3600)
    if budget < 80:
        assert result.text == ""
    assert result.text == "" or len(result.text) <= budget
    if not result.text:
        assert result.rendered == ()
        return
    lines = result.text.split("\n")
    assert lines[0] == RENDER_HEADER
    # one "- " line per rendered entry, in order
    entry_lines = [line for line in lines[1:] if line.startswith("- ")]
    assert entry_lines == ["- " + render_entry_line(e, NOW) for e in result.rendered]
    # section headers: fixed order, present iff at least one entry of that type is shown
    headers = [line[:-1] for line in lines[1:] if not line.startswith("- ")]
    shown_types = [t.value for t in SECTION_ORDER if any(e.type == t for e in result.rendered)]
    assert headers == shown_types


def check_accounting(store: WorkspaceStore) -> None:
    result = render_workspace_block(store, NOW)
    assert len(result.rendered) <= 28
    per_type = Counter(e.type for e in result.rendered)
    assert all(per_type[t] <= RETENTION_TYPE_MAX[t] for t in per_type)

    active = {e.id: e for e in store.entries if e.status != MemoryStatus.SUPERSEDED}
    superseded = {e.id for e in store.entries if e.status == MemoryStatus.SUPERSEDED}
    rendered_ids = [e.id for e in result.rendered]
    assert set(rendered_ids) <= set(active)
    assert all(e is active[e.id] for e in result.rendered)  # the stored values, untouched
    omitted_ids = [o.memory_id for o in result.omitted]
    assert len(omitted_ids) == len(set(omitted_ids))
    assert not set(rendered_ids) & set(omitted_ids)
    markers = {m.memory_id for m in store.archived}
    assert set(rendered_ids) | set(omitted_ids) == set(active) | superseded | markers
    assert all(o.reason in REASONS for o in result.omitted)
    assert {o.memory_id for o in result.omitted if o.reason == "superseded"} == superseded
    assert {o.memory_id for o in result.omitted if o.reason == "archived"} == markers
    # one event per rendered entry; omissions: one event each for entries that were in the most
    # recent block, the rest counted (per reason) in at most one summary event
    kinds = Counter(e.type for e in result.events)
    assert kinds[EventType.RENDER_SELECTED] == len(rendered_ids)
    omitted_events = [e for e in result.events if e.type == EventType.RENDER_OMITTED]
    individual = [e for e in omitted_events if e.memory is not None]
    summaries = [e for e in omitted_events if e.memory is None]
    assert len(summaries) <= 1
    counted = sum(v for s in summaries for v in s.details.values() if isinstance(v, int))
    assert len(individual) + counted == len(omitted_ids)
    assert len(result.events) <= len(rendered_ids) + len(individual) + 1


@given(stores())
def test_block_fits_the_budget_and_has_the_fixed_shape(store: WorkspaceStore) -> None:
    check_shape(store)


@given(stores())
def test_caps_and_accounting(store: WorkspaceStore) -> None:
    check_accounting(store)


@given(realistic_stores(entries=entry_lists(duplicate_ids=False)), st.sampled_from([80, 400, 1500, 3600]))
def test_shape_and_accounting_on_realistic_normalised_stores(store: WorkspaceStore, budget: int) -> None:
    """The shared realistic generator (duplicates, secrets, snapshots, dormancy), normalised first as
    every store is before it is rendered. The accounting is by id, so entries whose id repeats an
    earlier one are dropped first (normalisation leaves such ids on superseded entries)."""
    normalised = normalize_store(store, NOW).store
    first_by_id = {e.id: e for e in reversed(normalised.entries)}
    entries = tuple(e for e in normalised.entries if first_by_id[e.id] is e)
    store = replace(normalised, entries=entries, limits=StoreLimits(max_rendered_chars=budget))
    check_shape(store)
    check_accounting(store)


@given(stores())
def test_sections_are_strongest_first(store: WorkspaceStore) -> None:
    result = render_workspace_block(store, NOW)
    dormancy = dormancy_at(store, NOW)
    for type_ in SECTION_ORDER:
        values = [strength(e, NOW, dormancy) for e in result.rendered if e.type == type_]
        assert values == sorted(values, reverse=True)


@given(stores(max_entries=20))
def test_deterministic_pure_and_order_independent(store: WorkspaceStore) -> None:
    first = render_workspace_block(store, NOW)
    again = render_workspace_block(store, NOW)
    assert first == again
    shuffled = replace(store, entries=tuple(reversed(store.entries)))
    assert render_workspace_block(shuffled, NOW).text == first.text
    labelled = [line for line in number_block(first, NOW).split("\n") if line.startswith("- [M")]
    assert len(labelled) == len(first.rendered)


@given(stores(max_entries=20), st.integers(3600, 10**7))
def test_any_budget_from_3600_up_gives_the_3600_result(store: WorkspaceStore, budget: int) -> None:
    at_cap = replace(store, limits=StoreLimits(max_rendered_chars=3600))
    above = replace(store, limits=StoreLimits(max_rendered_chars=budget))
    assert render_workspace_block(above, NOW) == render_workspace_block(at_cap, NOW)
