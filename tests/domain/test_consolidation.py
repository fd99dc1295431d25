"""Dedupe with accounting, migrations, backfill, archive and revival (docs/decisions.md#dedupe,
docs/decisions.md#normalisation-and-migrations; docs/decisions.md#d2, docs/decisions.md#d6,
docs/decisions.md#d8, docs/decisions.md#d9), with cases derived from the reference's dedupe and cap rules."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from domain.consolidation import (
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    backfill_retention_clock,
    choose_better,
    dedupe,
    normalize_store,
)
from domain.emitted import MigrationAudit
from domain.enums import EventType, MemorySource, MemoryStatus, MemoryType, Outcome, Phase, RelationRole
from domain.keys import exact_key, identity_key, key_hash
from domain.limits import DAY_MS
from domain.model import ArchiveMarker, MemoryEntry, WorkspaceStore
from domain.ranking import sort_by_retention
from domain.timeutil import iso_from_ms
from tests.fixtures.quality_fixtures import REAL_WORKSPACES
from tests.support.builders import memory, store

NOW = 1_779_278_400_000  # 2026-05-20T12:00:00.000Z
NOW_ISO = iso_from_ms(NOW)
ALL_MIGRATIONS = (
    QUALITY_CLEANUP_MIGRATION_ID,
    P0_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
)


def mem(
    id_: str,
    text: str,
    type_: str = "feedback",
    *,
    days: float = 1,
    created: str | None = None,
    **fields: Any,
) -> MemoryEntry:
    """A memory (a feedback one by default) created and updated ``days`` before NOW, or ``created``."""
    stamps = {"created_at": created, "updated_at": created} if created is not None else {}
    return memory(text, id=id_, type=type_, at=NOW - int(days * DAY_MS), **{**stamps, **fields})


def store_of(
    *entries: MemoryEntry, migrations: tuple[str, ...] = ALL_MIGRATIONS, **fields: Any
) -> WorkspaceStore:
    """The store of ``/home/user/project``, last written a day ago, every migration done."""
    return store(*entries, root="/home/user/project", at=NOW - DAY_MS, migrations=migrations, **fields)


def types_of(events: Any) -> list[str]:
    return [e.type.value for e in events]


# --- choose_better (docs/decisions.md#dedupe) ------------------------------------------------------


CHOOSE_TABLE = [
    # (incoming, existing, mode, winner)
    (mem("a", "same text", source="explicit"), mem("b", "same text"), "entity", "a"),
    (mem("a", "same text"), mem("b", "same text", source="manual", confidence=0.5), "entity", "b"),
    (mem("a", "same text", confidence=0.9), mem("b", "same text"), "entity", "a"),
    (mem("a", "same text", confidence=0.5), mem("b", "same text"), "entity", "b"),
    # supersession: newer createdAt wins, then longer, tie keeps the existing one
    (mem("a", "Use X.", "decision", days=5), mem("b", "use x", "decision", days=1), "supersession", "b"),
    (mem("a", "Use X.", "decision"), mem("b", "use x", "decision"), "supersession", "a"),
    (mem("a", "use x", "decision"), mem("b", "Use X.", "decision"), "supersession", "b"),
    (mem("a", "use x", "decision"), mem("b", "USE X", "decision"), "supersession", "b"),
    # entity: longer by more than 10 wins, else newer, tie keeps the existing one
    (mem("a", "short", days=1), mem("b", "short plus more than ten", days=5), "entity", "b"),
    (mem("a", "short text", days=5), mem("b", "short text!!", days=1), "entity", "b"),
    (mem("a", "short text", days=1), mem("b", "short text!!", days=5), "entity", "a"),
    (mem("a", "short text"), mem("b", "short text"), "entity", "b"),
    # an invalid createdAt keeps the existing entry where dates decide
    (mem("a", "short text", created="garbage"), mem("b", "short text"), "entity", "b"),
    (mem("a", "short text"), mem("b", "short text", created="garbage"), "entity", "b"),
    (
        mem("a", "Use X.", "decision"),
        mem("b", "x", "decision", created="2026-02-30T00:00:00Z"),
        "supersession",
        "b",
    ),
    # ... but not where length decides first
    (mem("a", "long enough to win on length", created="garbage"), mem("b", "short"), "entity", "a"),
]


@pytest.mark.parametrize(("incoming", "existing", "mode", "winner"), CHOOSE_TABLE)
def test_choose_better_table(incoming: MemoryEntry, existing: MemoryEntry, mode: str, winner: str) -> None:
    assert choose_better(incoming, existing, mode).id == winner


# --- dedupe (docs/decisions.md#dedupe; cases derived from the reference's dedupe rules) -----------


def test_exact_feedback_duplicate_explicit_beats_compaction_and_is_reinforced_b15() -> None:
    """Derived case: the explicit entry survives and is reinforced once. docs/decisions.md#s15: the
    reinforcement carries no
    made-up session id (the reference stamps "workspace-dedupe")."""
    compaction = mem("c", "Prefer pnpm over npm", days=1)
    explicit = mem("e", "prefer pnpm over npm.", source="explicit", days=1)
    result = dedupe([compaction, explicit], NOW)
    assert [e.id for e in result.kept] == ["e"]
    survivor = result.kept[0]
    assert survivor.reinforcement_count == 1
    assert survivor.last_reinforced_session_id is None
    assert survivor.retention_clock == NOW
    assert survivor.last_reinforced_at == NOW
    assert survivor.absorbed_ids == ("c",)
    assert types_of(result.events) == ["memory_absorbed", "memory_reinforced"]
    absorbed, reinforced = result.events
    assert absorbed.phase is Phase.CONSOLIDATION and absorbed.outcome is Outcome.ABSORBED
    assert absorbed.reason_codes == ("absorbed_exact",)
    assert absorbed.memory is not None and absorbed.memory.memory_id == "c"
    assert [(r.role, r.memory.memory_id if r.memory else None) for r in absorbed.relations] == [
        (RelationRole.ABSORBED, "c"),
        (RelationRole.RETAINED, "e"),
    ]
    assert reinforced.phase is Phase.REINFORCEMENT and reinforced.outcome is Outcome.REINFORCED
    assert reinforced.reason_codes == ("duplicate_exact", "reinforcement_window_allowed")
    assert [(r.role, r.memory.memory_id if r.memory else None) for r in reinforced.relations] == [
        (RelationRole.REINFORCED, "e"),
        (RelationRole.REINFORCED_BY, "c"),
    ]
    assert result.absorptions[0].survivor_id == "e"
    assert result.absorptions[0].absorbed is compaction


def test_unit_integration_projects_are_not_merged_b7() -> None:
    """Derived case, docs/decisions.md#s7: the reference merged these through the false path
    "unit/integration"."""
    a = mem("a", "Tests use unit/integration split", "project")
    b = mem("b", "We keep unit/integration labels in CI config", "project")
    result = dedupe([a, b], NOW)
    assert {e.id for e in result.kept} == {"a", "b"}
    assert result.events == ()


def test_identity_duplicates_merge_with_absorbed_identity() -> None:
    short = mem("short", "Config in `src/config.ts`", "reference", days=3)
    long = mem("long", "The config loader lives in src/config.ts and validates on start", "reference", days=5)
    result = dedupe([short, long], NOW)
    assert [e.id for e in result.kept] == ["long"]  # longer by more than 10 wins
    assert result.absorptions[0].reason == "absorbed_identity"
    assert result.events[1].reason_codes == ("duplicate_identity", "reinforcement_window_allowed")


def test_decisions_same_created_longer_wins() -> None:
    result = dedupe([mem("a", "use x", "decision"), mem("b", "Use X.", "decision")], NOW)
    assert [e.text for e in result.kept] == ["Use X."]


def test_decisions_newer_wins() -> None:
    result = dedupe([mem("old", "Use X", "decision", days=5), mem("new", "use x", "decision", days=1)], NOW)
    assert [e.id for e in result.kept] == ["new"]


def test_entity_close_lengths_newer_wins() -> None:
    result = dedupe([mem("new", "Prefer tabs", days=1), mem("old", "prefer tabs!!", days=5)], NOW)
    assert [e.id for e in result.kept] == ["new"]


@pytest.mark.parametrize("created", ["garbage", None])
def test_ties_and_invalid_dates_are_broken_deterministically(created: str | None) -> None:
    """The reference keeps whichever came first; workmem's survivor does not depend on input order."""
    a = mem("mem_b", "Prefer tabs", created=created)
    b = mem("mem_a", "prefer tabs", created=created)
    first = dedupe([a, b], NOW).kept
    second = dedupe([b, a], NOW).kept
    assert [e.id for e in first] == [e.id for e in second] == ["mem_a"]


