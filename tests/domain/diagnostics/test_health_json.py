"""``health --json`` (docs/decisions.md#diagnostics-health): the reference's diagnostics test 5
(docs/decisions.md#parity-with-the-reference) on :mod:`domain.diagnostics.health_json`, against the
text form of the same input."""

from __future__ import annotations

import json
import re

from domain.diagnostics import health_json
from tests.support.builders import NOW, NOW_ISO
from tests.support.diagnostics import health_json_fixture, health_text


def test_5_health_json_matches_human_counts_and_is_privacy_safe() -> None:
    src = health_json_fixture()
    human = health_text(src)
    data = health_json(src, NOW)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    assert data["version"] == 1
    assert list(data) == ["version", "workspace", "generatedAt", "summary", "memories", "recentEvents"]
    assert data["generatedAt"] == NOW_ISO
    summary = data["summary"]
    assert summary["storedActive"] == int(re.findall(r"Stored active memories: (\d+)", human)[0]) == 2
    assert summary["rendered"] == int(re.findall(r"Rendered candidates: (\d+)", human)[0]) == 2
    assert summary["pending"] == int(re.findall(r"Pending journal:\n\s+total: (\d+)", human)[0]) == 1
    assert summary["rejectedLast7Days"] == 1
    assert summary["corruptStoresQuarantinedLast30Days"] == 1
    assert any(
        e["eventId"]
        and e["type"] == "render_selected"
        and e["outcome"] == "rendered"
        and e["createdAt"]
        and "within_caps" in e["reasonCodes"]
        for e in data["recentEvents"]
    )
    rows = {m["id"]: m for m in data["memories"]}
    assert rows["mem-rendered"]["evidenceEventIds"]
    assert rows["mem-rendered"]["status"] == "rendered"
    assert rows["mem-old"]["status"] == "omitted_superseded"
    assert rows["mem-pending"]["status"] == "pending_retry"
    assert list(rows["mem-rendered"]) == [
        "id",
        "type",
        "source",
        "status",
        "strength",
        "reasonCodes",
        "textPreview",
        "evidenceEventIds",
    ]
    assert "sushi" not in text
    assert text.startswith("{") and text.endswith("}")
    quarantine = next(e for e in data["recentEvents"] if e["type"] == "storage_corrupt_json_quarantined")
    assert quarantine["reasonCodes"] == ["invalid_json", "quarantined_corrupt_store"]
    assert "memoryId" not in quarantine
