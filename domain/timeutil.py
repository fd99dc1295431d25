"""Pure conversions between ISO-8601 strings and epoch milliseconds. Nothing here reads the clock.

Accepted timestamps (docs/decisions.md#text-lengths-and-timestamps): ISO-8601 date-times with or
without fractional seconds and with ``Z``, ``+HH:MM`` or no offset (no offset means UTC), and ISO
dates (midnight UTC). Everything else is invalid and yields ``None`` where the reference would yield
``NaN``.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Final

from domain.text import lazy_compile

_ISO: Final = lazy_compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"(Z|z|[+-]\d{2}:?\d{2})?)?$"
)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: The instants ``iso_from_ms`` can express (years 1-9999); values outside are clamped.
_MIN_MS: Final = -62_135_596_800_000
_MAX_MS: Final = 253_402_300_799_999


# A memo over plain strings: a pure function of its arguments, so it may serve every caller of the
# process (the core keeps no other state between calls, docs/decisions.md#d14).
@lru_cache(maxsize=65536)
def parse_iso_ms(value: str) -> int | None:
    """Epoch milliseconds of an ISO-8601 string, or ``None`` when it is not a valid timestamp."""
    match = _ISO.match(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, frac, offset = match.groups()
    try:
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    ms = int((moment - _EPOCH).total_seconds()) * 1000
    if frac:
        ms += int(frac[:3].ljust(3, "0"))
    if offset and offset not in ("Z", "z"):
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        ms -= sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
    return ms


def timestamp_ms(value: object) -> float | None:
    """A finite number of ms from a number or an ISO string; ``None`` for anything else.
    Booleans are not numbers (``Number.isFinite(true)`` is false)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        parsed = parse_iso_ms(value)
        return None if parsed is None else float(parsed)
    return None


def iso_from_ms(ms: int | float) -> str:
    """``new Date(ms).toISOString()``: millisecond precision, ``Z`` suffix."""
    whole = math.floor(ms) if math.isfinite(ms) else 0
    whole = max(_MIN_MS, min(_MAX_MS, whole))
    seconds, millis = divmod(whole, 1000)
    moment = _EPOCH + timedelta(seconds=seconds)
    date = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    return f"{date}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{millis:03d}Z"


def utc_day(ms: int | float) -> tuple[int, int, int]:
    """The UTC calendar day (year, month, day) of an epoch-ms instant."""
    whole = math.floor(ms) if math.isfinite(ms) else 0
    moment = _EPOCH + timedelta(seconds=max(_MIN_MS, min(_MAX_MS, whole)) // 1000)
    return (moment.year, moment.month, moment.day)
