"""The evidence log adapter (docs/decisions.md#evidence-log-append-and-prune), with the reference's
acceptance cases for it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from functools import partial
from pathlib import Path

import msgspec
import pytest

from adapters.evidence_log import (
    EvidenceLog,
    append_events,
    lock_path,
    needs_prune,
    prune_log,
    read_events,
)
from adapters.paths import workspace_key, workspace_paths, workspace_root_hash
from domain.diagnostics import evidence_summary, group_by_memory_id, status_from_trace_event
from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.limits import EvidenceLogLimits
from domain.model import EvidenceEvent, EvidenceInput, MemoryRef, Relation
from domain.timeutil import iso_from_ms
from tests.support.builders import event_input, event_input_of

NOW = 1_777_636_800_000
DAY = 86_400_000
EVENT_ID = re.compile(r"^evt_\d+_[a-z0-9]{8}$")


def h16(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


@pytest.fixture
def log(tmp_path: Path, root: str) -> EvidenceLog:
    paths = workspace_paths(tmp_path / "home", root)
    return EvidenceLog(
        paths.evidence, workspace_key=workspace_key(root), workspace_root_hash=workspace_root_hash(root)
    )


def manual_line(root: str, eid: str, created_at: str) -> str:
    """A ``render_selected`` line of the workspace ``root`` as an earlier writer left it."""
    return json.dumps(
        {
            "version": 1,
            "eventId": eid,
            "createdAt": created_at,
            "workspaceKey": workspace_key(root),
            "workspaceRootHash": workspace_root_hash(root),
            "type": "render_selected",
            "phase": "render",
            "outcome": "rendered",
            "memory": {"memoryId": eid, "type": "decision"},
            "reasonCodes": ["within_caps", "within_char_budget"],
        }
    )


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))


def append_to(path: Path, events: list[EvidenceInput]) -> tuple[EvidenceEvent, ...]:
    """``events`` appended at ``NOW`` to the log at ``path`` of the workspace key ``k``."""
    return append_events(path, events, now_ms=NOW, workspace_key="k", workspace_root_hash="r")


# ---- the reference's acceptance cases ------------------------------------------------------------


def test_1_append_writes_versioned_jsonl_with_workspace_hashes(log: EvidenceLog, root: str) -> None:
    (record,) = log.append([event_input(session_id="session-1", message_id="message-1")], NOW)
    raw = log.path.read_text()
    stored = json.loads(raw.strip())
    assert stored["version"] == 1
    assert EVENT_ID.match(stored["eventId"])
    assert stored["eventId"] == record.event_id
    assert stored["createdAt"] == iso_from_ms(NOW)
    assert stored["workspaceKey"] == workspace_key(root)
    assert stored["workspaceRootHash"] == workspace_root_hash(root)
    assert stored["sessionHash"] == h16("session-1")
    assert stored["messageHash"] == h16("message-1")
    assert stored["type"] == "promotion_promoted"
    assert stored["outcome"] == "promoted"
    assert raw.endswith("}\n") and raw.count("\n") == 1


def test_1b_workspace_root_hash_is_not_the_workspace_key_b8(log: EvidenceLog, root: str) -> None:
    """docs/decisions.md#b8: the reference wrote hash16(realpath(root)) into both fields."""
    (record,) = log.append([event_input()], NOW)
    assert record.workspace_root_hash != record.workspace_key
    assert record.workspace_root_hash == h16("root:" + os.path.realpath(root))


def test_2_append_redacts_text_previews_and_details(log: EvidenceLog) -> None:
    secrets = (
        "password: sushi\nAdmin PIN 是 456123\nBearer abc.def.ghi\n"
        "This candidate is rejected and should be short"
    )
    rejected = event_input_of(
        EventType.EXTRACTION_CANDIDATE_REJECTED,
        Phase.EXTRACTION,
        Outcome.REJECTED,
        "raw_error",
        text_preview=secrets,
        details={"note": "password: sushi Admin PIN 是 456123 Bearer abc.def.ghi"},
    )
    log.append([rejected], NOW)
    raw = log.path.read_text()
    stored = json.loads(raw.strip())
    for leaked in ("sushi", "456123", "abc.def.ghi"):
        assert leaked not in raw
    assert "[REDACTED]" in stored["textPreview"]
    assert len(stored["textPreview"]) <= 80


