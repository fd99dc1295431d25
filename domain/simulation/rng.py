"""A small pure random generator for the simulator (docs/simulation.md, "Randomness").

Every random choice of a simulation comes from here: a value goes in with a generator state and
comes out with the next state, so nothing in ``domain/`` holds mutable or global random state and
the same seed always replays the same run. The core is SplitMix64, which passes BigCrush and needs
one 64-bit word of state.

Streams are derived by name (:func:`stream`), so that what day 40 draws does not depend on how many
values day 39 used: a shorter run is an exact prefix of a longer one, and a parameter change that
alters the store never shifts the input that later days receive.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Final, NamedTuple, TypeVar

T = TypeVar("T")

_MASK: Final = (1 << 64) - 1
_GAMMA: Final = 0x9E3779B97F4A7C15


class Rng(NamedTuple):
    """The generator state: one 64-bit word."""

    state: int


def stream(seed: int, *labels: object) -> Rng:
    """The generator for the sub-stream ``labels`` of ``seed`` (SHA-256 of both, first 8 bytes)."""
    text = "\x1f".join(str(part) for part in (seed, *labels)).encode("utf-8")
    return Rng(int.from_bytes(hashlib.sha256(text).digest()[:8], "big"))


def next_u64(rng: Rng) -> tuple[int, Rng]:
    """One 64-bit value and the next state (SplitMix64)."""
    state = (rng.state + _GAMMA) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31), Rng(state)


def uniform(rng: Rng) -> tuple[float, Rng]:
    """A float in ``[0, 1)`` with 53 random bits."""
    value, rng = next_u64(rng)
    return (value >> 11) / 9007199254740992.0, rng


def below(rng: Rng, n: int) -> tuple[int, Rng]:
    """An integer in ``[0, n)`` (``n >= 1``); the bias of the multiply-shift is below 2**-53 x n."""
    value, rng = uniform(rng)
    return min(int(value * n), n - 1), rng


def chance(rng: Rng, p: float) -> tuple[bool, Rng]:
    """``True`` with probability ``p``."""
    value, rng = uniform(rng)
    return value < p, rng


def pick(rng: Rng, items: Sequence[T]) -> tuple[T, Rng]:
    """One of ``items`` (not empty), uniformly."""
    index, rng = below(rng, len(items))
    return items[index], rng


def weighted(rng: Rng, weights: Sequence[float]) -> tuple[int, Rng]:
    """An index chosen with probability proportional to ``weights`` (non-negative, not all 0)."""
    total = sum(weights)
    value, rng = uniform(rng)
    target = value * total
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if target < running:
            return index, rng
    return max(i for i, w in enumerate(weights) if w > 0), rng


def poisson(rng: Rng, mean: float) -> tuple[int, Rng]:
    """A Poisson count with ``mean`` (Knuth's product method; the simulator's means are small)."""
    if mean <= 0:
        return 0, rng
    limit = math.exp(-mean)
    count = 0
    product, rng = uniform(rng)
    while product > limit and count < 1000:
        count += 1
        value, rng = uniform(rng)
        product *= value
    return count, rng
