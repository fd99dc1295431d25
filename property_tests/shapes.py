"""Collections whose examples all cost hypothesis the same number of choices.

Hypothesis starts a run with a few small examples: it caps an early example at five times the
choices of the simplest example that starts the same way, and an example that draws more is
thrown away as an overrun (``--hypothesis-show-statistics`` counts it as invalid). A
``st.lists(..., max_size=12)`` of one-choice elements spends one extra choice per element on
"one more?", so the simplest list costs one choice and a random one up to 25: a third of a
60-example run could be thrown away before a single input was wrong.

``steady_lists`` draws ``max_size`` elements and then how many of them to keep, so every example
makes the same draws and none overruns; lengths are spread evenly over ``min_size..max_size`` and
shrink towards ``min_size``, elements towards their simplest value. ``steady_dictionaries`` does
the same for key/value pairs (a repeated key keeps its last value, as in ``dict()``).
``replace_if`` builds a value outside a small excluded set instead of filtering the set away.

Hypothesis also mutates a good example by copying one part of it over another part with the same
label; a label does not tell a fixed list of two from one of four, so the elements are drawn as a
tuple, whose label does.

The same rule for ``st.one_of``: its simplest example takes the first option, so the costliest
option goes first (a cheap first option would make a costly later one overrun), and a part that
is used only sometimes is drawn every time and then used or not.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def steady_lists(
    elements: st.SearchStrategy[T], *, min_size: int = 0, max_size: int
) -> st.SearchStrategy[list[T]]:
    """Lists of ``min_size..max_size`` elements, every example drawing ``max_size`` of them."""

    def keep(items: tuple[T, ...], count: int) -> list[T]:
        return list(items[:count])

    # A tuple, not a fixed-size list: hypothesis labels a tuple by its length too, and its mutator
    # only copies a part over another of the same label (a list of two over a list of four would
    # be read wrongly and overrun).
    return st.builds(keep, st.tuples(*(elements,) * max_size), st.integers(min_size, max_size))


def steady_dictionaries(
    keys: st.SearchStrategy[K], values: st.SearchStrategy[V], *, min_size: int = 0, max_size: int
) -> st.SearchStrategy[dict[K, V]]:
    """Dictionaries of up to ``max_size`` entries (at least one when ``min_size`` is 1; larger
    ``min_size`` values are not supported, since a repeated key merges two entries)."""
    if min_size > 1:
        raise ValueError("steady_dictionaries supports min_size 0 or 1")
    return steady_lists(st.tuples(keys, values), min_size=min_size, max_size=max_size).map(dict)


def replace_if(banned: Callable[[T], bool], replacement: Callable[[T], T]) -> Callable[[T], T]:
    """A ``map`` function: a drawn value that ``banned`` excludes becomes ``replacement(value)``
    (which the caller makes sure is allowed), any other value stays as drawn."""

    def build(value: T) -> T:
        return replacement(value) if banned(value) else value

    return build
