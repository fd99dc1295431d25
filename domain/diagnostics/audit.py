"""``audit``: a summary of the store migrations' audit records, the lines that
``migration-logs/<migration id>.jsonl`` receives whenever a migration changes a memory
(docs/decisions.md#diagnostics-audit, docs/decisions.md#normalisation-and-migrations).

The shell reads the files and hands over the decoded records (:func:`parse_audit_line` decides what
a record is); this module groups them by migration id, newest migration first, and counts what each
one did. Records are read leniently, as the reference's own logs (copied by ``import-owm``) may carry
more or fewer fields than workmem writes; the workspace root some of them carry is never shown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Final

import msgspec

from domain.codec import decode
from domain.diagnostics.common import (
    clean_path,
    clean_text,
    counts_object,
    json_string,
    shorten,
    sorted_counts,
)
from domain.enums import MemoryStatus, MemoryType
from domain.safety import QualityReason
from domain.timeutil import iso_from_ms, parse_iso_ms

#: At most this many risky supersedes are listed per migration in the text report (all are counted).
RISKY_LISTED: Final = 10


class RiskCode(StrEnum):
    """The reference's five codes for a supersede that may have removed a memory worth keeping."""

    MISSING_HARD_REASONS = "missing_or_empty_hardReasons"
    SOFT_REASONS_ONLY = "soft_reasons_without_hardReasons"
    USER_PREFERENCE_MARKER = "user_preference_marker"
    DURABLE_RULE_MARKER = "durable_rule_marker"
    PATH_HEAVY_ONLY = "feedback_or_decision_path_heavy_only"


RISK_CODES: Final[tuple[RiskCode, ...]] = tuple(RiskCode)
_WORD_BEFORE: Final = r"(?<![A-Za-z0-9_])"
_WORD_AFTER: Final = r"(?![A-Za-z0-9_])"
#: The reference's markers of a text that may have been worth keeping (an ASCII word boundary, as
#: JavaScript's ``\b``).
_USER_PREFERENCE: Final = re.compile(
    rf"{_WORD_BEFORE}(?:User|user|prefers|requires|wants|insists){_WORD_AFTER}|用戶|使用者|偏好|要求|不要|不刪除"
)
_DURABLE_RULE: Final = re.compile(
    rf"{_WORD_BEFORE}(?:must|should|do not|never|is|are|follows){_WORD_AFTER}|必須|應該|採用|維持|需支援",
    re.IGNORECASE,
)