def test_reinforcement_session_is_the_losers_owner() -> None:
    existing = mem("e", "Use pnpm", source="explicit", pending_owner_session_id="s1")
    incoming = mem("i", "use pnpm", pending_owner_session_id="s2")
    survivor = dedupe([existing, incoming], NOW).kept[0]
    assert survivor.id == "e"
    assert survivor.last_reinforced_session_id == "s2"


def test_reinforcement_session_falls_back_to_the_survivors_owner() -> None:
    existing = mem("e", "Use pnpm", source="explicit", pending_owner_session_id="s1")
    incoming = mem("i", "use pnpm")
    assert dedupe([existing, incoming], NOW).kept[0].last_reinforced_session_id == "s1"


def test_ownerless_reinforcement_does_not_block_later_ones_b15() -> None:
    """The reference's "workspace-dedupe" session blocks every later owner-less reinforcement."""
    first = dedupe([mem("a", "Prefer tabs", source="explicit"), mem("b", "prefer tabs")], NOW).kept[0]
    assert first.reinforcement_count == 1
    later = NOW + 3 * DAY_MS
    again = dedupe([first, mem("c", "PREFER TABS", created=iso_from_ms(later))], later).kept[0]
    assert again.id == "a"
    assert again.reinforcement_count == 2
    assert again.absorbed_ids == ("b", "c")


