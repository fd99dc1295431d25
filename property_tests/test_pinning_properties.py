"""A pinned memory is always in the block (docs/decisions.md#d20): whatever the store around it and
however many days of decay pass, with the store normalised (dedupe, migrations, the archive) between
them, the pinned memory is stored, active and rendered first."""

from __future__ import annotations

from hypothesis import given, strategies as st
from msgspec.structs import replace

from domain.consolidation import normalize_store
from domain.enums import MemoryStatus, MemoryType
from domain.limits import DAY_MS
from domain.model import MemoryEntry, WorkspaceStore
from domain.render import PINNED_SECTION, render_workspace_block
from domain.retention import Tuning
from property_tests.store_strategies import NOW_MS, entry_lists, stores
from tests.support.builders import memory

PINNED_TEXT = "Never force-push to the release branch; open a revert pull request instead"


def _pinned(age_days: int, type_: MemoryType) -> MemoryEntry:
    at = NOW_MS - age_days * DAY_MS
    entry = memory(PINNED_TEXT, id="mem_pinned", type=type_, source="compaction", at=at, retention_clock=at)
    return replace(entry, pinned=True)


@given(
    store=stores(entries=entry_lists(max_size=12)),
    age=st.integers(0, 400),
    type_=st.sampled_from(tuple(MemoryType)),
    steps=st.lists(st.integers(1, 120), min_size=1, max_size=8),
    limit=st.sampled_from((2, 10, 500)),
)
def test_a_pinned_memory_is_rendered_after_any_days_of_decay(
    store: WorkspaceStore, age: int, type_: MemoryType, steps: list[int], limit: int
) -> None:
    memories = replace(store, entries=(_pinned(age, type_), *store.entries))
    tuning = Tuning(max_stored_active=limit)  # a small limit makes the archive take the weak ones
    archive: dict[str, MemoryEntry] = {}
    now = NOW_MS
    for days in steps:
        now += days * DAY_MS
        result = normalize_store(memories, now, archive=archive, tuning=tuning)
        memories = result.store
        archive.update({e.id: e for e in result.archived})
        assert all(e.text != PINNED_TEXT for e in result.archived)
        [pinned] = [e for e in memories.entries if e.text == PINNED_TEXT]
        assert pinned.pinned and pinned.status is MemoryStatus.ACTIVE
        block = render_workspace_block(memories, now, tuning)
        assert block.rendered[0] is pinned
        section, line = block.text.splitlines()[1:3]
        # the line may carry its freshness (docs/decisions.md#d18): pinned is not verified
        assert section == PINNED_SECTION and line.startswith(f"- {PINNED_TEXT}")
