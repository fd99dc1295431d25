"""Keeping the stored memories consistent: dedupe with accounting, the one-time migrations, the
retention-clock backfill and the archive (docs/decisions.md#normalisation-and-migrations,
docs/decisions.md#dedupe, docs/decisions.md#d2).

:func:`normalize_store` is the one step every write of a workspace store goes through. In order:

1. redaction of every entry's text and rationale (``memory_redacted``);
2. the one-time migrations, quality cleanup before P0 cleanup (``memory_superseded`` plus an audit
   record per superseded entry);
3. the retention-clock backfill (createdAt, else updatedAt, else now);
4. truncation of active texts to 260 code points;
5. revival of archived memories that an active entry duplicates (``memory_revived``);
6. dedupe (``memory_absorbed``, ``memory_reinforced``);
7. the archive rule: only when more than 500 entries are active do the weakest long-unrendered ones
   move to the archive (``memory_archived``). Type caps and the 28-entry cap are *render* limits and
   never remove anything from storage (docs/decisions.md#d2).

Nothing leaves the active set without an event naming it, and the step is idempotent: normalising a
normalised store changes nothing and emits nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Final, NamedTuple

import msgspec
from msgspec.structs import replace

from domain import evidence, safety
from domain.ids import stable_suffix
from domain.key_index import carry_index, stored_index
from domain.keys import carry_keys, entry_key_hashes, entry_keys, exact_key, identity_key, key_hash
from domain.model import (
    DAY_MS,
    ArchiveMarker,
    EventType,
    EvidenceInput,
    LongTermLimits,
    MemoryEntry,
    MemorySource,
    MemoryStatus,
    MemoryType,
    Outcome,
    Phase,
    RelationRole,
    WorkspaceStore,
)
from domain.retention import (
    DEFAULT_TUNING,
    USER_IMPORTANCE_FACTOR,
    Tuning,
    dormancy_at,
    reinforce,
    reinforcement_count,
    retention_start_ms,
    sort_by_retention,
    source_priority,
)
from domain.timeutil import iso_from_ms, parse_iso_ms

QUALITY_CLEANUP_MIGRATION_ID: Final = "2026-04-28-quality-cleanup"
P0_CLEANUP_MIGRATION_ID: Final = "2026-04-26-p0-cleanup"
RETENTION_CLOCK_BACKFILL_MIGRATION_ID: Final = "2026-05-01-retention-clock-backfill"

ABSORBED_EXACT: Final = "absorbed_exact"
ABSORBED_IDENTITY: Final = "absorbed_identity"

_ENTITY: Final = "entity"
_SUPERSESSION: Final = "supersession"
_ARCHIVE_AFTER_MS: Final = LongTermLimits.ARCHIVE_UNRENDERED_DAYS * DAY_MS


# ---------------------------------------------------------------------------------------------
# Result values
# ---------------------------------------------------------------------------------------------


class Absorption(msgspec.Struct, frozen=True):
    """One dedupe loser and where it went."""

    absorbed: MemoryEntry
    survivor_id: str
    reason: str  # ABSORBED_EXACT | ABSORBED_IDENTITY


class DedupeResult(msgspec.Struct, frozen=True):
    kept: tuple[MemoryEntry, ...]
    absorptions: tuple[Absorption, ...]
    events: tuple[EvidenceInput, ...]


class MigrationAudit(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One line of ``migration-logs/<migration id>.jsonl``. It names the workspace by its key only,
    never by its absolute root (docs/decisions.md#s17)."""

    migration_id: str
    timestamp: str
    workspace_key: str
    entry_id: str
    type: str
    source: str
    text: str
    reasons: tuple[str, ...]
    hard_reasons: tuple[str, ...]
    before_status: str
    after_status: str


class NormalizeResult(msgspec.Struct, frozen=True):
    store: WorkspaceStore
    events: tuple[EvidenceInput, ...]
    audit: tuple[MigrationAudit, ...]
    absorptions: tuple[Absorption, ...]
    #: entries moved out in this step; the shell appends them to the archive file
    archived: tuple[MemoryEntry, ...]
    #: entries brought back from the archive in this step
    revived: tuple[MemoryEntry, ...]


# ---------------------------------------------------------------------------------------------
# Choosing the better of two duplicates (docs/decisions.md#dedupe)
# ---------------------------------------------------------------------------------------------


def _mode(entry: MemoryEntry) -> str:
    return _SUPERSESSION if entry.type is MemoryType.DECISION else _ENTITY


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _preference(a: MemoryEntry, b: MemoryEntry, mode: str) -> int | None:
    """``> 0`` when ``a`` is better, ``< 0`` when ``b`` is, ``0`` on a tie, and ``None`` where the
    reference's answer hinges on an invalid ``createdAt`` (it then keeps the existing entry)."""
    priority = source_priority(a) - source_priority(b)
    if priority:
        return _sign(priority)
    if a.confidence != b.confidence:
        return 1 if a.confidence > b.confidence else -1
    created_a, created_b = parse_iso_ms(a.created_at), parse_iso_ms(b.created_at)
    valid = created_a is not None and created_b is not None
    if mode == _SUPERSESSION:
        if not valid:
            return None
        if created_a != created_b:
            return 1 if (created_a or 0) > (created_b or 0) else -1
        return _sign(len(a.text) - len(b.text))
    length = len(a.text) - len(b.text)
    if abs(length) > 10:
        return _sign(length)
    if not valid:
        return None
    return _sign((created_a or 0) - (created_b or 0))


def choose_better(incoming: MemoryEntry, existing: MemoryEntry, mode: str) -> MemoryEntry:
    """``chooseBetterMemory``: source priority, then confidence, then by ``mode`` — ``"supersession"``
    (decisions): newer ``createdAt``, then longer text; ``"entity"`` (feedback, project, reference):
    longer by more than 10 code points, else newer. Ties, and any comparison of dates where one
    ``createdAt`` is invalid, keep ``existing``."""
    preference = _preference(incoming, existing, mode)
    return incoming if preference is not None and preference > 0 else existing


def _canonical(entry: MemoryEntry) -> tuple[str, str, bytes]:
    """A total order on entries used wherever a choice must not depend on input order."""
    return (exact_key(entry), entry.id, msgspec.json.encode(entry))