class AuditRecord(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One audit line as the diagnostics read it: ``MigrationAudit`` (``domain.consolidation``) with
    every field but the migration id optional. ``hard_reasons`` is ``None`` when the line has none."""

    migration_id: str
    timestamp: str = ""
    workspace_key: str = ""
    entry_id: str = ""
    type: str = "unknown"
    source: str = ""
    text: str = ""
    reasons: tuple[str, ...] = ()
    hard_reasons: tuple[str, ...] | None = None
    before_status: str | None = None
    after_status: str | None = None


def parse_audit_line(line: bytes | str) -> AuditRecord | None:
    """The record on one line, or ``None`` for a damaged line: not JSON (a torn append), not an
    object, no non-empty ``migrationId``, or a field of the wrong type."""
    record = decode(line, AuditRecord).value_or(None)
    return record if record is not None and record.migration_id else None


def superseded(record: AuditRecord) -> bool:
    """A record counts as a supersede when its after-status is missing or ``superseded``."""
    return record.after_status is None or record.after_status == MemoryStatus.SUPERSEDED


def risk_codes(record: AuditRecord) -> tuple[RiskCode, ...]:
    """Why a supersede might have removed a memory worth keeping (the reference's five codes)."""
    hard = record.hard_reasons or ()
    found = [
        not hard,
        bool(record.reasons) and not hard,
        _USER_PREFERENCE.search(record.text) is not None,
        _DURABLE_RULE.search(record.text) is not None,
        record.type in (MemoryType.FEEDBACK, MemoryType.DECISION) and hard == (QualityReason.PATH_HEAVY,),
    ]
    return tuple(code for code, hit in zip(RISK_CODES, found, strict=True) if hit)


class RiskySupersede(msgspec.Struct, frozen=True):
    record: AuditRecord
    codes: tuple[RiskCode, ...]


class MigrationSummary(msgspec.Struct, frozen=True, kw_only=True):
    migration_id: str
    first_at: str | None  # the earliest and latest parsable timestamps, as recorded
    last_at: str | None
    records: int
    superseded: int
    memory_ids: tuple[str, ...]  # distinct entry ids, first-seen order
    workspaces: int  # distinct workspace keys
    transitions: tuple[tuple[str, int], ...]  # "before -> after", count descending
    hard_reasons: tuple[tuple[str, int], ...]  # over the supersedes, count descending
    risky: tuple[RiskySupersede, ...]


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    log_dir: str
    migrations: tuple[MigrationSummary, ...]  # the most recent first
    damaged_lines: int = 0
    skipped_files: int = 0  # symbolic links, never followed


def _transition(record: AuditRecord) -> str:
    after = record.after_status or MemoryStatus.SUPERSEDED.value
    return f"{record.before_status or 'unknown'} -> {after}"


def summarize_migration(migration_id: str, records: Sequence[AuditRecord]) -> MigrationSummary:
    timed = sorted(
        ((ms, r.timestamp) for r in records if (ms := parse_iso_ms(r.timestamp)) is not None),
        key=lambda item: item[0],
    )
    supersedes = [r for r in records if superseded(r)]
    risky = ((r, risk_codes(r)) for r in supersedes)
    return MigrationSummary(
        migration_id=migration_id,
        first_at=timed[0][1] if timed else None,
        last_at=timed[-1][1] if timed else None,
        records=len(records),
        superseded=len(supersedes),
        memory_ids=tuple(dict.fromkeys(r.entry_id for r in records if r.entry_id)),
        workspaces=len({r.workspace_key for r in records if r.workspace_key}),
        transitions=tuple(sorted_counts(Counter(_transition(r) for r in records))),
        hard_reasons=tuple(sorted_counts(Counter(h for r in supersedes for h in r.hard_reasons or ()))),
        risky=tuple(RiskySupersede(r, codes) for r, codes in risky if codes),
    )


def audit_report(
    records: Iterable[AuditRecord],
    *,
    workspace_key: str | None = None,
    log_dir: str = "",
    damaged_lines: int = 0,
    skipped_files: int = 0,
) -> AuditReport:
    """Per migration id, the most recent first (by latest timestamp; undated last, then by id).
    ``workspace_key`` keeps only that workspace's records; ``None`` keeps every workspace."""
    grouped: dict[str, list[AuditRecord]] = {}
    for record in records:
        if workspace_key is None or record.workspace_key == workspace_key:
            grouped.setdefault(record.migration_id, []).append(record)
    summaries = [summarize_migration(mid, group) for mid, group in grouped.items()]

    def recency(summary: MigrationSummary) -> tuple[bool, int, str]:
        last = parse_iso_ms(summary.last_at) if summary.last_at else None
        return (last is None, -(last or 0), summary.migration_id)

    return AuditReport(
        log_dir=log_dir,
        migrations=tuple(sorted(summaries, key=recency)),
        damaged_lines=damaged_lines,
        skipped_files=skipped_files,
    )


def _when(summary: MigrationSummary) -> str:
    if summary.first_at is None or summary.last_at is None:
        return "unknown"
    return (
        summary.first_at
        if summary.first_at == summary.last_at
        else f"{summary.first_at} .. {summary.last_at}"
    )


def format_audit(report: AuditReport, *, raw: bool = False) -> str:
    """The human ``audit`` output. Memory text is redacted unless ``raw``."""
    out = ["Migration audit report", "", f"logDir={clean_path(report.log_dir, raw)}"]
    if report.damaged_lines:
        out.append(f"Damaged lines skipped: {report.damaged_lines}")
    if report.skipped_files:
        out.append(f"Symbolic links skipped: {report.skipped_files}")
    if not report.migrations:
        out += ["", "No migration records found."]
    for m in report.migrations:
        out += ["", f"Migration {m.migration_id}"]
        out.append(f"  when: {_when(m)}")
        out.append(f"  records: {m.records}")
        out.append(f"  memories affected: {len(m.memory_ids)}")
        out.append(f"  superseded entries: {m.superseded}")
        out.append("  transitions:")
        out.extend(f"    {name}: {count}" for name, count in m.transitions)
        out.append("  by hard reason:")
        out.extend([f"    {reason:<24} {count}" for reason, count in m.hard_reasons] or ["    (none)"])
        out.append(f"  potentially risky supersedes: {len(m.risky)}")
        for item in m.risky[:RISKY_LISTED]:
            r = item.record
            hard = ",".join(r.hard_reasons or ()) or "none"
            out.append(
                f"    - {r.entry_id or '(no id)'} [{r.type}] hardReasons={hard}"
                f" risk={','.join(item.codes)} {json_string(shorten(clean_text(r.text, raw)))}"
            )
        if len(m.risky) > RISKY_LISTED:
            out.append(f"    ... and {len(m.risky) - RISKY_LISTED} more")
    return "\n".join(out)


def audit_json(report: AuditReport, now_ms: int) -> dict[str, Any]:
    """``audit --json``: counts and ids only, never memory text or paths."""

    def migration_json(m: MigrationSummary) -> dict[str, Any]:
        return {
            "migrationId": m.migration_id,
            "firstAt": m.first_at,
            "lastAt": m.last_at,
            "records": m.records,
            "superseded": m.superseded,
            "memoriesAffected": len(m.memory_ids),
            "memoryIds": list(m.memory_ids),
            "workspaces": m.workspaces,
            "transitions": dict(m.transitions),
            "hardReasons": dict(m.hard_reasons),
            "riskCounts": counts_object(code for item in m.risky for code in item.codes),
            "risky": [
                {"memoryId": item.record.entry_id, "type": item.record.type, "risk": list(item.codes)}
                for item in m.risky
            ],
        }

    return {
        "version": 1,
        "generatedAt": iso_from_ms(now_ms),
        "damagedLines": report.damaged_lines,
        "skippedFiles": report.skipped_files,
        "migrations": [migration_json(m) for m in report.migrations],
    }
