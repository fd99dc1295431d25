"""The retention order: every active memory strongest first, as render, normalisation and the
diagnostics rank them (docs/decisions.md#retention-strength-and-decay, docs/decisions.md#s10).

:func:`retention_sort_key` states the order; :func:`sort_by_retention` computes it for a whole store
at once, with the arithmetic of :func:`domain.retention.strength` a column at a time, and remembers
what does not depend on the instant (docs/performance.md, "Simulation").
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Final

from domain.model import DAY_MS, MemoryEntry
from domain.retention import (
    DEFAULT_TUNING,
    NO_DORMANCY,
    Dormancy,
    Tuning,
    initial_strength,
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
    return (-strength(entry, now_ms, dormancy, tuning), -source_priority(entry), created_key, entry.id)


#: What the retention order needs of an entry that does not depend on ``now``: the entry, its
#: retention start (``None`` when it must be worked out at ``now``), initial strength and
#: reinforcement count, and the tie-breakers of :func:`retention_sort_key` (source priority,
#: ``createdAt``, id) negated as the sort wants them.
_Static = tuple[MemoryEntry, float | None, float, int, tuple[int, float, str]]

# The static parts by entry object (docs/performance.md). Every normalisation and render sorts the
# whole store again, and the entries are the same frozen objects from one operation to the next.
# They hold a dict (``extras``) and cannot be hashed, so the memo is keyed by ``id(entry)`` and keeps
# the entry itself in the value: an id cannot be reused by another object while it is remembered,
# and a hit is only a hit for the very same object. Bounded (emptied when full) and invisible: a hit
# gives exactly what computing the parts again would give.
_STATIC_LIMIT: Final = 16384
_STATIC: Final[dict[int, _Static]] = {}


def _static_parts(entry: MemoryEntry) -> _Static:
    hit = _STATIC.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit
    clock = entry.retention_clock
    start = float(clock) if (type(clock) is int or type(clock) is float) and math.isfinite(clock) else None
    created = parse_iso_ms(entry.created_at)
    parts: _Static = (
        entry,
        start,
        initial_strength(entry),
        reinforcement_count(entry),
        (-source_priority(entry), -float(created) if created is not None else math.inf, entry.id),
    )
    if len(_STATIC) >= _STATIC_LIMIT:
        _STATIC.clear()
    _STATIC[id(entry)] = parts
    return parts


class _HalfLives(dict[int, float]):
    """Half-life per reinforcement count under one tuning: ``base / factor ** min(count, cap)``, the
    expression of :func:`half_life_days`, worked out once per count."""

    def __init__(self, tuning: Tuning) -> None:
        super().__init__()
        self.tuning = tuning

    def __missing__(self, count: int) -> float:
        tuning = self.tuning
        value = self[count] = tuning.half_life_days / tuning.reinforcement_factor ** min(
            count, tuning.reinforcement_cap
        )
        return value


def _negative_powers(parts: Sequence[_Static], now: float, dormancy: Dormancy, tuning: Tuning) -> list[float]:
    """Minus the strength of each entry at ``now``, with the arithmetic of :func:`strength`, step for
    step (equal floats; a property test holds the two together). Without dormant stretches, one
    comprehension does it."""
    half_lives = _HalfLives(tuning)
    spans = dormancy.spans
    inf = math.inf
    if not spans and None not in [p[1] for p in parts]:
        # the wall age max(0, now - start), of which nothing is dormant
        return [
            -value if 0.0 < (value := initial * 2.0 ** (-(wall / DAY_MS) / half_lives[count])) < inf else -0.0
            for _, start, initial, count, _ in parts
            for wall in (now - start if now > start else 0.0,)  # type: ignore[operator]  # no start is None
        ]
    saved = dormancy.saved
    powers: list[float] = []
    for entry, start, initial, count, _ in parts:
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
        value = initial * 2.0 ** (-age / half_lives[count])
        powers.append(-value if 0.0 < value < inf else -0.0)  # max(0.0, value) when finite, else 0.0
    return powers


#: The last ranking: the instant, dormancy and tuning, and the entries strongest first. A step often
#: ranks the very entries it just ranked, at the same instant (a normalisation that sorted the store,
#: then the render of the store it wrote); the entries are recognised by identity, in order.
_LAST_RANKING: list[tuple[float, Dormancy, Tuning, list[MemoryEntry]]] = []


def sort_by_retention(
    entries: Sequence[MemoryEntry],
    now_ms: float,
    dormancy: Dormancy = NO_DORMANCY,
    tuning: Tuning = DEFAULT_TUNING,
) -> list[MemoryEntry]:
    """``entries`` strongest first (stable, total): the order of :func:`retention_sort_key`.

    Every normalisation and every render sorts the whole store, so the key is computed here from
    parts remembered per entry, a column at a time (:func:`_negative_powers`); ranking the entries
    of the last ranking again, in its order and at its instant, returns it. See docs/performance.md."""
    if _LAST_RANKING:
        at, spans, settings, ranked = _LAST_RANKING[0]
        if (
            at == now_ms
            and spans == dormancy
            and settings is tuning
            and len(ranked) == len(entries)
            and all(map(operator.is_, ranked, entries))
        ):
            return list(ranked)
    statics = _STATIC
    parts = [statics.get(id(entry)) for entry in entries]
    unknown = [i for i, (p, e) in enumerate(zip(parts, entries, strict=True)) if p is None or p[0] is not e]
    for position in unknown:
        parts[position] = _static_parts(entries[position])
    static: list[_Static] = parts  # type: ignore[assignment]  # every slot is filled now
    powers = _negative_powers(static, float(now_ms), dormancy, tuning)
    # positions are unique, so the comparison never reaches beyond them
    keyed = list(zip(powers, [p[4] for p in static], range(len(static)), strict=True))
    keyed.sort()
    ranked = [entries[item[2]] for item in keyed]
    _LAST_RANKING[:] = [(now_ms, dormancy, tuning, ranked)]
    return list(ranked)
