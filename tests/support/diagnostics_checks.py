"""What the diagnostics' reports say of the shared fixtures of :mod:`tests.support.diagnostics`: the
``check_*`` functions, which the domain tests (tests/domain/diagnostics/) and the command line's
(tests/adapters/test_cli_diagnostics.py) both run on their report."""

from __future__ import annotations

import re
from typing import Any


def holds(text: str, *lines: str) -> None:
    """``text`` holds each of ``lines``."""
    for line in lines:
        assert line in text


def matches(text: str, *patterns: str) -> None:
    """``text`` holds a match of each of ``patterns``."""
    for pattern in patterns:
        assert re.search(pattern, text), pattern


def check_monitoring(text: str) -> None:
    """What the health report of :func:`monitoring_fixture` says of dormancy and monitoring."""
    holds(
        text,
        "Dormancy:",
        "wall days since activity: 19.0",
        "dormant discount active: yes",
        "dormant days past grace: 5.0",
    )
    matches(
        text, r"high_importance_ratio: 40\.0% .* ALERT", r"safety_critical_count: 6 .*no longer set.* WARNING"
    )
    assert "max_reinforced_count: 2 (20.0%, alert > 10%) ALERT" in text


def check_quiet_health(text: str) -> None:
    """What the health report of an empty store without a recorded activity says of dormancy and
    monitoring (the reference's test 4)."""
    holds(
        text,
        "lastActivityAt: (missing)",
        "wall days since activity: unknown",
        "dormant discount active: no",
        "high_importance_ratio: 0.0% (alert > 30%)\n",
        "safety_critical_count: 0 (no longer set)\n",
        "max_reinforced_count: 0 (alert > 10% active)",
    )


def check_global_cap(text: str) -> None:
    """What the health report of :func:`global_cap_fixture` says of the caps."""
    holds(text, "Rendered candidates: 28", "type-capped entries: 0", "global-cap overflow: 6")


def check_quality(text: str) -> None:
    """What the quality report of :func:`quality_fixture` says of caps, clocks, evidence and
    rejections."""
    holds(
        text,
        "decision: 14 stored, at most 10 shown (full)",
        "feedback: 14 stored, at most 10 shown (full)",
        "Retention clocks:\n  present: 27\n  missing: 0\n  invalid: 1",
        "Evidence:\n  current with evidence: 1\n  current without evidence: 27",
        "workspace scoped: 1\n  from before records named their workspace: 1",
    )


def check_coverage(text: str) -> None:
    """What the coverage report of :func:`coverage_fixture` says: a memory of each class, and its
    row."""
    holds(text, "Class counts:", "full_lifecycle: 1", "render_only: 1", "no_evidence: 1", "Per-memory rows:")
    matches(
        text,
        r"mem-full full_lifecycle .*extraction=1 promotion=1",
        r"mem-render-only render_only .*render=1",
        r"mem-no-evidence no_evidence .*total=0",
    )


def check_capacity_disappearances(text: str) -> None:
    """What the disappearances of :func:`capacity_disappearance_fixture`, explained, say."""
    holds(
        text,
        "capacity-loser: historical_absent_with_reason terminal=memory_removed_capacity reasons=type_cap",
        "render-loser: historical_absent_with_reason terminal=render_omitted reasons=type_cap",
        "render_omitted type-cap observation: reasons=type_cap",
    )
    matches(text, r"memory_removed_capacity details: .*globalCap=28 .*typeCap=10")


def check_false_positive_groups(text: str) -> None:
    """What the rejection quality of this workspace's :func:`false_positive_rejections` says: one of
    each group, and that the grouping is a heuristic."""
    holds(
        text,
        "Possible false-positive grouping is heuristic, not deterministic truth",
        "architecture_like_possible_false_positive: 1",
        "clearly_garbage: 1",
        "ambiguous: 1",
    )
    assert not re.search(r"deterministic truth\s*:", text)


def check_scoped_and_unscoped(data: dict[str, Any]) -> None:
    """What the rejection quality JSON of :func:`scoped_and_unscoped_rejections` counts."""
    assert data["workspaceScopedCount"] == 1
    assert data["legacyUnscopedCount"] == 1
    assert data["uniqueReasonDistribution"]["bad_decision"] == 1
    assert data["possibleFalsePositiveGroups"]["architecture_like_possible_false_positive"]["count"] == 1


def check_explain(text: str) -> None:
    """What the explanation of every memory of :func:`explain_fixture` says: each render outcome, the
    pending and absorbed memories, the quarantined store, a memory's strength and an event."""
    holds(
        text,
        "Memory mem-rendered: rendered",
        "Memory mem-superseded: omitted_superseded",
        "omitted_type_cap",
        "omitted_global_cap",
        "omitted_char_budget",
        "Memory mem-pending-retry: pending_retry",
        "Memory mem-pending-capacity: pending_rejected_capacity",
        "Memory mem-absorbed: omitted_absorbed_duplicate",
        "quarantined_corrupt_store",
    )
    matches(
        text,
        r"- strength=\d+\.\d{3}, type=feedback, source=explicit",
        r"- evidence: .*promotion_absorbed_exact",
    )


def check_mem_life_trace(text: str) -> None:
    """What the trace of ``mem-life`` in :func:`trace_fixture` shows: its lifecycle with the relations,
    and never the secret of its text."""
    holds(
        text,
        "extraction_candidate_accepted: accepted; reasons=quality_gate_passed",
        "pending_memory_appended: accepted; reasons=pending_journal_append",
        "Superseded by:\n- mem-new",
        "Reinforced by:\n- mem-duplicate",
    )
    matches(
        text,
        r"promotion_superseded: superseded; reasons=superseded_existing; .*superseded_by=mem-new",
        r"memory_reinforced: reinforced; reasons=duplicate_exact; .*reinforced_by=mem-duplicate",
    )
    assert "sushi" not in text