def test_three_spellings_one_survivor_one_reinforcement_per_step() -> None:
    """Reference: "USE X!" kept with 2 reinforcement events (the winner changed mid-pass). workmem
    reinforces once per normalisation (same-day guard) and absorbs both others."""
    result = dedupe([mem("1", "Use X"), mem("2", "use x"), mem("3", "USE X!")], NOW)
    assert len(result.kept) == 1
    assert result.kept[0].reinforcement_count == 1
    assert types_of(result.events).count("memory_absorbed") == 2
    assert types_of(result.events).count("memory_reinforced") == 1


def test_exact_duplicates_with_different_identity_keys_merge_b8() -> None:
    """Reference: both survive because their identity keys differ."""
    a = mem("a", "See src/a.ts", "reference")
    b = mem("b", "see src a ts", "reference")
    assert identity_key(a) != identity_key(b)
    result = dedupe([a, b], NOW)
    assert len(result.kept) == 1
    assert result.absorptions[0].reason == "absorbed_exact"


def test_groups_are_connected_components() -> None:
    """a ~ b by exact key, b ~ c by identity key: one group, whatever the order."""
    a = mem("a", "Docs at `docs/a.md`", "reference", days=1)
    b = mem("b", "docs at docs/a.md", "reference", days=2)
    c = mem("c", "The architecture notes are in ./docs/a.md", "reference", days=3)
    for order in ([a, b, c], [c, b, a], [b, c, a]):
        result = dedupe(order, NOW)
        assert [e.id for e in result.kept] == ["c"]
        reasons = {x.absorbed.id: x.reason for x in result.absorptions}
        assert reasons == {"a": "absorbed_identity", "b": "absorbed_identity"}


def test_absorbed_ids_carry_over_from_losers() -> None:
    loser = mem("l", "Prefer tabs", absorbed_ids=("old1",))
    winner = mem("w", "prefer tabs", source="explicit", absorbed_ids=("old0",))
    assert dedupe([loser, winner], NOW).kept[0].absorbed_ids == ("old0", "old1", "l")


def test_losers_reinforcement_moves_to_the_survivor_d2() -> None:
    loser = mem("l", "Prefer tabs", reinforcement_count=4, last_reinforced_at=NOW - 10 * DAY_MS)
    winner = mem("w", "prefer tabs", source="explicit")
    survivor = dedupe([loser, winner], NOW).kept[0]
    assert survivor.id == "w"
    assert survivor.reinforcement_count == 5  # inherited 4, then reinforced by the duplicate


def test_reinforcement_never_exceeds_six() -> None:
    loser = mem("l", "Prefer tabs", reinforcement_count=6)
    winner = mem("w", "prefer tabs", source="explicit", reinforcement_count=6)
    result = dedupe([loser, winner], NOW)
    assert result.kept[0].reinforcement_count == 6
    assert types_of(result.events) == ["memory_absorbed"]


def test_superseded_entries_take_no_part() -> None:
    old = mem("old", "Prefer tabs", status=MemoryStatus.SUPERSEDED)
    new = mem("new", "prefer tabs")
    result = dedupe([old, new], NOW)
    assert result.kept == (old, new)
    assert result.events == ()


