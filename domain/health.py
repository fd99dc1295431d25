"""Read-only diagnostics over a workspace: health, explain, trace, coverage, disappearances, quality
and the extraction-rejection summaries (docs/decisions.md#diagnostics).

Everything here is a pure function of values the shell has already loaded: the store and journal
snapshots (``None`` when the file was missing or unreadable), the evidence events in log order, the
extraction-rejection records and ``now_ms``. Nothing here returns a modified store.

Each report comes in three layers:

* a computation (``build_snapshot``, ``health_report``, ``trace_report``, ``inspect``, ...) that
  returns frozen values;
* a text formatter (``format_health``, ``format_explain``, ...) producing the human output, one
  line per ``\\n`` and no trailing newline;
* a ``*_json`` function returning the JSON-ready ``dict`` that ``--json`` prints.

Memory text is redacted by default (credentials via ``safety.redact``, then absolute paths become
``<path>``); ``raw=True`` shows it unredacted (paths included). JSON text previews are always
redacted.

workmem meanings (docs/decisions.md#d2, docs/decisions.md#d3): "stored" counts what is in the store
(caps never delete), and "rendered" is the real render selection (``domain.render``), ranked by the
same total retention order with dormancy applied, so the counts here are the ones the agent actually
sees.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final, Protocol

import msgspec
from returns.result import Failure, Result, Success

from domain.ids import hash16
from domain.model import (
    DAY_MS,
    HOUR_MS,
    RETENTION_TYPE_MAX,
    DormancyLimits,
    EventType,
    EvidenceEvent,
    LongTermLimits,
    MemoryEntry,
    MemoryStatus,
    MemoryType,
    PendingJournal,
    PromotionRetryLimits,
    WorkspaceRef,
    WorkspaceStore,
)
from domain.render import (
    REASON_ARCHIVED,
    RenderResult,
    age_days,
    is_stale_marked,
    render_workspace_block,
    select_candidates,
)
from domain.retention import dormancy_at, dormant_days, strength
from domain.safety import (
    HARD_QUALITY_REASONS,
    assess_memory_quality,
    is_architecture_like_decision,
    redact,
)
from domain.text import WS, canonical_text, collapse_whitespace
from domain.timeutil import iso_from_ms, parse_iso_ms

#: Diagnostic type order (not the render section order).
TYPES: Final = (MemoryType.FEEDBACK, MemoryType.DECISION, MemoryType.PROJECT, MemoryType.REFERENCE)
SOURCES: Final = ("explicit", "manual", "compaction")
SUSPICIOUS_REASONS: Final = (
    "progress_snapshot",
    "active_file_snapshot",
    "commit_or_ci_snapshot",
    "temporary_status",
    "raw_error",
    "code_or_api_signature",
)
ORIGINS: Final = frozenset(
    {"explicit_trigger", "compaction_candidate", "manual", "migration_check", "unknown"}
)
RECENT_EVENT_LIMIT: Final = 50
FALSE_POSITIVE_GROUPS: Final = ("architecture_like_possible_false_positive", "clearly_garbage", "ambiguous")
COVERAGE_CLASSES: Final = (
    "full_lifecycle",
    "render_only",
    "no_evidence",
    "historical_absent_with_reason",
    "historical_absent_unknown_reason",
)
#: Event types after which a memory that is no longer stored is accounted for. workmem adds its own
#: absorption and archive events to the reference's four.
TERMINAL_TYPES: Final = frozenset(
    {
        "memory_removed_capacity",
        "promotion_absorbed_exact",
        "promotion_absorbed_identity",
        "promotion_superseded",
        "memory_absorbed",
        "memory_archived",
    }
)

# ---------------------------------------------------------------------------------------------
# Small formatting helpers (JavaScript-compatible where the output format depends on it)
# ---------------------------------------------------------------------------------------------

_ABS_PATH: Final = re.compile(
    rf"(?:^|[{WS}\"'`(=:\[])(/(?:Users|home|private|tmp|var|opt|Volumes|[^{WS}\"'`)\],;:]+)/[^{WS}\"'`)\],;:]*)"
)
_STATUS_LIKE: Final = re.compile(
    r"(?<![A-Za-z0-9_])(?:implemented|added|updated|fixed|completed|reviewed|tests?|CI|commit|wave|phase|task|session)"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_SINCE: Final = re.compile(r"^([0-9]+)([dhmDHM])$")


def redact_absolute_paths(text: str) -> str:
    """Replace absolute POSIX paths with ``<path>`` (the character before the path is kept)."""
    return _ABS_PATH.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + "<path>", text)


def clean_text(text: str, raw: bool = False) -> str:
    """Memory text for display: credentials redacted, then absolute paths; unchanged when ``raw``."""
    return text if raw else redact_absolute_paths(redact(text))


def clean_path(path: str, raw: bool = False) -> str:
    return path if raw else "<path>"


def shorten(text: str, limit: int = 120) -> str:
    """Whitespace collapsed; longer than ``limit`` -> the first ``limit - 1`` characters and ``…``."""
    collapsed = collapse_whitespace(text)
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1] + "…"


def to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: exact decimal value of the double, ties away from zero; a
    negative value keeps its sign even when it rounds to zero, ``-0`` does not."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    exact = Decimal(value) if value != 0 else Decimal(0)
    return str(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def format_strength(value: float | None) -> str:
    return to_fixed(value, 3) if value is not None and math.isfinite(value) else "0.000"


def format_percent(ratio: float) -> str:
    return f"{to_fixed(ratio * 100, 1)}%"


def json_string(text: str) -> str:
    """``JSON.stringify`` of a string (non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def js_value(value: object) -> str:
    """``String(value)`` for the JSON-like values found in evidence details."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list | tuple):
        return ",".join("" if v is None else js_value(v) for v in value)
    return str(value)


def format_details(details: Mapping[str, Any] | None) -> str:
    """``key=value`` pairs, space-joined, array values joined by ``|``; ``none`` when empty."""
    if not details:
        return "none"
    parts = []
    for key, value in details.items():
        shown = "|".join(js_value(v) for v in value) if isinstance(value, list | tuple) else js_value(value)
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def unique(values: Iterable[str | None]) -> tuple[str, ...]:
    """Non-empty values, first occurrence order."""
    return tuple(dict.fromkeys(v for v in values if v))


def sorted_counts(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Count descending, then key by code point (the reference uses ``localeCompare``)."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def counts_object(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted_counts(Counter(values)))


def _within_days(iso: str, days: int, now_ms: int) -> bool:
    moment = parse_iso_ms(iso)
    return moment is not None and moment >= now_ms - days * DAY_MS


def _workspace_identity(key: str | None, root: str | None, raw: bool, root_hash: str | None = None) -> str:
    parts = []
    if key:
        parts.append(f"workspaceKey={key}")
    if root and raw:
        parts.append(f"workspaceRoot={root}")
    elif root_hash:
        parts.append(f"workspaceRootHash={root_hash}")
    elif root:
        parts.append(f"workspaceRootHash={hash16(root)}")
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


class RejectionLike(Protocol):
    """What the diagnostics read from an extraction-rejection record (``RejectionRecord``)."""

    @property
    def timestamp(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def reasons(self) -> Sequence[str]: ...
    @property
    def source(self) -> str: ...
    @property
    def workspace_key(self) -> str | None: ...
    @property
    def workspace_root_hash(self) -> str | None: ...


class DiagInput(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one workspace diagnosis reads, already loaded by the shell."""

    root: str = ""  # the workspace root the user asked about
    key: str = ""  # its workspace key
    store: WorkspaceStore | None = None  # None: missing or unreadable (treated as empty)
    journal: PendingJournal | None = None  # None: missing (treated as empty)
    events: tuple[EvidenceEvent, ...] = ()  # evidence log, in log order
    rejections: tuple[RejectionLike, ...] = ()  # extraction-rejection records (already filtered)
    memory_path: str = ""
    pending_path: str = ""
    #: corrupt files moved aside by the storage layer (docs/decisions.md#d5), listed by health.
    quarantined_files: tuple[str, ...] = ()
    #: the shell's ``workspaceRootHash`` (hash of the resolved root, distinct from the key,
    #: docs/decisions.md#b8).
    root_hash: str = ""


def effective_store(src: DiagInput) -> WorkspaceStore:
    """The store to diagnose: the loaded one, or an empty store for the requested workspace."""
    if src.store is not None:
        return src.store
    return WorkspaceStore(workspace=WorkspaceRef(root=src.root, key=src.key), updated_at=iso_from_ms(0))


def journal_entries(src: DiagInput) -> tuple[MemoryEntry, ...]:
    return src.journal.entries if src.journal is not None else ()


# ---------------------------------------------------------------------------------------------
# Evidence helpers
# ---------------------------------------------------------------------------------------------


def event_memory_ids(event: EvidenceEvent) -> tuple[str, ...]:
    """Every memory id an event names: its own memory, then its relations."""
    own = event.memory.memory_id if event.memory is not None else None
    related = (r.memory.memory_id if r.memory is not None else None for r in event.relations)
    return unique((own, *related))


def group_by_memory_id(events: Iterable[EvidenceEvent]) -> dict[str, tuple[EvidenceEvent, ...]]:
    """Events grouped under every memory id they name, each group in log order."""
    grouped: dict[str, list[EvidenceEvent]] = {}
    for event in events:
        for memory_id in event_memory_ids(event):
            grouped.setdefault(memory_id, []).append(event)
    return {memory_id: tuple(group) for memory_id, group in grouped.items()}


def _first_memory_id(event: EvidenceEvent) -> str | None:
    if event.memory is not None and event.memory.memory_id:
        return event.memory.memory_id
    for rel in event.relations:
        if rel.memory is not None and rel.memory.memory_id:
            return rel.memory.memory_id
    return None


# ---------------------------------------------------------------------------------------------
# Shared snapshot (docs/decisions.md#diagnostics)
# ---------------------------------------------------------------------------------------------

STATUS_RENDERED: Final = "rendered"
STATUS_ABSORBED: Final = "omitted_absorbed_duplicate"
STATUS_ARCHIVED: Final = "omitted_archived"
STATUS_QUARANTINED: Final = "quarantined_corrupt_store"


def status_from_omission(reason: str | None) -> str:
    """``superseded``/``type_cap``/``global_cap``/``archived`` -> their status; anything else
    (``char_budget``, ``empty_render_budget``, unknown) -> ``omitted_char_budget``."""
    if reason == "superseded":
        return "omitted_superseded"
    if reason == "type_cap":
        return "omitted_type_cap"
    if reason == "global_cap":
        return "omitted_global_cap"
    if reason == REASON_ARCHIVED:
        return STATUS_ARCHIVED
    return "omitted_char_budget"


def status_reasons(status: str, omission: str | None = None) -> tuple[str, ...]:
    """The reason codes a row status implies."""
    table: dict[str, tuple[str, ...]] = {
        STATUS_RENDERED: ("within_caps", "within_char_budget"),
        "omitted_superseded": ("superseded",),
        "omitted_type_cap": ("type_cap",),
        "omitted_global_cap": ("global_cap",),
        "omitted_char_budget": (
            "empty_render_budget" if omission == "empty_render_budget" else "char_budget",
        ),
        STATUS_ARCHIVED: ("archived",),
        STATUS_ABSORBED: ("absorbed_duplicate",),
        "pending_retry": ("retryable_capacity_rejection",),
        "pending_rejected_capacity": ("capacity_rejected", "max_attempts_reached"),
        STATUS_QUARANTINED: ("invalid_json",),
    }
    return table.get(status, ())


def promotion_limit(source: str) -> int:
    if source == "manual":
        return PromotionRetryLimits.MAX_MANUAL_ATTEMPTS
    return PromotionRetryLimits.MAX_EXPLICIT_ATTEMPTS


def pending_status(entry: MemoryEntry) -> str:
    attempts = entry.promotion_attempts or 0
    return "pending_rejected_capacity" if attempts >= promotion_limit(entry.source.value) else "pending_retry"


class MemoryRow(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    type: str
    source: str
    status: str
    strength: float | None = None
    reason_codes: tuple[str, ...] = ()
    text_preview: str | None = None
    evidence_event_ids: tuple[str, ...] = ()


class RecentEvent(msgspec.Struct, frozen=True, kw_only=True):
    event_id: str
    type: str
    outcome: str
    created_at: str
    memory_id: str | None
    reason_codes: tuple[str, ...]


class DiagSummary(msgspec.Struct, frozen=True, kw_only=True):
    stored_active: int
    rendered: int  # entries within the caps (the render shortlist)
    pending: int
    rejected_last_7_days: int
    corrupt_stores_quarantined_last_30_days: int


class Ranked(msgspec.Struct, frozen=True):
    entry: MemoryEntry
    strength: float


class DiagSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    store: WorkspaceStore
    journal: tuple[MemoryEntry, ...]
    render: RenderResult
    ranked: tuple[Ranked, ...]  # active entries, strongest first
    shortlist: tuple[Ranked, ...]  # within the caps, strongest first
    type_capped: int
    global_capped: int
    memories: tuple[MemoryRow, ...]
    recent_events: tuple[RecentEvent, ...]
    events: tuple[EvidenceEvent, ...]
    by_memory: dict[str, tuple[EvidenceEvent, ...]]
    summary: DiagSummary


def _summary_of(events: Sequence[EvidenceEvent]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(reason codes in first-seen order, event ids) of a memory's events."""
    return unique(code for ev in events for code in ev.reason_codes), tuple(ev.event_id for ev in events)


def _type_source_from_events(events: Sequence[EvidenceEvent], memory_id: str) -> tuple[str, str]:
    type_, source = "unknown", "unknown"
    for ev in events:
        if ev.memory is not None and ev.memory.memory_id == memory_id:
            type_ = ev.memory.type or type_
            source = ev.memory.source or source
    return type_, source


def build_snapshot(src: DiagInput, now_ms: int) -> DiagSnapshot:
    """The shared view every report starts from: the render, the rows, the recent events."""
    store = effective_store(src)
    journal = journal_entries(src)
    dormancy = dormancy_at(store, now_ms)
    render = render_workspace_block(store, now_ms)
    selection = select_candidates(store, now_ms)

    def rank(entries: Iterable[MemoryEntry]) -> tuple[Ranked, ...]:
        return tuple(Ranked(e, strength(e, now_ms, dormancy)) for e in entries)

    by_memory = group_by_memory_id(src.events)
    rendered_ids = {e.id for e in render.rendered}
    omission_by_id = {o.memory_id: o.reason for o in render.omitted}
    rows: list[MemoryRow] = []
    seen: set[str] = set()

    for entry in store.entries:
        omission = omission_by_id.get(entry.id)
        if entry.id in rendered_ids:
            status = STATUS_RENDERED
        else:
            fallback = "superseded" if entry.status == MemoryStatus.SUPERSEDED else None
            status = status_from_omission(omission or fallback)
        codes, ids = _summary_of(by_memory.get(entry.id, ()))
        rows.append(
            MemoryRow(
                id=entry.id,
                type=entry.type.value,
                source=entry.source.value,
                status=status,
                strength=strength(entry, now_ms, dormancy),
                reason_codes=unique((*status_reasons(status, omission), *codes)),
                text_preview=shorten(clean_text(entry.text)),
                evidence_event_ids=ids,
            )
        )
        seen.add(entry.id)

    for marker in store.archived:
        if marker.memory_id in seen:
            continue
        events = by_memory.get(marker.memory_id, ())
        codes, ids = _summary_of(events)
        type_, source = _type_source_from_events(events, marker.memory_id)
        rows.append(
            MemoryRow(
                id=marker.memory_id,
                type=type_,
                source=source,
                status=STATUS_ARCHIVED,
                reason_codes=unique((*status_reasons(STATUS_ARCHIVED), *codes)),
                evidence_event_ids=ids,
            )
        )
        seen.add(marker.memory_id)

    for entry in journal:
        status = pending_status(entry)
        codes, ids = _summary_of(by_memory.get(entry.id, ()))
        rows.append(
            MemoryRow(
                id=entry.id,
                type=entry.type.value,
                source=entry.source.value,
                status=status,
                strength=strength(entry, now_ms, dormancy),
                reason_codes=unique((*status_reasons(status), entry.last_promotion_failure_reason, *codes)),
                text_preview=shorten(clean_text(entry.text)),
                evidence_event_ids=ids,
            )
        )
        seen.add(entry.id)

    for event in src.events:
        ref = event.memory
        if event.outcome != "absorbed" or ref is None:
            continue
        if not (ref.memory_id and ref.type and ref.source) or ref.memory_id in seen:
            continue
        codes, ids = _summary_of(by_memory.get(ref.memory_id, ()))
        rows.append(
            MemoryRow(
                id=ref.memory_id,
                type=ref.type,
                source=ref.source,
                status=STATUS_ABSORBED,
                reason_codes=unique((*status_reasons(STATUS_ABSORBED), *codes)),
                evidence_event_ids=ids or (event.event_id,),
            )
        )
        seen.add(ref.memory_id)

    recent = tuple(
        RecentEvent(
            event_id=ev.event_id,
            type=ev.type,
            outcome=ev.outcome,
            created_at=ev.created_at,
            memory_id=_first_memory_id(ev),
            reason_codes=unique(
                (
                    *ev.reason_codes,
                    STATUS_QUARANTINED if ev.type == "storage_corrupt_json_quarantined" else None,
                )
            ),
        )
        for ev in list(reversed(src.events))[:RECENT_EVENT_LIMIT]
    )
    summary = DiagSummary(
        stored_active=sum(1 for e in store.entries if e.status != MemoryStatus.SUPERSEDED),
        rendered=len(selection.shortlist),
        pending=len(journal),
        rejected_last_7_days=sum(
            1 for ev in src.events if ev.outcome == "rejected" and _within_days(ev.created_at, 7, now_ms)
        ),
        corrupt_stores_quarantined_last_30_days=sum(
            1
            for ev in src.events
            if ev.type == "storage_corrupt_json_quarantined" and _within_days(ev.created_at, 30, now_ms)
        ),
    )
    return DiagSnapshot(
        store=store,
        journal=journal,
        render=render,
        ranked=rank(selection.ranked),
        shortlist=rank(selection.shortlist),
        type_capped=len(selection.type_capped),
        global_capped=len(selection.global_capped),
        memories=tuple(rows),
        recent_events=recent,
        events=src.events,
        by_memory=by_memory,
        summary=summary,
    )


def _row_json(row: MemoryRow) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row.id, "type": row.type, "source": row.source, "status": row.status}
    if row.strength is not None:
        out["strength"] = row.strength
    out["reasonCodes"] = list(row.reason_codes)
    if row.text_preview is not None:
        out["textPreview"] = row.text_preview
    out["evidenceEventIds"] = list(row.evidence_event_ids)
    return out


def _recent_json(ev: RecentEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "eventId": ev.event_id,
        "type": ev.type,
        "outcome": ev.outcome,
        "createdAt": ev.created_at,
    }
    if ev.memory_id is not None:
        out["memoryId"] = ev.memory_id
    out["reasonCodes"] = list(ev.reason_codes)
    return out


def health_json(src: DiagInput, now_ms: int) -> dict[str, Any]:
    """``health --json`` (``MemoryDiagJSON``): privacy-safe, previews always redacted."""
    snap = build_snapshot(src, now_ms)
    s = snap.summary
    out: dict[str, Any] = {
        "version": 1,
        "workspace": {
            "rootHash": src.root_hash or hash16(snap.store.workspace.root or src.root),
            "key": snap.store.workspace.key or src.key,
        },
        "generatedAt": iso_from_ms(now_ms),
        "summary": {
            "storedActive": s.stored_active,
            "rendered": s.rendered,
            "pending": s.pending,
            "rejectedLast7Days": s.rejected_last_7_days,
            "corruptStoresQuarantinedLast30Days": s.corrupt_stores_quarantined_last_30_days,
            "compactionsWithoutSummary": sum(
                1 for ev in src.events if ev.type == EventType.COMPACTION_SUMMARY_MISSING
            ),
        },
        "memories": [_row_json(row) for row in snap.memories],
        "recentEvents": [_recent_json(ev) for ev in snap.recent_events],
    }
    if src.quarantined_files:
        out["quarantinedFiles"] = [_file_name(p) for p in src.quarantined_files]
    return out


def _file_name(path: str) -> str:
    return re.split(r"[/\\]", path)[-1]


# ---------------------------------------------------------------------------------------------
# health (docs/decisions.md#diagnostics-health)
# ---------------------------------------------------------------------------------------------


class TypeRow(msgspec.Struct, frozen=True):
    type: str
    stored: int
    rendered: int
    type_cap: int
    superseded: int


class QualityFailure(msgspec.Struct, frozen=True):
    type: str
    reasons: tuple[str, ...]
    text: str


class HealthReport(msgspec.Struct, frozen=True, kw_only=True):
    workspace_key: str
    workspace_root: str
    workspace_root_hash: str = ""
    memory_path: str
    pending_path: str
    store_missing: bool
    journal_missing: bool
    stored_active: int
    superseded: int
    archived: int
    rendered_candidates: int  # within the caps
    rendered_in_block: int  # within the caps and the character budget
    rendered_chars: int
    pending_total: int
    pending_retryable: int
    pending_near_limit: int
    pending_by_source: tuple[tuple[str, int], ...]
    by_type: tuple[TypeRow, ...]
    type_capped: int
    global_capped: int
    char_budget_omitted: int
    stale_marked: int
    older_than_30d: int
    older_than_90d: int
    last_activity_at: str | None
    wall_days_since_activity: float | None
    dormant_discount_active: bool
    dormant_days_past_grace: float
    dormant_multiplier: float
    recorded_dormant_spans: int
    recorded_dormant_days: float
    high_importance_count: int
    safety_critical_count: int
    max_reinforced_count: int
    progress_like: int
    path_heavy: int
    duplicate_extras: int
    very_long: int
    suspicious: tuple[tuple[str, int], ...]
    failing_quality: tuple[QualityFailure, ...]  # at most 8
    strongest: tuple[Ranked, ...]  # first 5 rendered candidates
    weakest: tuple[Ranked, ...]  # last 5 active entries, weakest first
    quarantined_files: tuple[str, ...]
    #: compactions observed without a summary to read candidates from, and host hook failures, in
    #: the evidence log (docs/hosts.md)
    compactions_without_summary: int = 0
    hook_failures: int = 0


def _ratio(part: int, whole: int) -> float:
    return 0.0 if whole == 0 else part / whole


def health_report(src: DiagInput, now_ms: int) -> HealthReport:
    """The numbers behind ``health`` for one workspace."""
    snap = build_snapshot(src, now_ms)
    store = snap.store
    active = [e for e in store.entries if e.status != MemoryStatus.SUPERSEDED]
    superseded = [e for e in store.entries if e.status == MemoryStatus.SUPERSEDED]
    candidates = [r.entry for r in snap.shortlist]
    journal = snap.journal

    by_type = tuple(
        TypeRow(
            t.value,
            sum(1 for e in active if e.type == t),
            sum(1 for e in candidates if e.type == t),
            RETENTION_TYPE_MAX[t],
            sum(1 for e in superseded if e.type == t),
        )
        for t in TYPES
    )
    ages = [age_days(e, now_ms) for e in active]
    stale = sum(1 for e in active if is_stale_marked(e, now_ms))

    last_activity = store.last_activity_at or None
    wall = dormant_days(store, now_ms) if last_activity and parse_iso_ms(last_activity) is not None else None
    grace = DormancyLimits.WORKSPACE_DORMANT_AFTER_DAYS

    assessments = [assess_memory_quality(e.type.value, e.text) for e in active]
    key_counts = Counter(f"{e.type.value}:{canonical_text(e.text)}" for e in active)

    def with_reason(reason: str) -> int:
        return sum(1 for a in assessments if reason in a.reasons)

    failing = tuple(
        QualityFailure(e.type.value, tuple(a.reasons), e.text)
        for e, a in zip(active, assessments, strict=True)
        if not a.accepted
    )[:8]
    source_counts = Counter(e.source.value for e in journal)
    return HealthReport(
        workspace_key=store.workspace.key if src.store is not None else src.key,
        workspace_root=store.workspace.root if src.store is not None else src.root,
        workspace_root_hash=src.root_hash,
        memory_path=src.memory_path,
        pending_path=src.pending_path,
        store_missing=src.store is None,
        journal_missing=src.journal is None,
        stored_active=len(active),
        superseded=len(superseded),
        archived=len(store.archived),
        rendered_candidates=len(candidates),
        rendered_in_block=len(snap.render.rendered),
        rendered_chars=len(snap.render.text),
        pending_total=len(journal),
        pending_retryable=sum(
            1 for e in journal if (e.promotion_attempts or 0) < promotion_limit(e.source.value)
        ),
        pending_near_limit=sum(
            1 for e in journal if (e.promotion_attempts or 0) >= promotion_limit(e.source.value) - 1
        ),
        pending_by_source=tuple((s, source_counts.get(s, 0)) for s in SOURCES),
        by_type=by_type,
        type_capped=snap.type_capped,
        global_capped=snap.global_capped,
        char_budget_omitted=sum(
            1 for o in snap.render.omitted if o.reason in ("char_budget", "empty_render_budget")
        ),
        stale_marked=stale,
        older_than_30d=sum(1 for d in ages if (d or 0) > 30),
        older_than_90d=sum(1 for d in ages if (d or 0) > 90),
        last_activity_at=last_activity,
        wall_days_since_activity=wall,
        dormant_discount_active=wall is not None and wall > grace,
        dormant_days_past_grace=0.0 if wall is None else max(0.0, wall - grace),
        dormant_multiplier=DormancyLimits.DORMANT_DECAY_MULTIPLIER,
        recorded_dormant_spans=len(store.dormant_spans),
        recorded_dormant_days=sum(max(0.0, float(s.end - s.start)) for s in store.dormant_spans) / DAY_MS,
        high_importance_count=sum(1 for e in active if e.user_importance == "high"),
        safety_critical_count=sum(1 for e in active if e.safety_critical is True),
        max_reinforced_count=sum(1 for e in active if (e.reinforcement_count or 0) >= 6),
        progress_like=with_reason("progress_snapshot"),
        path_heavy=with_reason("path_heavy"),
        duplicate_extras=sum(max(0, n - 1) for n in key_counts.values()),
        very_long=sum(1 for e in active if len(e.text) > LongTermLimits.MAX_ENTRY_TEXT_CHARS),
        suspicious=tuple((r, with_reason(r)) for r in SUSPICIOUS_REASONS),
        failing_quality=failing,
        strongest=snap.shortlist[:5],
        weakest=tuple(reversed(snap.ranked[-5:])),
        quarantined_files=src.quarantined_files,
        compactions_without_summary=sum(
            1 for ev in src.events if ev.type == EventType.COMPACTION_SUMMARY_MISSING
        ),
        hook_failures=sum(1 for ev in src.events if ev.type == EventType.HOOK_FAILED),
    )


def _ranked_line(item: Ranked, raw: bool) -> str:
    text = shorten(clean_text(item.entry.text, raw))
    return f"  - strength={format_strength(item.strength)} [{item.entry.type.value}] {text}"


def format_health(report: HealthReport, *, raw: bool = False, include_title: bool = True) -> str:
    """The human ``health`` output for one workspace (``include_title=False`` inside ``--all``)."""
    r = report
    out: list[str] = []
    if include_title:
        out += ["Workspace memory health", ""]
    identity = _workspace_identity(r.workspace_key, r.workspace_root, raw, r.workspace_root_hash)
    if identity:
        out.append(identity)
    out.append(f"memoryPath={clean_path(r.memory_path, raw)}")
    out.append(f"pendingPath={clean_path(r.pending_path, raw)}")
    if r.store_missing:
        out.append("memory store: missing or unreadable (treated as empty)")
    if r.journal_missing:
        out.append("pending journal: missing (treated as empty)")
    out.append("")
    out.append(f"Stored active memories: {r.stored_active}")
    out.append(f"Superseded memories: {r.superseded}")
    out.append(f"Archived memories: {r.archived}")
    out.append(f"Rendered candidates: {r.rendered_candidates}")
    out.append(f"Rendered in block: {r.rendered_in_block}")
    out.append(f"Rendered estimate: {r.rendered_chars:,} chars")
    out.append("")
    out.append("Pending journal:")
    out.append(f"  total: {r.pending_total}")
    out.append(f"  retryable: {r.pending_retryable}")
    out.append(f"  near retry limit: {r.pending_near_limit}")
    out.append("  by source:")
    out.extend(f"    {source}: {count}" for source, count in r.pending_by_source)
    out.append("")
    out.append("By type:")
    out.extend(
        f"  {row.type:<9} stored={row.stored!s:<3} rendered={row.rendered!s:<3} "
        f"typeCap={row.type_cap} superseded={row.superseded}"
        for row in r.by_type
    )
    out.append("")
    out.append("Retention caps:")
    out.append(f"  type-capped entries: {r.type_capped}")
    out.append(f"  global-cap overflow: {r.global_capped}")
    out.append(f"  over character budget: {r.char_budget_omitted}")
    out.append("")
    out.append("Age:")
    out.append(f"  stale-marked: {r.stale_marked}")
    out.append(f"  older than 30d: {r.older_than_30d}")
    out.append(f"  older than 90d: {r.older_than_90d}")
    out.append("")
    wall = "unknown" if r.wall_days_since_activity is None else to_fixed(r.wall_days_since_activity, 1)
    out.append("Dormancy:")
    out.append(f"  lastActivityAt: {r.last_activity_at or '(missing)'}")
    out.append(f"  wall days since activity: {wall}")
    out.append(f"  dormant discount active: {'yes' if r.dormant_discount_active else 'no'}")
    out.append(f"  dormant days past grace: {to_fixed(r.dormant_days_past_grace, 1)}")
    out.append(f"  dormant multiplier: {r.dormant_multiplier}")
    out.append(
        f"  recorded dormant spans: {r.recorded_dormant_spans} ({to_fixed(r.recorded_dormant_days, 1)} days)"
    )
    out.append("")
    out.append("Host events (evidence log):")
    out.append(f"  compactions without a summary: {r.compactions_without_summary}")
    out.append(f"  hook failures: {r.hook_failures}")
    out.append("")
    high = _ratio(r.high_importance_count, r.stored_active)
    reinforced = _ratio(r.max_reinforced_count, r.stored_active)
    out.append("Retention monitoring:")
    out.append(
        f"  high_importance_ratio: {format_percent(high)} (alert > 30%){' ALERT' if high > 0.3 else ''}"
    )
    out.append(
        f"  safety_critical_count: {r.safety_critical_count} (deprecated field)"
        f"{' WARNING' if r.safety_critical_count > 0 else ''}"
    )
    if reinforced > 0.1:
        out.append(
            f"  max_reinforced_count: {r.max_reinforced_count}"
            f" ({format_percent(reinforced)}, alert > 10%) ALERT"
        )
    else:
        out.append(f"  max_reinforced_count: {r.max_reinforced_count} (alert > 10% active)")
    out.append("")
    out.append("Quality warnings:")
    out.append(f"  progress-like active memories: {r.progress_like}")
    out.append(f"  path-heavy active memories: {r.path_heavy}")
    out.append(f"  duplicate-ish exact canonical text: {r.duplicate_extras}")
    out.append(f"  very long entries: {r.very_long}")
    out.append("")
    out.append("Suspicious active memories:")
    out.extend(f"  {reason}-like: {count}" for reason, count in r.suspicious)
    if r.failing_quality:
        out += ["", "Active memories failing offline quality checks:"]
        out.extend(
            f"  - [{f.type}] reasons={','.join(f.reasons)} {json_string(shorten(clean_text(f.text, raw)))}"
            for f in r.failing_quality
        )
    if r.quarantined_files:
        out += ["", "Quarantined files:"]
        out.extend(f"  - {p if raw else _file_name(p)}" for p in r.quarantined_files)
    out += ["", "Top rendered candidates:"]
    out.extend([_ranked_line(item, raw) for item in r.strongest] or ["  (none)"])
    out += ["", "Weakest active memories:"]
    out.extend([_ranked_line(item, raw) for item in r.weakest] or ["  (none)"])
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# explain and trace (docs/decisions.md#diagnostics-explain-and-trace)
# ---------------------------------------------------------------------------------------------


def explain_rows(src: DiagInput, now_ms: int, memory_id: str | None = None) -> tuple[MemoryRow, ...]:
    """The snapshot rows, or only the row of ``memory_id``. An id with no row is judged from its
    evidence alone (status from its last event, ``unknown`` without any)."""
    snap = build_snapshot(src, now_ms)
    if memory_id is None:
        return snap.memories
    rows = tuple(r for r in snap.memories if r.id == memory_id)
    if rows:
        return rows
    events = snap.by_memory.get(memory_id, ())
    type_, source = _type_source_from_events(events, memory_id)
    codes, ids = _summary_of(events)
    status = status_from_trace_event(events[-1] if events else None)
    reasons = unique((*status_reasons(status), *codes))
    return (
        MemoryRow(
            id=memory_id,
            type=type_,
            source=source,
            status=status,
            reason_codes=reasons,
            evidence_event_ids=ids,
        ),
    )


def format_explain(src: DiagInput, now_ms: int, memory_id: str | None = None) -> str:
    """Per memory (or only ``memory_id``): status, strength/type/source, reasons and evidence."""
    snap = build_snapshot(src, now_ms)
    rows = explain_rows(src, now_ms, memory_id)
    by_id = {ev.event_id: ev for ev in snap.events}
    out = ["Workspace memory explainability", ""]
    if not rows:
        out.append("No memories found.")
    for row in rows:
        shown_strength = format_strength(row.strength) if row.strength is not None else "n/a"
        refs = [f"{by_id[i].event_id} {by_id[i].type}" if i in by_id else i for i in row.evidence_event_ids]
        out.append(f"Memory {row.id}: {row.status}")
        out.append(f"- strength={shown_strength}, type={row.type}, source={row.source}")
        out.append(f"- reasons: {', '.join(row.reason_codes) if row.reason_codes else '(none)'}")
        out.append(f"- evidence: {', '.join(refs) if refs else '(none)'}")
        out.append("")
    quarantines = [ev for ev in snap.recent_events if ev.type == "storage_corrupt_json_quarantined"]
    if quarantines and memory_id is None:
        out.append("Quarantined stores:")
        out.extend(
            f"- {STATUS_QUARANTINED}: {ev.event_id} {ev.type}; reasons={','.join(ev.reason_codes)}"
            for ev in quarantines
        )
    if src.quarantined_files and memory_id is None:
        out.append("Quarantined files:")
        out.extend(f"- {_file_name(p)}" for p in src.quarantined_files)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def status_from_trace_event(event: EvidenceEvent | None) -> str:
    """A memory's status judged from its last evidence event (when it has no current row)."""
    if event is None:
        return "unknown"
    kind = event.type
    if kind == "render_selected":
        return STATUS_RENDERED
    if kind == "render_omitted":
        return status_from_omission(event.reason_codes[0] if event.reason_codes else None)
    if kind in ("promotion_absorbed_exact", "promotion_absorbed_identity", "memory_absorbed"):
        return STATUS_ABSORBED
    if kind == "memory_archived":
        return STATUS_ARCHIVED
    if kind == "promotion_retry_scheduled":
        return "pending_retry"
    if kind in ("promotion_rejected_capacity", "promotion_retry_exhausted"):
        return "pending_rejected_capacity"
    if kind == "storage_corrupt_json_quarantined":
        return STATUS_QUARANTINED
    if event.outcome == "superseded":
        return "omitted_superseded"
    return event.outcome


class TraceReport(msgspec.Struct, frozen=True, kw_only=True):
    memory_id: str
    status: str
    events: tuple[EvidenceEvent, ...]
    superseded_by: tuple[str, ...]
    reinforced_by: tuple[str, ...]


def _related_ids(events: Iterable[EvidenceEvent], role: str) -> tuple[str, ...]:
    return unique(
        rel.memory.memory_id
        for ev in events
        for rel in ev.relations
        if rel.role == role and rel.memory is not None
    )


def trace_report(src: DiagInput, memory_id: str, now_ms: int) -> TraceReport:
    """The lifecycle of one memory id: every event naming it (as memory or relation), in log order."""
    snap = build_snapshot(src, now_ms)
    events = snap.by_memory.get(memory_id, ())
    row = next((r for r in snap.memories if r.id == memory_id), None)
    status = row.status if row is not None else status_from_trace_event(events[-1] if events else None)
    return TraceReport(
        memory_id=memory_id,
        status=status,
        events=events,
        superseded_by=_related_ids(events, "superseded_by"),
        reinforced_by=_related_ids(events, "reinforced_by"),
    )


def format_trace_event(event: EvidenceEvent) -> str:
    reasons = ",".join(event.reason_codes) if event.reason_codes else "none"
    related = [
        f"{r.role}={r.memory.memory_id}"
        for r in event.relations
        if r.memory is not None and r.memory.memory_id
    ]
    suffix = f"; {', '.join(related)}" if related else ""
    return f"- {event.event_id} {event.type}: {event.outcome}; reasons={reasons}{suffix}"


def format_trace(report: TraceReport) -> str:
    """``trace --memory ID``. Text previews are never printed."""
    out = [f"Memory {report.memory_id}: {report.status}", "", "Lifecycle:"]
    if not report.events:
        out.append("(none)")
        return "\n".join(out)
    out.extend(format_trace_event(ev) for ev in report.events)
    if report.superseded_by:
        out += ["", "Superseded by:", *(f"- {i}" for i in report.superseded_by)]
    if report.reinforced_by:
        out += ["", "Reinforced by:", *(f"- {i}" for i in report.reinforced_by)]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Rejection records (docs/decisions.md#diagnostics-rejections)
# ---------------------------------------------------------------------------------------------


class NormalizedRejection(msgspec.Struct, frozen=True, kw_only=True):
    timestamp: str
    type: str
    text: str
    reasons: tuple[str, ...]
    source: str | None
    origin: str
    from_trigger: bool
    workspace_key: str | None = None
    workspace_root_hash: str | None = None


def _infer_origin(record: RejectionLike) -> str:
    declared = getattr(record, "origin", None)
    if isinstance(declared, str) and declared in ORIGINS:
        return declared
    return {"compaction": "compaction_candidate", "explicit": "explicit_trigger", "manual": "manual"}.get(
        record.source, "unknown"
    )


def normalize_rejections(records: Iterable[RejectionLike]) -> tuple[NormalizedRejection, ...]:
    """Drop records without text; infer the origin from the source; default ``fromTrigger``."""
    out = []
    for record in records:
        if not record.text:
            continue
        origin = _infer_origin(record)
        declared_trigger = getattr(record, "from_trigger", None)
        out.append(
            NormalizedRejection(
                timestamp=record.timestamp or "",
                type=record.type or "project",
                text=record.text,
                reasons=tuple(record.reasons),
                source=record.source,
                origin=origin,
                from_trigger=declared_trigger
                if isinstance(declared_trigger, bool)
                else origin == "explicit_trigger",
                workspace_key=record.workspace_key,
                workspace_root_hash=record.workspace_root_hash,
            )
        )
    return tuple(out)


def parse_since(value: str, now_ms: int) -> Result[int, str]:
    """``14d`` / ``6h`` / ``30m`` before ``now_ms``, or an ISO timestamp; else the CLI error text."""
    match = _SINCE.match(value)
    if match:
        unit = {"d": DAY_MS, "h": HOUR_MS, "m": 60_000}[match.group(2).lower()]
        return Success(now_ms - int(match.group(1)) * unit)
    parsed = parse_iso_ms(value)
    return Success(parsed) if parsed is not None else Failure(f"Invalid --since value: {value}")


def has_soft_reason(record: NormalizedRejection) -> bool:
    return any(reason not in HARD_QUALITY_REASONS for reason in record.reasons)


def filter_rejections(
    records: Iterable[NormalizedRejection],
    *,
    workspace_key: str | None = None,
    since_ms: int | None = None,
    soft_only: bool = False,
    trigger_only: bool = False,
    reason: str | None = None,
) -> tuple[NormalizedRejection, ...]:
    """The CLI filters, in the reference order. ``workspace_key`` keeps unscoped records too."""
    out = list(records)
    if workspace_key:
        out = [r for r in out if not r.workspace_key or r.workspace_key == workspace_key]
    if since_ms is not None:
        out = [r for r in out if (t := parse_iso_ms(r.timestamp)) is not None and t >= since_ms]
    if soft_only:
        out = [r for r in out if has_soft_reason(r)]
    if trigger_only:
        out = [r for r in out if r.from_trigger or r.origin == "explicit_trigger"]
    if reason:
        out = [r for r in out if reason in r.reasons]
    return tuple(out)


def unique_rejections(records: Iterable[NormalizedRejection]) -> tuple[NormalizedRejection, ...]:
    """The first record of each ``type:canonical(text)`` group."""
    first: dict[str, NormalizedRejection] = {}
    for record in records:
        first.setdefault(f"{record.type}:{canonical_text(record.text)}", record)
    return tuple(first.values())


def is_scoped(record: NormalizedRejection) -> bool:
    return bool(record.workspace_key or record.workspace_root_hash)


class FalsePositiveGroup(msgspec.Struct, frozen=True):
    count: int
    samples: tuple[str, ...]


class RejectionQuality(msgspec.Struct, frozen=True, kw_only=True):
    total_records: int
    unique_texts: int
    workspace_scoped_count: int
    legacy_unscoped_count: int
    reason_distribution: dict[str, int]
    unique_reason_distribution: dict[str, int]
    possible_false_positive_groups: dict[str, FalsePositiveGroup]

    @property
    def false_positive_risk(self) -> str:
        possible = self.possible_false_positive_groups[FALSE_POSITIVE_GROUPS[0]].count
        high = possible >= 3 or (self.unique_texts > 0 and possible / self.unique_texts >= 0.5)
        return "high" if high else "low"


def rejection_quality(records: Sequence[NormalizedRejection]) -> RejectionQuality:
    """Scoping, reason distributions and a heuristic grouping of ``bad_decision`` rejections
    (always over the non-unique records)."""
    uniques = unique_rejections(records)
    groups: dict[str, list[str]] = {name: [] for name in FALSE_POSITIVE_GROUPS}
    counts: Counter[str] = Counter()
    for record in uniques:
        if "bad_decision" not in record.reasons:
            continue
        hard = [r for r in record.reasons if r in HARD_QUALITY_REASONS]
        status_like = _STATUS_LIKE.search(record.text) is not None
        if is_architecture_like_decision(record.text) and not hard and not status_like:
            group = FALSE_POSITIVE_GROUPS[0]
        elif hard or status_like:
            group = FALSE_POSITIVE_GROUPS[1]
        else:
            group = FALSE_POSITIVE_GROUPS[2]
        counts[group] += 1
        if len(groups[group]) < 5:
            groups[group].append(shorten(clean_text(record.text)))
    return RejectionQuality(
        total_records=len(records),
        unique_texts=len(uniques),
        workspace_scoped_count=sum(1 for r in records if is_scoped(r)),
        legacy_unscoped_count=sum(1 for r in records if not is_scoped(r)),
        reason_distribution=counts_object(reason for r in records for reason in r.reasons),
        unique_reason_distribution=counts_object(reason for r in uniques for reason in r.reasons),
        possible_false_positive_groups={
            name: FalsePositiveGroup(counts[name], tuple(groups[name])) for name in FALSE_POSITIVE_GROUPS
        },
    )


def _rejection_quality_fields(summary: RejectionQuality) -> dict[str, Any]:
    return {
        "totalRecords": summary.total_records,
        "uniqueTexts": summary.unique_texts,
        "workspaceScopedCount": summary.workspace_scoped_count,
        "legacyUnscopedCount": summary.legacy_unscoped_count,
        "reasonDistribution": dict(summary.reason_distribution),
        "uniqueReasonDistribution": dict(summary.unique_reason_distribution),
        "possibleFalsePositiveGroups": {
            name: {"count": g.count, "samples": list(g.samples)}
            for name, g in summary.possible_false_positive_groups.items()
        },
    }


def rejection_quality_json(summary: RejectionQuality, now_ms: int) -> dict[str, Any]:
    """``rejections --quality --json``."""
    return {"version": 1, "generatedAt": iso_from_ms(now_ms), **_rejection_quality_fields(summary)}


def format_rejection_quality(
    summary: RejectionQuality, *, log_path: str = "", invalid_lines: int = 0, raw: bool = False
) -> str:
    """``rejections --quality``."""
    out = [
        "Extraction rejection quality inspection",
        "",
        "Possible false-positive grouping is heuristic, not deterministic truth.",
        f"logPath={clean_path(log_path, raw)}",
    ]
    if invalid_lines > 0:
        out.append(f"Invalid JSONL lines skipped: {invalid_lines}")
    out += [
        "",
        f"Total records: {summary.total_records}",
        f"Unique texts: {summary.unique_texts}",
        f"Workspace scoped: {summary.workspace_scoped_count}",
        f"Legacy unscoped: {summary.legacy_unscoped_count}",
        "",
        "Reason distribution (raw records):",
    ]
    out.extend([f"  {k:<36} {v}" for k, v in summary.reason_distribution.items()] or ["  (none)"])
    out += ["", "Reason distribution (unique text):"]
    out.extend([f"  {k:<36} {v}" for k, v in summary.unique_reason_distribution.items()] or ["  (none)"])
    out += ["", "Possible false-positive groups (heuristic, not deterministic):"]
    for name, group in summary.possible_false_positive_groups.items():
        out.append(f"  {name}: {group.count}")
        out.extend(f"    - {json_string(sample)}" for sample in group.samples)
    return "\n".join(out)


def format_rejections(
    records: Sequence[NormalizedRejection], *, log_path: str = "", invalid_lines: int = 0, raw: bool = False
) -> str:
    """The plain ``rejections`` summary (pass ``unique_rejections(...)`` for ``--unique``)."""
    out = ["Extraction rejection summary", "", f"logPath={clean_path(log_path, raw)}"]
    if invalid_lines > 0:
        out.append(f"Invalid JSONL lines skipped: {invalid_lines}")
    out += ["", f"Total rejected: {len(records)}", ""]

    def block(title: str, values: Iterable[str]) -> None:
        out.append(title)
        rows = sorted_counts(Counter(values))
        out.extend([f"  {k:<24} {v}" for k, v in rows] or ["  (none)"])
        out.append("")

    block("By reason:", (reason for r in records for reason in r.reasons))
    block("By origin:", (r.origin for r in records))
    triggered = [r for r in records if r.from_trigger or r.origin == "explicit_trigger"]
    block("Trigger-origin rejections (high priority for v1.5):", (x for r in triggered for x in r.reasons))
    out.append("Recent suspicious soft rejects:")
    soft = sorted(
        (r for r in records if has_soft_reason(r)), key=lambda r: -(parse_iso_ms(r.timestamp) or 0)
    )[:8]
    if not soft:
        out.append("  (none)")
    for record in soft:
        identity = _workspace_identity(record.workspace_key, None, raw, record.workspace_root_hash)
        out.append(f"  - [{record.type}] {json_string(shorten(clean_text(record.text, raw)))}")
        out.append(f"    reasons: {','.join(record.reasons)}")
        out.append(f"    origin: {record.origin}{f' ({identity})' if identity else ''}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Inspection model: coverage, disappearances, quality
# (docs/decisions.md#diagnostics-coverage-disappearances-and-quality)
# ---------------------------------------------------------------------------------------------


class Disappearance(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    classification: str
    terminal_type: str
    reason_codes: tuple[str, ...]
    terminal: EvidenceEvent | None
    events: tuple[EvidenceEvent, ...]


class EventCounts(msgspec.Struct, frozen=True):
    total: int
    by_type: dict[str, int]
    by_phase: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "byType": dict(self.by_type), "byPhase": dict(self.by_phase)}


def event_counts(events: Sequence[EvidenceEvent]) -> EventCounts:
    return EventCounts(
        len(events), counts_object(e.type for e in events), counts_object(e.phase for e in events)
    )


class Inspection(msgspec.Struct, frozen=True, kw_only=True):
    snapshot: DiagSnapshot
    rejections: tuple[NormalizedRejection, ...]
    current_ids: frozenset[str]  # every stored entry, superseded included
    by_memory: dict[str, tuple[EvidenceEvent, ...]]


def inspect(src: DiagInput, now_ms: int) -> Inspection:
    snap = build_snapshot(src, now_ms)
    return Inspection(
        snapshot=snap,
        rejections=normalize_rejections(src.rejections),
        current_ids=frozenset(e.id for e in snap.store.entries),
        by_memory=snap.by_memory,
    )


def terminal_reason(memory_id: str, events: Sequence[EvidenceEvent]) -> Disappearance:
    """Why a memory that is no longer stored left: its last terminal event, else its last
    ``render_omitted``, else unknown."""
    terminal = next((e for e in reversed(events) if e.type in TERMINAL_TYPES), None)
    if terminal is None:
        terminal = next((e for e in reversed(events) if e.type == "render_omitted"), None)
    if terminal is None:
        return Disappearance(
            id=memory_id,
            classification="historical_absent_unknown_reason",
            terminal_type="unknown",
            reason_codes=(),
            terminal=None,
            events=tuple(events),
        )
    return Disappearance(
        id=memory_id,
        classification="historical_absent_with_reason",
        terminal_type=terminal.type,
        reason_codes=terminal.reason_codes,
        terminal=terminal,
        events=tuple(events),
    )


def disappearance_rows(model: Inspection) -> tuple[Disappearance, ...]:
    """Memory ids named by evidence but not stored, by classification then id."""
    rows = [terminal_reason(i, evs) for i, evs in model.by_memory.items() if i not in model.current_ids]
    return tuple(sorted(rows, key=lambda r: (r.classification, r.id)))


def coverage_class(model: Inspection, memory_id: str) -> str:
    events = model.by_memory.get(memory_id, ())
    if memory_id not in model.current_ids:
        return terminal_reason(memory_id, events).classification
    if not events:
        return "no_evidence"
    if all(e.phase == "render" for e in events):
        return "render_only"
    return "full_lifecycle"


class CoverageRow(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    cls: str
    current: bool
    type: str | None
    counts: EventCounts


def coverage_rows(model: Inspection, include_historical: bool = False) -> tuple[CoverageRow, ...]:
    ids = set(model.current_ids)
    if include_historical:
        ids |= set(model.by_memory)
    types = {e.id: e.type.value for e in model.snapshot.store.entries}
    rows = []
    for memory_id in sorted(ids):
        events = model.by_memory.get(memory_id, ())
        type_ = types.get(memory_id) or next(
            (e.memory.type for e in events if e.memory is not None and e.memory.memory_id == memory_id), None
        )
        rows.append(
            CoverageRow(
                id=memory_id,
                cls=coverage_class(model, memory_id),
                current=memory_id in model.current_ids,
                type=type_,
                counts=event_counts(events),
            )
        )
    return tuple(rows)


def coverage_json(rows: Sequence[CoverageRow], now_ms: int) -> dict[str, Any]:
    def row_json(row: CoverageRow) -> dict[str, Any]:
        out: dict[str, Any] = {"id": row.id, "class": row.cls, "current": row.current}
        if row.type is not None:
            out["type"] = row.type
        out["eventCounts"] = row.counts.to_json()
        return out

    return {
        "version": 1,
        "generatedAt": iso_from_ms(now_ms),
        "classCounts": counts_object(r.cls for r in rows),
        "memories": [row_json(r) for r in rows],
    }


def format_coverage(rows: Sequence[CoverageRow]) -> str:
    counts = Counter(r.cls for r in rows)
    out = ["Memory evidence coverage", "", "Class counts:"]
    out.extend(f"  {cls}: {counts.get(cls, 0)}" for cls in COVERAGE_CLASSES)
    out += ["", "Per-memory rows:"]
    if not rows:
        out.append("  (none)")
    for row in rows:
        phases = row.counts.by_phase
        out.append(
            f"  {row.id} {row.cls} current={'yes' if row.current else 'no'} total={row.counts.total}"
            f" extraction={phases.get('extraction', 0)} promotion={phases.get('promotion', 0)}"
            f" render={phases.get('render', 0)} storage={phases.get('storage', 0)}"
        )
    return "\n".join(out)


def disappearances_json(
    rows: Sequence[Disappearance], now_ms: int, *, explain: bool = False
) -> dict[str, Any]:
    def row_json(row: Disappearance) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": row.id,
            "classification": row.classification,
            "terminalType": row.terminal_type,
            "reasonCodes": list(row.reason_codes),
            "eventCounts": event_counts(row.events).to_json(),
        }
        if explain and row.terminal is not None and row.terminal.details:
            out["details"] = dict(row.terminal.details)
        return out

    return {"version": 1, "generatedAt": iso_from_ms(now_ms), "disappearances": [row_json(r) for r in rows]}


def format_disappearances(rows: Sequence[Disappearance], *, explain: bool = False, raw: bool = False) -> str:
    out = ["Memory disappearances", ""]
    if not rows:
        out.append("No evidence-only memories found.")
        return "\n".join(out)
    for row in rows:
        reasons = ",".join(row.reason_codes) if row.reason_codes else "none"
        out.append(f"Memory {row.id}: {row.classification} terminal={row.terminal_type} reasons={reasons}")
        if not explain:
            continue
        out.append(f"  events: {', '.join(e.type for e in row.events)}")
        if row.terminal is not None and row.terminal.type == "memory_removed_capacity":
            out.append(
                f"  memory_removed_capacity details: {clean_text(format_details(row.terminal.details), raw)}"
            )
        observed = next(
            (e for e in row.events if e.type == "render_omitted" and "type_cap" in e.reason_codes), None
        )
        if observed is not None:
            out.append(
                f"  render_omitted type-cap observation: reasons={','.join(observed.reason_codes)}"
                f" details={clean_text(format_details(observed.details), raw)}"
            )
    return "\n".join(out)


class ClockCounts(msgspec.Struct, frozen=True):
    present: int
    missing: int
    invalid: int


def retention_clock_counts(entries: Iterable[MemoryEntry]) -> ClockCounts:
    """Missing: no ``retentionClock``; invalid: not a finite positive number (a numeric -1 counts as
    invalid here, as in the reference diagnostics); present: the rest."""
    present = missing = invalid = 0
    for entry in entries:
        clock = entry.retention_clock
        if clock is None:
            missing += 1
        elif isinstance(clock, bool) or not math.isfinite(clock) or clock <= 0:
            invalid += 1
        else:
            present += 1
    return ClockCounts(present, missing, invalid)


class QualityReport(msgspec.Struct, frozen=True, kw_only=True):
    status: str  # ok | warning | degraded
    summary_text: str
    active: int
    pending: int
    superseded: int
    max_entries: int
    rendered: int
    type_capped: int
    global_capped: int
    type_counts: dict[str, int]
    caps_full: bool
    clocks: ClockCounts
    current_with_evidence: int
    evidence_memory_ids: int
    disappearances: int
    unknown_disappearances: int
    rejections: RejectionQuality


def quality_report(model: Inspection) -> QualityReport:
    snap = model.snapshot
    store = snap.store
    active = [e for e in store.entries if e.status != MemoryStatus.SUPERSEDED]
    clocks = retention_clock_counts(active)
    rows = disappearance_rows(model)
    unknown = sum(1 for r in rows if r.classification == "historical_absent_unknown_reason")
    covered = sum(1 for e in active if model.by_memory.get(e.id))
    rejections = rejection_quality(model.rejections)
    type_counts = {t.value: sum(1 for e in active if e.type == t) for t in TYPES}
    caps_full = len(active) >= store.limits.max_entries or any(
        type_counts[t.value] >= RETENTION_TYPE_MAX[t] for t in TYPES
    )
    if unknown > 0 or clocks.invalid > 0:
        status = "degraded"
    elif caps_full or rejections.legacy_unscoped_count > 0 or rejections.false_positive_risk == "high":
        status = "warning"
    else:
        status = "ok"
    summary = (
        f"Summary: Workspace memory quality is {status}: {len(active)} active memories, "
        f"{covered}/{len(active)} with evidence, "
        f"{len(rows)} evidence-only disappearances ({unknown} unknown), "
        f"{clocks.invalid} invalid retention clocks, and {rejections.legacy_unscoped_count} legacy unscoped "
        "rejection records."
    )
    return QualityReport(
        status=status,
        summary_text=summary,
        active=len(active),
        pending=len(snap.journal),
        superseded=len(store.entries) - len(active),
        max_entries=store.limits.max_entries,
        rendered=len(snap.shortlist),
        type_capped=snap.type_capped,
        global_capped=snap.global_capped,
        type_counts=type_counts,
        caps_full=caps_full,
        clocks=clocks,
        current_with_evidence=covered,
        evidence_memory_ids=len(model.by_memory),
        disappearances=len(rows),
        unknown_disappearances=unknown,
        rejections=rejections,
    )


def quality_json(report: QualityReport, now_ms: int) -> dict[str, Any]:
    q = report
    return {
        "version": 1,
        "generatedAt": iso_from_ms(now_ms),
        "status": q.status,
        "summaryText": q.summary_text,
        "store": {"active": q.active, "pending": q.pending, "superseded": q.superseded},
        "caps": {
            "active": q.active,
            "maxEntries": q.max_entries,
            "rendered": q.rendered,
            "typeCapped": q.type_capped,
            "globalCapped": q.global_capped,
            "typeCounts": dict(q.type_counts),
            "capsFull": q.caps_full,
        },
        "retention": {"present": q.clocks.present, "missing": q.clocks.missing, "invalid": q.clocks.invalid},
        "evidence": {
            "currentWithEvidence": q.current_with_evidence,
            "currentWithoutEvidence": q.active - q.current_with_evidence,
            "evidenceMemoryIds": q.evidence_memory_ids,
            "disappearances": q.disappearances,
            "unknownDisappearances": q.unknown_disappearances,
            "withTerminalReason": q.disappearances - q.unknown_disappearances,
        },
        "rejections": {
            **_rejection_quality_fields(q.rejections),
            "falsePositiveRisk": q.rejections.false_positive_risk,
        },
    }


def format_quality(report: QualityReport) -> str:
    q = report
    out = [
        "Memory quality inspection",
        "",
        q.summary_text,
        "",
        "Caps:",
        f"  active: {q.active} / {q.max_entries}",
    ]
    for t in TYPES:
        count, cap = q.type_counts[t.value], RETENTION_TYPE_MAX[t]
        out.append(f"  {t.value}: {count} / {cap}{' FULL' if count >= cap else ''}")
    out += [
        f"  rendered: {q.rendered}",
        f"  type-capped entries: {q.type_capped}",
        f"  global-cap overflow: {q.global_capped}",
        f"  caps full: {'yes' if q.caps_full else 'no'}",
        "",
        "Retention clocks:",
        f"  present: {q.clocks.present}",
        f"  missing: {q.clocks.missing}",
        f"  invalid: {q.clocks.invalid}",
        "",
        "Evidence:",
        f"  current with evidence: {q.current_with_evidence}",
        f"  current without evidence: {q.active - q.current_with_evidence}",
        f"  evidence memory ids: {q.evidence_memory_ids}",
        f"  disappearances: {q.disappearances}",
        f"  unknown disappearances: {q.unknown_disappearances}",
        "",
        "Rejection scoping:",
        f"  total records: {q.rejections.total_records}",
        f"  workspace scoped: {q.rejections.workspace_scoped_count}",
        f"  legacy unscoped: {q.rejections.legacy_unscoped_count}",
        f"  false-positive risk: {q.rejections.false_positive_risk}",
    ]
    return "\n".join(out)
