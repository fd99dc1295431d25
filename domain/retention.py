"""Strength-based forgetting: initial strength, half-life, effective age with persistent dormancy,
and reinforcement (docs/decisions.md#retention-strength-and-decay, docs/decisions.md#d3,
docs/decisions.md#d8).

    strength = initial x 2 ** (-effective_age_days / half_life_days)
    initial  = TYPE_FACTOR x SOURCE_FACTOR x USER_IMPORTANCE_FACTOR
    half_life = 45 x VOLATILITY_FACTOR / 0.85 ** min(reinforcements, 6)  (x 2 for ``high`` importance)

``high`` importance weighs 2.0 (the reference: 1.5) and decays at half the speed (docs/decisions.md#d20),
both numbers of the :class:`Tuning`; the volatility factor is docs/decisions.md#d18.

Dormancy (docs/decisions.md#d3): while a workspace is unused for more than 14 days, time passes at
a quarter of its speed for its memories. Closed dormant stretches are kept on the store
(``dormantSpans``) so the discount survives the next session; the stretch still open
(``lastActivityAt + 14 d`` up to now) is discounted as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

import msgspec
from msgspec.structs import replace

from domain.enums import MemoryType, Volatility
from domain.freshness import volatility_of
from domain.limits import DAY_MS, HOUR_MS, RETENTION_TYPE_MAX, DormancyLimits, LongTermLimits
from domain.model import DormantSpan, MemoryEntry, WorkspaceStore
from domain.timeutil import iso_from_ms, parse_iso_ms, timestamp_ms, utc_day

BASE_HALF_LIFE_DAYS: Final = 45.0
REINFORCEMENT_HALFLIFE_FACTOR: Final = 0.85
REINFORCEMENT_MAX_COUNT: Final = 6
REINFORCEMENT_MIN_INTERVAL_MS: Final = HOUR_MS

TYPE_FACTOR: Final[dict[str, float]] = {"reference": 1.0, "project": 1.25, "feedback": 2.25, "decision": 2.5}
SOURCE_FACTOR: Final[dict[str, float]] = {"compaction": 1.0, "manual": 1.4, "explicit": 2.0}
USER_IMPORTANCE_FACTOR: Final[dict[str, float]] = {"low": 0.7, "normal": 1.0, "high": 2.0}
#: ``high`` importance: its initial factor and how much longer its half-life is (docs/decisions.md#d20).
HIGH_IMPORTANCE_FACTOR: Final = USER_IMPORTANCE_FACTOR["high"]
HIGH_IMPORTANCE_HALF_LIFE: Final = 2.0
#: The half-life per volatility (docs/decisions.md#d18): what may stop being true fades sooner.
VOLATILITY_FACTOR: Final[dict[Volatility, float]] = {
    Volatility.STABLE: 1.0,
    Volatility.NORMAL: 1.0,
    Volatility.VOLATILE: 0.5,
}

_DORMANT_AFTER_MS: Final = DormancyLimits.WORKSPACE_DORMANT_AFTER_DAYS * DAY_MS
_DORMANT_SAVED: Final = 1.0 - DormancyLimits.DORMANT_DECAY_MULTIPLIER  # 0.75 of dormant time is forgiven


class Tuning(msgspec.Struct, frozen=True, kw_only=True):
    """The numbers that shape forgetting and the block, as one value (docs/simulation.md).

    Every operation takes the defaults below, which are the constants above and the limits of
    ``domain.model``; only the simulator passes other values, to ask "what if". Nothing here is
    written to a store: a store read back later decays with the defaults again."""

    half_life_days: float = BASE_HALF_LIFE_DAYS
    reinforcement_factor: float = REINFORCEMENT_HALFLIFE_FACTOR
    reinforcement_cap: int = REINFORCEMENT_MAX_COUNT
    dormant_after_days: float = float(DormancyLimits.WORKSPACE_DORMANT_AFTER_DAYS)
    dormant_multiplier: float = DormancyLimits.DORMANT_DECAY_MULTIPLIER
    type_caps: dict[MemoryType, int] = msgspec.field(default_factory=lambda: dict(RETENTION_TYPE_MAX))
    global_cap: int = LongTermLimits.MAX_ENTRIES
    char_budget: int = LongTermLimits.MAX_RENDERED_CHARS
    max_stored_active: int = LongTermLimits.MAX_STORED_ACTIVE
    high_importance_factor: float = HIGH_IMPORTANCE_FACTOR
    high_importance_half_life: float = HIGH_IMPORTANCE_HALF_LIFE
    volatility_factors: dict[Volatility, float] = msgspec.field(
        default_factory=lambda: dict(VOLATILITY_FACTOR)
    )

    @property
    def dormant_after_ms(self) -> float:
        return self.dormant_after_days * DAY_MS


#: Today's parameters: what every host runs with.
DEFAULT_TUNING: Final = Tuning()


def is_high_importance(entry: MemoryEntry) -> bool:
    return entry.user_importance == "high"


def base_strength(entry: MemoryEntry) -> float:
    """Type x source x the factor of a ``low`` or ``normal`` importance (1.0 for ``high``, whose
    factor is the tuning's); unknown keys count as 1.0."""
    # StrEnum members hash and compare like their values, so they index these tables directly
    # (``.value`` goes through the slower enum descriptor on this hot path).
    importance = entry.user_importance
    factor = USER_IMPORTANCE_FACTOR.get(importance, 1.0) if importance not in (None, "high") else 1.0
    return TYPE_FACTOR.get(entry.type, 1.0) * SOURCE_FACTOR.get(entry.source, 1.0) * factor


def initial_strength(entry: MemoryEntry, tuning: Tuning = DEFAULT_TUNING) -> float:
    """Type x source x user-importance factor (``high``: the tuning's); unknown keys count as 1.0.
    Confidence is ignored."""
    base = base_strength(entry)
    return base * tuning.high_importance_factor if is_high_importance(entry) else base


def reinforcement_count(entry: MemoryEntry) -> int:
    return entry.reinforcement_count if entry.reinforcement_count is not None else 0


def half_life_days(entry: MemoryEntry, tuning: Tuning = DEFAULT_TUNING) -> float:
    """45 days times the volatility factor, lengthened by 1/0.85 per reinforcement, counting at most 6,
    and doubled for ``high`` importance (by default)."""
    count = min(reinforcement_count(entry), tuning.reinforcement_cap)
    factor = tuning.volatility_factors.get(volatility_of(entry), 1.0)
    days = tuning.half_life_days * factor / tuning.reinforcement_factor**count
    return days * tuning.high_importance_half_life if is_high_importance(entry) else days


def retention_start_ms(entry: MemoryEntry, now_ms: float) -> float:
    """When decay started: ``retentionClock`` if it is a finite number, else ``updatedAt``
    (falling back to ``createdAt`` only when ``updatedAt`` is missing); an unparseable value means
    ``now`` (age 0), never NaN."""
    clock = timestamp_ms(entry.retention_clock) if entry.retention_clock is not None else None
    if clock is not None and not isinstance(entry.retention_clock, str):
        return clock
    fallback = entry.updated_at if entry.updated_at is not None else entry.created_at
    parsed = parse_iso_ms(fallback) if isinstance(fallback, str) else None
    return float(parsed) if parsed is not None else float(now_ms)


class Dormancy(NamedTuple):
    """The dormant stretches that apply at one instant: closed spans plus the open one, if any,
    as sorted disjoint ``(start_ms, end_ms)`` intervals, and the share of dormant time forgiven
    (``1 - dormant multiplier``)."""

    spans: tuple[tuple[float, float], ...]
    saved: float = _DORMANT_SAVED


NO_DORMANCY: Final = Dormancy(())


def open_dormant_start(
    last_activity_at: str | None, now_ms: float, after_ms: float = _DORMANT_AFTER_MS
) -> float | None:
    """Start of the dormant stretch still open at ``now_ms`` (``lastActivityAt + 14 d``), if any."""
    if not last_activity_at:
        return None
    last = parse_iso_ms(last_activity_at)
    if last is None:
        return None
    start = last + after_ms
    return float(start) if now_ms > start else None


def dormancy_at(store: WorkspaceStore, now_ms: float, tuning: Tuning = DEFAULT_TUNING) -> Dormancy:
    """Every dormant stretch of ``store`` as seen at ``now_ms``."""
    spans = sorted((float(s.start), float(s.end)) for s in store.dormant_spans if s.end > s.start)
    open_start = open_dormant_start(store.last_activity_at, now_ms, tuning.dormant_after_ms)
    if open_start is not None:
        spans.append((open_start, float(now_ms)))
        spans.sort()
    merged: list[tuple[float, float]] = []
    for start, end in spans:  # a union of intervals, so no dormant millisecond counts twice
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return Dormancy(tuple(merged), 1.0 - tuning.dormant_multiplier)


def effective_age_days(start_ms: float, now_ms: float, dormancy: Dormancy = NO_DORMANCY) -> float:
    """Wall age of ``[start_ms, now_ms]`` in days, with every dormant millisecond counted at 0.25
    (the dormant multiplier). Always within ``[0.25 x wall, wall]``."""
    wall_ms = max(0.0, now_ms - start_ms)
    if wall_ms == 0.0:
        return 0.0
    dormant_ms = 0.0
    for span_start, span_end in dormancy.spans:
        overlap = min(now_ms, span_end) - max(start_ms, span_start)
        if overlap > 0:
            dormant_ms += overlap
    dormant_ms = min(dormant_ms, wall_ms)
    return (wall_ms - dormancy.saved * dormant_ms) / DAY_MS


def strength(
    entry: MemoryEntry, now_ms: float, dormancy: Dormancy = NO_DORMANCY, tuning: Tuning = DEFAULT_TUNING
) -> float:
    """Current retention strength: finite and ``>= 0`` for any stored values."""
    start = retention_start_ms(entry, now_ms)
    age = effective_age_days(start, now_ms, dormancy)
    value = initial_strength(entry, tuning) * 2.0 ** (-age / half_life_days(entry, tuning))
    return max(0.0, value) if math.isfinite(value) else 0.0


def _truthy_ms(value: int | float | None) -> float | None:
    """JavaScript truthiness of a timestamp: ``0``, ``NaN`` and missing are falsy."""
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    if number == 0.0 or math.isnan(number):
        return None
    return number


def can_reinforce(
    entry: MemoryEntry, session_id: str | None, now_ms: float, cap: int = REINFORCEMENT_MAX_COUNT
) -> bool:
    """The v1.5.2 guard order (docs/decisions.md#d8): same session, same UTC day, under one hour,
    count >= 6. The same-session guard only applies to real session ids (docs/decisions.md#s15)."""
    if session_id is not None and entry.last_reinforced_session_id == session_id:
        return False
    last = _truthy_ms(entry.last_reinforced_at)
    if last is not None:
        if math.isfinite(last) and utc_day(last) == utc_day(now_ms):
            return False
        if now_ms - last < REINFORCEMENT_MIN_INTERVAL_MS:
            return False
    return reinforcement_count(entry) < cap


def reinforce(
    entry: MemoryEntry, session_id: str | None, now_ms: int, tuning: Tuning = DEFAULT_TUNING
) -> MemoryEntry:
    """Reinforce ``entry`` if the guards allow it: +1 count, the clock restarts at ``now_ms``.
    When blocked, the very same object is returned."""
    if not can_reinforce(entry, session_id, now_ms, tuning.reinforcement_cap):
        return entry

    return replace(
        entry,
        reinforcement_count=reinforcement_count(entry) + 1,
        last_reinforced_at=now_ms,
        last_reinforced_session_id=session_id,
        retention_clock=now_ms,
    )


def merge_spans(spans: Sequence[DormantSpan]) -> tuple[DormantSpan, ...]:
    """Sort, merge overlapping spans, and keep at most 64 by folding the oldest two together."""
    ordered = sorted((s for s in spans if s.end > s.start), key=lambda s: (s.start, s.end))
    merged: list[DormantSpan] = []
    for span in ordered:
        if merged and span.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = DormantSpan(start=last.start, end=max(last.end, span.end))
        else:
            merged.append(span)
    while len(merged) > DormancyLimits.MAX_DORMANT_SPANS:
        # Fold the two oldest spans into one of their combined length, placed at the start of the
        # first. An entry that started before both keeps its discount exactly; one that started
        # inside them loses part of it, never gains: effective age never decreases
        # (docs/decisions.md#d3).
        first, second = merged[0], merged[1]
        length = (first.end - first.start) + (second.end - second.start)
        merged[:2] = [DormantSpan(start=first.start, end=first.start + length)]
    return tuple(merged)


def closing_dormant_span(
    store: WorkspaceStore, now_ms: int, tuning: Tuning = DEFAULT_TUNING
) -> DormantSpan | None:
    """The span to record when activity resumes at ``now_ms``: ``[lastActivityAt + 14 d, now]``
    when the workspace has been idle for more than 14 days, else ``None``."""
    start = open_dormant_start(store.last_activity_at, now_ms, tuning.dormant_after_ms)
    if start is None:
        return None
    return DormantSpan(start=int(start), end=int(now_ms))


def mark_activity(
    store: WorkspaceStore, now_ms: int, tuning: Tuning = DEFAULT_TUNING
) -> tuple[WorkspaceStore, DormantSpan | None]:
    """Record activity at ``now_ms``: first close any dormant stretch (docs/decisions.md#d3), then
    stamp ``lastActivityAt``. Returns the new store and the span recorded, if any."""

    span = closing_dormant_span(store, now_ms, tuning)
    spans = merge_spans((*store.dormant_spans, span)) if span is not None else store.dormant_spans
    return replace(store, dormant_spans=spans, last_activity_at=iso_from_ms(now_ms)), span


def dormant_days(store: WorkspaceStore, now_ms: float) -> float:
    """Days since the last recorded activity (0 when unknown); used by diagnostics."""
    if not store.last_activity_at:
        return 0.0
    last = parse_iso_ms(store.last_activity_at)
    if last is None:
        return 0.0
    return max(0.0, (now_ms - last) / DAY_MS)


SOURCE_PRIORITY: Final[dict[str, int]] = {"explicit": 3, "manual": 2}


def source_priority(entry: MemoryEntry) -> int:
    """explicit 3, manual 2, anything else 1."""
    return SOURCE_PRIORITY.get(entry.source, 1)