def test_3_query_filters_by_type_outcome_and_memory_id(log: EvidenceLog) -> None:
    omitted = partial(event_input_of, EventType.RENDER_OMITTED, Phase.RENDER, Outcome.OMITTED)
    log.append(
        [
            event_input(memory=MemoryRef(memory_id="mem-a")),
            omitted("type_cap", memory=MemoryRef(memory_id="mem-a")),
            omitted("global_cap", memory=MemoryRef(memory_id="mem-b")),
        ],
        NOW,
    )
    events, invalid = log.read()
    assert invalid == 0
    result = [e for e in group_by_memory_id(events)["mem-a"] if e.outcome == "omitted"]
    assert len(result) == 1
    assert result[0].type == "render_omitted"
    assert result[0].memory is not None and result[0].memory.memory_id == "mem-a"


def test_4_memory_removed_capacity_round_trips(log: EvidenceLog) -> None:
    ref = MemoryRef(memory_id="removed-memory", type="reference", source="compaction", status="active")
    details = {
        "type": "reference",
        "globalCap": 28,
        "retentionClock": 1_777_593_600_000,
        "createdAt": "2026-05-01T00:00:00.000Z",
        "source": "compaction",
    }
    removed = event_input_of(
        EventType.MEMORY_REMOVED_CAPACITY,
        Phase.STORAGE,
        Outcome.REMOVED,
        "global_cap",
        memory=ref,
        relations=(Relation(role=RelationRole.REMOVED, memory=ref),),
        details=details,
    )
    log.append([removed], NOW)
    events, _ = log.read()
    result = group_by_memory_id(events)["removed-memory"]  # named twice, listed once
    assert len(result) == 1
    assert (result[0].type, result[0].phase, result[0].outcome) == (
        "memory_removed_capacity",
        "storage",
        "removed",
    )
    assert result[0].details == details


def test_5_read_back_in_append_order(log: EvidenceLog) -> None:
    records = log.append(
        [event_input(memory=MemoryRef(memory_id=m)) for m in ("oldest", "middle", "newest")], NOW
    )
    events, _ = log.read()
    assert [e.event_id for e in events] == [r.event_id for r in records]
    assert len({r.event_id for r in records}) == 3