def test_different_types_never_merge() -> None:
    result = dedupe([mem("f", "Use tabs", "feedback"), mem("d", "Use tabs", "decision")], NOW)
    assert len(result.kept) == 2


def test_shared_id_different_memories_are_both_kept_b14() -> None:
    """Derived case, docs/decisions.md#s14: the reference keeps only the decision and emits nothing."""
    feedback = mem("same", "Prefer tabs", "feedback")
    decision = mem("same", "Use tabs for indentation", "decision")
    result = dedupe([feedback, decision], NOW)
    assert len(result.kept) == 2
    ids = {e.id for e in result.kept}
    assert "same" in ids and len(ids) == 2
    renamed = next(e for e in result.kept if e.id != "same")
    assert renamed.id.startswith("same_")
    assert types_of(result.events) == ["memory_migrated"]
    assert result.events[0].details == {"previousId": "same"}
    assert result.events[0].memory is not None and result.events[0].memory.memory_id == renamed.id
    # the same answer whatever the order
    assert {e.id for e in dedupe([decision, feedback], NOW).kept} == ids


def test_shared_id_same_memory_merges_with_an_event_b14() -> None:
    a = mem("same", "Prefer tabs", days=1)
    b = mem("same", "prefer tabs", days=2)
    result = dedupe([a, b], NOW)
    assert [e.id for e in result.kept] == ["same"]
    assert result.kept[0].absorbed_ids is None  # its own id is not recorded as absorbed
    assert "memory_absorbed" in types_of(result.events)


def test_active_entry_sharing_a_superseded_id_is_renamed_b14() -> None:
    old = mem("same", "Old rule", status=MemoryStatus.SUPERSEDED)
    new = mem("same", "New rule")
    result = dedupe([old, new], NOW)
    assert result.kept[0] is old
    assert result.kept[1].id != "same" and result.kept[1].text == "New rule"


def test_dedupe_does_not_mutate_and_is_idempotent() -> None:
    entries = [mem("1", "Use X", source="explicit"), mem("2", "use x"), mem("3", "Other")]
    snapshot = [replace(e) for e in entries]
    first = dedupe(entries, NOW)
    assert entries == snapshot
    second = dedupe(first.kept, NOW)
    assert second.kept == first.kept
    assert second.events == ()


# --- normalisation: migrations (docs/decisions.md#normalisation-and-migrations) -------------------


def test_fresh_store_migration_order() -> None:
    result = normalize_store(store_of(migrations=()), NOW)
    assert result.store.migrations == (
        QUALITY_CLEANUP_MIGRATION_ID,
        P0_CLEANUP_MIGRATION_ID,
        RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    )
    assert result.store.updated_at == NOW_ISO


def test_v133_store_migration_order() -> None:
    result = normalize_store(store_of(migrations=(P0_CLEANUP_MIGRATION_ID,)), NOW)
    assert result.store.migrations == (
        P0_CLEANUP_MIGRATION_ID,
        QUALITY_CLEANUP_MIGRATION_ID,
        RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    )


def test_migration_ids_are_never_appended_twice() -> None:
    once = normalize_store(store_of(migrations=()), NOW).store
    assert normalize_store(once, NOW + 1).store.migrations == once.migrations


def _real_workspace_store() -> WorkspaceStore:
    entries = tuple(
        MemoryEntry(
            id=id_,
            type=MemoryType(type_),
            text=text,
            source=MemorySource.COMPACTION,
            confidence=0.75,
            status=MemoryStatus.ACTIVE,
            created_at="2026-04-28T00:00:00.000Z",
            updated_at="2026-04-28T00:00:00.000Z",
        )
        for _, id_, type_, text, _, _ in REAL_WORKSPACES
    )
    return store_of(*entries, migrations=())


