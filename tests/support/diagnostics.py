"""Builders of the diagnostics' inputs (tests/domain/diagnostics/): the reference tests' ``entry()``,
a :class:`DiagInput` of the workspace ``ROOT``, the evidence events and rejection records the reports
read, and the report fixtures more than one test module starts from."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from domain.diagnostics import DiagInput, format_health, health_report
from domain.enums import MemorySource
from domain.extraction import RejectionRecord
from domain.model import ArchiveMarker, EvidenceEvent, MemoryEntry, MemoryRef, StoreLimits
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
