"""No sequence of host events loses an acknowledged explicit memory (docs/decisions.md#pending-journal-bound,
docs/decisions.md#d7, docs/decisions.md#d10).

Hypothesis drives many sessions through the core operations in memory (:class:`World`): they open,
ask to remember things (often enough, through a flood of requests, to push the pending journal over
its 50-entry bound), use tools, compact with candidates, end or go idle for more than a day (so that
other sessions adopt their requests) and for more than a week; the user remembers, forgets,
supersedes and restores memories. A request is *acknowledged* when its operation emitted a
``pending_memory_appended`` event for it. After every step, every acknowledged request is

* still waiting in the journal (an entry with its key and owner), or
* carried by an active stored memory (its own entry, the entry that absorbed it, or one with its
  exact or identity key), or archived, or
* carried only by memories the user forgot or superseded *after* the request was acknowledged.

Nothing in this world supersedes a memory except the user's commands (no compaction line names a
memory to supersede), so anything else is a loss. After every operation the journal is within its
bound, and the bound (``journal_cap``) never clears a request.

``pytest --hypothesis-show-statistics`` reports how many examples pushed the journal over its bound
(the events "the journal reached its bound" and "an operation promoted requests early"); no rule
has a precondition, so almost no example is discarded.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from hypothesis import event, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from domain.keys import exact_key, identity_key, key_hash
from domain.model import (
    DAY_MS,
    HOUR_MS,
    EventType,
    MemoryEntry,
    MemoryStatus,
    MemoryType,
    PendingJournalLimits,
)
from domain.pending import journal_key
from domain.promotion import EARLY_PROMOTION
from property_tests.store_strategies import NOW_MS
from property_tests.test_lifecycle_machine import MIGRATED
from tests.support import builders
from tests.support.world import Compact, End, Forget, Op, Open, Remember, Restore, Say, Supersede, Tool, World

SESSIONS: Final = tuple(f"ses_{i}" for i in range(6))
#: Requests said again and again (duplicates, the same path or URL in other words, and texts a
#: compaction candidate or a manual memory shares).
REQUESTS: Final = (
    "remember this: always use pnpm for package installs",
    "remember this: Always use PNPM for package installs.",
    "remember this: the project config lives in src/config.ts",
    "remember this: the config loader is src/config.ts and it validates on start",
    "remember this: the API docs live at https://example.com/docs/api/",
    "remember this: never force-push to the main branch",
    "From now on, answer in British English",
    "don't remember this: the staging password is hunter2",  # negated: never acknowledged
)
CANDIDATES: Final = (
    "- [feedback] Never force-push to the main branch",
    "- [project] Project config lives in `./src/config.ts`",
    "- [reference] API reference: https://example.com/docs/api#auth",
    "- [decision] Keep the retention model strength-based",
)
MANUAL: Final = (
    ("Always answer in British English", MemoryType.FEEDBACK),
    ("Keep the retention model strength-based", MemoryType.DECISION),
    ("The API docs are served from https://example.com/docs/api/", MemoryType.REFERENCE),
)
clock_steps = st.one_of(
    st.integers(1, 59).map(lambda n: n * 60_000),
    st.integers(1, 23).map(lambda n: n * HOUR_MS),
    st.integers(25, 30).map(lambda n: n * HOUR_MS),  # past the one-day idle limit (docs/decisions.md#d7)
    st.integers(8, 12).map(lambda n: n * DAY_MS),  # past the week an idle session file is kept
)


class Request(NamedTuple):
    """An acknowledged request: its pending entry's id, keys and owner, and when it was made."""

    memory_id: str
    exact: str
    identity: str
    owner: str
    step: int


