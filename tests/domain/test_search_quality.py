"""The quality of search on the labelled fixture (issue 20, ``tests/data/search_fixture.json``,
written by ``tests/support/search_fixture.py``): recall@5 and MRR over the queries, and the share of
never-stored probes answered "no match". Goals: recall@5 ≥ 0.85, probes ≥ 90 %."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from domain.enums import MemorySource, MemoryStatus, MemoryType
from domain.model import MemoryEntry
from domain.search.rank import search
from domain.search.values import Verdict
from tests.support.search_fixture import build

FIXTURE: Final = Path(__file__).parents[1] / "data" / "search_fixture.json"
NOW: Final = 1_777_626_000_000
CREATED: Final = "2026-04-20T09:00:00.000Z"


def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _entries(data: dict[str, Any]) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            id=m["id"],
            type=MemoryType(m["type"]),
            text=m["text"],
            source=MemorySource.MANUAL,
            confidence=1.0,
            status=MemoryStatus.ACTIVE,
            created_at=CREATED,
            updated_at=CREATED,
        )
        for m in data["memories"]
    ]


def quality() -> dict[str, float]:
    data = _fixture()
    entries = _entries(data)
    numbers = {e.id: n for n, e in enumerate(entries, 1)}
    found = 0
    reciprocal = 0.0
    for q in data["queries"]:
        hits = [h.id for h in search(entries, q["query"], NOW, numbers, _full, limit=5).hits]
        ranks = [hits.index(a) + 1 for a in q["answers"] if a in hits]
        found += bool(ranks)
        reciprocal += 1.0 / min(ranks) if ranks else 0.0
    no_match = sum(
        search(entries, p, NOW, numbers, _full).verdict is not Verdict.MATCH for p in data["probes"]
    )
    total = len(data["queries"])
    return {
        "recall_at_5": found / total,
        "mrr": reciprocal / total,
        "probe_no_match": no_match / len(data["probes"]),
    }


def test_the_fixture_is_what_its_script_writes() -> None:
    assert _fixture() == json.loads(json.dumps(build()))


def test_the_fixture_is_big_enough() -> None:
    data = _fixture()
    assert len(data["memories"]) >= 500 and len(data["queries"]) >= 100 and len(data["probes"]) >= 30
    assert {m["type"] for m in data["memories"]} == {t.value for t in MemoryType}


def test_search_quality_meets_its_goals(capsys: pytest.CaptureFixture[str]) -> None:
    report = quality()
    with capsys.disabled():
        print(
            f"\nsearch quality: recall@5 {report['recall_at_5']:.3f}, MRR {report['mrr']:.3f}, "
            f"never-stored probes answered no match {report['probe_no_match']:.1%}"
        )
    assert report["recall_at_5"] >= 0.85
    assert report["probe_no_match"] >= 0.90


def _full(entry: MemoryEntry) -> float:
    return 1.0
