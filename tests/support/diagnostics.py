"""Builders of the diagnostics' inputs (tests/domain/diagnostics/): the reference tests' ``entry()``,
a :class:`DiagInput` of the workspace ``ROOT``, the evidence events and rejection records the reports
read, and the report fixtures more than one test module starts from (what their reports say is
:mod:`tests.support.diagnostics_checks`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from domain.diagnostics import DiagInput, format_health, health_report
from domain.enums import Importance, MemorySource
from domain.extraction import RejectionRecord
from domain.limits import DAY_MS
from domain.model import ArchiveMarker, EvidenceEvent, MemoryEntry, MemoryRef, StoreLimits
from domain.timeutil import iso_from_ms
from tests.support.builders import KEY, NOW, NOW_ISO, ROOT, event as ev, journal, memory, ref, store

#: The reference tests' ``entry()``: an active compaction-style entry created now, confidence 0.75
#: whatever its source.
entry = partial(memory, confidence=0.75)


def entries(count: int, type: str, text: str, id: str) -> list[MemoryEntry]:
    """``count`` memories of ``type``, the i-th with the text ``"{text} {i}"`` and the id ``"{id}-{i}"``."""
    return [entry(f"{text} {i}", id=f"{id}-{i}", type=type) for i in range(count)]


def diag(
    entries: list[MemoryEntry] | None = None,
    *,
    pending: list[MemoryEntry] | None = None,
    events: Sequence[EvidenceEvent] = (),
    rejections: Sequence[RejectionRecord] = (),
    last_activity: str | None = NOW_ISO,
    max_chars: int = 3600,
    **store_fields: Any,
) -> DiagInput:
    """The diagnostics' input for the workspace ``ROOT``: a store of ``entries`` (active now, unless
    ``last_activity`` says otherwise), a journal of ``pending``, the evidence and rejection logs."""
    limits = StoreLimits(max_rendered_chars=max_chars)
    return DiagInput(
        root=ROOT,
        key=KEY,
        store=store(*entries, last_activity_at=last_activity, limits=limits, **store_fields)
        if entries is not None
        else None,
        journal=journal(*pending) if pending is not None else None,
        events=tuple(events),
        rejections=tuple(rejections),
        memory_path=f"{ROOT}/.data/workspace-memory.json",
        pending_path=f"{ROOT}/.data/workspace-pending-journal.json",
    )


def health_text(src: DiagInput, **kwargs: Any) -> str:
    """The human health report of ``src`` at ``NOW``."""
    return format_health(health_report(src, NOW), **kwargs)


def promoted(memory: MemoryRef, *reasons: str) -> EvidenceEvent:
    """``promotion_promoted`` of ``memory``, for the reasons given (``new_workspace_entry`` if none)."""
    return ev(reasons=reasons or ("new_workspace_entry",), memory=memory)


def quarantined(**fields: Any) -> EvidenceEvent:
    """A corrupt store set aside (``storage_corrupt_json_quarantined``, ``invalid_json``)."""
    return ev("storage_corrupt_json_quarantined", "storage", "quarantined", ["invalid_json"], **fields)


def archived(memory: MemoryRef) -> EvidenceEvent:
    """``memory_archived`` of ``memory``: consolidation archived the weakest."""
    return ev("memory_archived", "consolidation", "archived", ["archive_weakest"], memory=memory)


def absorbed(memory: MemoryRef, keeper: str) -> EvidenceEvent:
    """``memory_absorbed``: ``memory`` merged into ``keeper`` as an exact duplicate."""
    memory_id = memory.memory_id or ""
    return ev(
        "memory_absorbed",
        "consolidation",
        "absorbed",
        ["absorbed_exact"],
        memory=memory,
        relations=[("absorbed", memory_id), ("retained", keeper)],
    )


def archive_marker(memory_id: str) -> ArchiveMarker:
    """The store's marker of the archived memory ``memory_id``, archived now."""
    return ArchiveMarker(
        memory_id=memory_id, key_hash="a" * 16, identity_key_hash="b" * 16, archived_at=NOW_ISO
    )


def rejection(
    text: str,
    *reasons: str,
    type: str = "decision",
    source: MemorySource = MemorySource.COMPACTION,
    timestamp: str = NOW_ISO,
    **fields: Any,
) -> RejectionRecord:
    """A rejected ``type`` candidate of ``source``, recorded at ``timestamp``; ``bad_decision`` if no
    reason is given."""
    return RejectionRecord(
        timestamp=timestamp,
        type=type,
        source=source,
        text=text,
        reasons=reasons or ("bad_decision",),
        **fields,
    )


# ---------------------------------------------------------------------------------------------
# The reference's diagnostics tests' fixtures, read by the domain tests (tests/domain/diagnostics/)
# and by the command line's (tests/adapters/test_cli_diagnostics.py)
# ---------------------------------------------------------------------------------------------