def _beats(a: MemoryEntry, b: MemoryEntry) -> bool:
    """``choose_better``'s verdict where it has one, else the deterministic tie-break: smaller exact
    key, then smaller id (by code point), then the canonical encoding."""
    preference = _preference(a, b, _mode(a))
    if preference:
        return preference > 0
    return _canonical(a) < _canonical(b)


# ---------------------------------------------------------------------------------------------
# Dedupe: connected components over exact and identity keys (docs/decisions.md#d9)
# ---------------------------------------------------------------------------------------------


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _components(entries: Sequence[MemoryEntry]) -> list[list[int]]:
    """Index groups of entries that share an exact key, or (project/reference) an identity key;
    groups in order of their first member, members in input order."""
    pairs = [entry_keys(entry) for entry in entries]
    exact = [pair[0] for pair in pairs]
    identity = [pair[1] for pair in pairs]
    if len(set(exact)) == len(exact) and len(set(identity)) == len(identity):
        return [[index] for index in range(len(entries))]  # no key seen twice (the common case)
    groups = _UnionFind(len(entries))
    # exact and identity keys are looked up separately: an exact key never meets an identity key
    for keys_ in (exact, identity):
        first_seen: dict[str, int] = {}
        for index, key in enumerate(keys_):
            seen = first_seen.setdefault(key, index)
            if seen != index:
                groups.union(seen, index)
    members: dict[int, list[int]] = {}
    for index in range(len(entries)):
        members.setdefault(groups.find(index), []).append(index)
    return sorted(members.values(), key=lambda group: group[0])


def _unique_ids(
    entries: Sequence[MemoryEntry], reserved: set[str]
) -> tuple[list[MemoryEntry], list[EvidenceInput]]:
    """Entries that share an id but say different things get distinct ids instead of one of them
    vanishing (docs/decisions.md#s14). Among active entries holding one id, the group with the
    smallest exact key keeps it (unless a superseded entry holds it); every other group gets
    ``<id>_<suffix>`` derived from its exact key, with a ``memory_migrated`` event. Entries sharing
    both id and exact key stay as they are and are merged by dedupe."""
    ids = {entry.id for entry in entries}
    if len(ids) == len(entries) and ids.isdisjoint(reserved):
        return list(entries), []  # every id held once and none by a superseded entry: no rename
    by_id: dict[str, set[str]] = {}
    for entry in entries:
        by_id.setdefault(entry.id, set()).add(exact_key(entry))
    taken = set(reserved) | set(by_id)
    renames: dict[tuple[str, str], str] = {}
    for old_id, keys in by_id.items():
        ordered = sorted(keys)
        movers = ordered if old_id in reserved else ordered[1:]
        for key in movers:
            new_id = f"{old_id}_{stable_suffix(old_id, key)}"
            attempt = 0
            while new_id in taken:
                attempt += 1
                new_id = f"{old_id}_{stable_suffix(old_id, key, attempt)}"
            taken.add(new_id)
            renames[(old_id, key)] = new_id
    if not renames:
        return list(entries), []
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    announced: set[tuple[str, str]] = set()
    for entry in entries:
        slot = (entry.id, exact_key(entry))
        target = renames.get(slot)
        if target is None:
            out.append(entry)
            continue
        renamed = replace(entry, id=target)
        out.append(renamed)
        if slot not in announced:
            announced.add(slot)
            events.append(
                evidence.event(
                    EventType.MEMORY_MIGRATED,
                    Phase.CONSOLIDATION,
                    Outcome.ACCEPTED,
                    ("duplicate_id_renamed",),
                    memory=renamed,
                    details={"previousId": entry.id},
                    text=entry.text,
                )
            )
    return out, events


def _merge_ids(*groups: Iterable[str] | None, exclude: str) -> tuple[str, ...] | None:
    merged: list[str] = []
    for group in groups:
        for item in group or ():
            if item != exclude and item not in merged:
                merged.append(item)
    return tuple(merged) or None


def _never_weaker(survivor: MemoryEntry, members: Sequence[MemoryEntry], now_ms: int) -> MemoryEntry:
    """The survivor of a merge is never weaker than the strongest member of its group at that moment:
    it keeps the most recent retention clock of the group (a duplicate's recent activity is not
    thrown away) and the highest user importance. Members share their type (identity keys include
    it), and the survivor has the highest source priority, so with the highest count (inherited
    above) no member can outlast it."""
    latest = max(retention_start_ms(m, now_ms) for m in members)
    if latest > retention_start_ms(survivor, now_ms):
        survivor = replace(survivor, retention_clock=int(latest) if float(latest).is_integer() else latest)
    strongest = max(members, key=lambda m: USER_IMPORTANCE_FACTOR.get(m.user_importance or "normal", 1.0))
    factor = USER_IMPORTANCE_FACTOR.get
    if factor(strongest.user_importance or "normal", 1.0) > factor(survivor.user_importance or "normal", 1.0):
        survivor = replace(survivor, user_importance=strongest.user_importance)
    return survivor


