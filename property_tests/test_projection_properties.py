"""Properties of the shared projection (docs/decisions.md#d17).

Stores are built the way users build them — ``remember`` with every type and scope, ``forget``,
``supersede`` and ``restore`` in random order, with texts from the realistic pool (credentials and
paths among them) and arbitrary text — and then:

* export → import into an empty store → export gives the same files, byte for byte;
* importing the projection a store exported changes nothing: no event, the same store;
* a file renders and parses back to the same value, whatever its text and unknown keys;
* the line merge of two sides that agree, or of one side that changed, is that side.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from hypothesis import given, strategies as st
from returns.result import Success

from domain.commands import Command, Forget, Remember, Restore, Supersede
from domain.enums import MemorySource, MemoryType, Scope
from domain.projection.document import MemoryFile, parse, render
from domain.projection.merge import merge_lines
from domain.projection.reasons import FileStatus
from domain.workspace_port import InMemoryWorkspace
from property_tests.shapes import replace_if, steady_dictionaries, steady_lists
from property_tests.store_strategies import NOW_MS, texts
from tests.support.projection import empty_workspace, every_file, exported, import_of

MINUTE: Final = 60_000

#: Text a person may type: any printable text, with line breaks, but no control characters (the gate
#: removes those, and a file with them is refused).
typed = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"),
    min_size=1,
    max_size=80,
) | steady_lists(
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20), min_size=2, max_size=3
).map("\n".join)


class Step(NamedTuple):
    """One user command: ``kind``, a text (remember, supersede), a type and a scope (remember), and
    which stored memory it is about (the others)."""

    kind: str
    text: str = ""
    type: MemoryType = MemoryType.DECISION
    scope: Scope | None = None
    target: int = 0


@st.composite
def histories(draw: st.DrawFn) -> list[Step]:
    """One to fourteen steps. Every step draws all its pieces whichever kind it is, and fourteen are
    drawn whatever the count: each example costs the same (property_tests/shapes.py)."""
    steps: list[Step] = []
    count = draw(st.integers(min_value=1, max_value=14))
    for _ in range(14):
        kind = draw(st.sampled_from(("remember", "remember", "remember", "forget", "supersede", "restore")))
        text = draw(texts() | typed)
        type_ = draw(st.sampled_from(list(MemoryType)))
        scope = draw(st.none() | st.sampled_from(list(Scope)))
        target = draw(st.integers(0, 20))
        if kind == "remember":
            steps.append(Step(kind, text, type_, scope))
        elif kind == "supersede":
            steps.append(Step(kind, text, target=target))
        else:
            steps.append(Step(kind, target=target))
    return steps[:count]


def _built(steps: list[Step]) -> InMemoryWorkspace:
    ws = empty_workspace()
    now = NOW_MS
    for step in steps:
        now += MINUTE
        ids = [e.id for e in ws.store.entries]
        command: Command
        if step.kind == "remember":
            command = Remember(text=step.text, type=step.type, scope=step.scope)
        elif not ids:
            continue
        elif step.kind == "supersede":
            command = Supersede(memory_id=ids[step.target % len(ids)], text=step.text)
        else:
            target = ids[step.target % len(ids)]
            command = Forget(memory_id=target) if step.kind == "forget" else Restore(memory_id=target)
        ws.execute(command, now)
    return ws


@given(histories(), st.booleans())
def test_export_import_export_is_byte_identical(steps: list[Step], history: bool) -> None:
    """``history``: the projection also holds the files of superseded and forgotten memories (a
    projection that saw them change); else it is a first export (active memories only)."""
    source = _built(steps)
    first = (every_file if history else exported)(source.store)
    fresh = empty_workspace("/srv/clone")
    fresh.execute(import_of(first), NOW_MS + 100 * MINUTE)
    assert every_file(fresh.store) == first


@given(histories())
def test_importing_an_unchanged_projection_changes_nothing(steps: list[Step]) -> None:
    ws = _built(steps)
    before = ws.store
    result = ws.execute(import_of(every_file(before)), NOW_MS + 100 * MINUTE)
    assert result is not None
    assert result.events == ()
    assert result.store is before


_FIELDS: Final = {"id", "type", "scope", "status", "created", "source", "supersedes", "rationale", "identity"}
#: ``[a-z][a-z0-9_]{0,11}``, never a field of the format's own (those get a ``_`` appended).
keys = st.builds(
    str.__add__,
    st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=11),
).map(replace_if(lambda k: k in _FIELDS, lambda k: k + "_"))
_VALUE_CHARACTERS = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85")
values = st.text(_VALUE_CHARACTERS, max_size=30)
filled_values = st.text(_VALUE_CHARACTERS, min_size=1, max_size=30)
#: ``mem_[0-9]{1,13}_[a-z0-9]{6}``
memory_ids = st.builds(
    "mem_{}_{}".format,
    st.text("0123456789", min_size=1, max_size=13),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=6),
)


@given(
    body=typed,
    extras=steady_dictionaries(keys, steady_lists(filled_values, max_size=3).map(tuple) | values, max_size=4),
    supersedes=steady_lists(memory_ids, max_size=3).map(lambda ids: list(dict.fromkeys(ids))),
    status=st.sampled_from(list(FileStatus)),
    rationale=filled_values | st.none(),
)
def test_a_file_parses_back_to_what_was_rendered(
    body: str, extras: dict[str, object], supersedes: list[str], status: FileStatus, rationale: str | None
) -> None:
    file = MemoryFile(
        id="mem_1_abcdef",
        type=MemoryType.PROJECT,
        scope=Scope.TEAM,
        status=status,
        created="2026-05-01T09:00:00.000Z",
        source=MemorySource.MANUAL,
        supersedes=tuple(sorted(supersedes)),
        rationale=rationale,
        identity="0123456789abcdef",
        extras=tuple(sorted(extras.items())),  # type: ignore[arg-type]
        body=body,
    )
    text = render(file)
    found = parse(text, "memories/project/mem_1_abcdef.md")
    if "\r" in body or (body.startswith("\ufeff")):
        return  # line endings and a leading byte-order mark are a file's, not a memory's
    assert isinstance(found, Success), found
    assert found.unwrap().file == file
    assert render(found.unwrap().file) == text


lines = steady_lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=8)


@given(lines, lines)
def test_a_side_that_changed_alone_is_the_merge(base: list[str], changed: list[str]) -> None:
    assert merge_lines(base, changed, base) == (changed, 0)
    assert merge_lines(base, base, changed) == (changed, 0)
    assert merge_lines(base, changed, changed) == (changed, 0)
