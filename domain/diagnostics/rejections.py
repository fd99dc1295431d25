"""The extraction-rejection summaries: ``rejections`` and ``rejections --quality``
(docs/decisions.md#diagnostics-rejections)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Final

import msgspec
from returns.result import Failure, Result, Success

from domain.diagnostics.common import (
    RejectionLike,
    clean_path,
    clean_text,
    counts_object,
    json_string,
    shorten,
    sorted_counts,
    workspace_identity,
)
from domain.enums import MemorySource
from domain.limits import DAY_MS, HOUR_MS
from domain.safety import HARD_QUALITY_REASONS, QualityReason, is_architecture_like_decision
from domain.text import canonical_text
from domain.timeutil import iso_from_ms, parse_iso_ms


class RejectionOrigin(StrEnum):
    """Which door or step a rejected memory came from: a record's own ``origin`` when it names one
    of these, else inferred from its ``source`` (:func:`normalize_rejections`)."""

    EXPLICIT_TRIGGER = "explicit_trigger"
    COMPACTION_CANDIDATE = "compaction_candidate"
    MANUAL = "manual"
    MIGRATION_CHECK = "migration_check"
    UNKNOWN = "unknown"


ORIGINS: Final[frozenset[RejectionOrigin]] = frozenset(RejectionOrigin)
_ORIGIN_OF_SOURCE: Final[dict[str, RejectionOrigin]] = {
    MemorySource.COMPACTION: RejectionOrigin.COMPACTION_CANDIDATE,
    MemorySource.EXPLICIT: RejectionOrigin.EXPLICIT_TRIGGER,
    MemorySource.MANUAL: RejectionOrigin.MANUAL,
}


class FalsePositiveKind(StrEnum):
    """The heuristic groups of ``bad_decision`` rejections in ``rejections --quality``."""

    ARCHITECTURE_LIKE = "architecture_like_possible_false_positive"
    CLEARLY_GARBAGE = "clearly_garbage"
    AMBIGUOUS = "ambiguous"


FALSE_POSITIVE_GROUPS: Final[tuple[FalsePositiveKind, ...]] = tuple(FalsePositiveKind)


class Risk(StrEnum):
    """The false-positive risk ``rejections --quality`` and ``quality`` report."""

    HIGH = "high"
    LOW = "low"


_STATUS_LIKE: Final = re.compile(
    r"(?<![A-Za-z0-9_])(?:implemented|added|updated|fixed|completed|reviewed|tests?|CI|commit|wave|phase|task|session)"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_SINCE: Final = re.compile(r"^([0-9]+)([dhmDHM])$")


class NormalizedRejection(msgspec.Struct, frozen=True, kw_only=True):
    timestamp: str
    type: str
    text: str
    reasons: tuple[str, ...]
    source: str | None
    origin: RejectionOrigin
    from_trigger: bool
    workspace_key: str | None = None
    workspace_root_hash: str | None = None


def _infer_origin(record: RejectionLike) -> RejectionOrigin:
    declared = getattr(record, "origin", None)
    if isinstance(declared, str) and declared in ORIGINS:
        return RejectionOrigin(declared)
    return _ORIGIN_OF_SOURCE.get(record.source, RejectionOrigin.UNKNOWN)


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
                else origin is RejectionOrigin.EXPLICIT_TRIGGER,
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
        out = [r for r in out if r.from_trigger or r.origin is RejectionOrigin.EXPLICIT_TRIGGER]
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
    possible_false_positive_groups: dict[FalsePositiveKind, FalsePositiveGroup]

    @property
    def false_positive_risk(self) -> Risk:
        possible = self.possible_false_positive_groups[FalsePositiveKind.ARCHITECTURE_LIKE].count
        high = possible >= 3 or (self.unique_texts > 0 and possible / self.unique_texts >= 0.5)
        return Risk.HIGH if high else Risk.LOW


def rejection_quality(records: Sequence[NormalizedRejection]) -> RejectionQuality:
    """Scoping, reason distributions and a heuristic grouping of ``bad_decision`` rejections
    (always over the non-unique records)."""
    uniques = unique_rejections(records)
    groups: dict[FalsePositiveKind, list[str]] = {name: [] for name in FALSE_POSITIVE_GROUPS}
    counts: Counter[FalsePositiveKind] = Counter()
    for record in uniques:
        if QualityReason.BAD_DECISION not in record.reasons:
            continue
        hard = [r for r in record.reasons if r in HARD_QUALITY_REASONS]
        status_like = _STATUS_LIKE.search(record.text) is not None
        if is_architecture_like_decision(record.text) and not hard and not status_like:
            group = FalsePositiveKind.ARCHITECTURE_LIKE
        elif hard or status_like:
            group = FalsePositiveKind.CLEARLY_GARBAGE
        else:
            group = FalsePositiveKind.AMBIGUOUS
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


def rejection_quality_fields(summary: RejectionQuality) -> dict[str, Any]:
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
    return {"version": 1, "generatedAt": iso_from_ms(now_ms), **rejection_quality_fields(summary)}


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
    triggered = [r for r in records if r.from_trigger or r.origin is RejectionOrigin.EXPLICIT_TRIGGER]
    block("Trigger-origin rejections (high priority for v1.5):", (x for r in triggered for x in r.reasons))
    out.append("Recent suspicious soft rejects:")
    soft = sorted(
        (r for r in records if has_soft_reason(r)), key=lambda r: -(parse_iso_ms(r.timestamp) or 0)
    )[:8]
    if not soft:
        out.append("  (none)")
    for record in soft:
        identity = workspace_identity(record.workspace_key, None, raw, record.workspace_root_hash)
        out.append(f"  - [{record.type}] {json_string(shorten(clean_text(record.text, raw)))}")
        out.append(f"    reasons: {','.join(record.reasons)}")
        out.append(f"    origin: {record.origin}{f' ({identity})' if identity else ''}")
    return "\n".join(out)
