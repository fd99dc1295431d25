"""The diagnostics' snapshot (:mod:`domain.diagnostics.snapshot`), which every report reads: the
recent events, the rejection and quarantine windows, the render arithmetic of the reference's test 6,
and a store left as it was."""

from __future__ import annotations

from domain.diagnostics import build_snapshot, health_report, inspect, quality_report, to_fixed
from domain.limits import DAY_MS
from domain.timeutil import iso_from_ms
from tests.support.builders import NOW, event as ev, ref
from tests.support.diagnostics import diag, explain_fixture, promoted, quarantined


def test_recent_events_are_the_50_newest() -> None:
    events = [promoted(ref(f"m{i}"), "x") for i in range(60)]
    snap = build_snapshot(diag([], events=events), NOW)
    assert len(snap.recent_events) == 50
    assert snap.recent_events[0].event_id == events[-1].event_id
    assert snap.recent_events[-1].event_id == events[10].event_id


def test_rejected_and_quarantined_windows() -> None:
    old = iso_from_ms(NOW - 8 * DAY_MS)
    events = [
        ev("extraction_candidate_rejected", "extraction", "rejected", ["too_short"], created_at=old),
        quarantined(created_at=old),
        quarantined(created_at=iso_from_ms(NOW - 31 * DAY_MS)),
    ]
    summary = build_snapshot(diag([], events=events), NOW).summary
    assert summary.rejected_last_7_days == 0
    assert summary.corrupt_stores_quarantined_last_30_days == 1


def test_6_explain_render_arithmetic() -> None:
    """Derived T6 numbers: the block is exactly 100 characters; omissions 1/14/6/27."""
    snap = build_snapshot(explain_fixture(), NOW)
    assert (
        snap.render.text == "Workspace memory (cross-session, verify if stale):\nfeedback:\n"
        "- Rendered feedback wins the render set"
    )
    assert len(snap.render.text) == 100
    reasons: list[str] = [o.reason for o in snap.render.omitted]
    assert (
        reasons.count("superseded"),
        reasons.count("type_cap"),
        reasons.count("global_cap"),
        reasons.count("char_budget"),
    ) == (1, 14, 6, 27)
    row = next(r for r in snap.memories if r.id == "mem-rendered")
    assert to_fixed(row.strength or 0, 3) == "4.500"


def test_diagnostics_never_return_a_modified_store() -> None:
    src = explain_fixture()
    before = src.store
    build_snapshot(src, NOW)
    health_report(src, NOW)
    quality_report(inspect(src, NOW))
    assert src.store is before and src.store == before
