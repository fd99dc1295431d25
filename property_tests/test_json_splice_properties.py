"""Properties of :func:`adapters.json_splice.splice` over documents in assorted layouts: the result
always holds the new value; adding items and taking them out again gives the text back byte for
byte; what did not change is never rewritten."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import given, strategies as st

from adapters.json_splice import splice
from property_tests.json_documents import Layout, json_values, layouts, write
from property_tests.shapes import steady_dictionaries

HERE = Path("settings.json")
objects = steady_dictionaries(st.text(max_size=5), json_values, min_size=1, max_size=4)


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every non-empty container in ``value``."""
    found = [path] if isinstance(value, dict | list) and value else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        found += containers(child, (*path, key))
    return found


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def with_additions(draw: st.DrawFn, old: dict[str, Any]) -> dict[str, Any]:
    """``old`` plus new items appended to some of its non-empty containers (new keys last). A key and
    a value are drawn for every container, added or not, so each example of the same ``old`` costs
    the same (property_tests/shapes.py)."""
    new = copy.deepcopy(old)
    for path in reversed(containers(old)):
        add, key, value = draw(st.booleans()), draw(st.text(max_size=5)), draw(json_values)
        if not add:
            continue
        target = at(new, path)
        if isinstance(target, list):
            target.append(value)
        else:
            while key in target:
                key += "+"
            target[key] = value
    return new


@given(objects.flatmap(lambda old: st.tuples(st.just(old), with_additions(old), layouts())))
def test_adding_then_removing_gives_the_text_back(
    case: tuple[dict[str, Any], dict[str, Any], Layout],
) -> None:
    old, new, layout = case
    text = write(old, layout)
    added = splice(HERE, text, old, new)
    assert canon(json.loads(added.removeprefix("\ufeff"))) == canon(new)
    assert splice(HERE, added, new, new) == added
    assert splice(HERE, added, new, old) == text


@given(objects, objects, layouts())
def test_any_edit_gives_the_new_value(old: dict[str, Any], new: dict[str, Any], layout: Layout) -> None:
    text = write(old, layout)
    result = splice(HERE, text, old, new)
    assert canon(json.loads(result.removeprefix("\ufeff"))) == canon(new)
    assert result.startswith("\ufeff") is layout.bom
