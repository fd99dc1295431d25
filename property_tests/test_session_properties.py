"""Properties of the hot session state (docs/decisions.md#hot-session-state and its sections,
docs/decisions.md#d4)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import partial

import msgspec
from hypothesis import given, strategies as st

from domain.enums import DecisionSource, ErrorStatus, FileAction, MemorySource, MemoryType
from domain.limits import HotStateLimits
from domain.model import MemoryEntry, SessionState
from domain.session import (
    ACTION_WEIGHT,
    HEADER,
    ToolEvent,
    add_pending_memories,
    add_recent_decision,
    classify_command,
    clear_errors_for_successful_command,
    empty_session,
    extract_errors_from_bash,
    mark_errors_maybe_fixed_for_file,
    normalize_session,
    observe_tool,
    remove_pending_memories,
    render_hot_state,
    touch_active_file,
    upsert_open_error,
)
from domain.text import memory_key
from property_tests.secret_strategies import secrets as shared_secrets
from property_tests.shapes import steady_lists
from tests.support.builders import memory

T0 = 1_767_225_600_000
ROOT = "/repo"
SECTIONS = ("active_files:", "open_errors:", "recent_decisions:", "pending_memories:")
SECTION_CAPS = {
    "active_files:": HotStateLimits.MAX_ACTIVE_FILES_RENDERED,
    "open_errors:": HotStateLimits.MAX_OPEN_ERRORS_RENDERED,
    "recent_decisions:": HotStateLimits.MAX_RECENT_DECISIONS_STORED,
    "pending_memories:": HotStateLimits.MAX_PENDING_MEMORIES_RENDERED,
}

# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

free_text = st.text(
    alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from("\n\r\t :-[]/."), max_size=60
)
paths = st.one_of(
    st.sampled_from(
        [
            "/repo",
            "/repo/",
            "/repo/src/a.ts",
            "/repo/src/index.tsx",
            "/repo/package.json",
            "/repo2/x.ts",
            "/other/x.ts",
            "src/a.ts",
            "./src/a.ts",
            "/repo/" + "deep/" * 30 + "file.py",
        ]
    ),
    st.integers(0, 40).map(lambda i: f"/repo/src/f{i}.ts"),
    free_text,
)
commands = st.one_of(
    st.sampled_from(
        [
            "npm test",
            "npm run typecheck",
            "tsc --noEmit",
            "npm run lint",
            "npx eslint .",
            "npm run build",
            "vite build",
            "go test ./...",
            "cargo test",
            "node x.js",
            "cat test.txt",
            "make",
            "",
            "cd x && pnpm test",
        ]
    ),
    free_text,
)
outputs = st.one_of(
    st.sampled_from(
        [
            "src/index.tsx(1,1): error TS1005: x",
            "FAIL tests/a.test.ts\nError: expected 1",
            "TypeError: boom in package.json",
            "eslint error in src/a.ts",
            "build failed",
            "npm ERR! code 1\nnpm ERR! missing script",
            "Traceback (most recent call last):\n  File x.py\nValueError: nope",
            "ok",
            "",
        ]
    ),
    steady_lists(st.sampled_from(["Error: ", "failed ", "TS2345 ", "x ", "y.ts ", "\n"]), max_size=30).map(
        "".join
    ),
    free_text,
)
exit_codes = st.sampled_from([None, 0, 1, 2, -1])


def _grep_output(items: list[str]) -> str:
    return "\n".join(f"{p}:1: match" for p in items)


#: The costliest kind first: the simplest example takes it (property_tests/shapes.py).
tool_events = st.one_of(
    st.builds(
        lambda items: ToolEvent(tool="grep", output=_grep_output(items)), steady_lists(paths, max_size=12)
    ),
    st.builds(
        lambda tool, path: ToolEvent(tool=tool, args={"filePath": path}),
        st.sampled_from(["read", "edit", "write", "patch"]),
        paths,
    ),
    st.builds(
        lambda cmd, out, code, meta: ToolEvent(
            tool="bash", args={"command": cmd}, output=out, exit_code=code, metadata=meta
        ),
        commands,
        outputs,
        exit_codes,
        st.sampled_from([{}, {"exitCode": "1"}, {"status": 0}, {"code": "x"}]),
    ),
)
memory_types = st.sampled_from(list(MemoryType))


#: A pending explicit memory of confidence 1, made at T0.
_memory = partial(memory, id="m", source=MemorySource.EXPLICIT, confidence=1, at=T0)

memories = st.builds(
    _memory, st.one_of(free_text, st.sampled_from(["Use pnpm", "use  PNPM"])), type=memory_types
)
decision_texts = st.one_of(free_text, st.sampled_from(["Use pnpm", "use PNPM", "Ship on Fridays", "x" * 200]))

Op = Callable[[SessionState, int], SessionState]


def _event_op(event: ToolEvent) -> Op:
    return lambda state, now: observe_tool(state, event, ROOT, now)


def _decision_op(text: str, source: DecisionSource) -> Op:
    return lambda state, now: add_recent_decision(state, text, source, now)


def _pending_op(entries: list[MemoryEntry]) -> Op:
    return lambda state, now: add_pending_memories(state, entries)


def _mark_op(path: str) -> Op:
    return lambda state, now: mark_errors_maybe_fixed_for_file(state, path, ROOT, now)


def _remove_op(entries: list[MemoryEntry]) -> Op:
    keys = {memory_key(e.type.value, e.text) for e in entries}
    return lambda state, now: remove_pending_memories(state, keys)


ops = st.one_of(
    tool_events.map(_event_op),
    st.builds(_decision_op, decision_texts, st.sampled_from(list(DecisionSource))),
    steady_lists(memories, max_size=4).map(_pending_op),
    paths.map(_mark_op),
    steady_lists(memories, max_size=2).map(_remove_op),
)


@st.composite
def sessions(draw: st.DrawFn, max_ops: int = 30) -> SessionState:
    """A session after a random sequence of operations at non-decreasing instants."""
    state = empty_session("s", T0)
    now = T0
    for op, delay in draw(steady_lists(st.tuples(ops, st.integers(0, 5)), max_size=max_ops)):
        now += delay
        state = op(state, now)
    return state


def _section_lines(render: str) -> dict[str, list[str]]:
    """The items under each section header. A block cut at its character cap ends in whatever the
    cut left of its last line (part of an item or of a header, or nothing after a line break), so
    that line is not read."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    lines = render.split("\n")[1:]
    if len(render) == HotStateLimits.MAX_RENDERED_CHARS:
        lines = lines[:-1]
    for line in lines:
        if line in SECTIONS:
            current = line
            found[current] = []
        else:
            assert current is not None, line
            assert line.startswith("-"), line
            found[current].append(line)
    return found


