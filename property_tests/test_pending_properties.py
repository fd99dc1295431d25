"""Properties of the pending journal (evidence-pending-storage-hooks.md §9 invariants 19-23, B26).

A stateful machine appends, clears, records rejections and lets time pass, and after every step checks
the retention invariants and that nothing left the journal without a ``pending_memory_cleared`` event.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from domain import keys
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
from domain.text import memory_key
from domain.timeutil import iso_from_ms, parse_iso_ms

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
        return MemoryEntry(
            id=f"m{self.counter:04d}",
            type=MemoryType(type_),
            text=text,
            source=source,
            confidence=1.0,
            status=MemoryStatus.ACTIVE,
            created_at=stamp,
            updated_at=stamp,
            pending_owner_session_id=owner,
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
        raw = PendingJournal(workspace=self.journal.workspace, entries=tuple(entries), updated_at="x")
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
    raw = PendingJournal(workspace=machine.journal.workspace, entries=tuple(entries), updated_at="x")
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
