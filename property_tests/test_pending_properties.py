"""Properties of the pending journal and of promotion (evidence-pending-storage-hooks.md §9 invariants
19-29, store-retention.md §7 invariants 43-44, B26).

A stateful machine appends, clears, records rejections and lets time pass, and after every step checks
the retention invariants and that nothing left the journal without a ``pending_memory_cleared`` event.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from msgspec.structs import replace

from domain import consolidation, keys
from domain.consolidation import Absorption
from domain.keys import key_hash
from domain.model import (
    DAY_MS,
    HOUR_MS,
    EventType,
    EvidenceInput,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    PendingJournal,
    Tombstone,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.pending import (
    append_pending,
    clear_pending,
    empty_journal,
    entry_time,
    journal_key,
    max_attempts,
    normalize_journal,
    owner_of,
    record_rejections,
)
from domain.promotion import account_pending_promotions, promote, promotion_events
from domain.text import memory_key
from domain.timeutil import iso_from_ms, parse_iso_ms
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
    entries = journal.entries
    assert len(entries) <= 50
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
        # explicit and manual entries never age out
        for e in events:
            if e.reason_codes[:1] == ("journal_ttl",):
                assert e.memory is not None and e.memory.source == "compaction"
        self.journal = journal
        check_retention(journal, self.now)

    @initialize(specs=st.lists(entry_spec, max_size=60))
    def seed(self, specs: list[tuple[str, str, MemorySource, str | None, int, bool]]) -> None:
        entries = [self.build(s) for s in specs]
        raw = builders.journal(*entries, root="/w", key="k", updated_at="x")
        self.journal = raw
        journal, events = normalize_journal(raw, self.now)
        self.apply(journal, events)

    @rule(specs=st.lists(entry_spec, max_size=12))
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
        chosen = set(data.draw(st.lists(st.sampled_from(present), max_size=6))) if present else set()
        if data.draw(st.booleans()):
            chosen.add(memory_key("decision", data.draw(st.sampled_from(TEXTS))))
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

    @rule(data=st.data(), owner=st.sampled_from(OWNERS), only=st.booleans())
    def record(self, data: st.DataObject, owner: str | None, only: bool) -> None:
        wanted = self.pick_keys(data)
        before = {e.id: e for e in self.journal.entries}
        journal, exhausted, events = record_rejections(
            self.journal, wanted, "capacity_rejected", self.now, owner=owner, include_unowned_only=only
        )
        after = {e.id: e for e in journal.entries}
        removed_keys = set()
        for id_, old in before.items():
            in_scope = keys.exact_key(old) in wanted and (
                owner_of(old) == owner if owner else (owner_of(old) is None if only else True)
            )
            new = after.get(id_)
            if not in_scope:
                assert new == old
                continue
            attempts = (old.promotion_attempts or 0) + 1
            if attempts >= max_attempts(old):
                assert new is None
                removed_keys.add(keys.exact_key(old))
            else:
                assert new is not None and new.promotion_attempts == attempts
                assert new.last_promotion_failure_reason == "capacity_rejected"
        assert exhausted == removed_keys
        self.apply(journal, events)

    @invariant()
    def normalised_is_a_fixed_point(self) -> None:
        again, events = normalize_journal(self.journal, self.now)
        assert again.entries == self.journal.entries and events == ()


TestJournalMachine = JournalMachine.TestCase
TestJournalMachine.settings = settings(stateful_step_count=15)


@given(st.lists(entry_spec, max_size=80), st.integers(min_value=0, max_value=60 * DAY_MS))
def test_cap_keeps_the_newest(
    specs: list[tuple[str, str, MemorySource, str | None, int, bool]], later: int
) -> None:
    """Under the cap, the kept entries are the newest of those that survived dedupe and TTL."""
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
        oldest_kept = min((entry_time(e) or 0, e.id) for e in journal.entries)
        for id_ in capped:
            assert (entry_time(by_id[id_]) or 0, id_) < oldest_kept


# ---------------------------------------------------------------------------------------------
# Promotion (§9 invariants 24-29, store-retention §7 invariants 43-44)
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


@given(
    stored=st.lists(promo_spec, max_size=6),
    journaled=st.lists(promo_spec, max_size=8),
    session=st.lists(promo_spec, max_size=3),
    session_id=st.sampled_from((None, "s1")),
    include_owned=st.booleans(),
    include_unowned=st.booleans(),
    idle=st.lists(st.sampled_from(("dead", "s2")), max_size=2),
    tomb=st.lists(st.sampled_from(PROMO_TEXTS), max_size=2),
)
def test_promotion_accounts_for_every_pending_memory(
    stored: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    journaled: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    session: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    session_id: str | None,
    include_owned: bool,
    include_unowned: bool,
    idle: list[str],
    tomb: list[str],
) -> None:
    now = START + 1000
    tombstones = tuple(
        Tombstone(
            key_hash=key_hash(memory_key(t.value, text)), memory_id="x", reason="forgotten", created_at="x"
        )
        for text in tomb
        for t in (MemoryType.DECISION,)
    )
    store = WorkspaceStore(
        workspace=WorkspaceRef(root="/w", key="k"),
        entries=tuple(promo_entry("s", i, s) for i, s in enumerate(stored)),
        updated_at=iso_from_ms(START),
        tombstones=tombstones,
    )
    journal = PendingJournal(
        workspace=WorkspaceRef(root="/w", key="k"),
        entries=tuple(promo_entry("j", i, s) for i, s in enumerate(journaled)),
        updated_at="x",
    )
    session_pending = [
        replace(promo_entry("p", i, s), pending_owner_session_id=session_id) for i, s in enumerate(session)
    ]

    result = promote(
        store,
        journal,
        session_pending,
        now,
        session_id=session_id,
        include_owned=include_owned,
        include_unowned=include_unowned,
        idle_owner_ids=idle,
    )
    acc = result.accounting

    # what was pending: session list, then the selected journal entries
    normalized, _ = normalize_journal(journal, now)
    adopted = {o for o in idle if o != session_id}
    owners = ({session_id} if session_id else set()) | adopted

    def selected(entry: MemoryEntry) -> bool:
        owner = owner_of(entry)
        if owner is None:
            return include_unowned
        return (include_owned and owner == session_id) or owner in adopted

    pending = [*session_pending, *(e for e in normalized.entries if selected(e))]
    pending_keys = {keys.exact_key(e) for e in pending}
    sources: dict[str, MemorySource] = {}
    for entry in pending:
        sources.setdefault(keys.exact_key(entry), entry.source)

    # partition (inv. 24 / 43)
    classes = [set(acc.promoted), set(acc.absorbed), set(acc.superseded), set(acc.rejected)]
    assert sum(len(c) for c in classes) == len(pending_keys)
    assert set().union(*classes) == pending_keys
    # set relations (inv. 25 / 44)
    retryable, clearable = set(acc.retryable), set(acc.clearable)
    assert retryable <= set(acc.rejected)
    assert not retryable & clearable
    assert all(sources[k] in (MemorySource.EXPLICIT, MemorySource.MANUAL) for k in retryable)
    assert set(acc.promoted) | set(acc.absorbed) | set(acc.superseded) <= clearable
    # evidence coverage (inv. 28)
    outcome_types = {
        EventType.PROMOTION_PROMOTED,
        EventType.PROMOTION_ABSORBED_EXACT,
        EventType.PROMOTION_ABSORBED_IDENTITY,
        EventType.PROMOTION_SUPERSEDED,
        EventType.PROMOTION_REJECTED_CAPACITY,
        EventType.PROMOTION_REJECTED,
    }
    outcomes = [e.memory.memory_key_hash for e in result.events if e.type in outcome_types and e.memory]
    assert sorted(o or "" for o in outcomes) == sorted(pending_keys)
    retry_types = {EventType.PROMOTION_RETRY_SCHEDULED, EventType.PROMOTION_RETRY_EXHAUSTED}
    retries = [e.memory.memory_key_hash for e in result.events if e.type in retry_types and e.memory]
    assert sorted(r or "" for r in retries) == sorted(retryable)

    # a cleared memory is no longer pending within the promotion's scope
    def in_scope(entry: MemoryEntry) -> bool:
        owner = owner_of(entry)
        return owner in owners or (owner is None and include_unowned)

    for entry in result.journal.entries:
        if in_scope(entry):
            assert keys.exact_key(entry) not in clearable
    # other owners' entries are untouched (inv. 29)
    untouched = [e for e in normalized.entries if not in_scope(e)]
    assert [e for e in result.journal.entries if not in_scope(e)] == untouched
    # nothing leaves the journal without an event naming it
    gone = {e.id for e in normalized.entries} - {e.id for e in result.journal.entries}
    assert gone <= set(cleared_ids(result.events))
    # no pending-only fields reach the store; at most one active entry per exact key (inv. 26)
    active = [e for e in result.store.entries if e.status is MemoryStatus.ACTIVE]
    assert all(
        e.pending_owner_session_id is None and e.promotion_attempts is None for e in result.store.entries
    )
    # promotion always hands back a normalised store (even with nothing pending: D4)
    assert len({keys.exact_key(e) for e in active}) == len(active)
    if not pending:
        assert result.store == consolidation.normalize_store(store, now).store
    # tombstoned memories never enter the store
    for entry in pending:
        if key_hash(keys.exact_key(entry)) in {t.key_hash for t in tombstones}:
            assert keys.exact_key(entry) not in {
                keys.exact_key(e) for e in active if e.id.startswith(("j", "p"))
            }
    assert result.cleared_keys >= clearable


@given(
    pending=st.lists(promo_spec, max_size=8),
    before=st.lists(promo_spec, max_size=5),
    after=st.lists(promo_spec, max_size=5),
    terminal=st.lists(
        st.tuples(
            st.sampled_from(PROMO_TEXTS),
            st.sampled_from(PROMO_TYPES),
            st.sampled_from(
                ("absorbed_exact", "absorbed_identity", "superseded_existing", "rejected_capacity")
            ),
        ),
        max_size=4,
    ),
)
def test_accounting_partitions_arbitrary_inputs(
    pending: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    before: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    after: list[tuple[str, MemoryType, MemorySource, str | None, int, bool]],
    terminal: list[tuple[str, MemoryType, str]],
) -> None:
    """store-retention §7 invariants 43-44 for any before/after/terminal combination."""
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
    classes = [set(acc.promoted), set(acc.absorbed), set(acc.superseded), set(acc.rejected)]
    assert sum(len(c) for c in classes) == len(pending_keys)
    assert set().union(*classes) == pending_keys
    base = set(acc.promoted) | set(acc.absorbed) | set(acc.superseded)
    clearable = set(acc.clearable)
    assert base <= clearable
    first_source: dict[str, MemorySource] = {}
    for entry in p:
        first_source.setdefault(keys.exact_key(entry), entry.source)
    for extra in clearable - base:
        assert acc.reason_of(extra) == "capacity_rejected"
        assert any(keys.exact_key(e) == extra and e.source is MemorySource.COMPACTION for e in p)
    retryable = set(acc.retryable)
    assert retryable <= set(acc.rejected) and not retryable & clearable
    assert all(
        first_source[k] in (MemorySource.EXPLICIT, MemorySource.MANUAL)
        or any(keys.exact_key(e) == k and e.source in (MemorySource.EXPLICIT, MemorySource.MANUAL) for e in p)
        for k in retryable
    )
    events = promotion_events(p, a, terminals, acc)
    assert len([e for e in events if e.type not in {EventType.PROMOTION_RETRY_SCHEDULED}]) == len(
        pending_keys
    )
