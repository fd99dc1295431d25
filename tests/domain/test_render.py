"""Render selection and format (docs/decisions.md#the-workspace-block; docs/decisions.md#d2,
docs/decisions.md#d3, docs/decisions.md#d10)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from msgspec.structs import replace

from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.limits import DAY_MS
from domain.model import ArchiveMarker, DormantSpan, MemoryEntry, StoreLimits, WorkspaceStore
from domain.render import (
    RENDER_HEADER,
    Omission,
    OmissionReason,
    number_block,
    render_entry_line,
    render_workspace_block,
)
from domain.timeutil import iso_from_ms
from tests.support.builders import NOW, memory, store


def mem(
    id_: str,
    text: str,
    type_: str = "decision",
    source: str = "compaction",
    *,
    age_days: float = 0.0,
    created_at: str | None = None,
    **fields: Any,
) -> MemoryEntry:
    """A memory created ``age_days`` before NOW (or at ``created_at``), its retention clock started
    then; confidence 1.0 only for an explicit one."""
    at = NOW - age_days * DAY_MS
    stamps = {"created_at": created_at, "updated_at": created_at} if created_at is not None else {}
    confidence = 1.0 if source == "explicit" else 0.75
    return memory(
        text,
        id=id_,
        type=type_,
        source=source,
        confidence=confidence,
        at=at,
        retention_clock=at,
        **stamps,
        **fields,
    )


def store_of(
    entries: list[MemoryEntry],
    *,
    max_chars: int = 5200,
    last_activity_ms: float | None = NOW,
    spans: tuple[DormantSpan, ...] = (),
    archived: tuple[ArchiveMarker, ...] = (),
) -> WorkspaceStore:
    """The store of ``/home/dev/repo``, active ``last_activity_ms``, with a 5,200-character budget."""
    return store(
        *entries,
        root="/home/dev/repo",
        limits=StoreLimits(max_rendered_chars=max_chars),
        last_activity_at=iso_from_ms(last_activity_ms) if last_activity_ms is not None else None,
        dormant_spans=spans,
        archived=archived,
    )


# The reference's worked example of a render (derived from the reference).
F1 = mem("f1", "User prefers concise summaries", "feedback", "explicit", age_days=2)
P1 = mem("p1", "This repo uses TypeScript and Node.js test runner", "project", stale_after_days=60)
D1 = mem(
    "d1",
    "Use npm cache for plugin loading, not npm link",
    "decision",
    age_days=50,
    rationale="npm link breaks peer deps",
    stale_after_days=45,
)
R1 = mem(
    "r1",
    "Storage lives under ~/.local/share/opencode-working-memory/",
    "reference",
    age_days=1,
    stale_after_days=90,
)
EXAMPLE = [D1, R1, P1, F1]
EXAMPLE_TEXT = (
    "Workspace memory (cross-session, verify if stale):\n"
    "feedback:\n"
    "- User prefers concise summaries\n"
    "project:\n"
    "- This repo uses TypeScript and Node.js test runner\n"
    "decision:\n"
    "- Use npm cache for plugin loading, not npm link Why: npm link breaks peer deps [50d old, verify]\n"
    "reference:\n"
    "- Storage lives under ~/.local/share/opencode-working-memory/"
)


def reasons(omitted: tuple[Omission, ...]) -> dict[str, str]:
    return {o.memory_id: o.reason for o in omitted}


def test_worked_example_is_byte_identical_335_chars() -> None:
    result = render_workspace_block(store_of(EXAMPLE), NOW)
    assert result.text == EXAMPLE_TEXT
    assert len(result.text) == 335
    assert [e.id for e in result.rendered] == ["f1", "p1", "d1", "r1"]
    assert result.omitted == ()
    assert [e.type for e in result.events] == [EventType.RENDER_SELECTED] * 4


def test_budget_79_renders_nothing_and_omits_all_as_empty_render_budget() -> None:
    result = render_workspace_block(store_of(EXAMPLE, max_chars=79), NOW)
    assert result.text == ""
    assert result.rendered == ()
    assert reasons(result.omitted) == {i: "empty_render_budget" for i in ("f1", "p1", "d1", "r1")}


def test_budget_80_gives_header_only_reference_quirk_b11() -> None:
    """Kept reference behaviour (docs/decisions.md#s11): candidates exist, nothing fits, the header
    alone is shown."""
    result = render_workspace_block(store_of(EXAMPLE, max_chars=80), NOW)
    assert result.text == RENDER_HEADER
    assert len(result.text) == 50
    assert result.rendered == ()
    assert reasons(result.omitted) == {i: "char_budget" for i in ("f1", "p1", "d1", "r1")}


@pytest.mark.parametrize("budget", [100, 120])
def test_budget_100_and_120_fit_only_the_feedback_line(budget: int) -> None:
    result = render_workspace_block(store_of(EXAMPLE, max_chars=budget), NOW)
    assert result.text == RENDER_HEADER + "\nfeedback:\n- User prefers concise summaries"
    assert len(result.text) == 93
    assert [e.id for e in result.rendered] == ["f1"]
    assert reasons(result.omitted) == {"p1": "char_budget", "d1": "char_budget", "r1": "char_budget"}


@pytest.mark.parametrize("budget", [3600, 5200, 10**9])
def test_any_budget_at_or_above_3600_gives_the_3600_result(budget: int) -> None:
    many = [mem(f"d{i:02d}", f"Durable decision number {i} " + "x" * 200, age_days=i) for i in range(10)]
    many += [mem(f"f{i:02d}", f"Feedback number {i} " + "y" * 200, "feedback", age_days=i) for i in range(10)]
    reference = render_workspace_block(store_of(many, max_chars=3600), NOW)
    assert len(reference.text) <= 3600
    assert reference.omitted  # the budget binds
    assert render_workspace_block(store_of(many, max_chars=budget), NOW) == reference


def test_exact_fit_is_inclusive() -> None:
    """The T6 arithmetic: header + section + one line of exactly 100 characters fits a budget of 100."""
    entry = mem("mem-rendered", "Rendered feedback wins the render set", "feedback", "explicit")
    result = render_workspace_block(store_of([entry], max_chars=100), NOW)
    assert len(result.text) == 100
    assert [e.id for e in result.rendered] == ["mem-rendered"]
    assert render_workspace_block(store_of([entry], max_chars=99), NOW).text == RENDER_HEADER


def test_type_caps_keep_the_ten_strongest_feedback() -> None:
    entries = [mem(f"f{i:02d}", f"Feedback preference number {i}", "feedback", age_days=i) for i in range(12)]
    result = render_workspace_block(store_of(entries), NOW)
    assert [e.id for e in result.rendered] == [f"f{i:02d}" for i in range(10)]
    assert reasons(result.omitted) == {"f10": "type_cap", "f11": "type_cap"}


def test_caps_per_type() -> None:
    caps = {"feedback": 10, "decision": 10, "project": 8, "reference": 6}
    entries = [
        mem(f"{t}-{i}", f"Unique {t} memory number {i}", t, age_days=i / 10)
        for t in caps
        for i in range(caps[t] + 3)
    ]
    result = render_workspace_block(store_of(entries, max_chars=3600), NOW)
    assert len(result.rendered) == 28
    by_reason = Counter(o.reason for o in result.omitted)
    assert by_reason[OmissionReason.TYPE_CAP] == 12
    rendered_types = Counter(e.type.value for e in result.rendered)
    assert all(rendered_types[t] <= caps[t] for t in caps)


def test_global_cap_overflow_is_the_weakest_after_type_caps() -> None:
    """T3: 10 feedback + 10 decision + 8 project + 6 reference -> 28 shown, the six references overflow."""
    entries = (
        [mem(f"global-feedback-{i}", f"Unique global feedback preference {i}", "feedback") for i in range(10)]
        + [mem(f"global-decision-{i}", f"Unique global durable decision {i}", "decision") for i in range(10)]
        + [mem(f"global-project-{i}", f"Unique global project fact {i}", "project") for i in range(8)]
        + [mem(f"global-reference-{i}", f"Unique global reference fact {i}", "reference") for i in range(6)]
    )
    result = render_workspace_block(store_of(entries), NOW)
    assert len(result.rendered) == 28
    assert reasons(result.omitted) == {f"global-reference-{i}": "global_cap" for i in range(6)}
    assert "reference:" not in result.text


def test_greedy_packing_skips_a_long_entry_and_keeps_trying_shorter_ones() -> None:
    long = mem("long", "A" * 200, "decision", age_days=0)
    short = mem("short", "Short decision that fits well", "decision", age_days=1)
    budget = len(RENDER_HEADER) + len("\ndecision:") + len("\n- Short decision that fits well")
    result = render_workspace_block(store_of([long, short], max_chars=budget), NOW)
    assert [e.id for e in result.rendered] == ["short"]
    assert reasons(result.omitted) == {"long": "char_budget"}
    assert len(result.text) == budget


def test_superseded_entries_are_omitted_and_counted() -> None:
    old = mem("old", "Old decision", status="superseded")
    new = mem("new", "New decision")
    result = render_workspace_block(store_of([old, new]), NOW)
    assert [e.id for e in result.rendered] == ["new"]
    assert reasons(result.omitted) == {"old": "superseded"}
    omitted_events = [e for e in result.events if e.type == EventType.RENDER_OMITTED]
    assert len(omitted_events) == 1
    assert omitted_events[0].reason_codes == ("superseded",)
    assert omitted_events[0].memory is None
    assert omitted_events[0].details == {"supersededCount": 1}


def test_an_entry_that_drops_out_of_the_block_gets_its_own_event() -> None:
    """Bounded evidence: only an entry that was in the most recent block (newest lastRenderedAt) and
    is omitted now is reported one by one; the rest are counted in one summary event."""
    shown_before = replace(
        mem("was", "Was shown last time", status="superseded"), last_rendered_at=NOW - 1000
    )
    long_ago = replace(mem("ago", "Shown long ago", status="superseded"), last_rendered_at=NOW - 10**9)
    never = mem("never", "Never shown", status="superseded")
    current = replace(mem("cur", "Current decision"), last_rendered_at=NOW - 1000)
    result = render_workspace_block(store_of([shown_before, long_ago, never, current]), NOW)
    omitted_events = [e for e in result.events if e.type == EventType.RENDER_OMITTED]
    individual = [e for e in omitted_events if e.memory is not None]
    assert [e.memory.memory_id for e in individual if e.memory] == ["was"]
    summary = [e for e in omitted_events if e.memory is None]
    assert len(summary) == 1 and summary[0].details == {"supersededCount": 2}
    assert reasons(result.omitted) == {"was": "superseded", "ago": "superseded", "never": "superseded"}


def test_archive_markers_are_listed_as_omitted_without_events() -> None:
    marker = ArchiveMarker(memory_id="gone", key_hash="a" * 16, identity_key_hash="b" * 16, archived_at="x")
    result = render_workspace_block(store_of([mem("new", "New decision")], archived=(marker,)), NOW)
    assert [(o.memory_id, o.type, o.reason) for o in result.omitted] == [("gone", "", "archived")]
    assert all(e.memory is None or e.memory.memory_id != "gone" for e in result.events)


def test_empty_store_renders_empty_string() -> None:
    result = render_workspace_block(store_of([]), NOW)
    assert result == render_workspace_block(store_of([]), NOW)
    assert result.text == "" and result.rendered == () and result.omitted == () and result.events == ()


def test_only_superseded_renders_empty_string() -> None:
    result = render_workspace_block(store_of([mem("old", "Old", status="superseded")]), NOW)
    assert result.text == ""
    assert reasons(result.omitted) == {"old": "superseded"}


def test_event_shapes() -> None:
    result = render_workspace_block(store_of(EXAMPLE, max_chars=100), NOW)
    selected = [e for e in result.events if e.type == EventType.RENDER_SELECTED]
    omitted = [e for e in result.events if e.type == EventType.RENDER_OMITTED]
    assert len(selected) == 1 and len(omitted) == 1
    sel = selected[0]
    assert (sel.phase, sel.outcome) == (Phase.RENDER, Outcome.RENDERED)
    assert sel.reason_codes == ("within_caps", "within_char_budget")
    assert [(r.role, r.memory.memory_id if r.memory else None) for r in sel.relations] == [
        (RelationRole.RENDERED, "f1")
    ]
    assert sel.text_preview == "User prefers concise summaries"
    assert sel.memory is not None and sel.memory.memory_key_hash == "feedback:user prefers concise summaries"
    (summary,) = omitted  # three budget losers never shown before: one counted event
    assert (summary.phase, summary.outcome, summary.reason_codes) == (
        Phase.RENDER,
        Outcome.OMITTED,
        ("char_budget",),
    )
    assert summary.details == {"char_budgetCount": 3} and summary.relations == ()


def test_stale_marker_rules() -> None:
    assert render_entry_line(mem("a", "T", age_days=50, stale_after_days=45), NOW) == "T [50d old, verify]"
    # equal age is not stale; the age is floored wall-clock days of createdAt
    assert render_entry_line(mem("a", "T", age_days=45.9, stale_after_days=45), NOW) == "T"
    # staleAfterDays 0 or missing -> never marked (verified recently: no freshness mark either)
    assert render_entry_line(mem("a", "T", age_days=500, stale_after_days=0, verified=NOW), NOW) == "T"
    assert render_entry_line(mem("a", "T", age_days=500, verified=NOW), NOW) == "T"
    # invalid createdAt -> no marker
    assert render_entry_line(mem("a", "T", stale_after_days=1, created_at="garbage"), NOW) == "T"


def test_stale_marker_uses_created_at_not_retention_clock() -> None:
    entry = replace(mem("a", "T", age_days=100, stale_after_days=45), retention_clock=NOW)
    assert render_entry_line(entry, NOW) == "T [100d old, verify]"


def test_rationale_and_text_truncation() -> None:
    entry = mem("a", "t" * 300, rationale="r" * 200)
    assert render_entry_line(entry, NOW) == "t" * 260 + " Why: " + "r" * 180
    assert render_entry_line(mem("a", "T", rationale=""), NOW) == "T"


def test_line_breaks_inside_a_memory_cannot_break_the_block_structure() -> None:
    """workmem deviation: the reference copies line breaks into the prompt, so a memory could forge a
    section header or a second '- ' line; here each run of line breaks is shown as one space."""
    entry = mem("a", "Use pnpm\n\ndecision:\n- fake entry", rationale="because\r\nreasons")
    result = render_workspace_block(store_of([entry]), NOW)
    expected = "\ndecision:\n- Use pnpm decision: - fake entry Why: because reasons"
    assert result.text == RENDER_HEADER + expected
    assert sum(1 for line in result.text.split("\n") if line.startswith("- ")) == 1


def test_dormancy_applies_at_render_d3_fixes_b1() -> None:
    """docs/decisions.md#s1: the reference renders after resetting lastActivityAt, so dormancy never
    reaches the prompt. Here the open dormant stretch (and recorded spans) count at render time."""
    explicit_old = mem(
        "r-explicit-old", "Old explicit reference", "reference", "explicit", age_days=90, verified=NOW
    )
    recent = mem("r-recent", "Recent compaction reference", "reference", age_days=20, verified=NOW)
    # Without dormancy: 2.0 * 2^(-90/45) = 0.5 < 2^(-20/45) = 0.735.
    awake = render_workspace_block(store_of([explicit_old, recent]), NOW)
    assert [e.id for e in awake.rendered] == ["r-recent", "r-explicit-old"]
    # Idle for 74 days: the last 60 days are dormant. 2.0 * 2^(-45/45) = 1.0 > 2^(-5/45) = 0.926.
    idle = store_of([explicit_old, recent], last_activity_ms=NOW - 74 * DAY_MS)
    assert [e.id for e in render_workspace_block(idle, NOW).rendered] == ["r-explicit-old", "r-recent"]
    # The same stretch recorded as a closed span keeps its effect after activity resumed.
    span = DormantSpan(start=NOW - 60 * DAY_MS, end=NOW)
    recorded = store_of([explicit_old, recent], spans=(span,))
    assert [e.id for e in render_workspace_block(recorded, NOW).rendered] == ["r-explicit-old", "r-recent"]


def test_deterministic_and_independent_of_stored_order() -> None:
    entries = [mem(f"m{i}", f"Decision {i}", age_days=0) for i in range(15)]  # all equal strength
    forward = render_workspace_block(store_of(entries), NOW)
    backward = render_workspace_block(store_of(entries[::-1]), NOW)
    assert forward.text == backward.text
    assert [e.id for e in forward.rendered] == [f"m{i}" for i in [0, 1, 10, 11, 12, 13, 14, 2, 3, 4]]
    assert render_workspace_block(store_of(entries), NOW) == forward


def test_every_active_entry_is_rendered_or_omitted_once() -> None:
    entries = [
        mem(f"x{i}", f"Memory {i} " + "z" * (i * 7), t, age_days=i)
        for i, t in enumerate(["feedback", "project", "decision", "reference"] * 12)
    ]
    entries.append(mem("gone", "Superseded", status="superseded"))
    result = render_workspace_block(store_of(entries, max_chars=1500), NOW)
    ids = [e.id for e in result.rendered] + [o.memory_id for o in result.omitted]
    assert sorted(ids) == sorted(e.id for e in entries)
    # every rendered entry has its own event; the omissions (none shown before) are counted in one
    assert len(result.events) == len(result.rendered) + 1
    (summary,) = [e for e in result.events if e.type == EventType.RENDER_OMITTED]
    assert sum(v for v in summary.details.values() if isinstance(v, int)) == len(result.omitted)


def test_number_block_labels_the_same_selection_in_block_order() -> None:
    result = render_workspace_block(store_of(EXAMPLE), NOW)
    numbered = number_block(result, NOW)
    assert numbered == (
        "Workspace memory (cross-session, verify if stale):\n"
        "feedback:\n"
        "- [M1] User prefers concise summaries\n"
        "project:\n"
        "- [M2] This repo uses TypeScript and Node.js test runner\n"
        "decision:\n"
        "- [M3] Use npm cache for plugin loading, not npm link"
        " Why: npm link breaks peer deps [50d old, verify]\n"
        "reference:\n"
        "- [M4] Storage lives under ~/.local/share/opencode-working-memory/"
    )
    assert numbered.replace("[M1] ", "").replace("[M2] ", "").replace("[M3] ", "").replace("[M4] ", "") == (
        result.text
    )


def test_number_block_of_empty_and_header_only_results() -> None:
    assert number_block(render_workspace_block(store_of([]), NOW), NOW) == ""
    header_only = render_workspace_block(store_of(EXAMPLE, max_chars=80), NOW)
    assert number_block(header_only, NOW) == RENDER_HEADER


def test_render_does_not_mutate_or_normalise_the_store() -> None:
    store = store_of(EXAMPLE)
    before = store
    render_workspace_block(store, NOW)
    assert store == before
    assert store.entries == tuple(EXAMPLE)
