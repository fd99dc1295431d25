"""The held-out credential set (``tests/reliability/heldout.py``): its shape, the leak detector the
door measurements rely on, and no planting leaking through redaction or any door."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.heldout import (
    DOORS,
    HELDOUT,
    NEGATIVES,
    POSITIVES,
    HeldOutCase,
    door_leaks,
    false_positives,
    leaked,
    redaction_leaks,
)


def test_the_set_is_large_and_every_secret_is_in_its_text() -> None:
    assert len(POSITIVES) >= 100 and NEGATIVES
    assert {c.lang for c in POSITIVES} == {"en", "zh", "ja", "ko"}
    assert {c.kind for c in HELDOUT} == {"format", "prose", "leadin", "entropy", "negative"}
    assert all(c.secret and c.secret in c.text for c in POSITIVES)
    assert len({c.secret for c in POSITIVES}) == len(POSITIVES)


def test_the_detector_finds_whole_cut_and_short_secrets_and_ignores_digits_inside_words() -> None:
    long = HeldOutCase("format", "long", "en", "Zq8xW3vN5mK7pL2rT9yB4cF6hJ1dG0sA", "")
    pin = HeldOutCase("prose", "pin", "en", "4821", "")
    assert leaked([long, pin], ["x Zq8xW3vN5mK7pL2rT9yB4cF6h (cut)"]) == ["long"]
    assert leaked([long, pin], ["id a34821f, at 09:00:04821Z"]) == []
    assert leaked([long, pin], ["the PIN is 4821."]) == ["pin"]
    assert leaked([long, pin], ["Zq8xW3vN5mK7pL2"]) == []


def test_no_held_out_secret_survives_redaction_and_no_negative_changes() -> None:
    """docs/reliability.md, "The held-out set": 108 of 131 leaked before the rule corpus."""
    assert redaction_leaks() == []
    assert false_positives() == []


@pytest.mark.parametrize("door", list(DOORS))
def test_no_held_out_secret_leaks_through_any_door(door: str, tmp_path: Path) -> None:
    if door == "MCP remember":
        pytest.importorskip("mcp")
    assert door_leaks(door, tmp_path) == []
