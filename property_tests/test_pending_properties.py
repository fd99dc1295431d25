"""Properties of the pending journal and of promotion (docs/decisions.md#pending-journal,
docs/decisions.md#promotion, docs/decisions.md#b26).

A stateful machine appends, clears, records rejections and lets time pass, and after every step checks
the retention invariants and that nothing left the journal without a ``pending_memory_cleared`` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from msgspec.structs import replace

from domain import consolidation, keys
from domain.consolidation import Absorption, AbsorptionReason
from domain.enums import EventType, MemorySource, MemoryStatus, MemoryType, Outcome, RelationRole
from domain.keys import key_hash
from domain.limits import DAY_MS, HOUR_MS
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, Tombstone, WorkspaceStore
from domain.pending import (
    append_pending,
    clear_pending,
    empty_journal,
    entry_time,
    journal_key,
    normalize_journal,
    over_bound,
    owner_of,
)
from domain.promotion import PromotionResult, account_pending_promotions, promote, promotion_events
from domain.text import memory_key
from domain.timeutil import iso_from_ms, parse_iso_ms
from property_tests.shapes import steady_lists
from tests.support import builders

START = parse_iso_ms("2026-01-01T00:00:00.000Z") or 0
TEXTS = ("Use pnpm", "use PNPM!", "Prefer tabs", "Run the tests first", *(f"Memory {i}" for i in range(40)))
OWNERS = (None, "s1", "s2", "")
TYPES = ("decision", "feedback")
SOURCES = tuple(MemorySource)

entry_spec = st.tuples(
    st.sampled_from(TEXTS),
    st.sampled_from(TYPES),
    st.sampled_from(SOURCES),
    st.sampled_from(OWNERS),
    st.integers(min_value=-40 * DAY_MS, max_value=DAY_MS),  # age offset relative to now
    st.booleans(),  # broken timestamps
)


def cleared_ids(events: Sequence[EvidenceInput]) -> list[str]:
    return [
        e.memory.memory_id
        for e in events
        if e.type is EventType.PENDING_MEMORY_CLEARED and e.memory is not None and e.memory.memory_id
    ]


def check_retention(journal: PendingJournal, now_ms: int) -> None:
    """The retention rules hold. The bound keeps the 50 newest entries and every request beyond them
    (docs/decisions.md#pending-journal-bound): what is over the bound is requests only, and exactly
    what ``over_bound`` hands to early promotion."""
    entries = journal.entries
    newest = sorted(entries, key=lambda e: (-(entry_time(e) or 0), e.id))
    assert all(e.source is not MemorySource.COMPACTION for e in newest[50:])
    assert {e.id for e in over_bound(journal)} == {e.id for e in newest[50:]}
    jkeys = [journal_key(e) for e in entries]
    assert len(set(jkeys)) == len(jkeys)
    times = [entry_time(e) for e in entries]
    assert all(t is not None for t in times)
    for entry, time in zip(entries, times, strict=True):
        if entry.source is MemorySource.COMPACTION and time is not None:
            assert now_ms - time <= 30 * DAY_MS
    order = [(t or 0, e.id) for t, e in zip(times, entries, strict=True)]
    assert order == sorted(order)


class JournalMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = START
        self.journal = empty_journal("/w", "k", START)
        self.counter = 0

    def build(self, spec: tuple[str, str, MemorySource, str | None, int, bool]) -> MemoryEntry:
        text, type_, source, owner, offset, broken = spec
        self.counter += 1
        stamp = "not-a-date" if broken else iso_from_ms(self.now + offset)
        return builders.memory(
            text,
            id=f"m{self.counter:04d}",
            type=type_,
            source=source,
            confidence=1.0,
            created_at=stamp,
            updated_at=stamp,
            owner=owner,
        )

    def apply(
        self, journal: PendingJournal, events: Sequence[EvidenceInput], added: Sequence[str] = ()
    ) -> None:
        before = {e.id for e in self.journal.entries} | set(added)
        after = {e.id for e in journal.entries}
        assert after <= before
        gone = before - after
        named = cleared_ids(events)
        # nothing leaves the journal without an event naming it, and each is named once
        assert set(named) == gone
        assert len(named) == len(set(named))
        # explicit and manual entries never age out, and the bound never clears them
        for e in events:
            if e.reason_codes[:1] in (("journal_ttl",), ("journal_cap",)):
                assert e.memory is not None and e.memory.source == "compaction"
        self.journal = journal
        check_retention(journal, self.now)

    @initialize(specs=steady_lists(entry_spec, max_size=60))
    def seed(self, specs: list[tuple[str, str, MemorySource, str | None, int, bool]]) -> None:
        entries = [self.build(s) for s in specs]
        raw = builders.journal(*entries, root="/w", key="k", updated_at="x")
        self.journal = raw
        journal, events = normalize_journal(raw, self.now)
        self.apply(journal, events)

    @rule(specs=steady_lists(entry_spec, max_size=12))
    def append(self, specs: list[tuple[str, str, MemorySource, str | None, int, bool]]) -> None:
        entries = [self.build(s) for s in specs]
        journal, events = append_pending(self.journal, entries, self.now, session_id="s1")
        appended = [e for e in events if e.type is EventType.PENDING_MEMORY_APPENDED]
        assert len(appended) == len(entries)
        self.apply(journal, events, [e.id for e in entries])

    @rule(hours=st.integers(min_value=0, max_value=24 * 40))
    def wait(self, hours: int) -> None:
        self.now += hours * HOUR_MS
        journal, events = normalize_journal(self.journal, self.now)
        self.apply(journal, events)

    def pick_keys(self, data: st.DataObject) -> set[str]:
        """Some exact keys present in the journal, and perhaps one that is not."""
        present = sorted({keys.exact_key(e) for e in self.journal.entries})
        # positions are drawn whether or not the journal is empty: each step costs the same
        picks = data.draw(steady_lists(st.integers(0, 59), max_size=6))
        chosen = {present[i % len(present)] for i in picks} if present else set()
        absent, text = data.draw(st.booleans()), data.draw(st.sampled_from(TEXTS))
        if absent:
            chosen.add(memory_key("decision", text))
        return chosen

    @rule(
        n=st.integers(min_value=1, max_value=30),
        owner=st.sampled_from(OWNERS),
        source=st.sampled_from(SOURCES),
    )
    def bulk(self, n: int, owner: str | None, source: MemorySource) -> None:
        """Many distinct entries at once, so that the 50-entry cap is reached."""
        entries = [
            self.build((f"Bulk {self.counter + i}", "project", source, owner, -i * HOUR_MS, False))
            for i in range(n)
        ]
        journal, events = append_pending(self.journal, entries, self.now)
        self.apply(journal, events, [e.id for e in entries])

    @rule(data=st.data(), owner=st.sampled_from(OWNERS), clear_unowned=st.booleans())
    def clear(self, data: st.DataObject, owner: str | None, clear_unowned: bool) -> None:
        wanted = self.pick_keys(data)
        before = self.journal.entries
        journal, events = clear_pending(
            self.journal, wanted, self.now, owner=owner, clear_unowned=clear_unowned, reason="promoted"
        )
        removed = {e.id for e in before} - {e.id for e in journal.entries}
        for entry in before:
            if entry.id not in removed:
                continue
            assert keys.exact_key(entry) in wanted
            if owner:  # never another owner's entry
                assert owner_of(entry) in (owner, None)
                if owner_of(entry) is None:
                    assert clear_unowned
            elif clear_unowned:  # only unowned entries
                assert owner_of(entry) is None
        if not wanted:
            assert removed == set()
        self.apply(journal, events)

    @invariant()
    def normalised_is_a_fixed_point(self) -> None:
        again, events = normalize_journal(self.journal, self.now)
        assert again.entries == self.journal.entries and events == ()


TestJournalMachine = JournalMachine.TestCase
TestJournalMachine.settings = settings(stateful_step_count=15)


@given(steady_lists(entry_spec, max_size=80), st.integers(min_value=0, max_value=60 * DAY_MS))
def test_cap_keeps_the_newest(
    specs: list[tuple[str, str, MemorySource, str | None, int, bool]], later: int
) -> None:
    """Under the cap, the kept entries are the newest of those that survived dedupe and TTL, and
    every request older than them (docs/decisions.md#pending-journal-bound)."""
    machine = JournalMachine()
    entries = [machine.build(s) for s in specs]
    raw = builders.journal(*entries, root="/w", key="k", updated_at="x")
    now = START + later
    journal, events = normalize_journal(raw, now)
    check_retention(journal, now)
    capped = {
        e.memory.memory_id
        for e in events
        if e.memory is not None and e.reason_codes == ("journal_cap",) and e.memory.memory_id
    }
    by_id = {e.id: e for e in entries}
    if capped:
        waiting = {e.id for e in over_bound(journal)}
        oldest_kept = min((entry_time(e) or 0, e.id) for e in journal.entries if e.id not in waiting)
        for id_ in capped:
            assert (entry_time(by_id[id_]) or 0, id_) < oldest_kept


# ---------------------------------------------------------------------------------------------
# Promotion (docs/decisions.md#promotion)
# ---------------------------------------------------------------------------------------------

PROMO_TEXTS = (
    "Use pnpm",
    "use PNPM!",
    "Config lives in src/config.ts",
    "Settings are read from ./src/config.ts",
    "Docs at https://example.com/guide",
    *(f"Memory {i}" for i in range(6)),
)
PROMO_TYPES = tuple(MemoryType)
PROMO_OWNERS = (None, "s1", "s2", "dead")

promo_spec = st.tuples(
    st.sampled_from(PROMO_TEXTS),
    st.sampled_from(PROMO_TYPES),
    st.sampled_from(SOURCES),
    st.sampled_from(PROMO_OWNERS),
    st.integers(min_value=-20 * DAY_MS, max_value=0),
    st.booleans(),  # superseded (store entries only)
)


def promo_entry(
    prefix: str, index: int, spec: tuple[str, MemoryType, MemorySource, str | None, int, bool]
) -> MemoryEntry:
    text, type_, source, owner, offset, superseded = spec
    return builders.memory(
        text,
        id=f"{prefix}{index}",
        type=type_,
        source=source,
        confidence=0.75,
        status=MemoryStatus.SUPERSEDED if superseded and prefix == "s" else MemoryStatus.ACTIVE,
        at=START + offset,
        owner=owner if prefix != "s" else None,
    )


class PromotionCase(NamedTuple):
    """The inputs of one :func:`promote` call."""

    store: WorkspaceStore
    journal: PendingJournal
    session_pending: list[MemoryEntry]
    session_id: str | None
    include_owned: bool
    include_unowned: bool
    idle: list[str]

    def run(self, **changes: Any) -> PromotionResult:
        """Promote, with ``changes`` to the scope arguments."""
        scope: dict[str, Any] = {
            "session_id": self.session_id,
            "include_owned": self.include_owned,
            "include_unowned": self.include_unowned,
            "idle_owner_ids": self.idle,
            **changes,
        }
        return promote(self.store, self.journal, self.session_pending, PROMOTION_NOW, **scope)

    def outside(self, entry: MemoryEntry) -> bool:
        """The journal entry is outside the promotion's scope, as :func:`promote` documents it: owned
        by a session that is neither the promoting one nor an idle one, or unowned while unowned
        entries are not included."""
        owner = owner_of(entry)
        if owner is None:
            return not self.include_unowned
        return owner != self.session_id and owner not in self.idle

    def selects(self, entry: MemoryEntry) -> bool:
        """The journal entry is promoted by this call: unowned while unowned entries are included,
        the promoting session's own while owned ones are, or an idle owner's."""
        owner = owner_of(entry)
        if owner is None:
            return self.include_unowned
        return (self.include_owned and owner == self.session_id) or (
            owner in self.idle and owner != self.session_id
        )


PROMOTION_NOW = START + 1000


@st.composite
def promotion_cases(draw: st.DrawFn) -> PromotionCase:
    """A store (some entries superseded, some keys tombstoned), a journal of entries of every owner,
    the promoting session's pending list and a scope. Now and then a journal entry is marked
    superseded (as a hand-edited file may have it): it can never be stored, so it is rejected, and
    retried when it is explicit or manual."""
    tombstones = tuple(
        Tombstone(
            key_hash=key_hash(memory_key("decision", text)), memory_id="x", reason="forgotten", created_at="x"
        )
        for text in draw(steady_lists(st.sampled_from(PROMO_TEXTS), max_size=2))
    )
    stored = draw(steady_lists(promo_spec, max_size=6))
    journaled = draw(steady_lists(promo_spec, max_size=8))
    # whether each of the eight journal entries there can be is marked superseded (one in eight)
    superseded = draw(st.tuples(*(st.integers(0, 7),) * 8))
    session_id = draw(st.sampled_from((None, "s1")))
    pending = [
        replace(promo_entry("p", i, spec), pending_owner_session_id=session_id)
        for i, spec in enumerate(draw(steady_lists(promo_spec, max_size=3)))
    ]
    return PromotionCase(
        store=builders.store(
            *(promo_entry("s", i, spec) for i, spec in enumerate(stored)),
            root="/w",
            key="k",
            at=START,
            tombstones=tombstones,
        ),
        journal=builders.journal(
            *(
                replace(entry, status=MemoryStatus.SUPERSEDED) if mark == 0 else entry
                for entry, mark in zip(
                    (promo_entry("j", i, spec) for i, spec in enumerate(journaled)), superseded, strict=False
                )
            ),
            root="/w",
            key="k",
            updated_at="x",
        ),
        session_pending=pending,
        session_id=session_id,
        include_owned=draw(st.booleans()),
        include_unowned=draw(st.booleans()),
        idle=draw(steady_lists(st.sampled_from(("dead", "s2")), max_size=2)),
    )


def accounted(result: PromotionResult) -> set[str]:
    """Every pending key the promotion classified."""
    acc = result.accounting
    return {*acc.promoted, *acc.absorbed, *acc.rejected}


def outcome_events(result: PromotionResult) -> list[EvidenceInput]:
    return [e for e in result.events if e.type in OUTCOME_TYPES]


OUTCOME_TYPES = frozenset(
    {
        EventType.PROMOTION_PROMOTED,
        EventType.PROMOTION_ABSORBED_EXACT,
        EventType.PROMOTION_ABSORBED_IDENTITY,
        EventType.PROMOTION_REJECTED,
    }
)
#: The reference's capacity and retry events: workmem never emits them.
REFERENCE_ONLY_TYPES = frozenset(
    {
        EventType.PROMOTION_SUPERSEDED,
        EventType.PROMOTION_REJECTED_CAPACITY,
        EventType.PROMOTION_RETRY_SCHEDULED,
        EventType.PROMOTION_RETRY_EXHAUSTED,
    }
)


@given(promotion_cases())
def test_every_pending_key_gets_exactly_one_outcome_event(case: PromotionCase) -> None:
    """The three classes partition the pending keys, each pending key has one ``promotion_*`` outcome
    event naming a memory that was pending with that key, and no capacity or retry event is emitted;
    the session's own pending memories are always among them, and nothing else is."""
    result = case.run()
    acc = result.accounting
    keys_ = accounted(result)
    classes = (acc.promoted, acc.absorbed, acc.rejected)
    assert sum(len(set(c)) for c in classes) == len(keys_)
    outcomes = outcome_events(result)
    assert sorted(e.memory.memory_key_hash or "" for e in outcomes if e.memory) == sorted(keys_)
    assert len(outcomes) == len(keys_)
    candidates = {e.id: e for e in (*case.session_pending, *case.journal.entries)}
    for event_ in outcomes:
        assert event_.memory is not None and event_.memory.memory_id in candidates
        assert keys.exact_key(candidates[event_.memory.memory_id]) == event_.memory.memory_key_hash
    assert not [e for e in result.events if e.type in REFERENCE_ONLY_TYPES]
    assert {keys.exact_key(e) for e in case.session_pending} <= keys_
    in_scope = [e for e in case.journal.entries if not case.outside(e)]
    assert keys_ <= {keys.exact_key(e) for e in (*case.session_pending, *in_scope)}


@given(promotion_cases())
def test_the_classes_relate_as_documented(case: PromotionCase) -> None:
    """Promoted and absorbed keys are clearable; a rejected key is clearable exactly when it can
    never be stored (tombstoned, not active); the session drops exactly the clearable keys."""
    result = case.run()
    acc = result.accounting
    clearable = set(acc.clearable)
    assert {*acc.promoted, *acc.absorbed} <= clearable
    never = {k for k in acc.rejected if acc.reason_of(k) in ("tombstoned", "not_active")}
    assert clearable - {*acc.promoted, *acc.absorbed} == never
    assert result.cleared_keys == clearable


@given(promotion_cases())
def test_the_scope_decides_what_is_pending(case: PromotionCase) -> None:
    """With the widest scope (owned and unowned entries, every owner idle) every journal key is
    pending; with the narrowest (no journal entry selected) only the session's own memories are;
    widening the scope never loses a pending key."""
    owners = sorted({o for e in case.journal.entries if (o := owner_of(e)) is not None})
    journal_keys = {keys.exact_key(e) for e in normalize_journal(case.journal, PROMOTION_NOW)[0].entries}
    session_keys = {keys.exact_key(e) for e in case.session_pending}
    widest = case.run(include_owned=True, include_unowned=True, idle_owner_ids=owners)
    assert accounted(widest) == session_keys | journal_keys
    narrowest = case.run(include_owned=False, include_unowned=False, idle_owner_ids=())
    assert accounted(narrowest) == session_keys
    here = accounted(case.run())
    assert accounted(case.run(include_owned=True)) >= here
    assert accounted(case.run(include_unowned=True)) >= here
    assert accounted(case.run(idle_owner_ids=[*case.idle, *owners])) >= here


@given(promotion_cases())
def test_nothing_outside_the_scope_is_touched_and_every_departure_is_named(case: PromotionCase) -> None:
    """Journal entries outside the scope stay exactly as the journal's own housekeeping leaves them;
    an entry leaves the journal only with a ``pending_memory_cleared`` event naming it; no entry
    within the scope keeps a key the promotion cleared."""
    result = case.run()
    normalized, _ = normalize_journal(case.journal, PROMOTION_NOW)
    kept = [e for e in result.journal.entries if case.outside(e)]
    assert kept == [e for e in normalized.entries if case.outside(e)]
    gone = {e.id for e in normalized.entries} - {e.id for e in result.journal.entries}
    assert gone <= set(cleared_ids(result.events))
    clearable = set(result.accounting.clearable)
    for entry in result.journal.entries:
        if not case.outside(entry):
            assert keys.exact_key(entry) not in clearable, entry


@given(promotion_cases())
def test_promoted_and_absorbed_memories_are_in_the_store(case: PromotionCase) -> None:
    """A promoted key is an active store entry (or was archived in the same step); the survivor an
    absorbed memory's event names is an active store entry carrying it: by its exact or identity key,
    or by the absorbed id."""
    result = case.run()
    active = {e.id: e for e in result.store.entries if e.status is MemoryStatus.ACTIVE}
    carriers = {**active, **{e.id: e for e in result.archived}}
    assert set(result.accounting.promoted) <= {keys.exact_key(e) for e in carriers.values()}
    for event_ in outcome_events(result):
        if event_.outcome is not Outcome.ABSORBED:
            continue
        assert event_.memory is not None
        (survivor_id,) = [
            r.memory.memory_id for r in event_.relations if r.role is RelationRole.RETAINED and r.memory
        ]
        survivor = carriers[survivor_id or ""]
        assert (
            keys.exact_key(survivor) == event_.memory.memory_key_hash
            or keys.identity_key(survivor) == event_.memory.identity_key_hash
            or event_.memory.memory_id in (survivor.absorbed_ids or ())
        ), (event_, survivor)


def lifted_tombstones(case: PromotionCase) -> set[str]:
    """The key hashes whose tombstones a request among the promoted pending memories lifts
    (docs/decisions.md#d10): an explicit or manual memory, first of its exact key, that is unowned
    or still has its journal entry (a session's copy of a request whose journal entry is gone was
    made before the forget, so it does not lift it)."""
    journal = normalize_journal(case.journal, PROMOTION_NOW)[0].entries
    held = {journal_key(e) for e in journal}
    in_scope = [e for e in journal if case.selects(e)]
    return {
        key_hash(keys.exact_key(e))
        for e in keys.first_per_key([*case.session_pending, *in_scope])
        if e.source in (MemorySource.EXPLICIT, MemorySource.MANUAL)
        and (owner_of(e) is None or journal_key(e) in held)
    }


@given(promotion_cases())
def test_the_store_after_is_normalised_and_tombstones_hold(case: PromotionCase) -> None:
    """No pending-only field reaches the store; no two active entries share an exact key; a
    request lifts its key's tombstone; any other tombstoned pending key is rejected as
    ``tombstoned``, cleared, and never stored."""
    result = case.run()
    for entry in result.store.entries:
        assert entry.pending_owner_session_id is None and entry.promotion_attempts is None, entry
    active = [e for e in result.store.entries if e.status is MemoryStatus.ACTIVE]
    assert len({keys.exact_key(e) for e in active}) == len(active)
    lifted = lifted_tombstones(case)
    before = {t.key_hash for t in case.store.tombstones}
    assert {t.key_hash for t in result.store.tombstones} == before - lifted
    tombstoned = before - lifted
    stored_from_pending = {keys.exact_key(e) for e in active if e.id.startswith(("j", "p"))}
    for key in accounted(result):
        if key_hash(key) in tombstoned:
            assert result.accounting.reason_of(key) == "tombstoned"
            assert key in result.accounting.rejected and key in result.accounting.clearable
            assert key not in stored_from_pending


@given(promotion_cases())
def test_with_nothing_pending_only_the_housekeeping_runs(case: PromotionCase) -> None:
    """No session memory and no journal entry selected: the store comes back normalised (a store
    written elsewhere is cleaned before it is shown), the journal as its own housekeeping leaves it,
    and nothing is accounted."""
    result = case._replace(session_pending=[]).run(
        include_owned=False, include_unowned=False, idle_owner_ids=()
    )
    assert result.store == consolidation.normalize_store(case.store, PROMOTION_NOW).store
    assert result.journal.entries == normalize_journal(case.journal, PROMOTION_NOW)[0].entries
    assert accounted(result) == set() and result.cleared_keys == frozenset()


@given(
    pending=st.lists(promo_spec, max_size=8),
    before=st.lists(promo_spec, max_size=5),
    after=st.lists(promo_spec, max_size=5),
    terminal=st.lists(
        st.tuples(
            st.sampled_from(PROMO_TEXTS),
            st.sampled_from(PROMO_TYPES),
            st.sampled_from(tuple(AbsorptionReason)),
        ),
        max_size=4,
    ),
)
def test_accounting_partitions_arbitrary_inputs(
    pending: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    before: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    after: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    terminal: list[tuple[str, MemoryType, AbsorptionReason]],
) -> None:
    """The accounting partitions the pending keys and keeps its set relations for any
    before/after/terminal combination (docs/decisions.md#promotion)."""
    p = [promo_entry("p", i, s) for i, s in enumerate(pending)]
    b = [promo_entry("s", i, s) for i, s in enumerate(before)]
    a = [promo_entry("s", i, s) for i, s in enumerate(after)]
    terminals = [
        Absorption(
            absorbed=promo_entry("t", i, (text, t, MemorySource.COMPACTION, None, 0, False)),
            survivor_id="",
            reason=reason,
        )
        for i, (text, t, reason) in enumerate(terminal)
    ]
    acc = account_pending_promotions(p, b, a, terminals)
    pending_keys = {keys.exact_key(e) for e in p}
    classes = [set(acc.promoted), set(acc.absorbed), set(acc.rejected)]
    assert sum(len(c) for c in classes) == len(pending_keys)
    assert set().union(*classes) == pending_keys
    base = set(acc.promoted) | set(acc.absorbed)
    assert set(acc.clearable) == base  # nothing here is tombstoned or marked superseded
    assert all(acc.reason_of(k) == "not_in_store" for k in acc.rejected)
    events = promotion_events(p, a, terminals, acc)
    assert len(events) == len(pending_keys)
