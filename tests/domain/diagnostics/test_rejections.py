"""Rejections (docs/decisions.md#diagnostics-rejections): the reference's diagnostics tests 15-16
(docs/decisions.md#parity-with-the-reference) and the plain summary on
:mod:`domain.diagnostics.rejections`, with the rejection records built in memory
(tests/support/diagnostics.py)."""

from __future__ import annotations

import msgspec
from returns.result import Failure, Success

from domain.diagnostics import (
    RejectionOrigin,
    filter_rejections,
    format_rejection_quality,
    format_rejections,
    normalize_rejections,
    parse_since,
    rejection_quality,
    rejection_quality_json,
    unique_rejections,
)
from domain.enums import MemorySource
from domain.extraction import RejectionRecord
from domain.limits import DAY_MS
from domain.timeutil import iso_from_ms, parse_iso_ms
from tests.support.builders import KEY, NOW
from tests.support.diagnostics import false_positive_rejections, rejection, scoped_and_unscoped_rejections
from tests.support.diagnostics_checks import check_false_positive_groups, check_scoped_and_unscoped


def test_15_rejection_quality_groups_heuristically() -> None:
    records = normalize_rejections(false_positive_rejections())
    filtered = filter_rejections(records, workspace_key=KEY, reason="bad_decision")
    assert len(filtered) == 3
    summary = rejection_quality(unique_rejections(filtered))
    out = format_rejection_quality(summary, log_path="/home/dev/.local/share/x/extraction-rejections.jsonl")
    check_false_positive_groups(out)
    assert "logPath=<path>" in out
    assert '    - "Maybe useful"' in out


def test_16_rejection_quality_json() -> None:
    records = normalize_rejections(scoped_and_unscoped_rejections())
    data = rejection_quality_json(rejection_quality(filter_rejections(records, workspace_key=KEY)), NOW)
    check_scoped_and_unscoped(data)
    assert list(data)[:2] == ["version", "generatedAt"]


def test_plain_rejections_summary() -> None:
    records = normalize_rejections(
        [
            rejection(
                "Remember password: hunter2 please",
                "bad_feedback",
                type="feedback",
                source=MemorySource.EXPLICIT,
                timestamp=iso_from_ms(NOW - DAY_MS),
                workspace_key=KEY,
            ),
            rejection("Wave 3 completed", "progress_snapshot"),
            RejectionRecord(timestamp="", type="decision", text="", reasons=("empty",)),
        ]
    )
    assert len(records) == 2  # the record without text is dropped
    out = format_rejections(records, invalid_lines=2)
    assert "Invalid JSONL lines skipped: 2" in out
    assert "Total rejected: 2" in out
    assert "By reason:\n  bad_feedback             1\n  progress_snapshot        1\n" in out
    assert "By origin:\n  compaction_candidate     1\n  explicit_trigger         1\n" in out
    assert 'Rejected after an explicit request ("remember ..."):\n  bad_feedback             1\n' in out
    assert '  - [feedback] "Remember password: [REDACTED] please"\n    reasons: bad_feedback\n' in out
    assert f"    origin: explicit_trigger (workspaceKey={KEY})" in out
    assert "hunter2" not in out
    assert "hunter2" in format_rejections(records, raw=True)
    empty = format_rejections(())
    assert "By reason:\n  (none)" in empty and empty.endswith("Recent suspicious soft rejects:\n  (none)")


def test_rejection_origins_and_the_record_source_keep_their_codes() -> None:
    codes = "explicit_trigger compaction_candidate manual migration_check unknown"
    assert [o.value for o in RejectionOrigin] == codes.split()
    record = RejectionRecord(timestamp="t", type="project", text="x", reasons=("empty",))
    line = b'{"timestamp":"t","type":"project","text":"x","reasons":["empty"],"source":"compaction"}'
    assert msgspec.json.encode(record) == line
    assert msgspec.json.encode(msgspec.structs.replace(record, source=MemorySource.COMPACTION)) == line
    variants = [msgspec.structs.replace(record, source=s) for s in MemorySource]
    origins = [r.origin for r in normalize_rejections(variants)]
    assert origins == ["explicit_trigger", "compaction_candidate", "manual"]


def test_rejection_filters() -> None:
    records = normalize_rejections(
        [
            rejection("Old progress", "progress_snapshot", timestamp=iso_from_ms(NOW - 20 * DAY_MS)),
            rejection("Recent soft", "bad_feedback", type="feedback", source=MemorySource.EXPLICIT),
            rejection(
                "Bad time", "bad_feedback", type="feedback", source=MemorySource.MANUAL, timestamp="garbage"
            ),
        ]
    )
    since = parse_since("14d", NOW)
    assert since == Success(NOW - 14 * DAY_MS)
    assert [r.text for r in filter_rejections(records, since_ms=NOW - 14 * DAY_MS)] == ["Recent soft"]
    assert [r.text for r in filter_rejections(records, soft_only=True)] == ["Recent soft", "Bad time"]
    assert [r.text for r in filter_rejections(records, trigger_only=True)] == ["Recent soft"]
    assert parse_since("6H", NOW) == Success(NOW - 6 * 3_600_000)
    assert parse_since("30m", NOW) == Success(NOW - 30 * 60_000)
    assert parse_since("2026-05-01", NOW) == Success(parse_iso_ms("2026-05-01"))
    assert parse_since("yesterday", NOW) == Failure("Invalid --since value: yesterday")
