"""The reference's diagnostics tests 1-16 (its memory-diag tests, docs/decisions.md#diagnostics) through
the ``workmem`` command line.

The reference ran its diagnostics script as a subprocess against files in an isolated data home;
here the store, journal, evidence log and rejection log the domain tests read
(tests/support/diagnostics.py) are written in the workmem layout and the commands run in-process (and
once as a subprocess). Where workmem's wording differs from the
reference (usage errors come from the argument parser), the test says so."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from adapters import paths
from domain.codec import encode_line, encode_pretty
from domain.diagnostics import DiagInput, RejectionLike
from domain.extraction import RejectionRecord
from domain.model import WorkspaceRef
from tests.support.builders import KEY, NOW, NOW_ISO
from tests.support.cli import REPO, Cli, one_line_error
from tests.support.diagnostics import (
    capacity_disappearance_fixture,
    coverage_fixture,
    diag,
    entry,
    explain_fixture,
    false_positive_rejections,
    global_cap_fixture,
    health_json_fixture,
    monitoring_fixture,
    quality_fixture,
    rejection,
    scoped_and_unscoped_rejections,
    trace_fixture,
    type_cap_fixture,
    unknown_disappearance_fixture,
)
from tests.support.diagnostics_checks import (
    check_capacity_disappearances,
    check_coverage,
    check_explain,
    check_false_positive_groups,
    check_global_cap,
    check_mem_life_trace,
    check_monitoring,
    check_quality,
    check_quiet_health,
    check_scoped_and_unscoped,
)


@pytest.fixture
def cli(cli: Cli) -> Cli:
    cli.at_ms(NOW)
    return cli


class Fixture:
    """The files of the workspace ``cli`` runs in, written from a diagnostics input built in memory
    (tests/support/diagnostics.py) and moved to this workspace."""

    def __init__(self, cli: Cli) -> None:
        self.cli = cli
        self.root = str(cli.workspace)
        self.layout = paths.workspace_paths(cli.home, self.root)
        self.key = self.layout.directory.name
        self.layout.evidence_dir.mkdir(parents=True, exist_ok=True)

    def write(self, src: DiagInput) -> None:
        """The store, journal, evidence log and rejection log of ``src``, where it has them."""
        here = WorkspaceRef(root=self.root, key=self.key)
        if src.store is not None:
            self.layout.store.write_bytes(encode_pretty(replace(src.store, workspace=here)))
        if src.journal is not None:
            self.layout.journal.write_bytes(encode_pretty(replace(src.journal, workspace=here)))
        if src.events:
            self.layout.evidence.write_bytes(b"".join(encode_line(e) + b"\n" for e in src.events))
        if src.rejections:
            self.rejections(src.rejections)

    def rejections(self, records: Sequence[RejectionLike]) -> None:
        """The rejection log of ``records``; those of the tests' workspace ``KEY`` belong to this one."""
        lines = b""
        for record in records:
            assert isinstance(record, RejectionRecord)
            if record.workspace_key == KEY:
                record = replace(record, workspace_key=self.key)
            lines += encode_line(record) + b"\n"
        paths.rejection_log(self.cli.home).write_bytes(lines)


@pytest.fixture
def fx(cli: Cli) -> Fixture:
    return Fixture(cli)


def out(cli: Cli, *args: str) -> str:
    return cli.ok(*args).out


# ---------------------------------------------------------------------------------------------
# health (tests 1-5)
# ---------------------------------------------------------------------------------------------


def test_1_health_stored_vs_rendered(cli: Cli, fx: Fixture) -> None:
    fx.write(type_cap_fixture())
    text = out(cli, "health")
    assert "Stored active memories:" in text
    assert "Rendered candidates:" in text
    assert re.search(r"feedback\s+stored=17\s+rendered=10", text)
    assert re.search(r"Top rendered candidates:\n\s+- strength=", text)


def test_2_health_dormancy_and_monitoring(cli: Cli, fx: Fixture) -> None:
    fx.write(monitoring_fixture())
    assert "Dormancy:" not in out(cli, "health")  # the detail of the detail is behind --verbose
    check_monitoring(out(cli, "health", "--verbose"))


