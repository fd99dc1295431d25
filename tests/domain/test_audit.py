"""The migration audit report (docs/decisions.md#diagnostics-audit): the pure summary over decoded
audit records, and the reading of one line."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.codec import encode_line
from domain.diagnostics import (
    AuditRecord,
    audit_json,
    audit_report,
    format_audit,
    parse_audit_line,
    risk_codes,
)
from domain.emitted import MigrationAudit
from tests.support.builders import KEY, NOW

QUALITY = "2026-04-28-quality-cleanup"
P0 = "2026-04-26-p0-cleanup"


def rec(entry_id: str, **fields: Any) -> AuditRecord:
    base: dict[str, Any] = {
        "migration_id": QUALITY,
        "timestamp": "2026-05-02T10:00:00.000Z",
        "workspace_key": KEY,
        "entry_id": entry_id,
        "type": "project",
        "source": "compaction",
        "text": "Wave 2 completed; tests pass",
        "reasons": ("progress_snapshot",),
        "hard_reasons": ("progress_snapshot",),
        "before_status": "active",
        "after_status": "superseded",
    }
    return AuditRecord(**{**base, **fields})


def test_workmem_audit_lines_decode() -> None:
    written = MigrationAudit(
        migration_id=QUALITY,
        timestamp="2026-05-02T10:00:00.000Z",
        workspace_key=KEY,
        entry_id="m1",
        type="project",
        source="compaction",
        text="Wave 2 completed; tests pass",
        reasons=("progress_snapshot",),
        hard_reasons=("progress_snapshot",),
        before_status="active",
        after_status="superseded",
    )
    assert parse_audit_line(encode_line(written)) == rec("m1")


def test_reference_lines_decode_leniently() -> None:
    line = '{"migrationId":"x","entryId":"m","workspaceRoot":"/home/u/p","text":"t"}'
    record = parse_audit_line(line)
    assert record is not None
    assert (record.migration_id, record.entry_id, record.hard_reasons, record.after_status) == (
        "x",
        "m",
        None,
        None,
    )


@pytest.mark.parametrize(
    "line",
    [
        '{"migrationId":"x","entryId":"m","text":"tr',  # a torn append
        "[1, 2]",
        '{"entryId":"m"}',
        '{"migrationId":""}',
        '{"migrationId":"x","reasons":"progress_snapshot"}',
        '{"migrationId":"x","hardReasons":[1]}',
    ],
)
def test_damaged_lines_are_not_records(line: str) -> None:
    assert parse_audit_line(line) is None


def test_summary_per_migration_most_recent_first() -> None:
    records = [
        rec("m1"),
        rec("m2", timestamp="2026-05-02T10:00:05.000Z", hard_reasons=("path_heavy",), type="decision"),
        rec("m1", timestamp="2026-05-03T09:00:00.000Z"),  # the same memory again (a re-run)
        rec("p1", migration_id=P0, timestamp="2026-05-10T08:00:00.000Z", hard_reasons=()),
        rec("other", workspace_key="fedcba9876543210", migration_id=P0),
        rec("u1", migration_id="undated", timestamp="garbage"),
    ]
    report = audit_report(records, workspace_key=KEY)
    assert [m.migration_id for m in report.migrations] == [P0, QUALITY, "undated"]
    p0, quality, undated = report.migrations
    assert (quality.first_at, quality.last_at) == ("2026-05-02T10:00:00.000Z", "2026-05-03T09:00:00.000Z")
    assert quality.records == 3 and quality.superseded == 3
    assert quality.memory_ids == ("m1", "m2")
    assert quality.transitions == (("active -> superseded", 3),)
    assert quality.hard_reasons == (("progress_snapshot", 2), ("path_heavy", 1))
    assert [item.record.entry_id for item in quality.risky] == ["m2"]
    assert p0.memory_ids == ("p1",)  # the other workspace's record is not counted
    assert undated.first_at is None and undated.last_at is None
    everyone = audit_report(records)
    assert next(m for m in everyone.migrations if m.migration_id == P0).workspaces == 2


def test_risk_codes() -> None:
    assert risk_codes(rec("a")) == ()
    assert risk_codes(rec("a", hard_reasons=None, reasons=())) == ("missing_or_empty_hardReasons",)
    assert risk_codes(rec("a", hard_reasons=())) == (
        "missing_or_empty_hardReasons",
        "soft_reasons_without_hardReasons",
    )
    assert "user_preference_marker" in risk_codes(rec("a", text="The user wants tabs"))
    assert "user_preference_marker" in risk_codes(rec("a", text="使用者偏好深色主題"))
    assert "user_preference_marker" not in risk_codes(rec("a", text="superuser access"))
    assert "durable_rule_marker" in risk_codes(rec("a", text="Builds MUST be reproducible"))
    assert "durable_rule_marker" not in risk_codes(rec("a", text="This completed"))  # "is" inside a word
    assert risk_codes(rec("a", type="feedback", hard_reasons=("path_heavy",))) == (
        "feedback_or_decision_path_heavy_only",
    )
    assert risk_codes(rec("a", type="project", hard_reasons=("path_heavy",))) == ()


def test_transitions_default_like_the_reference() -> None:
    report = audit_report([rec("a", before_status=None, after_status=None), rec("b", after_status="active")])
    (summary,) = report.migrations
    assert dict(summary.transitions) == {"unknown -> superseded": 1, "active -> active": 1}
    assert summary.superseded == 1


def test_text_report() -> None:
    secret = "password: hunter22"
    records = [
        rec("m1"),
        rec(
            "m2", type="feedback", text=f"User prefers tabs in /home/dev/app/x.ts ({secret})", hard_reasons=()
        ),
    ]
    report = audit_report(records, log_dir="/home/dev/.data/migration-logs", damaged_lines=2)
    text = format_audit(report)
    assert text.startswith("Migration audit report\n\nlogDir=<path>\nDamaged lines skipped: 2\n\n")
    assert f"Migration {QUALITY}\n  when: 2026-05-02T10:00:00.000Z\n  records: 2\n" in text
    assert "  memories affected: 2\n  superseded entries: 2\n" in text
    assert "  transitions:\n    active -> superseded: 2\n" in text
    assert "  by hard reason:\n    progress_snapshot        1\n" in text
    assert "  potentially risky supersedes: 1\n    - m2 [feedback] hardReasons=none" in text
    assert "risk=missing_or_empty_hardReasons,soft_reasons_without_hardReasons,user_preference_marker" in text
    assert "hunter22" not in text and "/home/dev" not in text
    raw = format_audit(report, raw=True)
    assert "hunter22" in raw and "logDir=/home/dev/.data/migration-logs" in raw


def test_text_report_lists_ten_risky_supersedes() -> None:
    records = [rec(f"m{i}", hard_reasons=()) for i in range(12)]
    text = format_audit(audit_report(records))
    assert "potentially risky supersedes: 12" in text
    assert text.count("    - m") == 10
    assert text.endswith("    ... and 2 more")


def test_empty_report() -> None:
    report = audit_report([], log_dir="/x/migration-logs", skipped_files=1)
    assert format_audit(report, raw=True) == (
        "Migration audit report\n\nlogDir=/x/migration-logs\nSymbolic links skipped: 1\n\n"
        "No migration records found."
    )
    assert audit_json(report, NOW) == {
        "version": 1,
        "generatedAt": "2026-06-01T12:00:00.000Z",
        "damagedLines": 0,
        "skippedFiles": 1,
        "migrations": [],
    }


def test_json_report_has_counts_and_ids_but_no_text() -> None:
    records = [rec("m1"), rec("m2", text="User wants tabs", hard_reasons=())]
    data = audit_json(audit_report(records, damaged_lines=1), NOW)
    assert data["damagedLines"] == 1
    (migration,) = data["migrations"]
    assert migration == {
        "migrationId": QUALITY,
        "firstAt": "2026-05-02T10:00:00.000Z",
        "lastAt": "2026-05-02T10:00:00.000Z",
        "records": 2,
        "superseded": 2,
        "memoriesAffected": 2,
        "memoryIds": ["m1", "m2"],
        "workspaces": 1,
        "transitions": {"active -> superseded": 2},
        "hardReasons": {"progress_snapshot": 1},
        "riskCounts": {
            "missing_or_empty_hardReasons": 1,
            "soft_reasons_without_hardReasons": 1,
            "user_preference_marker": 1,
        },
        "risky": [
            {
                "memoryId": "m2",
                "type": "project",
                "risk": [
                    "missing_or_empty_hardReasons",
                    "soft_reasons_without_hardReasons",
                    "user_preference_marker",
                ],
            }
        ],
    }
    assert "tabs" not in msgspec.json.encode(data).decode()