class NoRequestLost(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.world = World(NOW_MS, builders.store(at=NOW_MS, migrations=MIGRATED))
        self.requests: list[Request] = []
        #: memory id -> the step at which the user forgot or superseded it (until it is restored)
        self.retired: dict[str, int] = {}
        self.steps = 0
        self.unique = 0
        self.largest_journal = 0

    # -- running one host event, and what it acknowledged --------------------------------------

    def _apply(self, op: Op) -> None:
        self.steps += 1
        start = len(self.world.events)
        result = self.world.apply(op)
        assert result is not None
        new = self.world.events[start:]
        sid = getattr(op, "sid", "")
        for ev in new:
            if ev.type is EventType.PENDING_MEMORY_APPENDED and ev.memory is not None and sid:
                ref = ev.memory
                if ref.source == "explicit" and ref.memory_id and ref.memory_key_hash:
                    identity = ref.identity_key_hash or ref.memory_key_hash
                    self.requests.append(
                        Request(ref.memory_id, ref.memory_key_hash, identity, sid, self.steps)
                    )
            # the bound never clears what a person asked for
            if ev.type is EventType.PENDING_MEMORY_CLEARED and "journal_cap" in ev.reason_codes:
                assert ev.memory is not None and ev.memory.source == "compaction", ev
        if any(EARLY_PROMOTION in ev.reason_codes for ev in new):
            event("an operation promoted requests early")
        # no operation leaves the journal over its bound: what it pushed over went to the store
        assert len(self.world.journal.entries) <= PendingJournalLimits.MAX_ENTRIES
        self.largest_journal = max(self.largest_journal, len(self.world.journal.entries))

    # -- host events -----------------------------------------------------------------------------

    @rule(sid=st.sampled_from(SESSIONS), text=st.sampled_from(REQUESTS))
    def say(self, sid: str, text: str) -> None:
        self._apply(Say(sid=sid, text=text))

    @initialize(sids=st.lists(st.sampled_from(SESSIONS), min_size=1, max_size=3), n=st.integers(0, 50))
    def backlog(self, sids: list[str], n: int) -> None:
        """Start with up to 50 requests waiting: a few more push the journal over its bound."""
        self.flood(sids, n)

    @rule(sids=st.lists(st.sampled_from(SESSIONS), min_size=1, max_size=3), n=st.integers(20, 70))
    def flood(self, sids: list[str], n: int) -> None:
        """Many new requests at once, from one to three sessions in turn: enough of them push the
        journal over its bound."""
        for i in range(n):
            self.unique += 1
            number = self.unique
            self._apply(
                Say(sid=sids[i % len(sids)], text=f"remember this: rule {number} keeps part {number} tidy")
            )
        if self.largest_journal >= PendingJournalLimits.MAX_ENTRIES:
            event("the journal reached its bound")

    @rule(sid=st.sampled_from(SESSIONS))
    def tool(self, sid: str) -> None:
        self._apply(Tool(sid=sid))

    @rule(sid=st.sampled_from(SESSIONS))
    def open_session(self, sid: str) -> None:
        self._apply(Open(sid=sid))

    @rule(sid=st.sampled_from(SESSIONS), lines=st.lists(st.sampled_from(CANDIDATES), max_size=3))
    def compact(self, sid: str, lines: list[str]) -> None:
        summary = "## Goal\nKeep going.\n\nMemory candidates:\n" + ("\n".join(lines) or "(none)") + "\n"
        self._apply(Compact(sid=sid, summary=summary))

    @rule(sid=st.sampled_from(SESSIONS))
    def end_session(self, sid: str) -> None:
        self._apply(End(sid=sid))

    @rule(step=clock_steps)
    def wait(self, step: int) -> None:
        self.world.now += step

    # -- the user's commands --------------------------------------------------------------------

    def _ids(self, status: MemoryStatus) -> list[str]:
        return sorted(e.id for e in self.world.store.entries if e.status is status)

    @rule(manual=st.sampled_from(MANUAL))
    def remember(self, manual: tuple[str, MemoryType]) -> None:
        self._apply(Remember(text=manual[0], memory_type=manual[1]))

    @rule(data=st.data(), manual=st.sampled_from(MANUAL))
    def command_on_a_memory(self, data: st.DataObject, manual: tuple[str, MemoryType]) -> None:
        """Forget or supersede an active memory, or restore a retired one: whichever the store
        allows (one rule without preconditions, so that no generated step is discarded)."""
        commands = (["forget", "supersede"] if self._ids(MemoryStatus.ACTIVE) else []) + (
            ["restore"] if self.retired else []
        )
        if not commands:
            self._apply(Forget(memory_id="mem_unknown"))  # names no memory: changes nothing
            return
        command = data.draw(st.sampled_from(commands))
        if command == "restore":
            memory_id = data.draw(st.sampled_from(sorted(self.retired)))
            self._apply(Restore(memory_id=memory_id))
            del self.retired[memory_id]
            return
        memory_id = data.draw(st.sampled_from(self._ids(MemoryStatus.ACTIVE)))
        if command == "forget":
            self._apply(Forget(memory_id=memory_id))
        else:
            self._apply(Supersede(memory_id=memory_id, text=manual[0]))
        if self._status(memory_id) is MemoryStatus.SUPERSEDED:  # a rejected new text changes nothing
            self.retired[memory_id] = self.steps

    def _status(self, memory_id: str) -> MemoryStatus | None:
        return next((e.status for e in self.world.store.entries if e.id == memory_id), None)

    # -- the property -----------------------------------------------------------------------------

    @invariant()
    def no_acknowledged_request_is_lost(self) -> None:
        store = self.world.store
        waiting = {journal_key(e) for e in self.world.journal.entries}
        archived = {m.key_hash for m in store.archived} | {m.memory_id for m in store.archived}
        carriers: dict[str, list[MemoryEntry]] = {}  # id, absorbed id, exact or identity key -> entries
        for entry in store.entries:
            for name in {entry.id, *(entry.absorbed_ids or ()), exact_key(entry), identity_key(entry)}:
                carriers.setdefault(name, []).append(entry)
        for request in self.requests:
            if f"{request.exact}\x00{request.owner}" in waiting:
                continue
            if key_hash(request.exact) in archived or request.memory_id in archived:
                continue
            found = [
                e
                for name in (request.memory_id, request.exact, request.identity)
                for e in carriers.get(name, ())
            ]
            assert found, f"acknowledged request {request} is neither pending nor stored"
            if any(e.status is MemoryStatus.ACTIVE for e in found):
                continue
            retired_since = [e.id for e in found if self.retired.get(e.id, -1) > request.step]
            assert retired_since, f"{request} is stored only as memories retired before it: {found}"

    def teardown(self) -> None:
        if self.requests:
            event(f"acknowledged requests: {'over 100' if len(self.requests) > 100 else '100 or fewer'}")


TestNoRequestLost = NoRequestLost.TestCase
TestNoRequestLost.settings = settings(stateful_step_count=25)
