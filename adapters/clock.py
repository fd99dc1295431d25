"""The one place wall-clock time enters workmem.

``WORKMEM_NOW`` fixes the clock for tests, demos and reproducible runs: an ISO-8601 timestamp
(``2026-05-01T12:00:00Z``, ``2026-05-01``, ``2026-05-01T14:00:00+02:00``) or epoch milliseconds
(``1777636800000``). Unset or empty means the real UTC time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Final

from domain.text import lazy_compile
from domain.timeutil import parse_iso_ms

NOW_ENV: Final = "WORKMEM_NOW"
_EPOCH_MS: Final = lazy_compile(r"^[+-]?\d{1,16}$")


class ClockError(ValueError):
    """``WORKMEM_NOW`` holds something that is neither ISO-8601 nor epoch milliseconds."""


def parse_now(value: str) -> int:
    """Epoch ms of a ``WORKMEM_NOW`` value; raises :class:`ClockError` with a one-line message."""
    text = value.strip()
    if _EPOCH_MS.match(text):
        return int(text)
    parsed = parse_iso_ms(text)
    if parsed is None:
        shown = text[:60].encode("unicode_escape").decode("ascii")
        raise ClockError(f"{NOW_ENV} must be an ISO-8601 time or epoch milliseconds, got '{shown}'")
    return parsed


def real_now_ms() -> int:
    return time.time_ns() // 1_000_000


def now_ms(env: Mapping[str, str] | None = None) -> int:
    """The current time in epoch milliseconds: ``WORKMEM_NOW`` when set and non-empty, else real UTC."""
    source = os.environ if env is None else env
    value = source.get(NOW_ENV, "")
    if value.strip():
        return parse_now(value)
    return real_now_ms()