def type_cap_fixture() -> DiagInput:
    """Test 1: 17 feedback and 11 decision memories, more of each type than its cap of 10 renders."""
    stored = entries(17, "feedback", "Unique feedback preference for memory health", "feedback")
    stored += entries(11, "decision", "Unique durable decision for memory health", "decision")
    return diag(stored)


def monitoring_fixture() -> DiagInput:
    """Test 2: ten memories, 19 days after the last activity; the first 4 of high importance, the first
    6 safety-critical, the first 2 reinforced 6 times."""
    stored = [
        entry(
            f"Unique monitoring memory {i} for retention health",
            id=f"monitoring-{i}",
            type="feedback" if i % 2 == 0 else "decision",
            user_importance=Importance.HIGH if i < 4 else Importance.NORMAL,
            safety_critical=i < 6,
            reinforcement_count=6 if i < 2 else 0,
        )
        for i in range(10)
    ]
    return diag(stored, last_activity=iso_from_ms(NOW - 19 * DAY_MS))


def global_cap_fixture() -> DiagInput:
    """Test 3: 34 memories within their type caps, 6 more than the global cap of 28 renders."""
    return diag(
        entries(10, "feedback", "Unique global feedback preference", "global-feedback")
        + entries(10, "decision", "Unique global durable decision", "global-decision")
        + entries(8, "project", "Unique global project fact", "global-project")
        + entries(6, "reference", "Unique global reference fact", "global-reference")
    )


def health_json_fixture() -> DiagInput:
    """Test 5: a rendered, a secret and a superseded memory, a pending one, a rejected candidate with a
    secret in its preview, a quarantined store, and the rendered memory's promotion and render."""
    rendered = entry("Prefer small focused changes", id="mem-rendered", type="feedback", source="explicit")
    secret = entry(
        "Use password: sushi only in test fixtures", id="mem-secret", type="decision", source="manual"
    )
    old = entry("Old decision that was superseded", id="mem-old", type="decision", status="superseded")
    pending = entry("Retry this pending memory later", id="mem-pending", type="project", promotion_attempts=1)
    shown = ref("mem-rendered", "feedback", "explicit", "active")
    events = [
        ev(
            "extraction_candidate_rejected",
            "extraction",
            "rejected",
            ["raw_secret"],
            memory=ref("mem-rejected", "feedback", "explicit"),
            preview="password: sushi should not leak",
        ),
        quarantined(),
        promoted(shown),
        ev("render_selected", "render", "rendered", ["within_caps", "within_char_budget"], memory=shown),
    ]
    return diag([rendered, secret, old], pending=[pending], events=events)


def quality_fixture() -> DiagInput:
    """Tests 9-10: 28 memories, the first with an unreadable retention clock; one promoted with
    evidence, one gone from the store without a reason; a scoped and an unscoped rejection record."""
    stored = [
        entry(
            f"Quality fixture memory {i}",
            id=f"quality-{i}",
            type="feedback" if i % 2 == 0 else "decision",
            retention_clock=-1 if i == 0 else NOW,
        )
        for i in range(28)
    ]
    events = [
        promoted(ref("quality-1", "decision", "compaction")),
        promoted(ref("quality-historical", "reference", "compaction")),
    ]
    records = [
        rejection("Implemented phase 2 and updated tests", workspace_key=KEY, workspace_root_hash="hash"),
        rejection("Wave 1 completed successfully", "progress_snapshot", "bad_feedback", type="feedback"),
    ]
    return diag(stored, events=events, rejections=records)


def coverage_fixture() -> DiagInput:
    """Test 11: a memory with its whole life in the log, one only rendered, one without evidence."""
    full = ref("mem-full", "feedback", "compaction")
    render_only = ref("mem-render-only", "decision", "compaction")
    events = [
        ev("extraction_candidate_accepted", "extraction", "accepted", ["quality_gate_passed"], memory=full),
        promoted(full),
        ev("render_selected", "render", "rendered", ["within_caps"], memory=render_only),
    ]
    return diag(
        [
            entry("Full lifecycle memory", id="mem-full", type="feedback"),
            entry("Render only memory", id="mem-render-only", type="decision"),
            entry("No evidence memory", id="mem-no-evidence", type="project"),
        ],
        events=events,
    )


def unknown_disappearance_fixture() -> DiagInput:
    """Test 13: ``historical-unknown`` promoted, then gone from the store without a terminal event."""
    events = [promoted(ref("historical-unknown", "decision", "compaction"))]
    return diag([entry("Current memory", id="current", type="feedback")], events=events)


