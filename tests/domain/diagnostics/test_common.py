"""The helpers every report shares (:mod:`domain.diagnostics.common`): JavaScript's ``toFixed``, the
redaction of absolute paths, shortened previews and event details."""

from __future__ import annotations

import pytest

from domain.diagnostics import clean_text, format_details, redact_absolute_paths, shorten, to_fixed


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (19.0, 1, "19.0"),
        (6.25, 1, "6.3"),
        (0.125, 2, "0.13"),
        (4.5, 3, "4.500"),
        (1.0005, 3, "1.000"),
        (-0.04, 1, "-0.0"),
        (-0.0, 1, "0.0"),
        (0.0, 1, "0.0"),
        (40.0, 1, "40.0"),
    ],
)
def test_to_fixed_matches_javascript(value: float, digits: int, expected: str) -> None:
    """JS rounds the exact binary value half away from zero (6.25 -> 6.3; 1.0005 is below the tie)."""
    assert to_fixed(value, digits) == expected


def test_redact_absolute_paths() -> None:
    assert redact_absolute_paths("Config at /home/dev/app/config.ts now") == "Config at <path> now"
    assert redact_absolute_paths("/Users/me/x") == "<path>"
    assert redact_absolute_paths('path="/var/log/app.log",') == 'path="<path>",'
    assert redact_absolute_paths("see (/opt/tool/bin) and /a/b /c/d") == "see (<path>) and <path> <path>"
    assert redact_absolute_paths("use src/app.ts and ~/.config/x and /single") == (
        "use src/app.ts and ~/.config/x and /single"
    )
    assert clean_text("password: sushi at /tmp/x/y") == "password: [REDACTED] at <path>"
    assert clean_text("password: sushi at /tmp/x/y", raw=True) == "password: sushi at /tmp/x/y"


def test_shorten_and_details() -> None:
    assert shorten("  a \n b  ") == "a b"
    assert shorten("x" * 130) == "x" * 119 + "…"
    assert shorten("x" * 120) == "x" * 120
    assert format_details({}) == "none"
    assert format_details({"a": True, "b": None, "c": 2.0, "d": ["x", "y"], "e": 1.5}) == (
        "a=true b=null c=2 d=x|y e=1.5"
    )
