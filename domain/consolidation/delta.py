"""Normalising a store made from a settled one by replacing or appending entries, looking only at those
entries (docs/performance.md, "Simulation"). The result is the full pass's; a property test holds
the two together."""

from __future__ import annotations

from collections.abc import Mapping

from msgspec.structs import replace

from domain.caches import Caches
from domain.consolidation.archive import marker_index_of, rank_and_archive, revive_markers
from domain.consolidation.cleaning import clean_copy, is_clean
from domain.consolidation.dedupe import absorb_component
from domain.consolidation.results import Absorption, NormalizeResult
from domain.consolidation.settled import is_settled, remember_settled
from domain.emitted import Emitted
from domain.enums import MemoryStatus
from domain.key_index import derive_index, stored_index
from domain.keys import entry_key_hashes, entry_keys
from domain.model import ArchiveMarker, EvidenceInput, MemoryEntry, WorkspaceStore
from domain.retention import Tuning
from domain.timeutil import iso_from_ms


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


def normalize_delta(
    store: WorkspaceStore,
    base: WorkspaceStore,
    now_ms: int,
    archive: Mapping[str, MemoryEntry],
    tuning: Tuning,
    caches: Caches,
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
        or not is_settled(base, tuning, caches)
    ):
        return None
    delta = [i for i, (a, b) in enumerate(zip(entries, before, strict=False)) if a is not b]
    delta.extend(range(len(before), len(entries)))
    if not delta or any(entries[i].status is MemoryStatus.SUPERSEDED for i in delta):
        return None
    now_iso = iso_from_ms(now_ms)
    events: list[EvidenceInput] = []
    touched = {i: clean_copy(entries[i], now_ms, now_iso, events, caches) for i in delta}
    index = stored_index(before, caches)
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
        marker_index = marker_index_of(markers, caches)
        exact_hashes: dict[str, MemoryEntry] = {}
        identity_hashes: dict[str, MemoryEntry] = {}
        matched: dict[int, ArchiveMarker] = {}
        for entry in touched.values():
            exact, identity = entry_key_hashes(entry, caches)
            for found in (marker_index.exact.get(exact, ()), marker_index.identity.get(identity, ())):
                matched.update((id(m), m) for m in found)
            exact_hashes.setdefault(exact, entry)
            identity_hashes.setdefault(identity, entry)
        if matched:
            # ``tuple.index`` finds the first equal marker: with two equal ones, look at every marker
            positions = sorted({markers.index(m) for m in matched.values()})
            if len(positions) < len(matched):
                positions = [i for i, m in enumerate(markers) if id(m) in matched]
            revived, markers, found_events = revive_markers(
                markers, positions, exact_hashes, identity_hashes, archive, now_ms, now_iso, caches
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
            entry_keys(entry, caches), (index.first_exact, index.first_identity), owners, strict=True
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
        survivor, lost, found_events = absorb_component([items[n] for n in group], now_ms, tuning)
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
        new_entries, markers, archived = rank_and_archive(
            kept_active, superseded, store, markers, now_ms, now_iso, tuning, events, caches
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
        remaining = marker_index_of(markers, caches) if markers else None
        if all(is_clean(e, caches) for e in fresh) and (
            remaining is None
            or not any(
                exact in remaining.exact or identity in remaining.identity
                for exact, identity in (entry_key_hashes(e, caches) for e in fresh)
            )
        ):
            remember_settled(result, active_count, caches)
            derive_index(before, result.entries, fresh, caches)
    return NormalizeResult(
        store=result,
        absorptions=tuple(absorptions),
        revived=tuple(revived),
        emitted=Emitted(events=tuple(events), archived=tuple(archived)),
    )
