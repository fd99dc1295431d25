"""The scripted multi-session scenario of the session-lifecycle issue, on the pure operations.

Two sessions leave explicit memories; session B ends without compaction (docs/decisions.md#d7: its
memories are promoted on the way out); a day later session A compacts with three candidates — one
duplicate of a stored memory, one the quality gate rejects, one new; then the workspace rests for 20
days and a third session returns (docs/decisions.md#d3: the break is recorded and discounted). The
store, the journal, every evidence event and the rendered block are asserted at each step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.limits import DAY_MS
from domain.model import DormantSpan, EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.operations import (
    OpResult,
    Snapshot,
    compaction_prompt,
    context_text,
    end_session,
    observe_compaction,
    observe_user_message,
    open_session,
)
from domain.pending import empty_journal
from domain.retention import dormancy_at, strength
from domain.search.disclosure import REFERENCE_DISCLOSURE
from domain.timeutil import iso_from_ms, parse_iso_ms
from tests.support.builders import KEY, store

ROOT = "/repo"
T0 = parse_iso_ms("2026-03-02T09:00:00.000Z") or 0
MIN = 60_000

PNPM = "use pnpm for all packages in this repo"
CHINESE = "reply in Traditional Chinese"
API = "we decided to keep the public API versioned under /v2"
GRAFANA = "Deployment dashboards live at https://grafana.example.com/d/api-latency"
SUMMARY = f"""## Goal
Ship the API.

## Next Steps
Wire the dashboards.

Memory candidates:
- [decision] {API}
- [project] 42 tests passed after the latest implementation
- [reference] {GRAFANA}
"""

BLOCK_TWO = """Workspace memory (cross-session, verify if stale):
decision:
- we decided to keep the public API versioned under /v2"""

BLOCK_FOUR = """Workspace memory (cross-session, verify if stale):
feedback:
- reply in Traditional Chinese
project:
- use pnpm for all packages in this repo
decision:
- we decided to keep the public API versioned under /v2
reference:
- Deployment dashboards live at https://grafana.example.com/d/api-latency"""


@dataclass
class World:
    """The persisted state between operations, as the file store would keep it."""

    store: WorkspaceStore
    journal: PendingJournal
    sessions: dict[str, SessionState] = field(default_factory=dict)

    def snap(self, session_id: str) -> Snapshot:
        others = tuple(s for sid, s in self.sessions.items() if sid != session_id)
        return Snapshot(
            store=self.store,
            journal=self.journal,
            session=self.sessions.get(session_id),
            others=others,
            disclosure=REFERENCE_DISCLOSURE,  # the reference's scenario, byte for byte
        )

    def apply(self, session_id: str, result: OpResult) -> OpResult:
        self.store, self.journal = result.store, result.journal
        if result.delete_session:
            self.sessions.pop(session_id, None)
        elif result.session is not None:
            self.sessions[session_id] = result.session
        for pruned in result.pruned_sessions:
            self.sessions.pop(pruned, None)
        return result


def new_world() -> World:
    return World(
        store=store(root=ROOT, at=T0),
        journal=empty_journal(ROOT, KEY, T0),
    )


def summary_of(events: tuple[EvidenceInput, ...]) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    return [(e.type.value, e.outcome.value, e.reason_codes, e.text_preview) for e in events]


def stored(store: WorkspaceStore) -> list[tuple[str, str, str, str, int | None]]:
    """The stored memories, by type then text (the stored order is not part of the contract)."""
    rows = [
        (e.type.value, e.source.value, e.status.value, e.text, e.reinforcement_count) for e in store.entries
    ]
    return sorted(rows, key=lambda row: (row[0], row[3]))


def journal_rows(journal: PendingJournal) -> list[tuple[str | None, str, str]]:
    return [(e.pending_owner_session_id, e.source.value, e.text) for e in journal.entries]


def by_text(store: WorkspaceStore, text: str) -> MemoryEntry:
    return next(e for e in store.entries if e.text == text)


SELECTED = ("render_selected", "rendered", ("within_caps", "within_char_budget"))


