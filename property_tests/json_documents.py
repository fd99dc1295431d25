"""JSON values, and JSON documents in assorted layouts, for the install and splice properties: one
line or indented by two or four spaces or a tab, each container inline or one item per line, LF or
CRLF, with or without a final newline, a byte-order mark, ``\\uXXXX`` escapes, compact or spaced
separators."""

from __future__ import annotations

import itertools
import json
from typing import Any, NamedTuple

from hypothesis import strategies as st

from property_tests.shapes import steady_lists

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)

#: What a node of a generated value is; half of them are scalars.
_KINDS = ("scalar", "list", "scalar", "object")


def _node(scalar: Any, kind: str, keys: tuple[str, ...], children: tuple[Any, ...], size: int) -> Any:
    if kind == "list":
        return list(children[:size])
    if kind == "object":
        return dict(zip(keys[:size], children[:size], strict=True))
    return scalar


def _nodes(children: st.SearchStrategy[Any], width: int) -> st.SearchStrategy[Any]:
    """A scalar, or a list or object of up to ``width`` items drawn from ``children``. Every example
    draws the same choices (``width`` keys and children, used or not), so none is thrown away as an
    overrun (property_tests/shapes.py); each level is its own strategy, so hypothesis never copies a
    part of one level over a part of another."""
    return st.builds(
        _node,
        json_scalars,
        st.sampled_from(_KINDS),
        st.tuples(*(st.text(max_size=6),) * width),
        st.tuples(*(children,) * width),
        st.integers(0, width),
    )


#: Any JSON value: a scalar, or a list or object of up to three items, each a scalar or a list or
#: object of up to two scalars. Object keys are at most six characters long.
json_values: st.SearchStrategy[Any] = _nodes(_nodes(json_scalars, 2), 3)


class Layout(NamedTuple):
    indent: str | None
    newline: str
    colon: str
    comma: str
    ascii: bool
    final: bool
    bom: bool
    multi_line: tuple[bool, ...]  # per container, in turn, cycled: one item per line or inline


def layouts() -> st.SearchStrategy[Layout]:
    return st.builds(
        Layout,
        st.sampled_from([None, "  ", "    ", "\t"]),
        st.sampled_from(["\n", "\r\n"]),
        st.sampled_from([": ", ":", " : "]),
        st.sampled_from([", ", ",", " , "]),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        steady_lists(st.booleans(), min_size=1, max_size=4).map(tuple),
    )


def write(value: Any, layout: Layout) -> str:
    """``value`` as a document in ``layout`` (the root object one item per line when indented)."""
    choices = itertools.cycle(layout.multi_line)

    def scalar(v: Any) -> str:
        return json.dumps(v, ensure_ascii=layout.ascii)

    def dump(v: Any, depth: int) -> str:
        if not isinstance(v, dict | list) or not v:
            return scalar(v)
        if isinstance(v, dict):
            items = [scalar(k) + layout.colon + dump(x, depth + 1) for k, x in v.items()]
        else:
            items = [dump(x, depth + 1) for x in v]
        open_, close = ("{", "}") if isinstance(v, dict) else ("[", "]")
        if layout.indent is not None and (depth == 0 or next(choices)):
            inner = layout.newline + layout.indent * (depth + 1)
            return open_ + inner + ("," + inner).join(items) + layout.newline + layout.indent * depth + close
        return open_ + layout.comma.join(items) + close

    text = dump(value, 0)
    return ("\ufeff" if layout.bom else "") + text + (layout.newline if layout.final else "")