# ---------------------------------------------------------------------------------------------
# Render
# ---------------------------------------------------------------------------------------------


@given(sessions())
def test_render_is_bounded_and_has_a_header_iff_something_to_show(state: SessionState) -> None:
    render = render_hot_state(state, ROOT)
    assert len(render) <= HotStateLimits.MAX_RENDERED_CHARS
    anything = bool(
        state.active_files or state.open_errors or state.recent_decisions or state.pending_memories
    )
    assert (render != "") is anything
    if anything:
        assert render.startswith(HEADER)


@given(sessions())
def test_render_sections_appear_once_in_order_within_their_caps(state: SessionState) -> None:
    render = render_hot_state(state, ROOT)
    lines = render.split("\n")
    headers = [line for line in lines if line in SECTIONS]
    assert len(headers) == len(set(headers))
    assert headers == sorted(headers, key=SECTIONS.index)
    if render:
        for header, items in _section_lines(render).items():
            assert len(items) <= SECTION_CAPS[header]


@given(sessions())
def test_stored_lists_stay_within_their_limits(state: SessionState) -> None:
    assert len(state.active_files) <= HotStateLimits.MAX_ACTIVE_FILES_STORED
    assert len(state.open_errors) <= HotStateLimits.MAX_OPEN_ERRORS_STORED
    assert len(state.recent_decisions) <= HotStateLimits.MAX_RECENT_DECISIONS_STORED
    normal = normalize_session(state, T0)
    assert len(normal.pending_memories) <= HotStateLimits.MAX_PENDING_MEMORIES_STORED
    keys = [memory_key(m.type.value, m.text) for m in normal.pending_memories]
    assert len(keys) == len(set(keys))
    assert normalize_session(normal, T0) == normal
    assert normal.turn == 0