def _absorb_component(
    members: list[MemoryEntry], now_ms: int, tuning: Tuning
) -> tuple[MemoryEntry, list[Absorption], list[EvidenceInput]]:
    """The survivor of one group of duplicates, the absorptions and their evidence."""
    ordered = sorted(members, key=_canonical)
    winner = ordered[0]
    for candidate in ordered[1:]:
        if _beats(candidate, winner):
            winner = candidate
    losers = [m for m in ordered if m is not winner]

    # The losers' reinforcement moves to the survivor, never beyond the maximum count
    # (docs/decisions.md#d2).
    inherited = min(tuning.reinforcement_cap, max(reinforcement_count(m) for m in members))
    survivor = winner
    if inherited > reinforcement_count(winner):
        survivor = replace(survivor, reinforcement_count=inherited)
    survivor = _never_weaker(survivor, members, now_ms)
    survivor = replace(
        survivor,
        absorbed_ids=_merge_ids(
            winner.absorbed_ids,
            *((*(m.absorbed_ids or ()), m.id) for m in losers),
            exclude=winner.id,
        ),
    )

    absorptions: list[Absorption] = []
    events: list[EvidenceInput] = []
    survivor_key = exact_key(winner)
    for loser in losers:
        reason = ABSORBED_EXACT if exact_key(loser) == survivor_key else ABSORBED_IDENTITY
        absorptions.append(Absorption(absorbed=loser, survivor_id=winner.id, reason=reason))
        events.append(
            evidence.event(
                EventType.MEMORY_ABSORBED,
                Phase.CONSOLIDATION,
                Outcome.ABSORBED,
                (reason,),
                memory=loser,
                relations=(
                    evidence.relation(RelationRole.ABSORBED, loser),
                    evidence.relation(RelationRole.RETAINED, survivor),
                ),
                text=loser.text,
            )
        )
        session = loser.pending_owner_session_id
        if session is None:
            session = winner.pending_owner_session_id
        reinforced = reinforce(survivor, session, now_ms, tuning)
        if reinforcement_count(reinforced) > reinforcement_count(survivor):
            duplicate = "duplicate_identity" if reason == ABSORBED_IDENTITY else "duplicate_exact"
            events.append(
                evidence.event(
                    EventType.MEMORY_REINFORCED,
                    Phase.REINFORCEMENT,
                    Outcome.REINFORCED,
                    (duplicate, "reinforcement_window_allowed"),
                    memory=reinforced,
                    relations=(
                        evidence.relation(RelationRole.REINFORCED, reinforced),
                        evidence.relation(RelationRole.REINFORCED_BY, loser),
                    ),
                    text=reinforced.text,
                )
            )
        survivor = reinforced
    return survivor, absorptions, events


def dedupe(entries: Sequence[MemoryEntry], now_ms: int, tuning: Tuning = DEFAULT_TUNING) -> DedupeResult:
    """Merge duplicates among the active entries: entries with equal exact keys always merge, and
    project/reference entries with equal identity keys merge too (transitively). One survivor per
    group, chosen by :func:`choose_better` with a deterministic tie-break, so the surviving exact
    keys and ids do not depend on input order. Every loser is absorbed: its id joins the survivor's
    ``absorbed_ids`` and it gets a ``memory_absorbed`` event; the survivor is reinforced by each
    duplicate as far as the reinforcement guards allow (``memory_reinforced``).

    Superseded entries are passed through untouched and in place. ``kept`` keeps input order, each
    survivor at the position of the first member of its group."""
    superseded_ids = {e.id for e in entries if e.status is MemoryStatus.SUPERSEDED}
    active_positions = [i for i, e in enumerate(entries) if e.status is not MemoryStatus.SUPERSEDED]
    active, events = _unique_ids([entries[i] for i in active_positions], superseded_ids)

    groups = _components(active)
    if len(groups) == len(active) and not events:
        # no duplicates and no id renamed: every entry stays as it is, in place
        return DedupeResult(kept=tuple(entries), absorptions=(), events=())
    replacement: dict[int, MemoryEntry | None] = {}
    absorptions: list[Absorption] = []
    for group in groups:
        if len(group) == 1:
            replacement[active_positions[group[0]]] = active[group[0]]
            continue
        survivor, absorbed, group_events = _absorb_component([active[i] for i in group], now_ms, tuning)
        absorptions.extend(absorbed)
        events.extend(group_events)
        replacement[active_positions[group[0]]] = survivor
        for i in group[1:]:
            replacement[active_positions[i]] = None
    kept: list[MemoryEntry] = []
    for index, entry in enumerate(entries):
        if index in replacement:
            chosen = replacement[index]
            if chosen is not None:
                kept.append(chosen)
        else:
            kept.append(entry)
    return DedupeResult(kept=tuple(kept), absorptions=tuple(absorptions), events=tuple(events))


# ---------------------------------------------------------------------------------------------
# Normalisation steps
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _redact_stored(text: str) -> str:
    """``safety.redact``, memoised: every normalisation redacts every stored text again, and stored
    texts rarely change (docs/performance.md)."""
    return safety.redact(text)


def _redacted(entry: MemoryEntry, now_iso: str) -> tuple[MemoryEntry, EvidenceInput | None]:
    """Redact text and rationale; an empty rationale is left as it is (docs/decisions.md#s16)."""
    text = _redact_stored(entry.text)
    rationale = _redact_stored(entry.rationale) if entry.rationale else entry.rationale
    if text == entry.text and rationale == entry.rationale:
        return entry, None
    fields = tuple(
        name
        for name, changed in (("text", text != entry.text), ("rationale", rationale != entry.rationale))
        if changed
    )
    updated = replace(entry, text=text, rationale=rationale, updated_at=now_iso)
    event = evidence.event(
        EventType.MEMORY_REDACTED,
        Phase.CONSOLIDATION,
        Outcome.REDACTED,
        ("credential_redacted",),
        memory=updated,
        details={"fields": fields},
        text=text,
    )
    return updated, event


def _merge_tags(tags: tuple[str, ...] | None, extra: Iterable[str]) -> tuple[str, ...]:
    merged: list[str] = []
    for tag in (*(tags or ()), *extra):
        if tag not in merged:
            merged.append(tag)
    return tuple(merged)


def _supersede_for_migration(
    entry: MemoryEntry,
    migration_id: str,
    reasons: tuple[str, ...],
    hard: tuple[str, ...],
    store: WorkspaceStore,
    now_iso: str,
    tags: tuple[str, ...] | None,
) -> tuple[MemoryEntry, EvidenceInput, MigrationAudit]:
    updated = replace(entry, status=MemoryStatus.SUPERSEDED, updated_at=now_iso, tags=tags)
    event = evidence.event(
        EventType.MEMORY_SUPERSEDED,
        Phase.MIGRATION,
        Outcome.SUPERSEDED,
        (migration_id, *(f"quality:{reason}" for reason in hard)),
        memory=updated,
        relations=(evidence.relation(RelationRole.SUPERSEDED, updated),),
        text=entry.text,
    )
    audit = MigrationAudit(
        migration_id=migration_id,
        timestamp=now_iso,
        workspace_key=store.workspace.key,
        entry_id=entry.id,
        type=entry.type.value,
        source=entry.source.value,
        text=entry.text,
        reasons=reasons,
        hard_reasons=hard,
        before_status=MemoryStatus.ACTIVE.value,
        after_status=MemoryStatus.SUPERSEDED.value,
    )
    return updated, event, audit