def test_two_sessions_compaction_break_and_return() -> None:
    w = new_world()

    # 1. Session A opens on an empty workspace: nothing to inject, no memory events.
    r = w.apply("A", open_session(w.snap("A"), "A", T0))
    assert r.output == ""
    assert r.events == ()
    assert w.store.entries == () and w.journal.entries == ()
    assert w.sessions["A"].frozen_block == "" and w.sessions["A"].epoch == 1

    # 2. A's user asks to remember two things: both pending, owned by A, not yet in the store.
    r = w.apply(
        "A",
        observe_user_message(
            w.snap("A"), "A", "m1", f"remember this: {PNPM}\nfrom now on: {CHINESE}", T0 + MIN
        ),
    )
    assert summary_of(r.events) == [
        ("explicit_memory_detected", "accepted", ("explicit_trigger_matched",), PNPM),
        ("explicit_memory_detected", "accepted", ("explicit_trigger_matched",), CHINESE),
        ("pending_memory_appended", "accepted", ("pending_journal_append",), PNPM),
        ("pending_memory_appended", "accepted", ("pending_journal_append",), CHINESE),
    ]
    assert all(e.session_id == "A" and e.message_id == "m1" for e in r.events)
    assert w.store.entries == ()
    assert journal_rows(w.journal) == [("A", "explicit", PNPM), ("A", "explicit", CHINESE)]
    assert [m.text for m in w.sessions["A"].pending_memories] == [PNPM, CHINESE]
    assert context_text(w.sessions["A"], ROOT) == (
        f"Hot session state (current session):\npending_memories:\n- [project] {PNPM}\n- [feedback] {CHINESE}"
    )
    # the same message id again is a no-op
    again = observe_user_message(w.snap("A"), "A", "m1", f"remember this: {PNPM}", T0 + 2 * MIN)
    assert again.events == () and again.journal == w.journal and again.session == w.sessions["A"]

    # 3. Session B opens: A's memories are A's own (not adopted: A was active a minute ago).
    r = w.apply("B", open_session(w.snap("B"), "B", T0 + 2 * MIN))
    assert r.events == () and r.output == ""
    assert len(w.journal.entries) == 2 and w.store.entries == ()

    # 4. B's user states a decision to remember.
    r = w.apply("B", observe_user_message(w.snap("B"), "B", "m2", f"remember: {API}", T0 + 3 * MIN))
    assert summary_of(r.events) == [
        ("explicit_memory_detected", "accepted", ("explicit_trigger_matched",), API),
        ("pending_memory_appended", "accepted", ("pending_journal_append",), API),
    ]
    assert [d.text for d in w.sessions["B"].recent_decisions] == [API]
    assert journal_rows(w.journal) == [
        ("A", "explicit", PNPM),
        ("A", "explicit", CHINESE),
        ("B", "explicit", API),
    ]

    # 5. B ends without compaction: its own memory is promoted (docs/decisions.md#d7), A's stay pending.
    r = w.apply("B", end_session(w.snap("B"), "B", T0 + 30 * MIN))
    assert summary_of(r.events) == [
        ("promotion_promoted", "promoted", ("new_workspace_entry",), API),
        ("pending_memory_cleared", "cleared", ("promoted",), API),
    ]
    assert "B" not in w.sessions
    assert stored(w.store) == [("decision", "explicit", "active", API, None)]
    assert journal_rows(w.journal) == [("A", "explicit", PNPM), ("A", "explicit", CHINESE)]
    api_id = by_text(w.store, API).id
    # A's frozen block is still the one of its epoch (empty); B's decision shows from A's next epoch
    assert w.sessions["A"].frozen_block == ""

    # 6. The next day A compacts with three candidates: a duplicate, a gate rejection, a new one.
    t_compact = T0 + DAY_MS + 60 * MIN
    r = w.apply("A", observe_compaction(w.snap("A"), "A", SUMMARY, t_compact))
    assert summary_of(r.events) == [
        ("extraction_candidate_accepted", "accepted", ("quality_gate_passed", "valid_candidate_format"), API),
        (
            "extraction_candidate_rejected",
            "rejected",
            ("progress_snapshot",),
            "42 tests passed after the latest implementation",
        ),
        (
            "extraction_candidate_accepted",
            "accepted",
            ("quality_gate_passed", "valid_candidate_format"),
            GRAFANA,
        ),
        ("pending_memory_appended", "accepted", ("pending_journal_append",), API),
        ("pending_memory_appended", "accepted", ("pending_journal_append",), GRAFANA),
        ("memory_reinforced", "reinforced", ("duplicate_exact", "reinforcement_window_allowed"), API),
        ("promotion_promoted", "promoted", ("new_workspace_entry",), PNPM),
        ("promotion_promoted", "promoted", ("new_workspace_entry",), CHINESE),
        ("promotion_absorbed_exact", "absorbed", ("same_exact_key",), API),
        ("promotion_promoted", "promoted", ("new_workspace_entry",), GRAFANA),
        ("pending_memory_cleared", "cleared", ("promoted",), PNPM),
        ("pending_memory_cleared", "cleared", ("promoted",), CHINESE),
        ("pending_memory_cleared", "cleared", ("promoted",), GRAFANA),
        ("pending_memory_cleared", "cleared", ("absorbed",), API),
        (*SELECTED, CHINESE),
        (*SELECTED, PNPM),
        (*SELECTED, API),
        (*SELECTED, GRAFANA),
    ]
    assert all(e.session_id == "A" for e in r.events)
    assert [rec.reasons for rec in r.rejections] == [("progress_snapshot",)]
    assert stored(w.store) == [
        ("decision", "explicit", "active", API, 1),
        ("feedback", "explicit", "active", CHINESE, None),
        ("project", "explicit", "active", PNPM, None),
        ("reference", "compaction", "active", GRAFANA, None),
    ]
    reinforced = by_text(w.store, API)
    assert reinforced.id == api_id
    assert reinforced.last_reinforced_session_id == "A" and reinforced.retention_clock == t_compact
    assert all(e.pending_owner_session_id is None for e in w.store.entries)  # docs/decisions.md#b15
    assert w.journal.entries == ()
    session_a = w.sessions["A"]
    assert session_a.pending_memories == ()
    assert session_a.epoch == 2  # compaction starts a new cache epoch
    assert session_a.frozen_block == BLOCK_FOUR
    assert context_text(session_a, ROOT) == BLOCK_FOUR  # no hot state left to show
    prompt = compaction_prompt(session_a, ROOT)
    assert "- [M3] we decided to keep the public API versioned under /v2" in prompt
    assert "[M" not in session_a.frozen_block

    # 7. Twenty days of silence, then session C returns.
    t_return = t_compact + 20 * DAY_MS
    before_return = w.store
    r = w.apply("C", open_session(w.snap("C"), "C", t_return))
    assert summary_of(r.events) == [
        ("workspace_dormancy_recorded", "recorded", ("dormant_span_recorded",), None),
        (*SELECTED, CHINESE),
        (*SELECTED, PNPM),
        (*SELECTED, API),
        (*SELECTED, GRAFANA),
        # A never ended and has been idle for more than a week with nothing pending: pruned
        ("session_pruned", "removed", ("idle_session_pruned",), None),
    ]
    assert r.pruned_sessions == ("A",)
    assert w.store.dormant_spans == (DormantSpan(start=t_compact + 14 * DAY_MS, end=t_return),)
    assert w.store.last_activity_at == iso_from_ms(t_return)
    # the dashboard URL names a host: a volatile reference, unverified past its 7-day window
    # (docs/decisions.md#d18)
    assert r.output == BLOCK_FOUR + " [unverified 20 d]"
    assert w.journal.entries == ()
    # the break is discounted: every memory is stronger than it would be without dormancy
    # (docs/decisions.md#d3)
    discounted = dormancy_at(w.store, t_return)
    for entry in w.store.entries:
        assert strength(entry, t_return, discounted) > strength(entry, t_return)
        assert entry.last_rendered_at == t_return
    # and the discount was already there before the return was recorded (render sees the break)
    for entry in before_return.entries:
        assert strength(entry, t_return, dormancy_at(before_return, t_return)) == strength(
            entry, t_return, discounted
        )
    # A's file is gone: a session idle for a week starts afresh (its frozen block had expired anyway)
    assert "A" not in w.sessions


def test_block_after_end_of_b_alone() -> None:
    """A session opened after B ended (and before A compacts) sees only B's promoted decision."""
    w = new_world()
    w.apply("B", observe_user_message(w.snap("B"), "B", "m2", f"remember: {API}", T0))
    w.apply("B", end_session(w.snap("B"), "B", T0 + MIN))
    r = w.apply("D", open_session(w.snap("D"), "D", T0 + 2 * MIN))
    assert r.output == BLOCK_TWO
    # within the epoch the block is returned byte for byte, with no new events
    again = open_session(w.snap("D"), "D", T0 + 30 * MIN)
    assert again.output == BLOCK_TWO and again.events == ()
