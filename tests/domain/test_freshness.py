"""Freshness (docs/decisions.md#d18): volatility, grades, the block's marks and order, the half-life,
re-verification against observed code, and the time bound of a triggered memory."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from domain.consolidation import dedupe
from domain.enums import EventType, Grade, MemoryType, Outcome, Volatility
from domain.extraction import extract_explicit
from domain.freshness import (
    code_identifiers,
    confirmed,
    default_volatility,
    describe,
    grade,
    is_expired,
    parse_cite,
    parse_until,
    path_candidates,
    span_hash,
    stale_label,
    volatility_of,
)
from domain.limits import DAY_MS
from domain.model import Citation, MemoryEntry
from domain.render import OmissionReason, render_entry_line, render_workspace_block
from domain.retention import half_life_days
from domain.reverify import Observed, reverify_store
from domain.timeutil import iso_from_ms
from tests.support.builders import NOW, memory, store


@pytest.mark.parametrize(
    ("type_", "text", "expected"),
    [
        (MemoryType.DECISION, "Use blue-green deploys for the API", Volatility.STABLE),
        (MemoryType.FEEDBACK, "Keep answers short", Volatility.STABLE),
        (MemoryType.REFERENCE, "The runbook lives in docs/ops.md", Volatility.NORMAL),
        (MemoryType.PROJECT, "The importer reads CSV files", Volatility.NORMAL),
        (MemoryType.DECISION, "Pin postgres 15.4.1 in CI", Volatility.VOLATILE),
        (MemoryType.DECISION, "Keep the public API versioned under /v2", Volatility.STABLE),
        (MemoryType.REFERENCE, "The dev server listens on port 8080", Volatility.VOLATILE),
        (MemoryType.REFERENCE, "Staging is at https://staging.example.com/app", Volatility.VOLATILE),
        (MemoryType.PROJECT, "We are currently migrating the billing tables", Volatility.VOLATILE),
        (MemoryType.PROJECT, "Release freeze this week", Volatility.VOLATILE),
        (MemoryType.PROJECT, "The audit ends 2027-03-01", Volatility.VOLATILE),
        (MemoryType.PROJECT, "Until 3/15/2027 the importer is frozen", Volatility.VOLATILE),
        (MemoryType.PROJECT, "The API listens on localhost:8080 in dev", Volatility.VOLATILE),
        (MemoryType.PROJECT, "The importer lives in the import module", Volatility.NORMAL),
        (MemoryType.PROJECT, "目前在迁移账单表", Volatility.VOLATILE),
        (MemoryType.PROJECT, "今週はリリース凍結", Volatility.VOLATILE),
        (MemoryType.PROJECT, "현재 결제 테이블을 옮기는 중", Volatility.VOLATILE),
    ],
)
def test_default_volatility_by_type_promoted_by_the_text(
    type_: MemoryType, text: str, expected: Volatility
) -> None:
    assert default_volatility(type_, text) is expected


def test_grades_follow_the_window_of_the_volatility() -> None:
    def aged(days: float, type_: str = "reference", **fields: Any) -> Grade:
        return grade(
            memory("The runbook lives in docs/ops.md", type=type_, at=NOW - days * DAY_MS, **fields), NOW
        )

    assert aged(14) is Grade.FRESH  # normal: 30 d
    assert aged(15) is Grade.AGING
    assert aged(30) is Grade.STALE
    assert aged(100, "decision") is Grade.AGING  # stable: 180 d
    assert aged(180, "decision") is Grade.STALE
    assert aged(7, volatility=Volatility.VOLATILE) is Grade.STALE
    # verified later than written: the age counts from the verification
    assert aged(400, verified=NOW - DAY_MS) is Grade.FRESH
    # a reason found by re-verification is stale whatever the age; expiry beats everything
    assert aged(0, stale_reason="code changed since verified: a.py") is Grade.STALE
    assert aged(0, valid_until=NOW) is Grade.EXPIRED
    assert aged(0, valid_until=NOW + 1) is Grade.FRESH


def test_stale_memories_are_marked_with_their_age_or_reason() -> None:
    old = memory("The runbook lives in docs/ops.md", type="reference", at=NOW - 40 * DAY_MS)
    assert stale_label(old, NOW) == "[unverified 40 d]"
    assert render_entry_line(old, NOW) == "The runbook lives in docs/ops.md [unverified 40 d]"
    marked = replace(old, verified=NOW, stale_reason="cited file gone: docs/ops.md")
    assert render_entry_line(marked, NOW).endswith("[cited file gone: docs/ops.md, verify]")
    assert stale_label(replace(old, verified=NOW), NOW) is None
    assert describe(old, NOW) == "stale, normal, verified 40 d ago"


def test_expired_memories_are_never_rendered_and_stay_stored() -> None:
    live = memory("Deploy with blue-green switching", id="live")
    gone = memory("Code freeze for the audit", id="gone", valid_until=NOW - 1)
    result = render_workspace_block(store(*[live, gone]), NOW)
    assert [e.id for e in result.rendered] == ["live"]
    assert "Code freeze" not in result.text
    assert [(o.memory_id, o.reason) for o in result.omitted] == [("gone", OmissionReason.EXPIRED)]
    assert is_expired(gone, NOW) and not is_expired(gone, NOW - 2)


def test_stale_memories_rank_lower() -> None:
    fresh = memory("Fresh reference kept current", id="fresh", type="reference", at=NOW - 20 * DAY_MS)
    # stronger by age alone (written later) but unverified for longer than its window
    stale = memory("Older reference never checked", id="stale", type="reference", at=NOW - 10 * DAY_MS)
    stale = replace(stale, verified=NOW - 31 * DAY_MS)
    ranked = render_workspace_block(store(*[stale, fresh]), NOW).rendered
    assert [e.id for e in ranked] == ["fresh", "stale"]
    ranked = render_workspace_block(store(*[replace(stale, verified=NOW), fresh]), NOW).rendered
    assert [e.id for e in ranked] == ["stale", "fresh"]


def test_volatility_scales_the_half_life() -> None:
    base = memory("Use blue-green deploys", type="decision")
    assert half_life_days(base) == 45.0
    assert half_life_days(replace(base, volatility=Volatility.VOLATILE)) == 22.5
    assert half_life_days(replace(base, volatility=Volatility.VOLATILE, reinforcement_count=1)) == 22.5 / 0.85


def test_a_merge_keeps_the_volatility_that_decays_slowest() -> None:
    """Found by the randomized property pass: an explicitly volatile copy won the merge and its
    group lost half its half-life (docs/decisions.md#d18)."""
    volatile = memory(
        "Always run the linter before committing",
        id="a",
        type="feedback",
        source="explicit",
        volatility=Volatility.VOLATILE,
        reinforcement_count=1,
    )
    plain = memory("Always run the linter before committing", id="b", type="feedback", source="explicit")
    result = dedupe([volatile, plain], NOW)
    (survivor,) = result.kept
    assert volatility_of(survivor) is Volatility.STABLE
    assert half_life_days(survivor) == 45.0 / 0.85**2
    # a group that agrees keeps what it says
    (both,) = dedupe([volatile, replace(plain, volatility=Volatility.VOLATILE)], NOW).kept
    assert both.volatility is Volatility.VOLATILE


def test_citation_parsing_and_hashing() -> None:
    assert parse_cite("src/a.py") == Citation(path="src/a.py")
    assert parse_cite("./src/a.py:12") == Citation(path="src/a.py", start_line=12, end_line=12)
    assert parse_cite("src/a.py:3-9") == Citation(path="src/a.py", start_line=3, end_line=9)
    assert parse_cite("src/a.py:9-3") is None
    assert parse_cite(":4") is None
    assert span_hash(["def f():", "    return 1"]) == span_hash(["def   f():", "\treturn 1  "])
    assert span_hash(["def f():"]) != span_hash(["def g():"])
    assert path_candidates("See src/importer.py and docs/ops.md, not 3.11") == (
        "src/importer.py",
        "docs/ops.md",
    )
    assert code_identifiers("import_rows calls loadCsv and parse() in the Importer") == (
        "import_rows",
        "loadCsv",
        "parse",
    )


def test_parse_until_is_the_end_of_the_day() -> None:
    until = parse_until("2027-03-01")
    assert until is not None and iso_from_ms(until) == "2027-03-02T00:00:00.000Z"
    assert parse_until("2027-02-30") is None and parse_until("tomorrow") is None


CITED = Citation(path="src/a.py", start_line=1, end_line=2, span_hash="h1")
NAMED = Citation(path="src/b.py", identifiers=("load_rows", "Importer"))


def _cited(**fields: Any) -> MemoryEntry:
    return memory("The importer loads rows", id="m", at=NOW - 3 * DAY_MS, cites=(CITED, NAMED), **fields)


def test_reverify_unchanged_moves_verified_to_now() -> None:
    entry = _cited()
    observed = (
        Observed(path="src/a.py", start_line=1, end_line=2, span_hash="h1"),
        Observed(path="src/b.py", present=("load_rows", "Importer")),
    )
    after, notes = reverify_store(store(*[entry]), observed, NOW)
    assert after.entries[0].verified == NOW and after.entries[0].stale_reason is None
    assert [(n.type, n.outcome, n.details) for n in notes] == [
        (EventType.MEMORY_FRESHNESS_CHANGED, Outcome.VERIFIED, {"verified": 1})
    ]
    # the same day again: nothing to write
    again, more = reverify_store(after, observed, NOW + 1000)
    assert again is after and more == ()


@pytest.mark.parametrize(
    ("observed_a", "observed_b", "reason"),
    [
        (
            Observed(path="src/a.py", start_line=1, end_line=2, span_hash="h2"),
            Observed(path="src/b.py", present=("load_rows", "Importer")),
            "code changed since verified: src/a.py:1-2",
        ),
        (
            Observed(path="src/a.py", start_line=1, end_line=2, span_hash="h1"),
            Observed(path="src/b.py", present=("Importer",)),
            "code changed since verified: src/b.py (load_rows gone)",
        ),
        (
            Observed(path="src/a.py", start_line=1, end_line=2, gone=True),
            Observed(path="src/b.py", present=("load_rows", "Importer")),
            "cited file gone: src/a.py:1-2",
        ),
    ],
)
def test_reverify_marks_changed_or_gone_code_stale_never_deletes(
    observed_a: Observed, observed_b: Observed, reason: str
) -> None:
    entry = _cited()
    before = store(*[entry, memory("Another memory", id="other")])
    after, notes = reverify_store(before, (observed_a, observed_b), NOW)
    assert len(after.entries) == 2 and after.entries[1] is before.entries[1]
    marked = after.entries[0]
    assert marked.stale_reason == reason and marked.verified is None
    assert grade(marked, NOW) is Grade.STALE
    assert [(n.outcome, n.details["reason"]) for n in notes] == [(Outcome.STALE, reason)]
    # deterministic: the same files give the same grades, and no second event
    again, more = reverify_store(after, (observed_a, observed_b), NOW + DAY_MS)
    assert again is after and more == ()
    # the code back as it was: verified again, with an event for the improvement
    good = (
        Observed(path="src/a.py", start_line=1, end_line=2, span_hash="h1"),
        Observed(path="src/b.py", present=("load_rows", "Importer")),
    )
    back, notes = reverify_store(after, good, NOW + DAY_MS)
    assert back.entries[0].stale_reason is None and back.entries[0].verified == NOW + DAY_MS
    assert Outcome.VERIFIED in [n.outcome for n in notes]


def test_reverify_leaves_a_memory_whose_citations_were_not_all_observed() -> None:
    entry = _cited()
    partial = (Observed(path="src/a.py", start_line=1, end_line=2, span_hash="other"),)
    after, notes = reverify_store(store(*[entry]), partial, NOW)
    assert after.entries[0] is entry and notes == ()


def test_a_span_without_a_baseline_takes_the_first_observation() -> None:
    entry = memory("Doc for a", id="m", cites=(Citation(path="a.py", start_line=2, end_line=2),))
    after, _ = reverify_store(
        store(*[entry]), (Observed(path="a.py", start_line=2, end_line=2, span_hash="s"),), NOW
    )
    cites = after.entries[0].cites
    assert cites is not None and cites[0].span_hash == "s" and after.entries[0].stale_reason is None


def test_a_memory_stated_again_is_verified_now() -> None:
    entry = replace(memory("Keep answers short", at=NOW - 300 * DAY_MS), stale_reason="x")
    again = confirmed(entry, NOW, Volatility.VOLATILE)
    assert again.verified == NOW and again.stale_reason is None and again.volatility is Volatility.VOLATILE


@pytest.mark.parametrize(
    ("text", "body"),
    [
        (
            "remember until 2027-03-01: the staging box listens on port 8080",
            "the staging box listens on port 8080",
        ),
        ("记住：2027-03-01之前 预发布环境使用8080端口", "预发布环境使用8080端口"),
        ("覚えて：2027-03-01まで ステージングは8080番ポートを使う", "ステージングは8080番ポートを使う"),
        (
            "기억해: 2027-03-01까지 스테이징 서버는 8080 포트를 사용한다",
            "스테이징 서버는 8080 포트를 사용한다",
        ),
    ],
)
def test_a_time_bound_in_a_triggered_memory_sets_valid_until(text: str, body: str) -> None:
    found = extract_explicit(text, NOW).entries
    assert [(e.text, e.valid_until) for e in found] == [(body, parse_until("2027-03-01"))]


def test_a_triggered_memory_without_a_bound_has_no_expiry() -> None:
    found = extract_explicit("remember: the deploy runs until midnight", NOW).entries
    assert [(e.text, e.valid_until) for e in found] == [("the deploy runs until midnight", None)]