def _quality_cleanup(
    entries: list[MemoryEntry], store: WorkspaceStore, now_iso: str
) -> tuple[list[MemoryEntry], list[EvidenceInput], list[MigrationAudit]]:
    """The quality-cleanup migration (docs/decisions.md#normalisation-and-migrations): active
    compaction entries with a hard quality reason become superseded, tagged ``quality_cleanup`` and
    ``quality:<reason>``. Soft reasons never act; explicit/manual entries are never touched."""
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []
    for entry in entries:
        if entry.source is not MemorySource.COMPACTION or entry.status is MemoryStatus.SUPERSEDED:
            out.append(entry)
            continue
        quality = safety.assess_memory_quality(entry.type.value, entry.text)
        hard = tuple(r for r in quality.reasons if safety.is_hard_quality_reason(r))
        if quality.accepted or not hard:
            out.append(entry)
            continue
        tags = _merge_tags(entry.tags, ("quality_cleanup", *(f"quality:{r}" for r in hard)))
        updated, event, record = _supersede_for_migration(
            entry, QUALITY_CLEANUP_MIGRATION_ID, quality.reasons, hard, store, now_iso, tags
        )
        out.append(updated)
        events.append(event)
        audit.append(record)
    return out, events, audit


def _p0_cleanup(
    entries: list[MemoryEntry], store: WorkspaceStore, now_iso: str
) -> tuple[list[MemoryEntry], list[EvidenceInput], list[MigrationAudit]]:
    """The P0-cleanup migration (docs/decisions.md#normalisation-and-migrations): active compaction
    project entries that are progress snapshots become superseded. Unlike the reference, already
    superseded entries are left alone (docs/decisions.md#s16)."""
    out: list[MemoryEntry] = []
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []
    reason = ("progress_snapshot",)
    for entry in entries:
        if (
            entry.source is MemorySource.COMPACTION
            and entry.type is MemoryType.PROJECT
            and entry.status is not MemoryStatus.SUPERSEDED
            and safety.is_progress_snapshot_violation(entry.text)
        ):
            updated, event, record = _supersede_for_migration(
                entry, P0_CLEANUP_MIGRATION_ID, reason, reason, store, now_iso, entry.tags
            )
            out.append(updated)
            events.append(event)
            audit.append(record)
        else:
            out.append(entry)
    return out, events, audit


