"""Properties of the command line that need no storage: ``check`` is total, speaks only in its own
line formats, exits 0 or 3, and never echoes a credential it was given."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout

from hypothesis import given, strategies as st

from adapters.cli import main
from property_tests.secret_strategies import secrets
from property_tests.shapes import replace_if


@contextmanager
def fixed_clock() -> Iterator[None]:
    saved = os.environ.get("WORKMEM_NOW")
    os.environ["WORKMEM_NOW"] = "2026-05-01T09:00:00Z"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("WORKMEM_NOW", None)
        else:
            os.environ["WORKMEM_NOW"] = saved


def run_check(text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with fixed_clock(), redirect_stdout(out), redirect_stderr(err):
        code = main(["check", "--", text])  # "--": a text may start with "-"
    return code, out.getvalue(), err.getvalue()


texts = st.one_of(
    st.text(max_size=300),
    st.builds(lambda body: f"Remember this: {body}", st.text(max_size=120)),
    st.builds(
        lambda t, body: f"Memory candidates:\n- [{t}] {body}",
        st.sampled_from(["feedback", "project", "decision", "reference", "Decision", "other"]),
        st.text(max_size=120),
    ),
)


# "-" means: read the text from standard input, so it becomes "-x"
@given(texts.map(replace_if(lambda t: t == "-", lambda t: t + "x")))
def test_check_is_total_and_speaks_its_own_format(text: str) -> None:
    code, out, err = run_check(text)
    assert code in (0, 3)
    assert err == ""
    lines = out.splitlines()
    if code == 3 and "accept [" not in out:
        assert lines == ["nothing to remember"] or all(line.startswith("reject ") for line in lines)
    if code == 0:
        assert any(line.startswith("accept [") for line in lines)


@given(secrets(), st.sampled_from(["Remember this: ", "Memory candidates:\n- [reference] ", "from now on "]))
def test_check_never_echoes_a_credential(secret: tuple[str, tuple[str, ...]], lead: str) -> None:
    text, values = secret
    _, out, _ = run_check(lead + text.replace("\n", " "))
    for value in values:
        assert value not in out
