"""The merge driver's core (docs/decisions.md#d17a): memory files merge field by field."""

from __future__ import annotations

from typing import Final

from returns.result import Failure, Success

from domain.projection.document import parse
from domain.projection.merge import merge_files, merge_lines

PATH: Final = "memories/decision/mem_1_abcdef.md"
BASE: Final = """\
---
id: mem_1_abcdef
type: decision
scope: team
status: active
created: 2026-05-01T09:00:00.000Z
source: manual
identity: 66689d291e164caf
---
Use exponential backoff with jitter for HTTP retries
"""


def _with(text: str, *changes: tuple[str, str]) -> str:
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    return text


def test_disjoint_fields_both_take_their_side() -> None:
    ours = _with(BASE, ("status: active", "status: forgotten"))
    theirs = _with(BASE, ("scope: team", "scope: personal"))
    merged = merge_files(BASE, ours, theirs, PATH)
    assert merged.conflicts == 0
    assert merged.text == _with(
        BASE, ("status: active", "status: forgotten"), ("scope: team", "scope: personal")
    )


def test_fields_both_sides_changed_are_decided_by_their_meaning() -> None:
    base = _with(
        BASE, ("identity:", "verified: 2026-05-01\nvalid_until: 2027-01-01\ncites: [a.py:1]\nidentity:")
    )
    ours = _with(
        base,
        ("status: active", "status: superseded"),
        ("verified: 2026-05-01", "verified: 2026-07-01"),
        ("valid_until: 2027-01-01", "valid_until: 2026-12-01"),
        ("source: manual", "source: manual\nsupersedes: [mem_a]"),
        ("cites: [a.py:1]", "cites: [a.py:1, b.py:2]"),
    )
    theirs = _with(
        base,
        ("status: active", "status: forgotten"),
        ("verified: 2026-05-01", "verified: 2026-06-01"),
        ("valid_until: 2027-01-01", "valid_until: 2027-06-01"),
        ("source: manual", "source: manual\nsupersedes: [mem_b]"),
        ("cites: [a.py:1]", "cites: [c.py:3]"),
    )
    merged = merge_files(base, ours, theirs, PATH)
    assert merged.conflicts == 0
    found = parse(merged.text, PATH)
    assert isinstance(found, Success)
    file = found.unwrap().file
    assert file.status.value == "forgotten"  # active < superseded < forgotten
    assert file.supersedes == ("mem_a", "mem_b")
    assert dict(file.extras) == {
        "verified": "2026-07-01",  # the later
        "valid_until": "2026-12-01",  # the earlier
        "cites": ("a.py:1", "b.py:2", "c.py:3"),  # a list: the union
    }


def test_a_body_edited_on_one_side_merges_and_the_identity_follows_the_text() -> None:
    ours = _with(BASE, ("HTTP retries", "HTTP retries, capped at 5 attempts"))
    theirs = _with(BASE, ("status: active", "status: forgotten"))
    merged = merge_files(BASE, ours, theirs, PATH)
    assert merged.conflicts == 0
    assert "capped at 5 attempts" in merged.text and "status: forgotten" in merged.text
    assert "identity: 66689d291e164caf" not in merged.text


def test_a_true_body_conflict_is_written_with_markers_and_sync_quarantines_it() -> None:
    ours = _with(BASE, ("HTTP retries", "HTTP retries, capped at 5 attempts"))
    theirs = _with(BASE, ("HTTP retries", "HTTP retries, capped at 3 attempts"))
    merged = merge_files(BASE, ours, theirs, PATH)
    assert merged.conflicts == 1
    assert (
        "<<<<<<< ours\nUse exponential backoff with jitter for HTTP retries, capped at 5 attempts\n======="
        in (merged.text)
    )
    found = parse(merged.text, PATH)
    assert isinstance(found, Failure) and found.failure().reason == "conflict_markers"


def test_a_field_without_a_rule_that_both_sides_changed_is_a_conflict() -> None:
    ours = _with(BASE, ("type: decision", "type: project"))
    theirs = _with(BASE, ("type: decision", "type: reference"))
    merged = merge_files(BASE, ours, theirs, PATH)
    assert merged.conflicts == 1
    assert "<<<<<<< ours\ntype: project\n=======\ntype: reference\n>>>>>>> theirs" in merged.text


def test_both_sides_adding_the_same_file_is_clean_and_different_texts_conflict() -> None:
    assert merge_files("", BASE, BASE, PATH).conflicts == 0
    other = _with(BASE, ("HTTP retries", "gRPC retries"))
    assert merge_files("", BASE, other, PATH).conflicts == 1


def test_a_side_that_is_not_a_memory_file_is_merged_as_lines() -> None:
    broken = "not a memory\n" + BASE
    merged = merge_files(BASE, broken, BASE, PATH)
    assert (merged.text, merged.conflicts) == (broken, 0)


def test_line_merge() -> None:
    assert merge_lines(list("abcde"), list("aBcde"), list("abcDe")) == (list("aBcDe"), 0)
    base = ["a", "b", "c"]
    merged, conflicts = merge_lines(base, ["a", "X", "c"], ["a", "Y", "c"])
    assert conflicts == 1 and merged == ["a", "<<<<<<< ours", "X", "=======", "Y", ">>>>>>> theirs", "c"]
    assert merge_lines(base, ["a", "c"], ["a", "c"]) == (["a", "c"], 0)


def test_a_pin_set_on_one_side_is_kept() -> None:
    pinned = _with(BASE, ("source: manual\n", "source: manual\npinned: true\n"))
    theirs = _with(BASE, ("scope: team", "scope: personal"))
    merged = merge_files(BASE, pinned, theirs, PATH)
    assert merged.conflicts == 0
    assert merged.text == _with(pinned, ("scope: team", "scope: personal"))