def test_3_health_global_cap_overflow(cli: Cli, fx: Fixture) -> None:
    fx.write(global_cap_fixture())
    check_global_cap(out(cli, "health"))


def test_4_health_empty_store_without_activity(cli: Cli, fx: Fixture) -> None:
    fx.write(diag([], last_activity=None))
    check_quiet_health(out(cli, "health", "--verbose"))


def test_5_health_json_matches_human_output(cli: Cli, fx: Fixture) -> None:
    fx.write(health_json_fixture())
    human = out(cli, "health")
    raw_json = out(cli, "health", "--json")
    data = json.loads(raw_json)
    summary = data["summary"]
    assert data["version"] == 1
    assert summary["storedActive"] == int(re.findall(r"Stored active memories: (\d+)", human)[0])
    assert summary["rendered"] == int(re.findall(r"Rendered candidates: (\d+)", human)[0])
    assert summary["pending"] == int(re.findall(r"Pending journal:\n\s+total: (\d+)", human)[0])
    assert summary["rejectedLast7Days"] == 1
    assert summary["corruptStoresQuarantinedLast30Days"] == 1
    assert any(
        e["type"] == "render_selected" and e["outcome"] == "rendered" and "within_caps" in e["reasonCodes"]
        for e in data["recentEvents"]
    )
    rows = {m["id"]: m for m in data["memories"]}
    assert rows["mem-rendered"]["evidenceEventIds"]
    assert "sushi" not in raw_json
    assert raw_json.strip().startswith("{") and raw_json.strip().endswith("}")


# ---------------------------------------------------------------------------------------------
# explain and trace (tests 6-8)
# ---------------------------------------------------------------------------------------------


def test_6_explain(cli: Cli, fx: Fixture) -> None:
    fx.write(explain_fixture())
    text = out(cli, "explain", "--verbose")
    check_explain(text)
    one = out(cli, "explain", "--verbose", "mem-absorbed")
    assert "Memory mem-absorbed: omitted_absorbed_duplicate" in one
    assert "mem-rendered" not in one


def test_7_trace(cli: Cli, fx: Fixture) -> None:
    fx.write(trace_fixture())
    text = out(cli, "trace", "mem-life")
    assert "Memory mem-life: omitted_superseded" in text
    assert "Lifecycle:" in text
    check_mem_life_trace(text)


def test_8_trace_usage_and_unknown_id(cli: Cli, fx: Fixture) -> None:
    """workmem takes the id as a positional argument (``trace ID``); a missing id is a usage error
    (exit 2) reported by the argument parser, not the reference's ``--memory requires an id``."""
    fx.write(trace_fixture())
    run = cli("trace")
    assert run.code == 2
    assert run.err.startswith("workmem: ") and "ID" in run.err
    one_line_error(cli("trace", "missing-memory"), 3)  # an unknown id, as at every command


# ---------------------------------------------------------------------------------------------
# quality (tests 9-10)
# ---------------------------------------------------------------------------------------------


def test_9_quality_human(cli: Cli, fx: Fixture) -> None:
    fx.write(quality_fixture())
    text = out(cli, "quality")
    assert "Memory quality inspection" in text
    assert "Summary: memory quality is degraded:" in text
    assert "all types: 28 stored, at most 28 shown" in text
    check_quality(text)


def test_10_quality_json(cli: Cli, fx: Fixture) -> None:
    fx.write(quality_fixture())
    data = cli.ok("quality", "--json").json()
    assert "degraded" in data["summaryText"]
    assert data["caps"]["active"] == 28
    assert data["caps"]["capsFull"] is True
    assert data["retention"]["invalid"] == 1
    assert data["evidence"]["currentWithEvidence"] == 1
    assert data["evidence"]["unknownDisappearances"] == 1
    assert data["rejections"]["workspaceScopedCount"] == 1
    assert data["rejections"]["legacyUnscopedCount"] == 1


def test_quality_ignores_records_scoped_to_other_workspaces(cli: Cli, fx: Fixture) -> None:
    fx.write(quality_fixture())
    records = [json.loads(x) for x in paths.rejection_log(cli.home).read_text().splitlines()]
    records.append({**records[0], "workspaceKey": "someotherkey0000"})
    paths.rejection_log(cli.home).write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli.ok("quality", "--json").json()["rejections"]["totalRecords"] == 2


