"""The memory lifecycle as a stateful machine (store-retention.md §7, evidence-pending-storage-hooks.md
§9; DECISIONS D2, D3, D7, D8, D9).

Hypothesis drives the core operations the way hosts do: explicit requests and compaction summaries
add memories (with exact and identity duplicates among them), the clock moves by minutes to months,
sessions open after breaks and end. A small reference model runs alongside: it knows which requests
are still pending for which session and which memories were promoted, grouped by identity, and so
which identity groups must be active in the store whatever the order of the additions. After every
step the machine checks:

1. strength is finite, ``>= 0`` and ``<= initial`` for every stored entry;
2. effective age lies within ``[0.25 x wall, wall]`` and never decreases for an entry while its
   retention clock stays put;
3. no reinforcement count exceeds 6;
4. the store is normalised (normalising changes nothing and says nothing) and normalising is
   idempotent; no two active entries share an exact key, no two active project/reference entries an
   identity key;
5. conservation: every id ever active is still stored, absorbed into a stored entry, or archived, and
   every one no longer active has an event naming it;
6. the active identity groups are exactly the promoted ones, each represented by one of its own texts;
7. the render invariants: budget, 28 entries, per-type caps, nothing superseded or archived shown,
   shown ⊆ active, every active entry shown or omitted exactly once, strongest first in a section.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Final, NamedTuple

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from msgspec.structs import replace

from domain.consolidation import normalize_store
from domain.extraction import extract_explicit, parse_compaction_candidates
from domain.keys import exact_key, identity_key
from domain.model import (
    DAY_MS,
    HOUR_MS,
    RETENTION_TYPE_MAX,
    CacheLimits,
    EventType,
    HotStateLimits,
    LongTermLimits,
    MemoryStatus,
    MemoryType,
    PendingJournalLimits,
)
from domain.render import render_budget, render_workspace_block
from domain.retention import (
    REINFORCEMENT_MAX_COUNT,
    dormancy_at,
    effective_age_days,
    initial_strength,
    retention_start_ms,
    strength,
)
from domain.session import render_hot_state
from property_tests.store_strategies import NOW_MS
from tests.support import builders
from tests.support.builders import ROOT
from tests.support.world import Compact, End, Op, Open, Say, World, names

MINUTE: Final = 60_000
SESSIONS: Final = ("ses_a", "ses_b", "ses_c")
MIGRATED: Final = (
    "2026-04-28-quality-cleanup",
    "2026-04-26-p0-cleanup",
    "2026-05-01-retention-clock-backfill",
)
EPSILON: Final = 1e-9


class Item(NamedTuple):
    """What one request or candidate line becomes once stored."""

    exact: str
    identity: str


def _explicit_item(message: str) -> Item:
    (entry,) = extract_explicit(message, NOW_MS).entries
    return Item(exact_key(entry), identity_key(entry))


def _candidate_item(line: str) -> Item:
    (entry,) = parse_compaction_candidates(f"Memory candidates:\n{line}\n", NOW_MS).entries
    return Item(exact_key(entry), identity_key(entry))


#: Explicit requests; each yields exactly one memory. Variants and cross-pool duplicates on purpose.
REQUESTS: Final = {
    message: _explicit_item(message)
    for message in (
        "remember this: always use pnpm for package installs",
        "remember this: Always use PNPM for package installs.",
        "remember this: we decided to keep the retention model strength-based",
        "remember this: the project config lives in src/config.ts",
        "remember this: the project docs live at https://example.com/docs/api/",
        "From now on, answer in British English",
        "please remember that the staging database lives in eu-west-1",
        "remember this: never force-push to the main branch",
        "remember this: we decided to run the linter before committing",
    )
}
#: Compaction candidate lines; each passes the gate. Same path / URL in other words on purpose.
CANDIDATES: Final = {
    line: _candidate_item(line)
    for line in (
        "- [decision] Keep the retention model strength-based",
        "- [decision] We decided to keep the retention model strength-based",
        "- [feedback] Always run the linter before committing",
        "- [feedback] always run the linter before committing!",
        "- [project] Project config lives in `src/config.ts`",
        "- [project] Project config lives in `./src/config.ts`",
        "- [project] The config loader is src/config.ts and it validates on start",
        "- [reference] Docs for the API are at https://example.com/docs/api/",
        "- [reference] API reference: https://example.com/docs/api#auth",
        "- [feedback] Never force-push to the main branch",
    )
}
# The model groups memories by identity key alone; that is only right if equal exact keys never
# come with different identity keys in these pools.
_IDENTITY_OF: Final = {item.exact: item.identity for item in (*REQUESTS.values(), *CANDIDATES.values())}
assert all(_IDENTITY_OF[item.exact] == item.identity for item in (*REQUESTS.values(), *CANDIDATES.values()))

clock_steps = st.one_of(
    st.integers(1, 59).map(lambda n: n * MINUTE),
    st.integers(1, 23).map(lambda n: n * HOUR_MS),
    st.integers(20, 30).map(lambda n: n * HOUR_MS),  # around the one-day idle limit of D7
    st.integers(1, 29).map(lambda n: n * DAY_MS),
    st.integers(1, 6).map(lambda n: n * 30 * DAY_MS),
)


class LifecycleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        store = builders.store(at=NOW_MS, migrations=MIGRATED)
        self.world = World(NOW_MS, store)
        # --- the reference model ---
        #: requests said in each session and not promoted yet (the session's owned journal entries)
        self.pending: dict[str, set[Item]] = {}
        #: identity key -> exact keys of every memory promoted into that group
        self.groups: dict[str, set[str]] = {}
        #: when each live session was last active and when its block was frozen
        self.active_at: dict[str, int] = {}
        self.frozen_at: dict[str, int] = {}
        # --- observations ---
        self.ever_active: set[str] = set()
        self.ages: dict[tuple[str, float], float] = {}
        self.said: list[str] = []
        self.summarised: list[str] = []

    # -- the model -----------------------------------------------------------------------------

    def _promote(self, items: set[Item]) -> None:
        for item in items:
            self.groups.setdefault(item.identity, set()).add(item.exact)

    def _adopt_idle(self, sid: str) -> None:
        """D7: the owned requests of sessions idle for more than a day go with this promotion."""
        now = self.world.now
        for owner, items in self.pending.items():
            if (
                owner != sid
                and items
                and now - self.active_at.get(owner, now) > PendingJournalLimits.ORPHAN_ADOPT_AFTER_MS
            ):
                self._promote(items)
                items.clear()

    def _fresh(self, sid: str) -> bool:
        frozen = self.frozen_at.get(sid)
        return frozen is not None and self.world.now - frozen <= CacheLimits.FROZEN_TTL_MS

    # -- rules ---------------------------------------------------------------------------------

    def _apply(self, op: Op) -> None:
        """Run one host event. Recording activity (and with it a dormant span that just ended, D3)
        must not change any entry's effective age at that instant: the discount carries over."""
        at = self.world.now + 1  # the instant the world will run the event at
        before = self.world.store
        self.world.apply(op)
        after = self.world.store
        old, new = dormancy_at(before, at), dormancy_at(after, at)
        starts = {e.id: retention_start_ms(e, at) for e in before.entries}
        for entry in after.entries:
            start = retention_start_ms(entry, at)
            if starts.get(entry.id) == start:
                assert effective_age_days(start, at, new) == pytest.approx(
                    effective_age_days(start, at, old), abs=EPSILON
                ), (entry.id, op)

    def _say(self, sid: str, message: str) -> None:
        self._apply(Say(sid=sid, text=message))
        self.pending.setdefault(sid, set()).add(REQUESTS[message])
        self.active_at[sid] = self.world.now
        self.said.append(message)

    def _compact(self, sid: str, lines: list[str]) -> None:
        summary = "## Goal\nKeep going.\n\nMemory candidates:\n" + ("\n".join(lines) or "(none)") + "\n"
        self._apply(Compact(sid=sid, summary=summary))
        self._adopt_idle(sid)
        self._promote(self.pending.pop(sid, set()) | {CANDIDATES[line] for line in lines})
        self.active_at[sid] = self.frozen_at[sid] = self.world.now
        self.summarised.extend(lines)

    @rule(sid=st.sampled_from(SESSIONS), message=st.sampled_from(sorted(REQUESTS)))
    def add_explicit(self, sid: str, message: str) -> None:
        self._say(sid, message)

    @rule(sid=st.sampled_from(SESSIONS), lines=st.lists(st.sampled_from(sorted(CANDIDATES)), max_size=3))
    def add_compaction(self, sid: str, lines: list[str]) -> None:
        self._compact(sid, lines)

    @precondition(lambda self: bool(self.said or self.summarised))
    @rule(sid=st.sampled_from(SESSIONS), data=st.data())
    def add_duplicate(self, sid: str, data: st.DataObject) -> None:
        """Say again what was said, or summarise again what was summarised, in any session."""
        if self.said and (not self.summarised or data.draw(st.booleans())):
            self._say(sid, data.draw(st.sampled_from(self.said)))
        else:
            self._compact(sid, [data.draw(st.sampled_from(self.summarised))])

    @rule(message=st.sampled_from(sorted(REQUESTS)), days=st.integers(1, 9))
    def daily_routine(self, message: str, days: int) -> None:
        """Every day for ``days`` days a new session opens, the user repeats the same request and the
        session ends: the memory is reinforced once a day up to the cap (D8)."""
        for _ in range(days):
            self.world.now += DAY_MS + HOUR_MS
            sid = SESSIONS[self.world.now // DAY_MS % len(SESSIONS)]
            self.open_session(sid, 0)
            self._say(sid, message)
            self.end_session(sid)

    @rule(step=clock_steps)
    def advance_clock(self, step: int) -> None:
        self.world.now += step

    @rule(sid=st.sampled_from(SESSIONS), days=st.one_of(st.just(0), st.integers(1, 120)))
    def open_session(self, sid: str, days: int) -> None:
        """Open after a break of ``days`` (0: right away)."""
        self.world.now += days * DAY_MS
        self._apply(Open(sid=sid))
        if not self._fresh(sid):
            self._adopt_idle(sid)
            self.active_at[sid] = self.frozen_at[sid] = self.world.now

    @rule(sid=st.sampled_from(SESSIONS))
    def end_session(self, sid: str) -> None:
        self._apply(End(sid=sid))
        self._promote(self.pending.pop(sid, set()))
        self.active_at.pop(sid, None)
        self.frozen_at.pop(sid, None)

    @rule(offset=st.integers(0, 2 * HOUR_MS))
    def render(self, offset: int) -> None:
        """Rendering is pure: the same store and instant give the same bytes, now or a bit later."""
        at = self.world.now + offset
        first = render_workspace_block(self.world.store, at)
        again = render_workspace_block(self.world.store, at)
        assert first.text == again.text and first.rendered == again.rendered
        self._check_render(at)
        for sid, state in self.world.sessions.items():
            assert len(render_hot_state(state, ROOT)) <= HotStateLimits.MAX_RENDERED_CHARS, sid

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def strength_is_bounded(self) -> None:
        now = self.world.now
        dormancy = dormancy_at(self.world.store, now)
        for entry in self.world.store.entries:
            value = strength(entry, now, dormancy)
            assert math.isfinite(value) and 0.0 <= value <= initial_strength(entry) + EPSILON, entry

    @invariant()
    def effective_age_is_bounded_and_monotone(self) -> None:
        now = self.world.now
        dormancy = dormancy_at(self.world.store, now)
        seen: dict[tuple[str, float], float] = {}
        for entry in self.world.store.entries:
            start = retention_start_ms(entry, now)
            wall = max(0.0, now - start) / DAY_MS
            age = effective_age_days(start, now, dormancy)
            assert 0.25 * wall - EPSILON <= age <= wall + EPSILON, (entry.id, age, wall)
            key = (entry.id, start)
            if key in self.ages:
                assert age >= self.ages[key] - EPSILON, (entry.id, self.ages[key], age)
            seen[key] = age
        self.ages = seen

    @invariant()
    def reinforcement_is_capped(self) -> None:
        for entry in self.world.store.entries:
            assert (entry.reinforcement_count or 0) <= REINFORCEMENT_MAX_COUNT, entry

    @invariant()
    def store_is_normalised(self) -> None:
        store, now = self.world.store, self.world.now
        once = normalize_store(store, now, archive=self.world.archive)
        assert once.events == () and once.archived == () and once.audit == ()
        assert sorted(map(repr, once.store.entries)) == sorted(map(repr, store.entries))
        twice = normalize_store(once.store, now, archive=self.world.archive)
        assert twice.events == ()
        assert replace(twice.store, updated_at=once.store.updated_at) == once.store
        active = [e for e in store.entries if e.status is MemoryStatus.ACTIVE]
        exact = [exact_key(e) for e in active]
        assert len(exact) == len(set(exact))
        identity = [identity_key(e) for e in active if e.type in (MemoryType.PROJECT, MemoryType.REFERENCE)]
        assert len(identity) == len(set(identity))

    @invariant()
    def nothing_is_lost(self) -> None:
        store = self.world.store
        active = {e.id for e in store.entries if e.status is MemoryStatus.ACTIVE}
        self.ever_active |= active
        stored = {e.id for e in store.entries}
        absorbed = {i for e in store.entries for i in (e.absorbed_ids or ())}
        archived = {m.memory_id for m in store.archived}
        named = set().union(*(names(e) for e in self.world.events)) if self.world.events else set()
        for memory_id in self.ever_active:
            assert memory_id in stored | absorbed | archived, f"{memory_id} vanished"
            if memory_id not in active:
                assert memory_id in named, f"{memory_id} left the active set without an event"
        for event in self.world.events:
            assert event.type is not EventType.MEMORY_REMOVED_CAPACITY  # D2: caps never delete

    @invariant()
    def active_groups_match_the_model(self) -> None:
        active = [e for e in self.world.store.entries if e.status is MemoryStatus.ACTIVE]
        by_identity = {identity_key(e): exact_key(e) for e in active}
        assert len(by_identity) == len(active)
        assert set(by_identity) == set(self.groups), (sorted(by_identity), sorted(self.groups))
        for identity, exact in by_identity.items():
            assert exact in self.groups[identity], (identity, exact)

    @invariant()
    def render_invariants(self) -> None:
        self._check_render(self.world.now)

    def _check_render(self, at: int) -> None:
        store = self.world.store
        result = render_workspace_block(store, at)
        active = {e.id: e for e in store.entries if e.status is MemoryStatus.ACTIVE}
        assert len(result.text) <= render_budget(store)
        assert len(result.rendered) <= LongTermLimits.MAX_ENTRIES
        for type_, cap in RETENTION_TYPE_MAX.items():
            assert sum(1 for e in result.rendered if e.type is type_) <= cap
        shown = [e.id for e in result.rendered]
        assert len(shown) == len(set(shown)) and set(shown) <= set(active)
        archived = {m.memory_id for m in store.archived}
        assert not set(shown) & archived
        left_out = [o.memory_id for o in result.omitted if o.memory_id in active]
        assert len(left_out) == len(set(left_out)), "an entry omitted for two reasons"
        assert sorted(shown + left_out) == sorted(active), "an active entry neither shown nor omitted"
        for o in result.omitted:
            if o.memory_id not in active:
                assert o.reason in ("superseded", "archived"), o
        dormancy = dormancy_at(store, at)
        for type_ in MemoryType:
            section = [strength(e, at, dormancy) for e in result.rendered if e.type is type_]
            assert all(a >= b for a, b in pairwise(section)), (type_, section)


TestLifecycleMachine = LifecycleMachine.TestCase
TestLifecycleMachine.settings = settings(stateful_step_count=30)