@given(sessions())
def test_open_errors_are_listed_before_maybe_fixed_ones(state: SessionState) -> None:
    statuses = [e.status for e in state.open_errors]
    assert statuses == sorted(statuses, key=lambda s: s != ErrorStatus.OPEN)
    render = render_hot_state(state, ROOT)
    shown = state.open_errors[: HotStateLimits.MAX_OPEN_ERRORS_RENDERED]
    if len(render) < HotStateLimits.MAX_RENDERED_CHARS:
        lines = _section_lines(render).get("open_errors:", [])
        assert len(lines) == len(shown)
        for line, err in zip(lines, shown, strict=True):
            marker = f"- [{err.category.value}] (maybe fixed) "
            assert line.startswith(marker) is (err.status == ErrorStatus.MAYBE_FIXED)


# ---------------------------------------------------------------------------------------------
# Files, errors, decisions
# ---------------------------------------------------------------------------------------------


@given(sessions(), paths, st.sampled_from(list(FileAction)), st.integers(0, 10))
def test_touch_counts_once_and_never_lowers_the_action_weight(
    state: SessionState, path: str, action: FileAction, delay: int
) -> None:
    before = {f.path: f for f in state.active_files}
    after = touch_active_file(state, path, action, T0 + 10_000 + delay)
    assert len(after.active_files) <= HotStateLimits.MAX_ACTIVE_FILES_STORED
    touched = {f.path: f for f in after.active_files}.get(path)
    if path in before:
        assert touched is not None
        assert touched.count == before[path].count + 1
        assert ACTION_WEIGHT[touched.action] >= ACTION_WEIGHT[before[path].action]
        assert ACTION_WEIGHT[touched.action] >= ACTION_WEIGHT[action]
    elif touched is not None:
        assert (touched.count, touched.action) == (1, action)


#: A line every command's output is read as an error from (see the property below).
ERROR_LINES = [
    "Error: boom",
    "TypeError: x is undefined",
    "error TS2345: nope",
    "npm ERR! code 1",
    "Traceback (most recent call last):",
]


@given(sessions(), commands, st.sampled_from(ERROR_LINES), outputs)
def test_upserting_the_same_error_twice_keeps_one_and_counts_it(
    state: SessionState, command: str, line: str, output: str
) -> None:
    errors = extract_errors_from_bash(command, line + "\n" + output, T0 + 10_000)
    assert len(errors) == 1  # an output that opens with an error line gives exactly one error
    (err,) = errors
    assert len(err.summary) <= 280
    assert re.fullmatch("[0-9a-f]{12}", err.fingerprint)
    assert err.id == f"err_{err.fingerprint}"
    once = upsert_open_error(state, err, T0 + 10_000)
    twice = upsert_open_error(once, err, T0 + 10_001)
    first = [e for e in once.open_errors if e.fingerprint == err.fingerprint]
    second = [e for e in twice.open_errors if e.fingerprint == err.fingerprint]
    assert len(first) == len(second) == 1
    assert second[0].seen_count == first[0].seen_count + 1
    assert second[0].status == ErrorStatus.OPEN


@given(sessions(), commands)
def test_a_successful_check_leaves_no_error_of_its_category(state: SessionState, command: str) -> None:
    category = classify_command(command)
    cleared = clear_errors_for_successful_command(state, command)
    if category is None:
        assert cleared == state
    else:
        assert all(e.category != category for e in cleared.open_errors)
        assert [e for e in state.open_errors if e.category != category] == list(cleared.open_errors)


#: Without s, r and p no strong signal (TS1234, ERR!, Traceback, panic:) and no error prefix can be spelt;
#: the long s and the Kelvin sign are left out because Python's case folding maps them to s and k.
_NO_SIGNAL = st.text(
    alphabet=st.characters(exclude_characters="sSrRpP\u017f\u212a", exclude_categories=["Cs"]),
    max_size=60,
)


