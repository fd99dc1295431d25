"""Promotion accounting and the promotion step (docs/decisions.md#promotion), with the reference's
accounting cases P1-P12 (docs/decisions.md#parity-with-the-reference), the fixes docs/decisions.md#b13,
docs/decisions.md#b14, docs/decisions.md#b15, docs/decisions.md#b16, docs/decisions.md#b20,
docs/decisions.md#b21, docs/decisions.md#b25 and docs/decisions.md#b26, and docs/decisions.md#d2,
docs/decisions.md#d7 and docs/decisions.md#d10."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial

import pytest
from msgspec.structs import replace

from domain.consolidation import Absorption, AbsorptionReason, normalize_store
from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.keys import exact_key, identity_key, key_hash
from domain.limits import DAY_MS
from domain.model import ArchiveMarker, EvidenceInput, MemoryEntry, PendingJournal, Tombstone, WorkspaceStore
from domain.pending import append_pending, empty_journal
from domain.promotion import (
    PromotionAccounting,
    PromotionReason,
    PromotionResult,
    account_pending_promotions,
    promote,
    promotion_events,
)
from domain.timeutil import iso_from_ms
from tests.support.builders import NOW, journal, memory, store

OUTCOME_TYPES = {
    EventType.PROMOTION_PROMOTED,
    EventType.PROMOTION_ABSORBED_EXACT,
    EventType.PROMOTION_ABSORBED_IDENTITY,
    EventType.PROMOTION_REJECTED,
}
#: Events the reference's capacity rejection and retries emitted; workmem emits none of them.
REFERENCE_ONLY_TYPES = {
    EventType.PROMOTION_SUPERSEDED,
    EventType.PROMOTION_REJECTED_CAPACITY,
    EventType.PROMOTION_RETRY_SCHEDULED,
    EventType.PROMOTION_RETRY_EXHAUSTED,
}


#: Every memory here has confidence 0.75, whatever its source.
mem = partial(memory, confidence=0.75)


def key(entry: MemoryEntry) -> str:
    return exact_key(entry)


def terminal(entry: MemoryEntry, reason: str, survivor: str = "") -> Absorption:
    return Absorption(absorbed=entry, survivor_id=survivor, reason=AbsorptionReason(reason))


store_of = partial(store, root="/w")


def journal_of(*entries: MemoryEntry) -> PendingJournal:
    """The journal of ``/w`` after ``entries`` were appended now."""
    appended, _ = append_pending(journal(root="/w"), entries, NOW)
    return appended


def of_type(events: Sequence[EvidenceInput], *types: EventType) -> list[EvidenceInput]:
    return [e for e in events if e.type in types]


def ids_of(entries: Sequence[MemoryEntry]) -> list[str]:
    return [e.id for e in entries]


def roles(ev: EvidenceInput) -> list[tuple[RelationRole, str | None]]:
    return [(r.role, r.memory.memory_id if r.memory else None) for r in ev.relations]


# ---------------------------------------------------------------------------------------------
# Accounting: the reference's cases P1-P12
# ---------------------------------------------------------------------------------------------


def test_p1_exact_retained_pending_memory_is_promoted() -> None:
    pending = mem("Use frozen rendered snapshots for cache stability.", id="pending")
    result = account_pending_promotions([pending], [], [pending])
    assert result.promoted == (key(pending),)
    assert result.absorbed == () and result.rejected == ()
    assert result.clearable == (key(pending),)


def test_p2_exact_duplicate_present_before_is_absorbed() -> None:
    existing = mem("Prefer stable cache boundaries.", id="existing", source="explicit")
    pending = mem("prefer stable cache boundaries.", id="pending", source="explicit")
    result = account_pending_promotions([pending], [existing], [existing])
    assert result.promoted == () and result.rejected == ()
    assert result.absorbed == (key(pending),)
    assert result.clearable == (key(pending),)


def test_p3_same_exact_text_before_is_absorbed_not_promoted() -> None:
    existing = mem("Use stable cache boundaries.", id="existing", source="explicit")
    pending = mem("Use stable cache boundaries.", id="pending", source="explicit")
    result = account_pending_promotions([pending], [existing], [existing])
    assert result.promoted == ()
    assert result.absorbed == (key(pending),)
    assert result.rejected == ()


def test_p4_superseded_entries_do_not_count_as_existing() -> None:
    old = mem(
        "Revive this memory when it is remembered again.",
        id="superseded",
        source="explicit",
        status="superseded",
    )
    pending = mem("Revive this memory when it is remembered again.", id="pending", source="explicit")
    result = account_pending_promotions([pending], [old], [old, pending])
    assert result.promoted == (key(pending),)
    assert result.absorbed == ()
    assert result.clearable == (key(pending),)


def test_p5_same_topic_decision_without_exact_match_is_rejected_as_not_in_store() -> None:
    existing = mem("Parser supports 2 candidate formats.", id="existing", confidence=0.9)
    pending = mem("Parser supports 3 candidate formats.", id="pending")
    result = account_pending_promotions([pending], [existing], [existing])
    assert result.promoted == () and result.absorbed == ()
    assert result.rejected == (key(pending),)
    assert result.reason_of(key(pending)) == "not_in_store"


def test_p6_compaction_memory_with_no_survivor_is_rejected_and_not_clearable() -> None:
    pending = mem("Low priority memory that did not fit the workspace cap.", id="pending", type="reference")
    result = account_pending_promotions([pending], [], [])
    assert result.promoted == () and result.absorbed == ()
    assert result.rejected == (key(pending),)
    assert result.clearable == ()


def test_p7_identity_absorption_event_is_absorbed_and_clearable() -> None:
    pending = mem("This repo uses opencode-agenthub plugin system", id="pending_identity", type="project")
    result = account_pending_promotions([pending], [], [], [terminal(pending, "absorbed_identity")])
    assert result.absorbed == (key(pending),)
    assert result.clearable == (key(pending),)
    assert result.rejected == ()
    assert result.reason_of(key(pending)) == "same_identity_key"


def test_p8_to_p11_capacity_and_supersession_never_come_up() -> None:
    """The reference's cases P8-P11 classify a pending memory that its capped normalisation
    superseded or rejected for capacity, and retry the explicit and manual ones. workmem's
    normalisation keeps every memory (docs/decisions.md#d2) and absorbs duplicates instead
    (docs/decisions.md#b20): a dedupe loser is absorbed, for any source."""
    for source in ("compaction", "explicit", "manual"):
        pending = mem("Parser supports 3 candidate formats.", id="p", source=source)
        result = account_pending_promotions([pending], [], [], [terminal(pending, "absorbed_exact")])
        assert result.absorbed == result.clearable == (key(pending),)
        assert result.rejected == ()


def test_p12_evidence_maps_every_outcome_with_relations() -> None:
    promoted = mem("Promoted memory should produce evidence.", id="promoted", source="explicit")
    absorbed = mem("Absorbed memory should produce evidence.", id="absorbed", source="explicit")
    retained = mem("absorbed memory should produce evidence.", id="retained", source="explicit")
    identity_absorbed = mem(
        "Project config lives in `src/config.ts`", id="identity-absorbed", type="reference"
    )
    identity_retained = mem(
        "Project config lives in `./src/config.ts`", id="identity-retained", type="reference"
    )
    vanished = mem("Vanished explicit memory should be reported.", id="vanished", source="explicit")
    pending = [promoted, absorbed, identity_absorbed, vanished]
    terminals = [
        terminal(absorbed, "absorbed_exact", retained.id),
        terminal(identity_absorbed, "absorbed_identity", identity_retained.id),
    ]
    after = [promoted, retained, identity_retained]
    accounting = PromotionAccounting(
        promoted=(key(promoted),),
        absorbed=(key(absorbed), key(identity_absorbed)),
        rejected=(key(vanished),),
        clearable=(key(promoted), key(absorbed), key(identity_absorbed)),
        reasons=(
            (key(promoted), PromotionReason.NEW_WORKSPACE_ENTRY),
            (key(absorbed), PromotionReason.SAME_EXACT_KEY),
            (key(identity_absorbed), PromotionReason.SAME_IDENTITY_KEY),
            (key(vanished), PromotionReason.NOT_IN_STORE),
        ),
    )
    events = promotion_events(pending, after, terminals, accounting)
    assert [e.type for e in events] == [
        EventType.PROMOTION_PROMOTED,
        EventType.PROMOTION_ABSORBED_EXACT,
        EventType.PROMOTION_ABSORBED_IDENTITY,
        EventType.PROMOTION_REJECTED,
    ]
    [absorbed_event] = of_type(events, EventType.PROMOTION_ABSORBED_EXACT)
    assert roles(absorbed_event) == [(RelationRole.ABSORBED, "absorbed"), (RelationRole.RETAINED, "retained")]
    [identity_event] = of_type(events, EventType.PROMOTION_ABSORBED_IDENTITY)
    assert identity_event.reason_codes == ("same_identity_key",)
    assert roles(identity_event)[1] == (RelationRole.RETAINED, "identity-retained")
    [promoted_event] = of_type(events, EventType.PROMOTION_PROMOTED)
    assert promoted_event.reason_codes == ("new_workspace_entry",)
    assert roles(promoted_event) == [(RelationRole.PROMOTED, "promoted")]
    [rejected_event] = of_type(events, EventType.PROMOTION_REJECTED)
    assert rejected_event.outcome is Outcome.REJECTED and rejected_event.reason_codes == ("not_in_store",)
    assert all(e.phase is Phase.PROMOTION and e.text_preview for e in events)


def test_first_matching_rule_wins_and_last_terminal_per_key_counts() -> None:
    pending = mem("Keep one answer per key.", id="p", source="explicit")
    later = account_pending_promotions(
        [pending], [], [], [terminal(pending, "absorbed_identity"), terminal(pending, "absorbed_exact")]
    )
    assert later.reason_of(key(pending)) == "same_exact_key"
    # an exact key already in the store beats any terminal event
    before = account_pending_promotions([pending], [pending], [], [terminal(pending, "absorbed_identity")])
    assert before.reason_of(key(pending)) == "same_exact_key"


def test_accounting_counts_each_key_once_in_insertion_order() -> None:
    a, b, c = mem("Alpha", id="a"), mem("Beta", id="b"), mem("Gamma", id="c")
    again = mem("alpha!", id="a2")
    result = account_pending_promotions([b, a, again, c], [], [b, c, a])
    assert result.promoted == (key(b), key(a), key(c))
    assert result.clearable == result.promoted


def test_b16_identity_absorption_without_terminal_is_labelled_identity() -> None:
    """docs/decisions.md#b16: an identity match found in the store after promotion (rule 4) was reported as
    promotion_absorbed_exact / same_exact_key."""
    pending = mem("Config lives in `src/config.ts`", id="p", type="project")
    survivor = mem(
        "Settings are read from ./src/config.ts at boot", id="s", type="project", source="explicit"
    )
    assert identity_key(pending) == identity_key(survivor) and key(pending) != key(survivor)
    accounting = account_pending_promotions([pending], [], [survivor])
    assert accounting.absorbed == (key(pending),)
    [ev] = promotion_events([pending], [survivor], [], accounting)
    assert ev.type is EventType.PROMOTION_ABSORBED_IDENTITY
    assert ev.reason_codes == ("same_identity_key",)
    assert roles(ev) == [(RelationRole.ABSORBED, "p"), (RelationRole.RETAINED, "s")]


def test_b16_rejection_without_capacity_event_is_not_called_a_capacity_rejection() -> None:
    """docs/decisions.md#b16: a pending memory missing from the store with no terminal event was reported as
    promotion_rejected_capacity / capacity_rejected; workmem says promotion_rejected / not_in_store,
    and keeps it pending (nothing is retried or counted, docs/decisions.md#b20)."""
    pending = mem("Vanished explicit memory.", id="p", source="explicit")
    accounting = account_pending_promotions([pending], [], [])
    assert accounting.rejected == (key(pending),) and accounting.clearable == ()
    events = promotion_events([pending], [], [], accounting)
    assert [(e.type, e.outcome, e.reason_codes) for e in events] == [
        (EventType.PROMOTION_REJECTED, Outcome.REJECTED, ("not_in_store",)),
    ]


def test_stored_form_of_a_long_pending_text_still_matches() -> None:
    """The store cuts texts to 260 code points; the pending memory is still found under its stored
    form (the reference would have reported a rejection)."""
    long_text = "Always run the full integration suite before tagging " + "x" * 300
    pending = mem(long_text, id="p", source="explicit")
    stored = replace(pending, text=long_text[:260])
    assert account_pending_promotions([pending], [], [stored]).promoted == (key(pending),)
    assert account_pending_promotions([pending], [stored], [stored]).absorbed == (key(pending),)


# ---------------------------------------------------------------------------------------------
# The promotion step
# ---------------------------------------------------------------------------------------------


def run(
    store: WorkspaceStore,
    journal: PendingJournal,
    session_pending: Sequence[MemoryEntry] = (),
    *,
    now: int = NOW + 1000,
    session_id: str | None = "s1",
    include_owned: bool = True,
    include_unowned: bool = True,
    idle: Sequence[str] = (),
    archive: Mapping[str, MemoryEntry] | None = None,
) -> PromotionResult:
    return promote(
        store,
        journal,
        session_pending,
        now,
        session_id=session_id,
        include_owned=include_owned,
        include_unowned=include_unowned,
        idle_owner_ids=idle,
        archive=archive,
    )


def check_coverage(result: PromotionResult, pending_keys: set[str]) -> None:
    """One promotion outcome event per pending key (docs/decisions.md#promotion), and none of the
    reference's capacity and retry events."""
    outcomes = Counter(
        e.memory.memory_key_hash for e in result.events if e.type in OUTCOME_TYPES and e.memory
    )
    assert outcomes == Counter({k: 1 for k in pending_keys})
    assert not of_type(result.events, *REFERENCE_ONLY_TYPES)


def test_new_memory_is_stored_without_pending_fields_b15() -> None:
    """docs/decisions.md#b15: pending-only fields (owner, message id, attempts, last attempt) were
    copied into the store."""
    pending = mem(
        "Use pnpm for installs",
        id="p",
        source="explicit",
        owner="s1",
        pending_message_id="msg-1",
        promotion_attempts=1,
        last_promotion_attempt_at=iso_from_ms(NOW),
        last_promotion_failure_reason="capacity_rejected",
    )
    result = run(store_of(), journal_of(pending))
    [stored] = result.store.entries
    assert stored.id == "p" and stored.text == "Use pnpm for installs"
    assert stored.pending_owner_session_id is None and stored.pending_message_id is None
    assert stored.promotion_attempts is None and stored.last_promotion_attempt_at is None
    assert stored.last_promotion_failure_reason is None
    assert stored.retention_clock == NOW + 1000  # no clock of its own: starts at promotion
    assert result.accounting.promoted == (key(pending),)
    assert result.journal.entries == ()
    check_coverage(result, {key(pending)})


def test_an_existing_retention_clock_is_kept() -> None:
    pending = mem("Use pnpm for installs", id="p", source="explicit", retention_clock=NOW - 5)
    result = run(store_of(), journal_of(), [pending])
    assert result.store.entries[0].retention_clock == NOW - 5


def test_b14_exact_duplicate_reinforces_with_evidence() -> None:
    """docs/decisions.md#b14: promotion-time reinforcement of an existing exact entry emitted no
    memory_reinforced."""
    existing = mem(
        "Use pnpm", id="old", source="explicit", at=NOW - 3 * DAY_MS, retention_clock=NOW - 3 * DAY_MS
    )
    pending = mem("use PNPM!", id="p", source="explicit", owner="s1")
    result = run(store_of(existing), journal_of(pending))
    [stored] = result.store.entries
    assert stored.id == "old" and stored.reinforcement_count == 1
    assert stored.last_reinforced_session_id == "s1" and stored.retention_clock == NOW + 1000
    [reinforced] = of_type(result.events, EventType.MEMORY_REINFORCED)
    assert reinforced.memory is not None and reinforced.memory.memory_id == "old"
    assert roles(reinforced) == [(RelationRole.REINFORCED, "old"), (RelationRole.REINFORCED_BY, "p")]
    assert result.accounting.absorbed == (key(pending),)
    [absorbed] = of_type(result.events, EventType.PROMOTION_ABSORBED_EXACT)
    assert roles(absorbed) == [(RelationRole.ABSORBED, "p"), (RelationRole.RETAINED, "old")]
    check_coverage(result, {key(pending)})


def test_reinforcement_uses_the_owner_when_no_session_is_given_else_none() -> None:
    existing = mem("Use pnpm", id="old", source="explicit", at=NOW - 3 * DAY_MS)
    owned = mem("Use pnpm", id="p", source="explicit", owner="dead")
    result = run(store_of(existing), journal_of(owned), session_id=None, include_owned=False, idle=["dead"])
    assert result.store.entries[0].last_reinforced_session_id == "dead"
    unowned = mem("Use pnpm", id="q")
    result = run(store_of(existing), journal_of(unowned), session_id=None)
    assert result.store.entries[0].reinforcement_count == 1
    assert result.store.entries[0].last_reinforced_session_id is None


def test_blocked_reinforcement_emits_no_reinforced_event() -> None:
    existing = mem("Use pnpm", id="old", source="explicit", last_reinforced_at=NOW, reinforcement_count=1)
    result = run(store_of(existing), journal_of(mem("Use pnpm", id="p", owner="s1")))
    assert of_type(result.events, EventType.MEMORY_REINFORCED) == []
    assert result.store.entries[0].reinforcement_count == 1
    assert result.accounting.absorbed == ("decision:use pnpm",)


def test_superseded_store_entry_does_not_block_promotion() -> None:
    old = mem("Use yarn", id="old", source="explicit", status="superseded", at=NOW - DAY_MS)
    pending = mem("Use yarn", id="p", source="explicit", owner="s1")
    result = run(store_of(old), journal_of(pending))
    assert result.accounting.promoted == (key(pending),)
    assert sorted(ids_of(result.store.entries)) == ["old", "p"]


def test_identity_absorption_in_the_store_is_accounted_as_identity() -> None:
    existing = mem(
        "Settings are read from ./src/config.ts at boot", id="old", type="project", source="explicit"
    )
    pending = mem("Config lives in `src/config.ts`", id="p", type="project", owner="s1")
    result = run(store_of(existing), journal_of(pending))
    assert result.accounting.absorbed == (key(pending),)
    assert ids_of(result.store.entries) == ["old"]
    [ev] = of_type(result.events, *OUTCOME_TYPES)
    assert ev.type is EventType.PROMOTION_ABSORBED_IDENTITY
    assert roles(ev) == [(RelationRole.ABSORBED, "p"), (RelationRole.RETAINED, "old")]
    assert result.journal.entries == ()


def test_session_copy_wins_over_the_journal_copy_and_both_are_cleared() -> None:
    session_copy = mem("Prefer tabs", id="session", type="feedback", source="explicit", owner="s1")
    journal_copy = replace(session_copy, id="journal")
    result = run(store_of(), journal_of(journal_copy), [session_copy])
    assert ids_of(result.store.entries) == ["session"]
    assert result.journal.entries == ()
    assert result.cleared_keys == {key(session_copy)}
    check_coverage(result, {key(session_copy)})


def test_b13_nothing_pending_promotes_nothing_but_still_normalises() -> None:
    """docs/decisions.md#b13 (context): with nothing pending no promotion evidence is emitted, so the
    caller can always start a new cache epoch; the store is still normalised (docs/decisions.md#d4,
    docs/decisions.md#s4: a store written elsewhere must be
    redacted and deduped before it is rendered)."""
    store = store_of(mem("Existing", id="m"), mem("Staging login: password is hunter2 here", id="leak"))
    other = mem("Owned by another session", id="o", source="explicit", owner="s2")
    result = run(store, journal_of(other))
    assert result.store == normalize_store(store, NOW + 1000).store
    assert all("hunter2" not in e.text for e in result.store.entries)
    assert ids_of(result.journal.entries) == ["o"]
    assert not [e for e in result.events if e.phase == Phase.PROMOTION]
    assert result.cleared_keys == frozenset()
    assert result.accounting == PromotionAccounting((), (), (), ())


def test_ownership_other_sessions_entries_are_never_promoted_or_cleared() -> None:
    """Only the owner (or an adoption, docs/decisions.md#d7) promotes an owned pending memory."""
    mine = mem("Mine to promote", id="mine", source="explicit", owner="s1")
    theirs = mem("Theirs to keep", id="theirs", source="explicit", owner="s2")
    same_key_theirs = mem("Mine to promote", id="theirs-same", source="explicit", owner="s2")
    result = run(store_of(), journal_of(mine, theirs, same_key_theirs))
    assert ids_of(result.store.entries) == ["mine"]
    assert sorted(ids_of(result.journal.entries)) == ["theirs", "theirs-same"]


def test_epoch_start_promotes_only_unowned_backlog() -> None:
    unowned = mem("Unowned backlog item", id="u")
    owned = mem("Owned by the live session", id="o", source="explicit", owner="s1")
    result = run(store_of(), journal_of(unowned, owned), session_id=None, include_owned=False)
    assert ids_of(result.store.entries) == ["u"]
    assert ids_of(result.journal.entries) == ["o"]
    assert all(e.session_id is None for e in result.events)


def test_session_end_promotes_owned_and_leaves_unowned() -> None:
    unowned = mem("Unowned backlog item", id="u")
    owned = mem("Owned by the ending session", id="o", source="explicit", owner="s1")
    result = run(store_of(), journal_of(unowned, owned), include_unowned=False)
    assert ids_of(result.store.entries) == ["o"]
    assert ids_of(result.journal.entries) == ["u"]


def test_b21_entries_of_idle_sessions_are_adopted() -> None:
    """docs/decisions.md#b21, docs/decisions.md#d7: owned entries of a session that never compacted
    stayed in the journal forever."""
    orphan = mem("Orphaned explicit memory", id="orphan", source="explicit", owner="dead")
    live = mem("Live session memory", id="live", source="explicit", owner="alive")
    journal = journal_of(orphan, live)
    without = run(store_of(), journal, session_id="s1")
    assert without.store.entries == () and len(without.journal.entries) == 2
    adopted = run(store_of(), journal, session_id="s1", idle=["dead"])
    assert ids_of(adopted.store.entries) == ["orphan"]
    assert ids_of(adopted.journal.entries) == ["live"]
    [cleared] = of_type(adopted.events, EventType.PENDING_MEMORY_CLEARED)
    assert cleared.memory is not None and cleared.memory.memory_id == "orphan"
    assert cleared.reason_codes == ("promoted",)


def test_d10_tombstoned_pending_memory_is_cleared_not_stored() -> None:
    """A compaction candidate cannot bring a forgotten memory back (docs/decisions.md#d10)."""
    forgotten = mem("Use the staging database", id="p")
    tomb = Tombstone(key_hash=key_hash(key(forgotten)), memory_id="old", reason="forgotten", created_at="x")
    result = run(store_of(tombstones=(tomb,)), journal_of(forgotten))
    assert result.store.entries == ()
    assert result.accounting.rejected == (key(forgotten),)
    assert result.accounting.clearable == (key(forgotten),)
    assert result.accounting.reason_of(key(forgotten)) == "tombstoned"
    assert result.cleared_keys == {key(forgotten)}
    assert result.journal.entries == ()
    outcome = of_type(result.events, *OUTCOME_TYPES)
    assert [(e.type, e.reason_codes) for e in outcome] == [(EventType.PROMOTION_REJECTED, ("tombstoned",))]
    [cleared] = of_type(result.events, EventType.PENDING_MEMORY_CLEARED)
    assert cleared.reason_codes == ("tombstoned",)


@pytest.mark.parametrize("owner", ["s1", "idle"])
def test_d10_an_explicit_request_lifts_the_tombstone_of_its_key(owner: str) -> None:
    """The session's own request, or one adopted from an idle session (docs/decisions.md#d7)."""
    again = mem("Use the staging database", id="p", source="explicit", owner=owner)
    tomb = Tombstone(key_hash=key_hash(key(again)), memory_id="old", reason="forgotten", created_at="x")
    result = run(store_of(tombstones=(tomb,)), journal_of(again), idle=["idle"])
    assert result.store.tombstones == ()
    assert result.accounting.promoted == (key(again),)
    assert [e.text for e in result.store.entries] == ["Use the staging database"]


def test_b26_promotion_clears_are_evidenced() -> None:
    """docs/decisions.md#b26: journal clears after promotion left no evidence."""
    a = mem("First new memory", id="a", owner="s1", source="explicit")
    b = mem("Second unowned memory", id="b")
    result = run(store_of(), journal_of(a, b))
    cleared = of_type(result.events, EventType.PENDING_MEMORY_CLEARED)
    assert sorted((e.memory.memory_id, e.reason_codes) for e in cleared if e.memory) == [
        ("a", ("promoted",)),
        ("b", ("promoted",)),
    ]
    assert all(e.outcome is Outcome.CLEARED and e.phase is Phase.PENDING_JOURNAL for e in cleared)


def test_events_order_and_session_stamp() -> None:
    stale = mem("Stale compaction item", id="stale", at=NOW - 40 * DAY_MS)
    existing = mem("Use pnpm", id="old", source="explicit", at=NOW - 3 * DAY_MS)
    dup = mem("use pnpm", id="dup", owner="s1", source="explicit")
    fresh = mem("Fresh memory", id="new", owner="s1", source="explicit")
    raw = replace(empty_journal("/w", "k", NOW), entries=(stale, dup, fresh))
    result = run(store_of(existing), raw)
    kinds = [e.type for e in result.events]
    assert kinds == [
        EventType.PENDING_MEMORY_CLEARED,  # journal retention (TTL)
        EventType.MEMORY_REINFORCED,  # promotion-time reinforcement
        EventType.PROMOTION_ABSORBED_EXACT,
        EventType.PROMOTION_PROMOTED,
        EventType.PENDING_MEMORY_CLEARED,
        EventType.PENDING_MEMORY_CLEARED,
    ]
    assert result.events[0].reason_codes == ("journal_ttl",)
    assert all(e.session_id == "s1" for e in result.events)


# ---------------------------------------------------------------------------------------------
# Memories that can never be stored (docs/decisions.md#b20)
# ---------------------------------------------------------------------------------------------


def test_a_pending_entry_marked_superseded_is_cleared_not_stored() -> None:
    """Only a hand-edited journal holds one. It was appended to the store as superseded and retried
    three times; now it is rejected as ``not_active`` and cleared at once, with its event."""
    edited = mem("Use the staging database", id="p", source="explicit", owner="s1", status="superseded")
    result = run(store_of(), journal_of(edited))
    assert result.store.entries == ()
    assert result.accounting.rejected == result.accounting.clearable == (key(edited),)
    assert result.accounting.reason_of(key(edited)) == "not_active"
    assert result.journal.entries == () and result.cleared_keys == {key(edited)}
    [outcome] = of_type(result.events, *OUTCOME_TYPES)
    assert (outcome.type, outcome.reason_codes) == (EventType.PROMOTION_REJECTED, ("not_active",))
    [cleared] = of_type(result.events, EventType.PENDING_MEMORY_CLEARED)
    assert cleared.reason_codes == ("not_active",)
    check_coverage(result, {key(edited)})


def test_promotion_never_counts_attempts() -> None:
    """The journal's attempt fields are read (a reference journal may carry them) but never
    written: a pending memory either leaves the journal or stays as it was."""
    counted = mem("Attempted before", id="a", source="explicit", owner="s1", promotion_attempts=2)
    result = run(store_of(), journal_of(counted))
    assert result.journal.entries == ()
    assert [e.promotion_attempts for e in result.store.entries] == [None]
    check_coverage(result, {key(counted)})


# ---------------------------------------------------------------------------------------------
# The archive (docs/decisions.md#d2)
# ---------------------------------------------------------------------------------------------


def test_pending_memory_archived_in_the_same_step_counts_as_promoted() -> None:
    crowd = tuple(
        mem(f"Stored decision number {i}", id=f"s{i:03d}", source="explicit", retention_clock=NOW)
        for i in range(500)
    )
    old = mem("An old weak compaction reference", id="p", type="reference", retention_clock=NOW - 60 * DAY_MS)
    result = run(store_of(*crowd), journal_of(), [old])
    assert ids_of(result.archived) == ["p"]
    assert result.accounting.promoted == (key(old),)
    assert result.accounting.reason_of(key(old)) == "archived"
    [ev] = of_type(result.events, EventType.PROMOTION_PROMOTED)
    assert ev.reason_codes == ("new_workspace_entry", "archived")
    assert roles(ev) == [(RelationRole.PROMOTED, "p")]
    assert of_type(result.events, EventType.MEMORY_ARCHIVED)


def test_duplicate_of_an_archived_memory_revives_it() -> None:
    archived = mem("Use the blue-green deploy", id="arch", source="explicit", at=NOW - 90 * DAY_MS)
    marker = ArchiveMarker(
        memory_id="arch",
        key_hash=key_hash(key(archived)),
        identity_key_hash=key_hash(identity_key(archived)),
        archived_at=iso_from_ms(NOW - DAY_MS),
    )
    pending = mem("use the blue-green deploy", id="p", owner="s1", source="explicit")
    result = run(store_of(archived=(marker,)), journal_of(pending), archive={marker.key_hash: archived})
    assert len(result.store.entries) == 1
    assert result.store.archived == ()
    assert key(pending) in result.accounting.clearable
    assert of_type(result.events, EventType.MEMORY_REVIVED)
    check_coverage(result, {key(pending)})