# ---------------------------------------------------------------------------------------------
# coverage and disappearances (tests 11-14)
# ---------------------------------------------------------------------------------------------


def test_11_coverage_human(cli: Cli, fx: Fixture) -> None:
    fx.write(coverage_fixture())
    check_coverage(out(cli, "coverage"))


def test_12_coverage_json(cli: Cli, fx: Fixture) -> None:
    fx.write(coverage_fixture())
    data = cli.ok("coverage", "--json").json()
    row = next(m for m in data["memories"] if m["id"] == "mem-full")
    assert row["eventCounts"]["total"] == 2
    assert row["eventCounts"]["byType"]["promotion_promoted"] == 1
    assert data["classCounts"]["full_lifecycle"] == 1


def test_13_disappearance_unknown(cli: Cli, fx: Fixture) -> None:
    fx.write(unknown_disappearance_fixture())
    assert "Memory historical-unknown: historical_absent_unknown_reason terminal=unknown" in out(
        cli, "disappearances"
    )
    rows = cli.ok("coverage", "--include-historical", "--json").json()["memories"]
    assert {r["id"]: r["class"] for r in rows}["historical-unknown"] == "historical_absent_unknown_reason"


def test_14_disappearances_explain(cli: Cli, fx: Fixture) -> None:
    fx.write(capacity_disappearance_fixture())
    check_capacity_disappearances(out(cli, "disappearances", "--explain"))
    data = cli.ok("disappearances", "--explain", "--json").json()
    assert {d["id"] for d in data["disappearances"]} == {"capacity-loser", "render-loser"}


# ---------------------------------------------------------------------------------------------
# rejections (tests 15-16)
# ---------------------------------------------------------------------------------------------


def test_15_rejection_quality_groups(cli: Cli, fx: Fixture) -> None:
    fx.rejections(false_positive_rejections())
    check_false_positive_groups(out(cli, "rejections", "--quality", "--reason", "bad_decision", "--unique"))


def test_16_rejection_quality_json(cli: Cli, fx: Fixture) -> None:
    fx.rejections(scoped_and_unscoped_rejections())
    check_scoped_and_unscoped(cli.ok("rejections", "--quality", "--json").json())


def test_invalid_rejection_lines_are_counted(cli: Cli, fx: Fixture) -> None:
    fx.rejections([rejection("Wave 1 completed successfully", "progress_snapshot", type="feedback")])
    with paths.rejection_log(cli.home).open("a") as handle:
        handle.write("{not json\n")
    text = out(cli, "rejections")
    assert "Invalid JSONL lines skipped: 1" in text
    assert "Total rejected: 1" in text


# ---------------------------------------------------------------------------------------------
# one run as a real process, as the reference tests did
# ---------------------------------------------------------------------------------------------


def test_health_as_a_subprocess(cli: Cli, fx: Fixture) -> None:
    fx.write(diag([entry("Prefer small focused changes", id="a", type="feedback")]))
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORKMEM_HOME": str(cli.home), "WORKMEM_NOW": NOW_ISO}
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "--workspace", fx.root, "health", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["storedActive"] == 1


def test_health_root_hash_is_not_the_workspace_key_b8(cli: Cli) -> None:
    """docs/decisions.md#b8: the reference printed the workspace key twice; the root hash is its own
    value, the one the evidence log writes, in both the human and the JSON output."""
    cli.ok("remember", "Prefer small focused pull requests for review")
    expected = paths.workspace_root_hash(str(cli.workspace))
    key = paths.workspace_key(str(cli.workspace))
    assert expected != key
    human = cli.ok("health").out
    assert f"workspaceKey={key} workspaceRootHash={expected}" in human
    data = json.loads(cli.ok("health", "--json").out)
    assert data["workspace"] == {"rootHash": expected, "key": key}


# ---------------------------------------------------------------------------------------------
# audit (docs/decisions.md#diagnostics-audit)
# ---------------------------------------------------------------------------------------------