def capacity_disappearance_fixture() -> DiagInput:
    """Test 14: ``capacity-loser`` removed at its type cap, ``render-loser`` last seen omitted at its
    type cap."""
    events = [
        ev(
            "memory_removed_capacity",
            "storage",
            "removed",
            ["type_cap"],
            memory=ref("capacity-loser", "decision", "compaction", "active"),
            relations=[("removed", "capacity-loser")],
            details={"type": "decision", "globalCap": 28, "typeCap": 10, "source": "compaction"},
        ),
        ev(
            "render_omitted",
            "render",
            "omitted",
            ["type_cap"],
            memory=ref("render-loser", "feedback", "compaction"),
        ),
    ]
    return diag([entry("Current memory", id="current", type="feedback")], events=events)


def false_positive_rejections() -> list[RejectionRecord]:
    """Test 15: ``bad_decision`` rejections of this workspace (an architecture-like one, a progress
    note), an unscoped ambiguous one and one of another workspace."""
    return [
        rejection(
            "Retention scoring model uses evidence caps to avoid normalization drift", workspace_key=KEY
        ),
        rejection("Implemented phase 2 and updated tests", workspace_key=KEY),
        rejection("Maybe useful"),
        rejection("Foreign workspace record", workspace_key="otherkey"),
    ]


def scoped_and_unscoped_rejections() -> list[RejectionRecord]:
    """Test 16: an architecture-like ``bad_decision`` of this workspace, an unscoped progress note."""
    return [
        rejection(
            "Memory system schema boundary should remain stable",
            workspace_key=KEY,
            workspace_root_hash="hash",
        ),
        rejection("Wave 1 completed successfully", "progress_snapshot", "bad_feedback", type="feedback"),
    ]


def explain_fixture() -> DiagInput:
    """A store with a memory of every render outcome (rendered, superseded, type cap, global cap,
    character budget), two pending memories, an absorbed duplicate and a quarantined store."""
    rendered = entry(
        "Rendered feedback wins the render set", id="mem-rendered", type="feedback", source="explicit"
    )
    superseded = entry(
        "Superseded memory is not rendered", id="mem-superseded", type="decision", status="superseded"
    )
    type_capped = entries(11, "feedback", "Type cap feedback memory", "mem-type")
    global_capped = (
        entries(10, "feedback", "Global cap feedback memory", "mem-g-feedback")
        + entries(10, "decision", "Global cap decision memory", "mem-g-decision")
        + entries(8, "project", "Global cap project memory", "mem-g-project")
        + entries(7, "reference", "Global cap reference memory", "mem-g-reference")
    )
    char_budget = entry(
        "This active memory cannot fit the tiny character budget", id="mem-char-budget", type="project"
    )
    retry = entry(
        "Pending retry memory",
        id="mem-pending-retry",
        type="project",
        promotion_attempts=1,
        last_promotion_failure_reason="capacity_rejected",
    )
    exhausted = entry(
        "Pending capacity rejected memory",
        id="mem-pending-capacity",
        type="project",
        promotion_attempts=3,
        last_promotion_failure_reason="capacity_rejected",
    )
    events = [
        ev(
            "promotion_absorbed_exact",
            "promotion",
            "absorbed",
            ["same_exact_key"],
            memory=ref("mem-absorbed", "feedback", "explicit"),
        ),
        quarantined(),
    ]
    return diag(
        [rendered, superseded, *type_capped, *global_capped, char_budget],
        pending=[retry, exhausted],
        events=events,
        max_chars=100,
    )


def trace_fixture() -> DiagInput:
    """The whole life of ``mem-life`` in the evidence log: accepted, journaled, promoted, reinforced by
    ``mem-duplicate``, superseded by ``mem-new`` and omitted from the block."""
    life = ref("mem-life", "decision", "compaction")
    events = [
        ev(
            "extraction_candidate_accepted",
            "extraction",
            "accepted",
            ["quality_gate_passed"],
            memory=life,
            preview="password: sushi",
        ),
        ev(
            "pending_memory_appended",
            "pending_journal",
            "accepted",
            ["pending_journal_append"],
            memory=life,
            relations=[("pending", "mem-life")],
        ),
        promoted(life),
        ev(
            "memory_reinforced",
            "reinforcement",
            "reinforced",
            ["duplicate_exact"],
            memory=life,
            relations=[("reinforced_by", "mem-duplicate")],
        ),
        ev(
            "promotion_superseded",
            "promotion",
            "superseded",
            ["superseded_existing"],
            memory=life,
            relations=[("superseded_by", "mem-new")],
        ),
        ev(
            "render_omitted",
            "render",
            "omitted",
            ["superseded"],
            memory=life,
            relations=[("omitted", "mem-life")],
        ),
    ]
    return diag(
        [
            entry(
                "Old token password: sushi should be redacted",
                id="mem-life",
                type="decision",
                status="superseded",
            ),
            entry("Replacement memory", id="mem-new", type="decision"),
        ],
        events=events,
    )