def test_6_a_directory_at_the_log_path_is_moved_aside_and_the_append_succeeds(
    log: EvidenceLog, root: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # (a directory in place of the log no longer blocks every write; the failing write itself is
    # covered by 6b)
    log.path.mkdir(parents=True)
    (record,) = log.append([event_input()], NOW)
    assert record.version == 1
    assert EVENT_ID.match(record.event_id)
    assert record.workspace_key == workspace_key(root)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "moved aside" in err
    assert log.path.is_file() and any(".corrupt-" in p.name and p.is_dir() for p in log.path.parent.iterdir())


def test_6b_append_survives_a_missing_parent_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "evidence"
    blocker.write_text("not a directory")
    records = append_to(blocker / "events.jsonl", [event_input()])
    assert len(records) == 1
    assert "failed to write evidence event" in capsys.readouterr().err
    assert blocker.read_text() == "not a directory"


def test_7_prune_drops_old_events_caps_count_and_quarantines_invalid_lines(
    log: EvidenceLog, root: str
) -> None:
    log.path.parent.mkdir(parents=True)
    old = manual_line(root, "old-event", iso_from_ms(NOW - 91 * DAY))
    recent = [
        manual_line(
            root, f"recent-{i}", iso_from_ms(NOW - (EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE - i) * 1000)
        )
        for i in range(EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE + 1)
    ]
    log.path.write_text("\n".join([old, "{not valid json", *recent]) + "\n")
    appended = log.append([event_input(memory=MemoryRef(memory_id=f"appended-{i}")) for i in range(100)], NOW)

    events, invalid = log.read()
    ids = {e.memory.memory_id for e in events if e.memory is not None}
    assert len(events) <= EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE
    assert invalid == 0
    assert "old-event" not in ids
    assert "recent-0" not in ids
    assert appended[-1].memory is not None and appended[-1].memory.memory_id in ids
    quarantined = [p for p in log.path.parent.iterdir() if p.name.startswith("events.jsonl.corrupt-lines-")]
    assert len(quarantined) == 1
    assert quarantined[0].read_text() == "{not valid json\n"
    assert stat.S_IMODE(quarantined[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_8_the_grouped_events_derive_the_latest_status(log: EvidenceLog) -> None:
    ref = MemoryRef(memory_id="mem-life", memory_key_hash="raw-key")
    accepted = (EventType.EXTRACTION_CANDIDATE_ACCEPTED, Phase.EXTRACTION, Outcome.ACCEPTED)
    reinforced = (EventType.MEMORY_REINFORCED, Phase.REINFORCEMENT, Outcome.REINFORCED)
    rendered = (EventType.RENDER_SELECTED, Phase.RENDER, Outcome.RENDERED)
    log.append(
        [
            event_input_of(*accepted, "quality_gate_passed", memory=ref),
            event_input(memory=ref),
            event_input_of(
                *reinforced,
                "duplicate_exact",
                memory=None,
                relations=(Relation(role=RelationRole.REINFORCED, memory=ref),),
            ),
            event_input_of(*rendered, "within_caps", "within_char_budget", memory=ref),
        ],
        NOW,
    )
    events, _ = log.read()
    life = group_by_memory_id(events)["mem-life"]
    codes, ids = evidence_summary(life)
    assert ids == tuple(e.event_id for e in events)  # the reinforcement names it as a relation
    assert "duplicate_exact" in codes
    assert status_from_trace_event(life[-1]) == "rendered"
    assert "raw-key" not in log.path.read_text()


def test_9_relation_roles(log: EvidenceLog, root: str) -> None:
    """The log reads back a relation of each of the schema's twelve roles (listed by
    tests/domain/test_evidence_records.py) and drops one of a role it does not know."""
    record = json.loads(manual_line(root, "roles", iso_from_ms(NOW)))
    record["relations"] = [{"role": role} for role in [*RelationRole, "sublimated"]]
    write_lines(log.path, [json.dumps(record)])
    (event,), invalid = log.read()
    assert invalid == 0
    assert [r.role for r in event.relations] == list(RelationRole)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"role": "sublimated"}, Relation)


# ---- append details ------------------------------------------------------------------------------


def test_log_files_are_private(log: EvidenceLog) -> None:
    log.append([event_input()], NOW)
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(lock_path(log.path).stat().st_mode) == 0o600


def test_existing_wide_log_is_tightened_b7(log: EvidenceLog) -> None:
    """docs/decisions.md#b7: the reference created the log with the default mode (0644 under a usual
    umask)."""
    log.path.parent.mkdir(parents=True)
    log.path.write_text("")
    os.chmod(log.path, 0o644)
    log.append([event_input()], NOW)
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_event_ids_are_deterministic_for_the_same_log_state(tmp_path: Path) -> None:
    a = append_to(tmp_path / "a" / "events.jsonl", [event_input()] * 3)
    b = append_to(tmp_path / "b" / "events.jsonl", [event_input()] * 3)
    assert [r.event_id for r in a] == [r.event_id for r in b]
    assert len({r.event_id for r in a}) == 3
    again = append_to(tmp_path / "a" / "events.jsonl", [event_input()])
    assert again[0].event_id not in {r.event_id for r in a}


def test_empty_append_writes_nothing(log: EvidenceLog) -> None:
    assert log.append([], NOW) == ()
    assert not log.path.exists()


def test_read_missing_log_is_empty(log: EvidenceLog) -> None:
    assert read_events(log.path) == ((), 0)


def test_read_counts_invalid_lines(log: EvidenceLog) -> None:
    log.append([event_input()], NOW)
    with open(log.path, "a") as handle:
        handle.write("garbage\n\n   \n{}\n")
    events, invalid = log.read()
    assert len(events) == 1 and invalid == 2


def test_concurrent_appends_from_threads_lose_nothing(log: EvidenceLog) -> None:
    def worker(n: int) -> None:
        for i in range(10):
            log.append([event_input(memory=MemoryRef(memory_id=f"t{n}-{i}"))], NOW)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events, invalid = log.read()
    assert invalid == 0 and len(events) == 80


# ---- prune triggers (checked on append from the file itself, docs/decisions.md#b10) --------------


def test_prune_runs_in_a_fresh_process_without_a_counter_b10(log: EvidenceLog, root: str) -> None:
    """docs/decisions.md#b10: the reference pruned every 100th append of one process, so short-lived
    processes never did."""
    lines = [manual_line(root, f"e{i}", iso_from_ms(NOW - (6000 - i) * 1000)) for i in range(5200)]
    write_lines(log.path, lines)
    assert needs_prune(log.path, NOW)
    log.append([event_input()], NOW)  # a single append is enough
    events, _ = log.read()
    assert len(events) == EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE


def test_first_line_older_than_ninety_days_triggers_prune(log: EvidenceLog, root: str) -> None:
    write_lines(
        log.path,
        [
            manual_line(root, "ancient", iso_from_ms(NOW - 120 * DAY)),
            manual_line(root, "new", iso_from_ms(NOW)),
        ],
    )
    assert needs_prune(log.path, NOW)
    log.append([event_input()], NOW)
    events, _ = log.read()
    assert events[0].event_id == "new" and len(events) == 2


def test_byte_limit_triggers_prune(log: EvidenceLog, root: str) -> None:
    pad = "p" * 2000
    lines = []
    for i in range(1200):  # about 2.5 MB
        record = json.loads(manual_line(root, f"b{i}", iso_from_ms(NOW - (1200 - i) * 1000)))
        record["details"] = {"pad": pad}
        lines.append(json.dumps(record))
    write_lines(log.path, lines)
    assert needs_prune(log.path, NOW)
    log.append([event_input()], NOW)
    assert log.path.stat().st_size <= EvidenceLogLimits.MAX_BYTES_PER_WORKSPACE
    events, _ = log.read()
    assert events[-1].type == "promotion_promoted"
    assert events[0].event_id != "b0"


def test_small_fresh_log_is_not_pruned(log: EvidenceLog) -> None:
    log.append([event_input()] * 10, NOW)
    assert not needs_prune(log.path, NOW)
    assert not needs_prune(log.path.parent / "missing.jsonl", NOW)


def test_invalid_first_line_triggers_prune_and_is_moved_aside(log: EvidenceLog) -> None:
    write_lines(log.path, ["{broken"])
    assert needs_prune(log.path, NOW)
    log.append([event_input()], NOW)
    events, invalid = log.read()
    assert invalid == 0 and len(events) == 1
    moved = list(log.path.parent.glob("events.jsonl.corrupt-lines-*.jsonl"))
    assert [p.read_text() for p in moved] == ["{broken\n"]


def test_prune_log_reports_and_keeps_raw_lines(log: EvidenceLog, root: str) -> None:
    line = manual_line(root, "keep", iso_from_ms(NOW))
    extra = json.loads(line)
    extra["futureField"] = {"kept": True}
    write_lines(
        log.path, [json.dumps(extra), manual_line(root, "gone", iso_from_ms(NOW - 100 * DAY)), "junk"]
    )
    report = prune_log(log.path, NOW)
    assert report is not None
    assert (report.kept, report.dropped, report.quarantined) == (1, 1, 1)
    assert json.loads(log.path.read_text())["futureField"] == {"kept": True}


def test_prune_of_a_directory_or_missing_file_does_nothing(tmp_path: Path) -> None:
    assert prune_log(tmp_path / "missing.jsonl", NOW) is None
    (tmp_path / "dir.jsonl").mkdir()
    assert prune_log(tmp_path / "dir.jsonl", NOW) is None


def test_a_simulated_future_clock_never_ages_out_real_evidence(log: EvidenceLog) -> None:
    """``WORKMEM_NOW`` months ahead (an offline decay simulation) must not prune today's events:
    the age check on append uses the earlier of the given clock and the real one."""
    from adapters.clock import real_now_ms

    today = real_now_ms()
    first = log.append([event_input(memory=MemoryRef(memory_id="real"))], today)
    log.append([event_input(memory=MemoryRef(memory_id="simulated"))], today + 200 * 86_400_000)
    events, _ = log.read()
    assert first[0].event_id in [e.event_id for e in events]