def audit_line(key: str, entry_id: str, **fields: Any) -> str:
    record = {
        "migrationId": "2026-04-28-quality-cleanup",
        "timestamp": "2026-05-02T10:00:00.000Z",
        "workspaceKey": key,
        "entryId": entry_id,
        "type": "project",
        "source": "compaction",
        "text": "Wave 2 completed; tests pass",
        "reasons": ["progress_snapshot"],
        "hardReasons": ["progress_snapshot"],
        "beforeStatus": "active",
        "afterStatus": "superseded",
        **fields,
    }
    return json.dumps(record) + "\n"


def test_audit_of_a_real_migration(cli: Cli, fx: Fixture) -> None:
    fx.write(diag([entry("Implemented wave 2 of the refactor; all tests pass now", id="m1", type="project")]))
    cli.ok("remember", "Prefer small focused pull requests")  # a write runs the migrations
    text = out(cli, "audit")
    assert text.startswith(
        "Migration audit report\n\nlogDir=<path>\n\nMigration 2026-04-28-quality-cleanup\n"
    )
    assert f"  when: {NOW_ISO}\n  records: 1\n  memories affected: 1\n  superseded entries: 1\n" in text
    assert "    active -> superseded: 1\n" in text
    assert "  potentially risky supersedes: 0" in text
    data = cli.ok("audit", "--json").json()
    assert [(m["migrationId"], m["memoryIds"]) for m in data["migrations"]] == [
        ("2026-04-28-quality-cleanup", ["m1"])
    ]


def test_audit_json_is_per_workspace_unless_all(cli: Cli, fx: Fixture) -> None:
    log = paths.migration_log(cli.home, "2026-04-28-quality-cleanup")
    log.parent.mkdir(parents=True)
    log.write_text(
        audit_line(fx.key, "m1")
        + audit_line("fedcba9876543210", "elsewhere")
        + audit_line(fx.key, "m2", migrationId="2026-04-26-p0-cleanup", timestamp="2026-05-09T00:00:00.000Z")
    )
    data = cli.ok("audit", "--json").json()
    assert [(m["migrationId"], m["memoryIds"]) for m in data["migrations"]] == [
        ("2026-04-26-p0-cleanup", ["m2"]),  # the most recent first
        ("2026-04-28-quality-cleanup", ["m1"]),
    ]
    everyone = cli("audit", "--all", "--json", workspace=False)
    assert everyone.code == 0, everyone
    quality = json.loads(everyone.out)["migrations"][1]
    assert quality["memoryIds"] == ["m1", "elsewhere"] and quality["workspaces"] == 2
    refused = cli("audit", "--all")
    assert refused.code == 2 and "Use either --all or --workspace, not both" in refused.err


def test_audit_without_logs(cli: Cli, fx: Fixture) -> None:
    assert out(cli, "audit") == "Migration audit report\n\nlogDir=<path>\n\nNo migration records found.\n"
    data = cli.ok("audit", "--json").json()
    assert (data["migrations"], data["damagedLines"], data["skippedFiles"]) == ([], 0, 0)


def test_audit_counts_damaged_lines_and_reads_rotated_logs(cli: Cli, fx: Fixture) -> None:
    log = paths.migration_log(cli.home, "2026-04-28-quality-cleanup")
    log.parent.mkdir(parents=True)
    log.with_name(log.name + ".1").write_text(audit_line(fx.key, "old"))
    log.write_text(
        audit_line(fx.key, "m1") + "not json\n" + '{"entryId":"no migration"}\n' + '{"migrationId"'
    )
    text = out(cli, "audit")
    assert "Damaged lines skipped: 3\n" in text
    assert "  records: 2\n  memories affected: 2\n" in text
    assert cli.ok("audit", "--json").json()["damagedLines"] == 3


def test_audit_does_not_follow_symbolic_links(cli: Cli, fx: Fixture, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(audit_line(fx.key, "m1"))
    directory = cli.home / paths.MIGRATION_DIR
    directory.mkdir(parents=True)
    (directory / "linked.jsonl").symlink_to(outside)
    data = cli.ok("audit", "--json").json()
    assert (data["migrations"], data["skippedFiles"]) == ([], 1)
    (directory / "linked.jsonl").unlink()
    directory.rmdir()
    directory.symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "x.jsonl").write_text(audit_line(fx.key, "m1"))
    assert "Symbolic links skipped: 1\n\nNo migration records found." in out(cli, "audit")
