"""``health``: the numbers of one workspace and their text form (docs/decisions.md#diagnostics-health);
``health --json`` is :mod:`domain.diagnostics.health_json`."""

from __future__ import annotations

from collections import Counter
from typing import Final

import msgspec

from domain.diagnostics.bound import PendingBound, pending_bound
from domain.diagnostics.common import (
    SOURCES,
    TYPES,
    DiagInput,
    clean_path,
    clean_text,
    file_name,
    format_percent,
    format_strength,
    json_string,
    shorten,
    to_fixed,
    workspace_identity,
)
from domain.diagnostics.snapshot import Ranked, build_snapshot
from domain.diagnostics.status import promotion_limit
from domain.diagnostics.words import left_out_counts
from domain.enums import EventType, Grade, Importance, MemorySource, MemoryStatus
from domain.freshness import grade
from domain.limits import DAY_MS, RETENTION_TYPE_MAX, DormancyLimits, LongTermLimits
from domain.pinning import pin_budget
from domain.render import REASON_CHAR_BUDGET, REASON_EMPTY_BUDGET, age_days, is_stale_marked
from domain.retention import dormant_days
from domain.safety import QualityReason, assess_memory_quality
from domain.text import canonical_text
from domain.timeutil import parse_iso_ms

SUSPICIOUS_REASONS: Final = (
    QualityReason.PROGRESS_SNAPSHOT,
    QualityReason.ACTIVE_FILE_SNAPSHOT,
    QualityReason.COMMIT_OR_CI_SNAPSHOT,
    QualityReason.TEMPORARY_STATUS,
    QualityReason.RAW_ERROR,
    QualityReason.CODE_OR_API_SIGNATURE,
)


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
    pending_by_source: tuple[tuple[MemorySource, int], ...]
    #: the journal against its bound (docs/decisions.md#pending-journal-bound)
    pending: PendingBound = PendingBound()
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
    pinned: str = ""  # the pinned memories against their budget (docs/decisions.md#d20)
    #: active memories per freshness grade (docs/decisions.md#d18)
    grades: tuple[tuple[str, int], ...] = ()
    #: memories the block leaves out besides its caps, in words, and how many (docs/decisions.md#d22)
    left_out: tuple[tuple[str, int], ...] = ()


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

    def with_reason(reason: QualityReason) -> int:
        return sum(1 for a in assessments if reason in a.reasons)

    failing = tuple(
        QualityFailure(e.type.value, tuple(a.reasons), e.text)
        for e, a in zip(active, assessments, strict=True)
        if not a.accepted
    )[:8]
    source_counts = Counter(e.source for e in journal)
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
        pending_retryable=sum(1 for e in journal if (e.promotion_attempts or 0) < promotion_limit(e.source)),
        pending_near_limit=sum(
            1 for e in journal if (e.promotion_attempts or 0) >= promotion_limit(e.source) - 1
        ),
        pending_by_source=tuple((s, source_counts.get(s, 0)) for s in SOURCES),
        pending=pending_bound(src),
        by_type=by_type,
        type_capped=snap.type_capped,
        global_capped=snap.global_capped,
        char_budget_omitted=sum(
            1 for o in snap.render.omitted if o.reason in (REASON_CHAR_BUDGET, REASON_EMPTY_BUDGET)
        ),
        stale_marked=stale,
        grades=tuple((g.value, sum(1 for e in active if grade(e, now_ms) is g)) for g in Grade),
        older_than_30d=sum(1 for d in ages if (d or 0) > 30),
        older_than_90d=sum(1 for d in ages if (d or 0) > 90),
        last_activity_at=last_activity,
        wall_days_since_activity=wall,
        dormant_discount_active=wall is not None and wall > grace,
        dormant_days_past_grace=0.0 if wall is None else max(0.0, wall - grace),
        dormant_multiplier=DormancyLimits.DORMANT_DECAY_MULTIPLIER,
        recorded_dormant_spans=len(store.dormant_spans),
        recorded_dormant_days=sum(max(0.0, float(s.end - s.start)) for s in store.dormant_spans) / DAY_MS,
        high_importance_count=sum(1 for e in active if e.user_importance == Importance.HIGH),
        safety_critical_count=sum(1 for e in active if e.safety_critical is True),
        max_reinforced_count=sum(1 for e in active if (e.reinforcement_count or 0) >= 6),
        progress_like=with_reason(QualityReason.PROGRESS_SNAPSHOT),
        path_heavy=with_reason(QualityReason.PATH_HEAVY),
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
        pinned=pin_budget(store).line(),
        left_out=tuple((words, count) for _, words, count in left_out_counts(snap)),
    )


def _ranked_line(item: Ranked, raw: bool) -> str:
    text = shorten(clean_text(item.entry.text, raw))
    return f"  - strength={format_strength(item.strength)} [{item.entry.type.value}] {text}"


def format_health(
    report: HealthReport, *, raw: bool = False, include_title: bool = True, verbose: bool = True
) -> str:
    """The human ``health`` output for one workspace (``include_title=False`` inside ``--all``;
    ``verbose``: also age, dormancy, retention monitoring and the quality heuristics' counts)."""
    r = report
    out: list[str] = []
    if include_title:
        out += ["Workspace memory health", ""]
    identity = workspace_identity(r.workspace_key, r.workspace_root, raw, r.workspace_root_hash)
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
    out.append(f"Pinned: {r.pinned}")
    out.append("")
    out.append("Pending journal:")
    out.append(f"  total: {r.pending_total}")
    out.append(f"  retryable: {r.pending_retryable}")
    out.append(f"  near retry limit: {r.pending_near_limit}")
    out.append("  by source:")
    out.extend(f"    {source}: {count}" for source, count in r.pending_by_source)
    out.append(f"  owned by sessions: {r.pending.owned}")
    out.append(
        f"  bound: {r.pending.bound} entries; requests over it: {r.pending.over_bound} (promoted early)"
    )
    out.append(f"  early promotions (journal bound): {r.pending.early_promotions}")
    out.append(f"  compaction candidates cleared by the bound: {r.pending.cleared_by_bound}")
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
    out.extend(f"  {words}: {count}" for words, count in r.left_out)
    out.append("")
    out.append("Host events (evidence log):")
    out.append(f"  compactions without a summary: {r.compactions_without_summary}")
    out.append(f"  hook failures: {r.hook_failures}")
    if verbose:
        out += ["", "Age:"]
        out.append(f"  stale-marked: {r.stale_marked}")
        out.append("  freshness: " + ", ".join(f"{name} {count}" for name, count in r.grades))
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
        spans_days = to_fixed(r.recorded_dormant_days, 1)
        out.append(f"  recorded dormant spans: {r.recorded_dormant_spans} ({spans_days} days)")
        out.append("")
        high = _ratio(r.high_importance_count, r.stored_active)
        reinforced = _ratio(r.max_reinforced_count, r.stored_active)
        out.append("Retention monitoring:")
        out.append(
            f"  high_importance_ratio: {format_percent(high)} (alert > 30%){' ALERT' if high > 0.3 else ''}"
        )
        out.append(
            f"  safety_critical_count: {r.safety_critical_count} (no longer set)"
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
        out.extend(f"  - {p if raw else file_name(p)}" for p in r.quarantined_files)
    out += ["", "Top rendered candidates:"]
    out.extend([_ranked_line(item, raw) for item in r.strongest] or ["  (none)"])
    out += ["", "Weakest active memories:"]
    out.extend([_ranked_line(item, raw) for item in r.weakest] or ["  (none)"])
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