def _valid_clock(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def backfill_retention_clock(entry: MemoryEntry, now_ms: int) -> MemoryEntry:
    """A missing, non-finite or negative ``retentionClock`` becomes ``createdAt``, else
    ``updatedAt``, else ``now`` (a negative clock counts as invalid, docs/decisions.md#s9)."""
    if _valid_clock(entry.retention_clock):
        return entry
    for stamp in (entry.created_at, entry.updated_at):
        parsed = parse_iso_ms(stamp) if isinstance(stamp, str) else None
        if parsed is not None and parsed >= 0:
            return replace(entry, retention_clock=parsed)
    return replace(entry, retention_clock=now_ms)


def _same_entries(a: Sequence[MemoryEntry], b: Sequence[MemoryEntry]) -> bool:
    """Equal up to order (ids are unique after dedupe; a repeated id compares as different)."""
    if len(a) != len(b):
        return False
    by_id = {e.id: e for e in b}
    return len(by_id) == len(b) and all((x := by_id.get(e.id)) is e or x == e for e in a)


def _truncated(entry: MemoryEntry) -> MemoryEntry:
    if entry.status is MemoryStatus.SUPERSEDED or len(entry.text) <= LongTermLimits.MAX_ENTRY_TEXT_CHARS:
        return entry
    return replace(entry, text=safety.stored_text(entry.text, LongTermLimits.MAX_ENTRY_TEXT_CHARS))


# The key hashes of a store's archive markers, by the markers tuple (docs/performance.md). The tuple
# is carried unchanged from one operation to the next until something is archived or revived, and
# it grows with the archive, so looking at every marker at every normalisation would make a long
# life cost more per operation. Keyed by ``id`` with the tuple kept in the value (an id cannot be
# reused while remembered; a hit is only a hit for the very same tuple); bounded and invisible. A
# tuple made by archiving or reviving gets its index from the one it was made from.
class _MarkerIndex(NamedTuple):
    markers: tuple[ArchiveMarker, ...]
    #: key hash -> the markers with that exact (``key_hash``) or identity hash
    exact: dict[str, tuple[ArchiveMarker, ...]]
    identity: dict[str, tuple[ArchiveMarker, ...]]


_MARKER_INDEXES: Final[dict[int, _MarkerIndex]] = {}


def _remember_markers(index: _MarkerIndex) -> _MarkerIndex:
    if len(_MARKER_INDEXES) >= 64:
        _MARKER_INDEXES.clear()
    _MARKER_INDEXES[id(index.markers)] = index
    return index


def _add_markers(
    exact: dict[str, tuple[ArchiveMarker, ...]],
    identity: dict[str, tuple[ArchiveMarker, ...]],
    markers: Iterable[ArchiveMarker],
) -> None:
    for marker in markers:
        exact[marker.key_hash] = (*exact.get(marker.key_hash, ()), marker)
        identity[marker.identity_key_hash] = (*identity.get(marker.identity_key_hash, ()), marker)


def _marker_index(markers: tuple[ArchiveMarker, ...]) -> _MarkerIndex:
    """The exact and identity hashes of ``markers`` (remembered)."""
    hit = _MARKER_INDEXES.get(id(markers))
    if hit is not None and hit.markers is markers:
        return hit
    exact: dict[str, tuple[ArchiveMarker, ...]] = {}
    identity: dict[str, tuple[ArchiveMarker, ...]] = {}
    _add_markers(exact, identity, markers)
    return _remember_markers(_MarkerIndex(markers, exact, identity))


def _derive_markers(
    before: tuple[ArchiveMarker, ...], after: tuple[ArchiveMarker, ...], gone: Sequence[ArchiveMarker]
) -> None:
    """``after`` is ``before`` without the markers ``gone`` and with new ones appended: when
    ``before`` has an index, ``after`` gets one made from it."""
    hit = _MARKER_INDEXES.get(id(before))
    if hit is None or hit.markers is not before or after is before:
        return
    exact, identity = dict(hit.exact), dict(hit.identity)
    for marker in gone:
        for table, key in ((exact, marker.key_hash), (identity, marker.identity_key_hash)):
            kept = tuple(m for m in table[key] if m is not marker)
            if kept:
                table[key] = kept
            else:
                del table[key]
    _add_markers(exact, identity, after[len(before) - len(gone) :])
    _remember_markers(_MarkerIndex(after, exact, identity))


def _revive(
    active: list[MemoryEntry],
    store: WorkspaceStore,
    archive: Mapping[str, MemoryEntry],
    now_ms: int,
    now_iso: str,
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[EvidenceInput]]:
    """Archived memories duplicated by an active entry come back (docs/decisions.md#d2). Returns the
    revived entries, the markers that remain and the events."""
    if not store.archived or not archive:
        return [], store.archived, []
    hashes = [entry_key_hashes(entry) for entry in active]
    index = _marker_index(store.archived)
    marked_exact, marked_identity = index.exact, index.identity
    if not any(exact in marked_exact or identity in marked_identity for exact, identity in hashes):
        return [], store.archived, []  # no active entry duplicates an archived one
    # the first active entry with each hash
    exact_hashes: dict[str, MemoryEntry] = {}
    identity_hashes: dict[str, MemoryEntry] = {}
    for (exact, identity), entry in zip(hashes, active, strict=True):
        exact_hashes.setdefault(exact, entry)
        identity_hashes.setdefault(identity, entry)
    return _revive_markers(
        store.archived, range(len(store.archived)), exact_hashes, identity_hashes, archive, now_ms, now_iso
    )


def _revive_markers(
    markers: tuple[ArchiveMarker, ...],
    positions: Iterable[int],
    exact_hashes: Mapping[str, MemoryEntry],
    identity_hashes: Mapping[str, MemoryEntry],
    archive: Mapping[str, MemoryEntry],
    now_ms: int,
    now_iso: str,
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[EvidenceInput]]:
    """Bring back the archived memory of each marker at ``positions`` (ascending) that an active entry
    duplicates: ``exact_hashes`` / ``identity_hashes`` map a key hash to the first active entry with
    it. Markers elsewhere are not looked at; they remain, as do markers whose memory is not in
    ``archive``."""
    revived: list[MemoryEntry] = []
    gone: set[int] = set()
    events: list[EvidenceInput] = []
    for position in positions:
        marker = markers[position]
        archived = archive.get(marker.key_hash)
        trigger = exact_hashes.get(marker.key_hash) or identity_hashes.get(marker.identity_key_hash)
        if archived is None or trigger is None:
            continue
        cleaned, redaction = _redacted(archived, now_iso)
        if redaction is not None:
            events.append(redaction)
        entry = _truncated(backfill_retention_clock(cleaned, now_ms))
        if entry.status is MemoryStatus.SUPERSEDED:
            entry = replace(entry, status=MemoryStatus.ACTIVE)
        revived.append(entry)
        gone.add(position)
        reason = "revived_exact" if marker.key_hash == key_hash(exact_key(trigger)) else "revived_identity"
        events.append(
            evidence.event(
                EventType.MEMORY_REVIVED,
                Phase.LIFECYCLE,
                Outcome.REVIVED,
                (reason,),
                memory=entry,
                relations=(
                    evidence.relation(RelationRole.RETAINED, entry),
                    evidence.relation(RelationRole.REINFORCED_BY, trigger),
                ),
                details={"archivedAt": marker.archived_at},
                text=entry.text,
            )
        )
    if not gone:
        return revived, markers, events
    cuts = sorted(gone)
    remaining = markers[: cuts[0]]
    for here, after in zip(cuts, [*cuts[1:], len(markers)], strict=True):
        remaining += markers[here + 1 : after]
    _derive_markers(markers, remaining, [markers[i] for i in cuts])
    return revived, remaining, events


def _archive_eligible(entry: MemoryEntry, now_ms: int) -> bool:
    """Not shown for 30 days: ``lastRenderedAt`` or, never rendered, the retention start."""
    rendered = entry.last_rendered_at
    if isinstance(rendered, int | float) and not isinstance(rendered, bool) and math.isfinite(rendered):
        return now_ms - rendered > _ARCHIVE_AFTER_MS
    return now_ms - retention_start_ms(entry, now_ms) > _ARCHIVE_AFTER_MS


def _archive_overflow(
    ordered: list[MemoryEntry], markers: tuple[ArchiveMarker, ...], now_ms: int, now_iso: str, limit: int
) -> tuple[list[MemoryEntry], tuple[ArchiveMarker, ...], list[MemoryEntry], list[EvidenceInput]]:
    """While more than 500 entries are active, move the weakest eligible one out (docs/decisions.md#d2).
    ``ordered`` is strongest first. ``limit`` is the tuning's ``max_stored_active``."""
    if len(ordered) <= limit:
        return ordered, markers, [], []
    excess = len(ordered) - limit
    moved: list[MemoryEntry] = []
    for entry in reversed(ordered):
        if len(moved) == excess:
            break
        if _archive_eligible(entry, now_ms):
            moved.append(entry)
    if not moved:
        return ordered, markers, [], []
    moved_ids = {id(entry) for entry in moved}
    kept = [entry for entry in ordered if id(entry) not in moved_ids]
    new_markers: list[ArchiveMarker] = []
    events: list[EvidenceInput] = []
    for entry in moved:
        new_markers.append(
            ArchiveMarker(
                memory_id=entry.id,
                key_hash=key_hash(exact_key(entry)),
                identity_key_hash=key_hash(identity_key(entry)),
                archived_at=now_iso,
            )
        )
        events.append(
            evidence.event(
                EventType.MEMORY_ARCHIVED,
                Phase.LIFECYCLE,
                Outcome.ARCHIVED,
                ("stored_active_limit",),
                memory=entry,
                details={"maxStoredActive": limit, "activeBefore": len(ordered)},
                text=entry.text,
            )
        )
    replaced = {marker.key_hash for marker in new_markers}
    index = _marker_index(markers)
    gone = [m for key in replaced for m in index.exact.get(key, ())]
    kept_markers = tuple(m for m in markers if m.key_hash not in replaced) if gone else markers
    kept_markers += tuple(new_markers)
    _derive_markers(markers, kept_markers, gone)
    return kept, kept_markers, moved, events


# Entries that redaction, retention-clock backfill and truncation leave as they are, by object
# (docs/performance.md). Every normalisation looks at every stored entry again, and the entries are
# the same frozen objects from one operation to the next. Keyed by ``id`` with the entry itself as
# the value, so a hit is only a hit for the very same object (an id cannot be reused while it is
# remembered); bounded (emptied when full) and invisible: being clean depends on the entry alone.
_CLEAN_LIMIT: Final = 16384
_CLEAN: Final[dict[int, MemoryEntry]] = {}


def _cleaned(entry: MemoryEntry, now_ms: int) -> MemoryEntry:
    """Backfill and truncation of one entry (after redaction); remembers entries all three steps
    leave unchanged."""
    result = _truncated(backfill_retention_clock(entry, now_ms))
    if result is entry and _redacted(entry, "")[1] is None:
        if len(_CLEAN) >= _CLEAN_LIMIT:
            _CLEAN.clear()
        _CLEAN[id(entry)] = entry
    return result


# Stores that normalisation leaves exactly as they are at any instant, by their entries tuple
# (docs/performance.md, "Simulation"). A store is recorded when a normalisation found nothing to do
# with it: every entry clean, every migration recorded, no entry duplicating another or an archived
# one, and no more active entries than the stored-active limit. Each of those facts depends only on
# the entries and the archive markers (the instant only orders the entries, and the stored order
# is kept when nothing else changes), so normalising the same entries and markers again, under a
# limit they still meet, gives back the same store and no events. Keyed by ``id`` with the tuples
# kept in the value, so a hit is only a hit for the very same tuples; bounded and invisible.
_SETTLED_LIMIT: Final = 64
_SETTLED: Final[dict[int, tuple[tuple[MemoryEntry, ...], tuple[ArchiveMarker, ...], int]]] = {}
_ALL_MIGRATIONS: Final = frozenset(
    {QUALITY_CLEANUP_MIGRATION_ID, P0_CLEANUP_MIGRATION_ID, RETENTION_CLOCK_BACKFILL_MIGRATION_ID}
)


def _remember_settled(store: WorkspaceStore, active: int, *, ids_checked: bool = False) -> None:
    """Record ``store`` as settled (the caller checked the rest); ``ids_checked``: its entries are
    known to hold distinct ids."""
    if not ids_checked and len({entry.id for entry in store.entries}) != len(store.entries):
        return  # entries sharing an id (superseded ones may) are re-sorted at each pass
    if len(_SETTLED) >= _SETTLED_LIMIT:
        _SETTLED.clear()
    _SETTLED[id(store.entries)] = (store.entries, store.archived, active)


def _is_settled(store: WorkspaceStore, tuning: Tuning) -> bool:
    hit = _SETTLED.get(id(store.entries))
    return (
        hit is not None
        and hit[0] is store.entries
        and hit[1] is store.archived
        and hit[2] <= tuning.max_stored_active
        and _ALL_MIGRATIONS.issubset(store.migrations)
    )


def _settle_result(
    result: WorkspaceStore,
    revived: Sequence[MemoryEntry],
    archive: Mapping[str, MemoryEntry] | None,
    tuning: Tuning,
    now_ms: int,
) -> None:
    """Record the output of a normalisation that changed something as settled when normalising it
    again would find nothing to do (docs/performance.md, "Simulation"), so the next step does not
    look at every entry again. That holds when:

    - every entry is clean (checked here for the entries this pass made; the others are recorded
      clean already) and every migration is recorded (a pass records them all);
    - no two active entries share an exact or an identity key: dedupe merged them, a survivor keeps
      its winner's text and type, and renaming an id changes no key;
    - no active entry duplicates an archive marker: none did before dedupe when nothing was revived,
      the survivors' keys are among those, and each new marker carries the keys of an entry that
      left, which no kept entry shares. A pass that revived something is not recorded: a revived
      entry is not checked against the other markers;
    - the stored-active limit is met (then the stored order is kept) and revival had the archive
      to look in.
    A property test normalises recorded outputs again without the memo and compares."""
    if revived or (result.archived and not archive):
        return
    active = 0
    for entry in result.entries:
        if entry.status is not MemoryStatus.SUPERSEDED:
            active += 1
        if _CLEAN.get(id(entry)) is not entry:
            _cleaned(entry, now_ms)
            if _CLEAN.get(id(entry)) is not entry:
                return
    if active <= tuning.max_stored_active:
        _remember_settled(result, active)


def restamped(store: WorkspaceStore, stamped: WorkspaceStore, positions: Iterable[int]) -> WorkspaceStore:
    """``stamped`` is ``store`` with new ``lastRenderedAt`` stamps on the entries at ``positions`` and
    nothing else changed. Normalisation never reads that stamp except to pick which entries to
    archive, and a settled store archives nothing; so when ``store`` is settled, ``stamped`` is
    recorded settled too, and each restamped entry is clean when the entry it replaces was
    (docs/performance.md)."""
    hit = _SETTLED.get(id(store.entries))
    if hit is None or hit[0] is not store.entries or hit[1] is not store.archived:
        carry_index(store.entries, stamped.entries)
        return stamped
    for position in positions:
        before, after = store.entries[position], stamped.entries[position]
        if after is not before and _CLEAN.get(id(before)) is before:
            if len(_CLEAN) >= _CLEAN_LIMIT:
                _CLEAN.clear()
            _CLEAN[id(after)] = after
            carry_keys(before, after)
    _remember_settled(stamped, hit[2], ids_checked=True)  # the ids of a settled store
    carry_index(store.entries, stamped.entries)
    return stamped


def _rank_and_archive(
    kept_active: list[MemoryEntry],
    superseded: list[MemoryEntry],
    store: WorkspaceStore,
    markers: tuple[ArchiveMarker, ...],
    now_ms: int,
    now_iso: str,
    tuning: Tuning,
    events: list[EvidenceInput],
) -> tuple[tuple[MemoryEntry, ...], tuple[ArchiveMarker, ...], list[MemoryEntry]]:
    """The active entries strongest first, the weakest moved out above the stored-active limit (its
    events go to ``events``), then the superseded ones: the new entries, markers and archived
    entries. When only the order moved, the stored entries are kept as they are."""
    ordered = sort_by_retention(kept_active, now_ms, dormancy_at(store, now_ms, tuning), tuning)
    ordered, markers, archived, archive_events = _archive_overflow(
        ordered, markers, now_ms, now_iso, tuning.max_stored_active
    )
    events.extend(archive_events)
    new_entries = (*ordered, *superseded)
    if _same_entries(new_entries, store.entries):
        new_entries = store.entries  # only the retention order moved: nothing to write
    return new_entries, markers, archived


class _Groups:
    """Union-find over a few sparse items (the entries a delta touches)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, item: int) -> int:
        root = item
        while (up := self.parent.get(root, root)) != root:
            root = up
        while (up := self.parent.get(item, item)) != root:
            self.parent[item], item = root, up
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _clean_copy(entry: MemoryEntry, now_ms: int, now_iso: str, events: list[EvidenceInput]) -> MemoryEntry:
    """What the full pass makes of one entry before revival and dedupe: redaction (its event goes to
    ``events``), then backfill and truncation."""
    if _CLEAN.get(id(entry)) is entry:
        return entry
    cleaned, event = _redacted(entry, now_iso)
    if event is not None:
        events.append(event)
    return cleaned if _CLEAN.get(id(cleaned)) is cleaned else _cleaned(cleaned, now_ms)


def _is_clean(entry: MemoryEntry, now_ms: int) -> bool:
    if _CLEAN.get(id(entry)) is not entry:
        _cleaned(entry, now_ms)
    return _CLEAN.get(id(entry)) is entry


def _normalize_delta(
    store: WorkspaceStore,
    base: WorkspaceStore,
    now_ms: int,
    archive: Mapping[str, MemoryEntry],
    tuning: Tuning,
) -> NormalizeResult | None:
    """:func:`normalize_store` of ``store`` when it is the settled ``base`` with some entries replaced
    and some appended, looking only at those entries (docs/performance.md, "Simulation").

    Every other entry is known to be clean, to share no key or id with another kept entry and to
    duplicate no archive marker, so only the changed entries can be redacted, revive an archived
    memory, be renamed or be merged, and the result is what the full pass gives: the same steps on
    the same entries in the same order (a property test compares the two). ``None`` when a
    precondition does not hold or a rare case (an id shared, a superseded entry changed) comes up;
    the caller then runs the full pass."""
    entries, before = store.entries, base.entries
    if (
        store.archived is not base.archived
        or store.migrations != base.migrations
        or len(entries) < len(before)
        or not _is_settled(base, tuning)
    ):
        return None
    delta = [i for i, (a, b) in enumerate(zip(entries, before, strict=False)) if a is not b]
    delta.extend(range(len(before), len(entries)))
    if not delta or any(entries[i].status is MemoryStatus.SUPERSEDED for i in delta):
        return None
    now_iso = iso_from_ms(now_ms)
    events: list[EvidenceInput] = []
    touched = {i: _clean_copy(entries[i], now_ms, now_iso, events) for i in delta}
    index = stored_index(before)
    changed_at = set(delta)
    seen_ids: set[str] = set()
    for entry in touched.values():
        holder = index.first_id.get(entry.id)
        if entry.id in seen_ids or (holder is not None and holder not in changed_at):
            return None  # an id held twice is renamed by the full pass
        seen_ids.add(entry.id)

    # revival: only a changed entry can duplicate an archived memory
    markers = store.archived
    revived: list[MemoryEntry] = []
    if markers and archive:
        marker_index = _marker_index(markers)
        exact_hashes: dict[str, MemoryEntry] = {}
        identity_hashes: dict[str, MemoryEntry] = {}
        matched: dict[int, ArchiveMarker] = {}
        for entry in touched.values():
            exact, identity = entry_key_hashes(entry)
            for found in (marker_index.exact.get(exact, ()), marker_index.identity.get(identity, ())):
                matched.update((id(m), m) for m in found)
            exact_hashes.setdefault(exact, entry)
            identity_hashes.setdefault(identity, entry)
        if matched:
            # ``tuple.index`` finds the first equal marker: with two equal ones, look at every marker
            positions = sorted({markers.index(m) for m in matched.values()})
            if len(positions) < len(matched):
                positions = [i for i, m in enumerate(markers) if id(m) in matched]
            revived, markers, found_events = _revive_markers(
                markers, positions, exact_hashes, identity_hashes, archive, now_ms, now_iso
            )
            events.extend(found_events)
            for entry in revived:
                holder = index.first_id.get(entry.id)
                if entry.id in seen_ids or (holder is not None and holder not in changed_at):
                    return None
                seen_ids.add(entry.id)

    # dedupe: the changed and revived entries, and the kept entries they share a key with; items
    # are numbered by store position, revived ones after every stored entry (the full pass lists the
    # active entries in store order, then the revived ones)
    items: dict[int, MemoryEntry] = dict(touched)
    items.update((len(entries) + k, entry) for k, entry in enumerate(revived))
    groups = _Groups()
    owners: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for number, entry in list(items.items()):
        for key, stored_at, owner in zip(
            entry_keys(entry), (index.first_exact, index.first_identity), owners, strict=True
        ):
            holder = stored_at.get(key)
            if holder is not None and holder not in changed_at:
                items[holder] = entries[holder]
                groups.union(holder, number)
            first = owner.setdefault(key, number)
            if first != number:
                groups.union(first, number)
    members: dict[int, list[int]] = {}
    for number in sorted(items):
        members.setdefault(groups.find(number), []).append(number)
    survivors: dict[int, MemoryEntry] = {}
    absorbed: set[int] = set()
    absorptions: list[Absorption] = []
    for group in sorted(members.values(), key=lambda g: g[0]):
        if len(group) == 1:
            continue
        survivor, lost, found_events = _absorb_component([items[n] for n in group], now_ms, tuning)
        absorptions.extend(lost)
        events.extend(found_events)
        survivors[group[0]] = survivor
        absorbed.update(group[1:])

    current: list[MemoryEntry | None] = list(entries)
    for number, entry in touched.items():
        current[number] = entry
    current.extend(revived)
    for number in absorbed:
        current[number] = None
    for number, entry in survivors.items():
        current[number] = entry
    kept_active = [e for e in current if e is not None and e.status is not MemoryStatus.SUPERSEDED]
    superseded = [e for e in entries if e.status is MemoryStatus.SUPERSEDED]

    archived: list[MemoryEntry] = []
    untouched = not revived and not survivors and all(touched[i] is entries[i] for i in delta)
    if len(kept_active) <= tuning.max_stored_active and untouched:
        new_entries = entries  # the same entries as stored: the stored order is kept
    else:
        new_entries, markers, archived = _rank_and_archive(
            kept_active, superseded, store, markers, now_ms, now_iso, tuning, events
        )
    changed = new_entries != entries or markers != store.archived
    result = replace(
        store,
        entries=new_entries,
        migrations=tuple(store.migrations),
        archived=markers,
        updated_at=now_iso if changed else store.updated_at,
    )
    active_count = len(new_entries) - len(superseded)
    if active_count <= tuning.max_stored_active and (archive or not markers):
        # Settled when no entry the delta made is unclean or duplicates a remaining marker (every
        # other entry was settled with the base, docs/performance.md).
        fresh = [*touched.values(), *revived, *survivors.values()]
        remaining = _marker_index(markers) if markers else None
        if all(_is_clean(e, now_ms) for e in fresh) and (
            remaining is None
            or not any(
                exact in remaining.exact or identity in remaining.identity
                for exact, identity in map(entry_key_hashes, fresh)
            )
        ):
            _remember_settled(result, active_count)
    return NormalizeResult(
        store=result,
        events=tuple(events),
        audit=(),
        absorptions=tuple(absorptions),
        archived=tuple(archived),
        revived=tuple(revived),
    )


def normalize_store(
    store: WorkspaceStore,
    now_ms: int,
    *,
    archive: Mapping[str, MemoryEntry] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    base: WorkspaceStore | None = None,
) -> NormalizeResult:
    """The whole normalisation of a workspace store (module docstring), as one pure step.

    ``archive`` maps an archive marker's ``key_hash`` to the archived entry; it is only needed when
    the store has markers. The store's ``lastActivityAt`` and dormant spans are never touched, and
    ``updatedAt`` becomes ``now`` only when something changed. ``base`` (optional) is a store that
    ``store`` was made from by replacing or appending entries: when it is settled, only those
    entries are looked at; the result is the same either way."""
    if _is_settled(store, tuning):
        return NormalizeResult(store=store, events=(), audit=(), absorptions=(), archived=(), revived=())
    if base is not None:
        quick = _normalize_delta(store, base, now_ms, archive or {}, tuning)
        if quick is not None:
            return quick
    now_iso = iso_from_ms(now_ms)
    events: list[EvidenceInput] = []
    audit: list[MigrationAudit] = []

    entries: list[MemoryEntry] = []
    for entry in store.entries:
        if _CLEAN.get(id(entry)) is entry:
            entries.append(entry)  # redaction, backfill and truncation would leave it as it is
            continue
        cleaned, event = _redacted(entry, now_iso)
        entries.append(cleaned)
        if event is not None:
            events.append(event)

    migrations = list(store.migrations)
    if QUALITY_CLEANUP_MIGRATION_ID not in migrations:
        entries, found, records = _quality_cleanup(entries, store, now_iso)
        events.extend(found)
        audit.extend(records)
        migrations.append(QUALITY_CLEANUP_MIGRATION_ID)
    if P0_CLEANUP_MIGRATION_ID not in migrations:
        entries, found, records = _p0_cleanup(entries, store, now_iso)
        events.extend(found)
        audit.extend(records)
        migrations.append(P0_CLEANUP_MIGRATION_ID)
    entries = [entry if _CLEAN.get(id(entry)) is entry else _cleaned(entry, now_ms) for entry in entries]
    if RETENTION_CLOCK_BACKFILL_MIGRATION_ID not in migrations:
        migrations.append(RETENTION_CLOCK_BACKFILL_MIGRATION_ID)

    active = [e for e in entries if e.status is not MemoryStatus.SUPERSEDED]
    superseded = [e for e in entries if e.status is MemoryStatus.SUPERSEDED]
    revived, markers, revival_events = _revive(active, store, archive or {}, now_ms, now_iso)
    events.extend(revival_events)

    deduped = dedupe([*active, *revived, *superseded], now_ms, tuning)
    events.extend(deduped.events)
    kept_active = [e for e in deduped.kept if e.status is not MemoryStatus.SUPERSEDED]

    new_entries: tuple[MemoryEntry, ...]
    archived: list[MemoryEntry] = []
    if len(kept_active) <= tuning.max_stored_active and _same_entries(deduped.kept, store.entries):
        # Nothing to archive and the same entries as stored: only the retention order could move,
        # and the stored order is kept then, so the sort is skipped.
        new_entries = store.entries
    else:
        new_entries, markers, archived = _rank_and_archive(
            kept_active, superseded, store, markers, now_ms, now_iso, tuning, events
        )
    new_migrations = tuple(migrations)
    changed = new_entries != store.entries or new_migrations != store.migrations or markers != store.archived
    if (
        not changed
        and not events
        and not audit
        and not revived
        and not archived
        and not deduped.absorptions
        and (archive or not store.archived)
        and len(kept_active) <= tuning.max_stored_active
    ):
        _remember_settled(store, len(kept_active))
    result = replace(
        store,
        entries=new_entries,
        migrations=new_migrations,
        archived=markers,
        updated_at=now_iso if changed else store.updated_at,
    )
    if changed:
        _settle_result(result, revived, archive, tuning, now_ms)
    return NormalizeResult(
        store=result,
        events=tuple(events),
        audit=tuple(audit),
        absorptions=deduped.absorptions,
        archived=tuple(archived),
        revived=tuple(revived),
    )
