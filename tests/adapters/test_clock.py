"""The clock adapter: WORKMEM_NOW or real UTC time."""

from __future__ import annotations

import time

import pytest

from adapters.clock import ClockError, now_ms, parse_now


def test_real_time_without_override() -> None:
    before = time.time_ns() // 1_000_000
    value = now_ms({})
    after = time.time_ns() // 1_000_000
    assert before <= value <= after


def test_empty_override_means_real_time() -> None:
    assert abs(now_ms({"WORKMEM_NOW": "  "}) - time.time() * 1000) < 5_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1777636800000", 1_777_636_800_000),
        ("  1777636800000 ", 1_777_636_800_000),
        ("0", 0),
        ("2026-05-01T12:00:00Z", 1_777_636_800_000),
        ("2026-05-01T12:00:00.250Z", 1_777_636_800_250),
        ("2026-05-01T14:00:00+02:00", 1_777_636_800_000),
        ("2026-05-01", 1_777_593_600_000),
    ],
)
def test_override_formats(value: str, expected: int) -> None:
    assert now_ms({"WORKMEM_NOW": value}) == expected
    assert parse_now(value) == expected


@pytest.mark.parametrize(
    "value", ["yesterday", "2026-13-01", "1.5e12", "May 1 2026", "2026-05-01T12:00:00Zjunk\nx"]
)
def test_invalid_override_is_a_one_line_error(value: str) -> None:
    with pytest.raises(ClockError) as info:
        now_ms({"WORKMEM_NOW": value})
    message = str(info.value)
    assert "WORKMEM_NOW" in message
    assert "\n" not in message


def test_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKMEM_NOW", "2026-05-01T12:00:00Z")
    assert now_ms() == 1_777_636_800_000


def test_clock_error_is_a_value_error() -> None:
    assert issubclass(ClockError, ValueError)