def test_quality_cleanup_supersedes_exactly_the_beta_snapshots() -> None:
    result = normalize_store(_real_workspace_store(), NOW)
    expected = {id_: status for _, id_, _, _, status, _ in REAL_WORKSPACES}
    assert {e.id: e.status.value for e in result.store.entries} == expected
    superseded = {id_ for id_, status in expected.items() if status == "superseded"}
    assert superseded == {"beta_phase_snapshot", "beta_test_snapshot", "beta_sync_snapshot"}
    for entry in result.store.entries:
        if entry.id in superseded:
            assert entry.tags == ("quality_cleanup", "quality:progress_snapshot")
            assert entry.updated_at == NOW_ISO
    assert {a.entry_id for a in result.audit} == superseded
    events = [e for e in result.events if e.type is EventType.MEMORY_SUPERSEDED]
    assert {e.memory.memory_id for e in events if e.memory} == superseded
    assert all(e.phase is Phase.MIGRATION and e.outcome is Outcome.SUPERSEDED for e in events)
    assert all(e.reason_codes == (QUALITY_CLEANUP_MIGRATION_ID, "quality:progress_snapshot") for e in events)


def test_audit_record_names_the_workspace_key_not_its_root() -> None:
    result = normalize_store(_real_workspace_store(), NOW)
    record = next(a for a in result.audit if a.entry_id == "beta_test_snapshot")
    assert record == MigrationAudit(
        migration_id=QUALITY_CLEANUP_MIGRATION_ID,
        timestamp=NOW_ISO,
        workspace_key="0123456789abcdef",
        entry_id="beta_test_snapshot",
        type="project",
        source="compaction",
        text="Test suite: 1237 tests pass, 226 suites",
        reasons=("progress_snapshot",),
        hard_reasons=("progress_snapshot",),
        before_status="active",
        after_status="superseded",
    )
    from domain.codec import encode_line

    line = encode_line(record).decode()
    assert '"workspaceKey":"0123456789abcdef"' in line
    assert "workspaceRoot" not in line and "/home/user" not in line


def test_quality_cleanup_never_touches_explicit_manual_or_soft_only() -> None:
    store = store_of(
        mem("x", "Wave 2 completed successfully", source="explicit"),
        mem("m", "Wave 3 completed successfully", source="manual", confidence=0.9),
        mem("soft", "Remember the build is slow", "feedback"),  # bad_feedback only (soft)
        migrations=(),
    )
    result = normalize_store(store, NOW)
    assert all(e.status is MemoryStatus.ACTIVE for e in result.store.entries)
    assert result.audit == ()


def test_quality_cleanup_runs_once() -> None:
    store = store_of(mem("w", "Wave 2 completed successfully", "project"))
    result = normalize_store(store, NOW)
    assert result.store.entries[0].status is MemoryStatus.ACTIVE
    assert result.audit == ()


def test_p0_cleanup_supersedes_active_project_snapshots_only_b16() -> None:
    """P0 after a quality cleanup that already ran: the active snapshot is superseded; an already
    superseded one keeps its updatedAt (the reference bumps it)."""
    active = mem("a", "Wave 2 completed successfully", "project")
    gone = mem("g", "Wave 1 completed successfully", "project", status=MemoryStatus.SUPERSEDED)
    feedback = mem("f", "Wave 3 completed successfully", "feedback")
    store = store_of(active, gone, feedback, migrations=(QUALITY_CLEANUP_MIGRATION_ID,))
    result = normalize_store(store, NOW)
    by_id = {e.id: e for e in result.store.entries}
    assert by_id["a"].status is MemoryStatus.SUPERSEDED and by_id["a"].updated_at == NOW_ISO
    assert by_id["g"].updated_at == gone.updated_at
    assert by_id["f"].status is MemoryStatus.ACTIVE
    (event,) = [e for e in result.events if e.type is EventType.MEMORY_SUPERSEDED]
    assert event.reason_codes == (P0_CLEANUP_MIGRATION_ID, "quality:progress_snapshot")
    assert [a.migration_id for a in result.audit] == [P0_CLEANUP_MIGRATION_ID]


def test_twelve_feedback_entries_are_all_kept_b2_b12() -> None:
    """Derived from the reference's cap rule: it keeps the 10 youngest and deletes 2 by the type cap
    (docs/decisions.md#s2, docs/decisions.md#b12). Caps are render limits only (docs/decisions.md#d2):
    all 12 stay stored, youngest first, with their clocks backfilled."""
    entries = tuple(mem(f"f{i}", f"Distinct feedback rule number {i}", days=i) for i in range(12))
    result = normalize_store(store_of(*entries, migrations=()), NOW)
    assert [e.id for e in result.store.entries] == [f"f{i}" for i in range(12)]
    assert [e.retention_clock for e in result.store.entries] == [NOW - i * DAY_MS for i in range(12)]
    assert not any(e.type is EventType.MEMORY_REMOVED_CAPACITY for e in result.events)
    assert result.archived == ()


