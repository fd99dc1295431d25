"""Hostile input through every door: whatever arrives, the door answers with a documented exit code
and one-line messages, never a traceback, and the stored data still decodes.

``DOORS`` maps a door's name to a driver ``(home, workspace, payload) -> Outcome``. The CLI door is
here; the hook dialects and the server add their drivers to the same table, and the same properties
then hold for them."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

from hypothesis import given, strategies as st

from adapters.cli import main
from tests.support.cli import stored_data_decodes


class Outcome(NamedTuple):
    code: int
    out: str
    err: str


Door = Callable[[Path, Path, list[str], bytes], Outcome]

#: hostile strings: control characters, escapes, bidi overrides, lone surrogates, NUL, long runs
hostile_text = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(codec=None, categories=("Cc", "Cf", "Cs", "Co", "Zl", "Zp")), max_size=40),
    st.sampled_from(
        ["\x1b[2J\x1b]0;pwned\x07", "\u202egnp.exe", "\x00", "\ud83d", "-", "--", "{", "\\ud83d"]
    ),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", " ", "\n", "[", "\\"]), st.integers(0, 5000)),
)
json_args = st.one_of(
    hostile_text,
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), hostile_text),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
        max_leaves=12,
    ).map(lambda value: json.dumps(value, ensure_ascii=False)),
)
session = st.sampled_from(["s1", "s2", "", "../../etc", "\x00", "x" * 300])
commands = st.one_of(
    st.tuples(st.just("remember"), hostile_text).map(lambda t: [t[0], "--", t[1]]),
    st.tuples(session, hostile_text).map(lambda t: ["message", "--session", t[0], "--", t[1]]),
    st.tuples(
        session, st.sampled_from(["bash", "edit", "read", "grep", "?"]), json_args, st.integers(-3, 300)
    ).map(
        lambda t: [
            "tool",
            "--session",
            t[0],
            "--tool",
            t[1],
            "--args",
            t[2],
            "--exit-code",
            str(t[3]),
            "--output",
            "-",
        ]
    ),
    st.tuples(session).map(lambda t: ["compacted", "--session", t[0], "-"]),
    st.tuples(session).map(lambda t: ["context", "--session", t[0]]),
    st.tuples(session).map(lambda t: ["end-session", "--session", t[0]]),
    st.tuples(hostile_text).map(lambda t: ["forget", "--", t[0]]),
    st.tuples(hostile_text, hostile_text).map(lambda t: ["supersede", "--", t[0], t[1]]),
    st.tuples(hostile_text).map(lambda t: ["trace", "--", t[0]]),
    st.lists(hostile_text, max_size=4),
)
stdin = st.one_of(st.binary(max_size=200), hostile_text.map(lambda t: t.encode("utf-8", "surrogatepass")))


@contextmanager
def _env(home: Path) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("WORKMEM_HOME", "WORKMEM_NOW")}
    os.environ["WORKMEM_HOME"] = str(home)
    os.environ["WORKMEM_NOW"] = "2026-05-01T09:00:00Z"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class _Stdin(io.TextIOWrapper):
    pass


def cli_door(home: Path, workspace: Path, argv: list[str], data: bytes) -> Outcome:
    import sys

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = _Stdin(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    try:
        with _env(home), redirect_stdout(out), redirect_stderr(err):
            code = main(["--workspace", str(workspace), *argv])
    finally:
        sys.stdin = saved
    return Outcome(code, out.getvalue(), err.getvalue())


DOORS: dict[str, Door] = {"cli": cli_door}


@given(st.sampled_from(sorted(DOORS)), st.lists(st.tuples(commands, stdin), min_size=1, max_size=4))
def test_hostile_input_gets_a_documented_answer(door: str, calls: list[tuple[list[str], bytes]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "project"
        workspace.mkdir()
        DOORS[door](home, workspace, ["remember", "always use pnpm for installs"], b"")
        for argv, data in calls:
            outcome = DOORS[door](home, workspace, argv, data)
            assert outcome.code in (0, 2, 3), outcome
            assert "Traceback" not in outcome.err
            assert all(line.startswith("workmem: ") for line in outcome.err.splitlines()), outcome.err
            outcome.out.encode("utf-8")  # printable, never a lone surrogate
            assert "\x1b" not in outcome.out and "\u202e" not in outcome.out
            stored_data_decodes(home, workspace)


def test_an_echoed_argument_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    """Found by the property above: ``trace`` echoed its id, escape sequences included."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    for argv in (["trace", "--", "\x1b[2J\u202eid"], ["forget", "--", "\x1b]0;title\x07id"]):
        outcome = cli_door(tmp_path / "home", workspace, argv, b"")
        assert "\x1b" not in outcome.out + outcome.err and "\u202e" not in outcome.out + outcome.err
