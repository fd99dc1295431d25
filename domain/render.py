"""The workspace memory block shown to the agent at session start (docs/decisions.md#the-workspace-block).

Selection, in order:

1. superseded entries are omitted (``superseded``) and archive markers are listed as omitted
   (``archived``); everything else is a candidate;
2. candidates are ranked strongest first by the total retention order
   (``ranking.sort_by_retention``) *with* the store's dormancy at ``now`` (docs/decisions.md#d3);
   the pinned ones that fit the pinned budget (``domain.pinning``, docs/decisions.md#d20) are set
   apart: they are shown first, in a ``pinned:`` section, and count against no cap;
3. per-type caps (feedback 10, decision 10, project 8, reference 6) drop the weaker entries of a
   full type (``type_cap``), then only the first 28 survivors remain (``global_cap``);
4. with a character budget of ``min(store.limits.max_rendered_chars, 3600)``: under 80 nothing is
   shown (``empty_render_budget``); otherwise the lines are packed greedily section by section
   (feedback, project, decision, reference), skipping an entry that does not fit and still trying
   the later, possibly shorter ones (``char_budget``).

The block is the header line, then for each section with at least one shown entry the section
name and one ``- `` line per entry, joined by ``\\n`` with no trailing newline. If candidates exist
and the budget is at least 80 but no line fits, the block is the header alone (reference behaviour,
docs/decisions.md#s11).

Caps and the budget only decide what is *shown*; nothing here changes what is stored
(docs/decisions.md#d2). The store is expected to be normalised already, so no deduplication happens
here. Rendering is pure and
deterministic: the same store and ``now_ms`` give byte-identical text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from functools import cached_property
from typing import Final

import msgspec

from domain import evidence
from domain.caches import Caches
from domain.emitted import Emits, Emitted
from domain.enums import SECTION_ORDER, MemoryStatus, MemoryType
from domain.freshness import is_expired, stale_label
from domain.limits import DAY_MS, LongTermLimits
from domain.model import ArchiveMarker, EvidenceInput, MemoryEntry, WorkspaceStore
from domain.pinning import split_pinned
from domain.ranking import sort_by_retention
from domain.retention import DEFAULT_TUNING, Tuning, dormancy_at
from domain.text import single_line, truncate
from domain.timeutil import parse_iso_ms

RENDER_HEADER: Final = "Workspace memory (cross-session, verify if stale):"
#: The section of the pinned memories, first in the block (docs/decisions.md#d20).
PINNED_SECTION: Final = "pinned:"

#: A budget below this renders nothing at all (the reference's ``MIN_ENVELOPE_LENGTH``).
MIN_RENDER_BUDGET: Final = LongTermLimits.MIN_ENVELOPE_LENGTH


class OmissionReason(StrEnum):
    """The one reason a memory is not in the block."""

    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    TYPE_CAP = "type_cap"
    GLOBAL_CAP = "global_cap"
    CHAR_BUDGET = "char_budget"
    EMPTY_BUDGET = "empty_render_budget"
    #: past its ``valid_until`` (docs/decisions.md#d18)
    EXPIRED = "expired"


REASON_SUPERSEDED: Final = OmissionReason.SUPERSEDED
REASON_ARCHIVED: Final = OmissionReason.ARCHIVED
REASON_TYPE_CAP: Final = OmissionReason.TYPE_CAP
REASON_GLOBAL_CAP: Final = OmissionReason.GLOBAL_CAP
REASON_CHAR_BUDGET: Final = OmissionReason.CHAR_BUDGET
REASON_EMPTY_BUDGET: Final = OmissionReason.EMPTY_BUDGET


# Characters that would start a new line in the block. A memory text or rationale containing one
# would break the one-line-per-memory structure (and could forge a section), so each run of them is
# shown as a single space.


#: Type names as plain strings (``.value`` goes through the slow enum descriptor, once per omission).
_TYPE_NAME: Final[dict[MemoryType, str]] = {t: t.value for t in MemoryType}


class Omission(msgspec.Struct, frozen=True):
    """One memory that is not in the block, and the single reason why. ``type`` is empty for an
    archive marker (markers do not record the memory's type)."""

    memory_id: str
    type: str
    reason: OmissionReason


class Selection(msgspec.Struct, frozen=True):
    """The cap stage of the selection: active entries strongest first, split by the caps."""

    ranked: tuple[MemoryEntry, ...]  # every active entry, strongest first (dormancy applied)
    shortlist: tuple[MemoryEntry, ...]  # within the type caps and the 28-entry cap, in rank order
    type_capped: tuple[MemoryEntry, ...]
    global_capped: tuple[MemoryEntry, ...]
    #: pinned entries within the pinned budget, in rank order: shown first, outside every cap
    pinned: tuple[MemoryEntry, ...] = ()
    expired: tuple[MemoryEntry, ...] = ()  # past their valid_until: never shown (docs/decisions.md#d18)


class RenderResult(Emits, frozen=True, kw_only=True, dict=True):
    """The block and its accounting: every active entry is in ``rendered`` or ``omitted``, never both.

    ``omitted`` is worked out when first read (most renders are only shown, and a full store omits
    hundreds of entries, docs/performance.md): superseded entries first (store order), then the
    archive markers, then the selection losers in the order they were decided (type cap and global
    cap in rank order, then the budget's losers)."""

    text: str
    rendered: tuple[MemoryEntry, ...]
    superseded: tuple[MemoryEntry, ...]
    markers: tuple[ArchiveMarker, ...]
    selection: Selection
    #: shortlisted entries the character budget left out, with their reason, in the order decided
    budget_losers: tuple[tuple[MemoryEntry, OmissionReason], ...]
    #: each rendered entry's line without its ``- `` (``render_entry_line`` at ``at_ms``), in
    #: ``rendered`` order
    lines: tuple[str, ...] = ()
    at_ms: int | None = None

    @cached_property
    def losers(self) -> tuple[tuple[MemoryEntry, OmissionReason], ...]:
        """The selection losers with their reasons, in the order they were decided."""
        found = [(e, OmissionReason.EXPIRED) for e in self.selection.expired]
        found.extend((e, REASON_TYPE_CAP) for e in self.selection.type_capped)
        found.extend((e, REASON_GLOBAL_CAP) for e in self.selection.global_capped)
        found.extend(self.budget_losers)
        return tuple(found)

    @cached_property
    def omitted(self) -> tuple[Omission, ...]:
        omissions = [Omission(e.id, _TYPE_NAME[e.type], REASON_SUPERSEDED) for e in self.superseded]
        omissions.extend(Omission(m.memory_id, "", REASON_ARCHIVED) for m in self.markers)
        omissions.extend(Omission(e.id, _TYPE_NAME[e.type], reason) for e, reason in self.losers)
        return tuple(omissions)


def render_budget(store: WorkspaceStore, tuning: Tuning = DEFAULT_TUNING) -> int:
    """``min(store.limits.max_rendered_chars, 3600)``: the store may only lower the budget
    (3600 is the tuning's character budget)."""
    return min(store.limits.max_rendered_chars, tuning.char_budget)


def _js_truthy_number(value: int | float | None) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    return value != 0 and not math.isnan(value)


def age_days(entry: MemoryEntry, now_ms: float) -> int | None:
    """Whole days since ``createdAt`` by the wall clock (no dormancy), ``None`` when invalid."""
    created = parse_iso_ms(entry.created_at)
    if created is None:
        return None
    return math.floor((now_ms - created) / DAY_MS)


def is_stale_marked(entry: MemoryEntry, now_ms: float) -> bool:
    """``staleAfterDays`` is set (JS-truthy) and the wall age in whole days exceeds it."""
    if not _js_truthy_number(entry.stale_after_days):
        return False
    days = age_days(entry, now_ms)
    return days is not None and entry.stale_after_days is not None and days > entry.stale_after_days


def render_entry_line(entry: MemoryEntry, now_ms: int) -> str:
    """``text[ Why: rationale][ [Nd old, verify]]`` (without the leading ``- ``); a stale memory
    (docs/decisions.md#d18) is marked ``[unverified N d]`` or with its reason instead.

    The text is cut to 260 and the rationale to 180 code points; line breaks become spaces."""
    line = single_line(truncate(entry.text, LongTermLimits.MAX_ENTRY_TEXT_CHARS))
    if entry.rationale:
        line += " Why: " + single_line(truncate(entry.rationale, LongTermLimits.MAX_RATIONALE_CHARS))
    fresh_mark = stale_label(entry, now_ms)
    if fresh_mark is not None:
        line += " " + fresh_mark
    elif is_stale_marked(entry, now_ms):
        line += f" [{age_days(entry, now_ms)}d old, verify]"
    return line


def _latest_stamp(entries: Sequence[MemoryEntry]) -> float | None:
    """When the most recent block was rendered: the newest ``lastRenderedAt`` of the store."""
    stamps = [e.last_rendered_at for e in entries if e.last_rendered_at is not None]
    return max(stamps) if stamps else None


def _finish(
    store: WorkspaceStore,
    text: str,
    rendered: list[MemoryEntry],
    selection: Selection,
    budget_losers: list[tuple[MemoryEntry, OmissionReason]],
    superseded: list[MemoryEntry],
    lines: Sequence[str] = (),
    at_ms: int | None = None,
) -> RenderResult:
    """Assemble the result and its evidence (:func:`_omission_events`)."""
    events = [evidence.rendered(e) for e in rendered]
    events.extend(_omission_events(store, rendered, selection, budget_losers, superseded))
    return RenderResult(
        text=text,
        rendered=tuple(rendered),
        emitted=Emitted(events=tuple(events)),
        superseded=tuple(superseded),
        markers=store.archived,
        selection=selection,
        budget_losers=tuple(budget_losers),
        lines=tuple(lines),
        at_ms=at_ms,
    )


def _omission_events(
    store: WorkspaceStore,
    rendered: Sequence[MemoryEntry],
    selection: Selection,
    budget_losers: Sequence[tuple[MemoryEntry, OmissionReason]],
    superseded: Sequence[MemoryEntry],
) -> list[EvidenceInput]:
    """Evidence for what was left out, bounded so that a large store (up to 500 active entries,
    docs/decisions.md#d2) does not flood the evidence log at every cache epoch.

    An entry that was in the most recent block (its ``lastRenderedAt`` is the newest stamp of the
    store) and is now omitted gets its own ``render_omitted`` event: that is the moment it dropped out.
    Every other omission is counted in one summary ``render_omitted`` event per render, with the
    count per reason in ``details``: superseded, type cap, global cap, the budget's reasons, then
    archive markers. The render result itself still lists every omission."""
    latest = _latest_stamp(store.entries)
    # the losers of each reason, in the order the omission list gives them
    groups: list[tuple[OmissionReason, Sequence[MemoryEntry]]] = [
        (REASON_SUPERSEDED, superseded),
        (OmissionReason.EXPIRED, selection.expired),
        (REASON_TYPE_CAP, selection.type_capped),
        (REASON_GLOBAL_CAP, selection.global_capped),
    ]
    individual: list[tuple[MemoryEntry, OmissionReason]] = []
    counts: dict[str, int] = {}
    previous: set[int] = set()  # entries of the most recent block that are not shown now
    if latest is not None:
        previous = {id(e) for e in store.entries if e.last_rendered_at == latest}
        previous.difference_update(map(id, rendered))
    for reason, losers in groups:
        dropped = [e for e in losers if id(e) in previous] if previous else []
        individual.extend((e, reason) for e in dropped)
        if len(losers) > len(dropped):
            counts[reason] = len(losers) - len(dropped)
    for entry, reason in budget_losers:
        if id(entry) in previous:
            individual.append((entry, reason))
        else:
            counts[reason] = counts.get(reason, 0) + 1
    if store.archived:
        counts[REASON_ARCHIVED] = counts.get(REASON_ARCHIVED, 0) + len(store.archived)
    events = [evidence.omitted(e, reason) for e, reason in individual]
    if counts:
        events.append(evidence.omissions(counts))
    return events


def select_candidates(
    store: WorkspaceStore, now_ms: int, tuning: Tuning = DEFAULT_TUNING, caches: Caches | None = None
) -> Selection:
    """Rank the active entries (with the store's dormancy at ``now_ms``, docs/decisions.md#d3) and
    apply the per-type caps, then the global cap (both from ``tuning``). The character budget is not
    applied here. ``caches``: the ranking's (docs/decisions.md#d14)."""
    active = [e for e in store.entries if e.status != MemoryStatus.SUPERSEDED]
    expired = [e for e in active if e.valid_until is not None and is_expired(e, now_ms)]
    if expired:
        active = [e for e in active if not (e.valid_until is not None and is_expired(e, now_ms))]
    ranked = sort_by_retention(active, now_ms, dormancy_at(store, now_ms, tuning), tuning, caches)
    pinned, candidates = split_pinned(ranked) if any(e.pinned for e in active) else ([], ranked)
    caps = tuning.type_caps
    per_type: dict[MemoryType, int] = {}
    capped: list[MemoryEntry] = []
    type_capped: list[MemoryEntry] = []
    # once every type is full, every later entry is capped by its type
    open_types = len(MemoryType) if all(t in caps for t in MemoryType) else -1
    for position, entry in enumerate(candidates):
        count = per_type.get(entry.type, 0)
        cap = caps.get(entry.type, math.inf)
        if count >= cap:
            type_capped.append(entry)
            continue
        per_type[entry.type] = count + 1
        capped.append(entry)
        if count + 1 >= cap:
            open_types -= 1
            if open_types == 0:
                type_capped.extend(candidates[position + 1 :])
                break
    limit = tuning.global_cap
    return Selection(
        tuple(ranked),
        tuple(capped[:limit]),
        tuple(type_capped),
        tuple(capped[limit:]),
        tuple(pinned),
        tuple(expired),
    )


def render_workspace_block(
    store: WorkspaceStore, now_ms: int, tuning: Tuning = DEFAULT_TUNING, caches: Caches | None = None
) -> RenderResult:
    """Select, pack and format the workspace block of ``store`` at ``now_ms``. ``caches``: what earlier
    steps derived from the same entries (docs/decisions.md#d14); the block does not depend on it."""
    superseded = [e for e in store.entries if e.status is MemoryStatus.SUPERSEDED]
    selection = select_candidates(store, now_ms, tuning, caches)
    shortlist = selection.shortlist
    losers: list[tuple[MemoryEntry, OmissionReason]] = []

    if not shortlist and not selection.pinned:
        return _finish(store, "", [], selection, losers, superseded)
    budget = render_budget(store, tuning)
    if budget < MIN_RENDER_BUDGET:
        losers.extend((entry, REASON_EMPTY_BUDGET) for entry in (*selection.pinned, *shortlist))
        return _finish(store, "", [], selection, losers, superseded)

    lines = [RENDER_HEADER]
    used = len(RENDER_HEADER)  # length of "\n".join(lines)
    rendered: list[MemoryEntry] = []
    shown: dict[int, str] = {}  # id(entry) -> its line, for number_block
    sections: list[tuple[str, Sequence[MemoryEntry]]] = [(PINNED_SECTION, selection.pinned)]
    sections.extend((f"{t.value}:", [e for e in shortlist if e.type == t]) for t in SECTION_ORDER)
    for title, items in sections:
        if not items:
            continue
        section = [title]
        section_used = used + 1 + len(section[0])  # length if the section were appended now
        for entry in items:
            body = render_entry_line(entry, now_ms)
            line = "- " + body
            if section_used + 1 + len(line) <= budget:
                section.append(line)
                section_used += 1 + len(line)
                rendered.append(entry)
                shown[id(entry)] = body
            else:
                losers.append((entry, REASON_CHAR_BUDGET))
        if len(section) > 1:
            lines.extend(section)
            used = section_used
    block_lines = [shown[id(entry)] for entry in rendered]
    return _finish(store, "\n".join(lines), rendered, selection, losers, superseded, block_lines, now_ms)


def number_block(result: RenderResult, now_ms: int) -> str:
    """The block of ``result`` with each line labelled ``[M1]``, ``[M2]``, ... in block order.

    Same selection, same sections; only the labels are added (so it may exceed the budget). Used
    inside the compaction prompt so that a summary can name a memory (docs/decisions.md#d10)."""
    if not result.text:
        return ""
    lines = [RENDER_HEADER]
    current: str | None = None
    known = result.lines if result.at_ms == now_ms and len(result.lines) == len(result.rendered) else None
    pinned = {id(e) for e in result.selection.pinned}
    for number, entry in enumerate(result.rendered, start=1):
        title = PINNED_SECTION if id(entry) in pinned else f"{entry.type.value}:"
        if title != current:
            current = title
            lines.append(title)
        body = known[number - 1] if known is not None else render_entry_line(entry, now_ms)
        lines.append(f"- [M{number}] {body}")
    return "\n".join(lines)