# --- normalisation: redaction, backfill, truncation, order --------------------------------------


def test_redaction_in_normalisation() -> None:
    secret = mem("s", "Staging login uses password: hunter2", rationale="")
    gone = mem("g", "Old login password: sushi", status=MemoryStatus.SUPERSEDED, rationale="token: abc")
    clean = mem("c", "Prefer tabs", rationale="")
    result = normalize_store(store_of(secret, gone, clean), NOW)
    by_id = {e.id: e for e in result.store.entries}
    assert by_id["s"].text == "Staging login uses password: [REDACTED]"
    assert by_id["s"].updated_at == NOW_ISO
    assert by_id["s"].rationale == ""  # an empty rationale is left alone (docs/decisions.md#s16)
    assert by_id["g"].text == "Old login password: [REDACTED]"
    assert by_id["g"].rationale == "token: [REDACTED]"
    # no updatedAt bump (docs/decisions.md#s16)
    assert by_id["c"] == replace(clean, retention_clock=NOW - DAY_MS)
    redacted = [e for e in result.events if e.type is EventType.MEMORY_REDACTED]
    assert {e.memory.memory_id for e in redacted if e.memory} == {"s", "g"}
    assert all(e.reason_codes == ("credential_redacted",) and e.outcome is Outcome.REDACTED for e in redacted)
    assert all(
        "hunter2" not in (e.text_preview or "") and "sushi" not in (e.text_preview or "") for e in redacted
    )


def test_backfill_order_created_then_updated_then_now() -> None:
    assert backfill_retention_clock(mem("a", "x", days=2), NOW).retention_clock == NOW - 2 * DAY_MS
    bad_created = mem("b", "x", created="garbage", updated_at=iso_from_ms(NOW - DAY_MS))
    assert backfill_retention_clock(bad_created, NOW).retention_clock == NOW - DAY_MS
    assert backfill_retention_clock(mem("c", "x", created="garbage"), NOW).retention_clock == NOW
    kept = mem("d", "x", retention_clock=123)
    assert backfill_retention_clock(kept, NOW) is kept


@pytest.mark.parametrize("clock", [-1, float("nan"), float("inf")])
def test_backfill_replaces_invalid_clocks_b9(clock: float) -> None:
    """docs/decisions.md#s9: the reference keeps a negative clock (strength ~0) though its diagnostics
    call it invalid."""
    assert backfill_retention_clock(mem("a", "x", days=2, retention_clock=clock), NOW).retention_clock == (
        NOW - 2 * DAY_MS
    )


def test_backfill_applies_to_superseded_entries_too() -> None:
    result = normalize_store(store_of(mem("s", "x", status=MemoryStatus.SUPERSEDED, days=3)), NOW)
    assert result.store.entries[0].retention_clock == NOW - 3 * DAY_MS


def test_active_texts_are_truncated_to_260() -> None:
    long = "é" * 300
    result = normalize_store(
        store_of(mem("a", long), mem("s", long + "!", status=MemoryStatus.SUPERSEDED)), NOW
    )
    by_id = {e.id: e for e in result.store.entries}
    assert by_id["a"].text == "é" * 260
    assert by_id["s"].text == long + "!"


def test_stored_order_is_retention_order_then_superseded_in_place() -> None:
    s1 = mem("s1", "gone one", status=MemoryStatus.SUPERSEDED)
    s2 = mem("s2", "gone two", status=MemoryStatus.SUPERSEDED)
    weak = mem("weak", "A reference fact", "reference", days=100)
    strong = mem("strong", "Always use tabs", source="explicit", days=1)
    result = normalize_store(store_of(s2, weak, s1, strong), NOW)
    assert [e.id for e in result.store.entries] == ["strong", "weak", "s2", "s1"]


def test_normalisation_leaves_activity_alone_and_is_idempotent() -> None:
    store = store_of(
        mem("a", "Prefer tabs", source="explicit"),
        mem("b", "prefer tabs"),
        mem("c", "password: hunter2"),
        migrations=(),
        last_activity_at=iso_from_ms(NOW - 20 * DAY_MS),
    )
    first = normalize_store(store, NOW)
    assert first.store.last_activity_at == store.last_activity_at
    assert first.store.dormant_spans == store.dormant_spans
    second = normalize_store(first.store, NOW)
    assert second.store == first.store
    assert second.events == () and second.audit == () and second.absorptions == ()


