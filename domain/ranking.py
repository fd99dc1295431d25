"""The retention order: every active memory strongest first, as render, normalisation and the
diagnostics rank them (docs/decisions.md#retention-strength-and-decay, docs/decisions.md#s10).

:func:`retention_sort_key` states the order; :func:`sort_by_retention` computes it for a whole store
at once, with the arithmetic of :func:`domain.retention.strength` a column at a time, and files what
does not depend on the instant in the caller's cache (docs/performance.md, "Simulation";
docs/decisions.md#d14).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from domain.caches import Caches, Ranking, StaticParts
from domain.enums import Volatility
from domain.freshness import STALE_RANK_FACTOR, WINDOW_DAYS, rank_factor, verified_ms, volatility_of
from domain.limits import DAY_MS
from domain.model import MemoryEntry
from domain.retention import (
    DEFAULT_TUNING,
    NO_DORMANCY,
    Dormancy,
    Tuning,
    base_strength,
    is_high_importance,
    reinforcement_count,
    retention_start_ms,
    source_priority,
    strength,
)
from domain.timeutil import parse_iso_ms


def retention_sort_key(
    entry: MemoryEntry, now_ms: float, dormancy: Dormancy = NO_DORMANCY, tuning: Tuning = DEFAULT_TUNING
) -> tuple[float, int, float, str]:
    """Sort key for "strongest first": strength desc, source priority desc, createdAt desc, id asc.

    Unlike the reference comparator (docs/decisions.md#s10), this is a total order: an invalid
    ``createdAt`` sorts as the oldest instead of making the comparison undefined, and ids compare by
    code point."""
    created = parse_iso_ms(entry.created_at)
    created_key = -float(created) if created is not None else math.inf
    value = strength(entry, now_ms, dormancy, tuning) * rank_factor(entry, now_ms)
    return (-value, -source_priority(entry), created_key, entry.id)


#: What the retention order needs of an entry that does not depend on ``now``: the entry, its
#: retention start (``None`` when it must be worked out at ``now``), strength without the tuning's
#: ``high`` importance factor, reinforcement count and volatility, whether it is of ``high``
#: importance (whose factors are the tuning's, docs/decisions.md#d20), the tie-breakers of
#: :func:`retention_sort_key` (source priority, ``createdAt``, id) negated as the sort wants them,
#: and from when it ranks as stale (docs/decisions.md#d18). Filed per entry object in the caller's
#: cache (docs/decisions.md#d14): every normalisation and render sorts the whole store again, and
#: the entries are the same frozen objects from one operation to the next.
def _static_parts(entry: MemoryEntry) -> StaticParts:
    clock = entry.retention_clock
    start = float(clock) if (type(clock) is int or type(clock) is float) and math.isfinite(clock) else None
    created = parse_iso_ms(entry.created_at)
    volatility = volatility_of(entry)
    return (
        entry,
        start,
        base_strength(entry),
        (reinforcement_count(entry), volatility),
        is_high_importance(entry),
        (-source_priority(entry), -float(created) if created is not None else math.inf, entry.id),
        _stale_from(entry, volatility),
    )


def _stale_from(entry: MemoryEntry, volatility: Volatility) -> float:
    """From when ``entry`` ranks as stale (docs/decisions.md#d18): minus infinity when re-verification
    marked it, infinity when it has no valid verification time, else its verification plus its
    window. Expired entries are never ranked by the render."""
    since = verified_ms(entry)
    if entry.stale_reason:
        return -math.inf
    if since is None:
        return math.inf
    return since + WINDOW_DAYS[volatility] * DAY_MS


class _HalfLives(dict[tuple[int, Volatility], float]):
    """Half-life per reinforcement count and volatility under one tuning:
    ``base x volatility factor / factor ** min(count, cap)``, the expression of
    :func:`half_life_days`, worked out once per pair."""

    def __init__(self, tuning: Tuning) -> None:
        super().__init__()
        self.tuning = tuning

    def __missing__(self, key: tuple[int, Volatility]) -> float:
        tuning = self.tuning
        count, volatility = key
        base = tuning.half_life_days * tuning.volatility_factors.get(volatility, 1.0)
        value = self[key] = base / tuning.reinforcement_factor ** min(count, tuning.reinforcement_cap)
        return value


def _negative_powers(
    parts: Sequence[StaticParts], now: float, dormancy: Dormancy, tuning: Tuning
) -> list[float]:
    """Minus the strength of each entry at ``now``, with the arithmetic of :func:`strength`, step for
    step (equal floats; a property test holds the two together). Without dormant stretches, one
    comprehension does it."""
    half_lives = _HalfLives(tuning)
    if any(p[4] for p in parts):  # ``high`` importance: the tuning's factors (docs/decisions.md#d20)
        factor, longer = tuning.high_importance_factor, tuning.high_importance_half_life
        terms = [
            (start, base * factor, half_lives[key] * longer, stale_from)
            if high
            else (start, base, half_lives[key], stale_from)
            for _, start, base, key, high, _, stale_from in parts
        ]
    else:
        terms = [
            (start, base, half_lives[key], stale_from) for _, start, base, key, _, _, stale_from in parts
        ]
    spans = dormancy.spans
    inf = math.inf
    stale = STALE_RANK_FACTOR
    if not spans and None not in [t[0] for t in terms]:
        # the wall age max(0, now - start), of which nothing is dormant
        return [
            (-value if 0.0 < (value := initial * 2.0 ** (-(wall / DAY_MS) / life)) < inf else -0.0)
            * (stale if now >= stale_from else 1.0)
            for start, initial, life, stale_from in terms
            for wall in (now - start if now > start else 0.0,)  # type: ignore[operator]  # no start is None
        ]
    saved = dormancy.saved
    powers: list[float] = []
    for (entry, *_), (start, initial, life, stale_from) in zip(parts, terms, strict=True):
        if start is None:
            start = retention_start_ms(entry, now)
        wall = now - start
        if not wall > 0.0:  # max(0.0, wall), also for NaN
            wall = 0.0
        if wall == 0.0:
            age = 0.0
        elif spans:
            dormant = 0.0
            for span_start, span_end in spans:
                overlap = min(now, span_end) - max(start, span_start)
                if overlap > 0:
                    dormant += overlap
            age = (wall - saved * min(dormant, wall)) / DAY_MS
        else:
            age = (wall - saved * 0.0) / DAY_MS
        value = initial * 2.0 ** (-age / life)
        power = -value if 0.0 < value < inf else -0.0  # max(0.0, value) when finite, else 0.0
        powers.append(power * stale if now >= stale_from else power)
    return powers


def sort_by_retention(
    entries: Sequence[MemoryEntry],
    now_ms: float,
    dormancy: Dormancy = NO_DORMANCY,
    tuning: Tuning = DEFAULT_TUNING,
    caches: Caches | None = None,
) -> list[MemoryEntry]:
    """``entries`` strongest first (stable, total): the order of :func:`retention_sort_key`.

    Every normalisation and every render sorts the whole store, so the key is computed here from
    parts filed per entry in ``caches`` (a fresh cache when none is given), a column at a time
    (:func:`_negative_powers`). A step often ranks the very entries it just ranked, at the same
    instant (a normalisation that sorted the store, then the render of the store it wrote): ranking
    the entries of the cache's last ranking again, in its order, at its instant, returns it (the
    entries are recognised by identity). See docs/performance.md."""
    if caches is None:
        caches = Caches()
    last = caches.last_ranking
    if (
        last is not None
        and last.at == now_ms
        and last.dormancy == dormancy
        and last.tuning is tuning
        and len(last.ranked) == len(entries)
        and all(map(operator.is_, last.ranked, entries))
    ):
        return list(last.ranked)
    table = caches.static.table
    parts = [table.get(id(entry)) for entry in entries]
    statics: list[StaticParts] = [
        hit[1] if hit is not None and hit[0] is entry else caches.static.put(entry, _static_parts(entry))
        for hit, entry in zip(parts, entries, strict=True)
    ]
    powers = _negative_powers(statics, float(now_ms), dormancy, tuning)
    # positions are unique, so the comparison never reaches beyond them
    keyed = list(zip(powers, [p[5] for p in statics], range(len(statics)), strict=True))
    keyed.sort()
    ranked = [entries[item[2]] for item in keyed]
    caches.last_ranking = Ranking(now_ms, dormancy, tuning, ranked)
    return list(ranked)