@given(_NO_SIGNAL)
def test_unknown_commands_without_strong_signals_report_nothing(output: str) -> None:
    assert extract_errors_from_bash("some-unknown-command", output, T0) == ()
    # the error line comes first: a credential label at the end of ``output`` may (by design) take
    # the next line as its value and redact it
    assert extract_errors_from_bash("some-unknown-command", "Error: boom\n" + output, T0) != ()


_WS_CHOICES = [" ", "  ", "\t", " \n "]


@given(sessions(), st.data())
def test_an_equal_decision_keeps_the_list_length(state: SessionState, data: st.DataObject) -> None:
    words = data.draw(
        steady_lists(st.sampled_from(["use", "pnpm", "Ship", "on", "FRIDAYS"]), min_size=1, max_size=5)
    )
    state = add_recent_decision(state, " ".join(words), DecisionSource.USER, T0 + 10_000)
    length = len(state.recent_decisions)
    # a case and a space for each of the five words there can be: each example costs the same
    upper = data.draw(st.lists(st.booleans(), min_size=5, max_size=5))
    spaces = data.draw(st.lists(st.sampled_from(_WS_CHOICES), min_size=5, max_size=5))
    variant = "".join(
        (word.upper() if up else word.lower()) + space
        for word, up, space in zip(words, upper, spaces, strict=False)
    )
    after = add_recent_decision(state, variant, DecisionSource.ASSISTANT, T0 + 10_001)
    assert len(after.recent_decisions) == length


@given(sessions(max_ops=10), tool_events)
def test_observe_tool_is_deterministic_and_does_not_touch_its_input(
    state: SessionState, event: ToolEvent
) -> None:
    snapshot = msgspec.json.encode(state)
    first = observe_tool(state, event, ROOT, T0 + 10_000)
    assert first == observe_tool(state, event, ROOT, T0 + 10_000)
    assert msgspec.json.encode(state) == snapshot


# ---------------------------------------------------------------------------------------------
# No generated secret reaches state or render (docs/decisions.md#d4)
# ---------------------------------------------------------------------------------------------

secret_values = st.text(alphabet=string.ascii_letters + string.digits + "._/+-", min_size=6, max_size=20).map(
    lambda body: f"Q{body}Z"
)
labels = st.sampled_from(["password", "Password", "passwd", "pwd", "token", "api_key", "secret", "PIN"])
delimiters = st.sampled_from([":", ": ", "=", " = ", "："])


@st.composite
def _labelled(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    value = draw(secret_values)
    prefix = draw(st.sampled_from(["", "note ", "Error: ", "x, "]))
    suffix = draw(st.sampled_from(["", " ok", ", more"]))
    return f"{prefix}{draw(labels)}{draw(delimiters)}{value}{suffix}", (value,)


#: Labelled values of this module plus the shared credential strategy (token formats, PEM blocks, ...).
secret_texts = st.one_of(_labelled(), shared_secrets())


@given(sessions(max_ops=8), secret_texts, st.sampled_from(["summary", "command", "decision", "pending"]))
def test_no_generated_secret_reaches_state_or_render(
    state: SessionState, secret: tuple[str, tuple[str, ...]], where: str
) -> None:
    text, values = secret
    before = repr(msgspec.json.decode(msgspec.json.encode(state))) + render_hot_state(state, ROOT)
    values = tuple(value for value in values if value not in before)  # not what the state held before
    now = T0 + 10_000
    if where == "summary":
        state = observe_tool(
            state, ToolEvent(tool="bash", args={"command": "npm test"}, output=text, exit_code=1), ROOT, now
        )
    elif where == "command":
        event = ToolEvent(tool="bash", args={"command": f"run {text}"}, output="Error: failed", exit_code=1)
        state = observe_tool(state, event, ROOT, now)
    elif where == "decision":
        state = add_recent_decision(state, text, DecisionSource.USER, now, rationale=text)
    else:
        state = add_pending_memories(state, [_memory(text, type=MemoryType.FEEDBACK)])
    state = normalize_session(state, now)
    stored, render = msgspec.json.decode(msgspec.json.encode(state)), render_hot_state(state, ROOT)
    for value in values:
        assert value not in repr(stored)
        assert value not in render