def test_unchanged_store_keeps_its_updated_at() -> None:
    store = normalize_store(store_of(mem("a", "Prefer tabs", days=2)), NOW).store
    later = normalize_store(store, NOW + DAY_MS).store
    assert later.updated_at == store.updated_at


def test_normalisation_does_not_mutate_its_input() -> None:
    store = store_of(mem("a", "Prefer tabs"), mem("b", "prefer tabs"), migrations=())
    copy = replace(store)
    normalize_store(store, NOW)
    assert store == copy


# --- archive (docs/decisions.md#d2) ---------------------------------------------------------------


def _many(count: int, *, rendered_days: int | None = None) -> tuple[MemoryEntry, ...]:
    return tuple(
        mem(
            f"m{i:03d}",
            f"Distinct rule number {i} about topic {i * 7}",
            "decision",
            days=40 + i / 10,
            retention_clock=NOW - int((40 + i / 10) * DAY_MS),
            last_rendered_at=None if rendered_days is None else NOW - rendered_days * DAY_MS,
        )
        for i in range(count)
    )


def test_archive_at_501_moves_the_weakest_out() -> None:
    result = normalize_store(store_of(*_many(501)), NOW)
    assert len(result.store.entries) == 500
    assert [e.id for e in result.archived] == ["m500"]  # the oldest is the weakest
    (marker,) = result.store.archived
    entry = result.archived[0]
    assert marker == ArchiveMarker(
        memory_id="m500",
        key_hash=key_hash(exact_key(entry)),
        identity_key_hash=key_hash(identity_key(entry)),
        archived_at=NOW_ISO,
    )
    (event,) = [e for e in result.events if e.type is EventType.MEMORY_ARCHIVED]
    assert event.outcome is Outcome.ARCHIVED and event.memory is not None
    assert event.memory.memory_id == "m500"


def test_archive_skips_recently_rendered_entries() -> None:
    entries = list(_many(502))
    entries[501] = replace(entries[501], last_rendered_at=NOW - 5 * DAY_MS)  # weakest, but just shown
    result = normalize_store(store_of(*entries), NOW)
    assert [e.id for e in result.archived] == ["m500", "m499"]


def test_nothing_archived_when_everything_was_rendered_recently() -> None:
    result = normalize_store(store_of(*_many(501, rendered_days=10)), NOW)
    assert len(result.store.entries) == 501
    assert result.archived == () and result.store.archived == ()


def test_nothing_archived_at_500() -> None:
    result = normalize_store(store_of(*_many(500)), NOW)
    assert len(result.store.entries) == 500 and result.archived == ()


def test_archive_is_idempotent() -> None:
    first = normalize_store(store_of(*_many(503)), NOW)
    second = normalize_store(first.store, NOW)
    assert second.store == first.store and second.events == ()


# --- revival (docs/decisions.md#d2) ---------------------------------------------------------------


def _archived_store(incoming: MemoryEntry) -> tuple[WorkspaceStore, dict[str, MemoryEntry], MemoryEntry]:
    archived = mem(
        "arch",
        "Prefer tabs over spaces",
        source="explicit",
        days=90,
        retention_clock=NOW - 90 * DAY_MS,
        reinforcement_count=3,
        last_reinforced_at=NOW - 90 * DAY_MS,
    )
    marker = ArchiveMarker(
        memory_id="arch",
        key_hash=key_hash(exact_key(archived)),
        identity_key_hash=key_hash(identity_key(archived)),
        archived_at=iso_from_ms(NOW - 30 * DAY_MS),
    )
    return store_of(incoming, archived=(marker,)), {marker.key_hash: archived}, archived


def test_revival_brings_the_archived_entry_back_and_reinforces_it() -> None:
    store, archive, archived = _archived_store(mem("new", "prefer tabs over spaces!", days=0))
    result = normalize_store(store, NOW, archive=archive)
    assert result.revived == (archived,)
    assert result.store.archived == ()
    assert [e.id for e in result.store.entries] == ["arch"]  # explicit beats compaction
    survivor = result.store.entries[0]
    assert survivor.reinforcement_count == 4
    assert survivor.retention_clock == NOW
    assert survivor.absorbed_ids == ("new",)
    assert types_of(result.events) == ["memory_revived", "memory_absorbed", "memory_reinforced"]
    revived = result.events[0]
    assert revived.outcome is Outcome.REVIVED and revived.reason_codes == ("revived_exact",)


def test_revival_when_the_newcomer_wins_keeps_the_reinforcement() -> None:
    store, archive, _ = _archived_store(mem("new", "Prefer tabs over spaces", source="explicit", days=0))
    result = normalize_store(store, NOW, archive=archive)
    assert [e.id for e in result.store.entries] == ["new"]  # newer, same source
    survivor = result.store.entries[0]
    assert survivor.absorbed_ids == ("arch",)
    assert survivor.reinforcement_count == 4  # inherited 3, +1 from the duplicate


def test_revival_needs_the_archived_entry() -> None:
    store, _, _ = _archived_store(mem("new", "prefer tabs over spaces"))
    result = normalize_store(store, NOW, archive={})
    assert result.revived == () and len(result.store.archived) == 1


def test_no_revival_without_a_duplicate() -> None:
    store, archive, _ = _archived_store(mem("new", "Something else entirely"))
    result = normalize_store(store, NOW, archive=archive)
    assert result.revived == () and len(result.store.archived) == 1


def test_revival_by_identity_key() -> None:
    archived = mem("arch", "Docs index lives in `docs/index.md`", "reference", days=90)
    marker = ArchiveMarker(
        memory_id="arch",
        key_hash=key_hash(exact_key(archived)),
        identity_key_hash=key_hash(identity_key(archived)),
        archived_at=NOW_ISO,
    )
    incoming = mem("new", "See docs/index.md for the index", "reference", days=0)
    result = normalize_store(store_of(incoming, archived=(marker,)), NOW, archive={marker.key_hash: archived})
    assert [e.id for e in result.revived] == ["arch"]
    assert result.revived[0].retention_clock == NOW - 90 * DAY_MS  # backfilled like any entry
    assert result.events[0].reason_codes == ("revived_identity",)
    assert len(result.store.entries) == 1


def test_sort_matches_retention_module() -> None:
    entries = tuple(mem(f"x{i}", f"Rule {i} text", days=i * 3) for i in range(5))
    result = normalize_store(store_of(*entries), NOW)
    assert list(result.store.entries) == sort_by_retention(result.store.entries, NOW)


def test_a_cut_that_creates_a_credential_shape_is_stable_after_one_normalisation() -> None:
    """Redact, then cut to 260: the cut can leave ``password re`` which redacts again; the stored text
    is a fixed point of both, so a second normalisation changes nothing."""
    text = "Always " + "x" * 241 + " password reset flow needs a second factor"
    once = normalize_store(store_of(mem("m", text, "feedback", source="explicit")), NOW)
    twice = normalize_store(once.store, NOW)
    assert twice.events == () and twice.store == once.store
    assert len(once.store.entries[0].text) <= 260


def test_a_drift_in_retention_order_alone_is_not_a_change() -> None:
    """Strengths with different half-lives cross over time; re-ranking alone must not bump
    ``updatedAt`` (nor make the shell rewrite the file)."""
    fresh = mem("a", "Reference fact about the system", "reference", days=0)
    reinforced = mem("b", "Another reference fact here", "reference", days=0, reinforcement_count=6)
    first = normalize_store(store_of(fresh, reinforced), NOW).store
    later = normalize_store(first, NOW + 200 * DAY_MS)
    assert later.store.updated_at == first.updated_at and later.events == ()
    assert later.store == first


def test_a_superseded_entry_stored_first_ends_after_the_actives() -> None:
    """A store whose superseded entry stands before an active one (an older writer, a hand edit) is
    normalised to the order every pass keeps: actives, then superseded. Found by the randomized
    property pass (property_tests/test_consolidation_properties.py::test_normalisation_invariants)."""
    fields: dict[str, Any] = {
        "type": MemoryType.FEEDBACK,
        "text": "USER PREFERS CONCISE ANSWERS WITH CODE FIRST",
        "source": MemorySource.EXPLICIT,
        "confidence": 1.0,
        "created_at": "",
        "updated_at": "",
        "retention_clock": NOW - 400 * DAY_MS,
    }
    old = MemoryEntry(id="mem_1779278400000_r87ew5", status=MemoryStatus.SUPERSEDED, **fields)
    new = MemoryEntry(id="mem_1779278400000_aa7o0o", status=MemoryStatus.ACTIVE, **fields)
    result = normalize_store(store(old, new), NOW)
    assert [e.status for e in result.store.entries] == [MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED]
    assert normalize_store(result.store, NOW).store.entries == result.store.entries
