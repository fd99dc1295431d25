"""The JavaScript regex dialect the safety gate, the extractors and the keys share."""

from __future__ import annotations

import re

import pytest

from domain.jsregex import (
    BOUNDARY,
    DOT,
    HS,
    JS_BOUNDARY,
    JS_PATTERNS,
    JS_WORD,
    WORD_END,
    js_compile,
    translate,
)
from domain.text import JS_WHITESPACE


def test_the_js_fragments_never_case_fold_but_the_bare_ones_do() -> None:
    kelvin = "\u212a"  # KELVIN SIGN: Python's re.IGNORECASE folds it to "k"
    assert re.fullmatch(JS_WORD, kelvin, re.IGNORECASE) is None
    assert re.match(f"x{JS_BOUNDARY}", "x" + kelvin, re.IGNORECASE) is not None
    # The bare fragments keep Python's folding; the explicit-request triggers were written with them.
    assert re.match(f"x{WORD_END}", "x" + kelvin, re.IGNORECASE) is None
    assert re.match(f"x(?:{BOUNDARY})", "x" + kelvin) is not None


def test_dot_and_horizontal_space_follow_javascript() -> None:
    for terminator in "\n\r\u2028\u2029":
        assert re.fullmatch(DOT, terminator) is None
        assert re.fullmatch(f"[{HS}]", terminator) is None
    assert re.fullmatch(DOT, "\x85") is not None  # NEL is not a JavaScript line terminator
    horizontal = [ch for ch in JS_WHITESPACE if ch not in "\n\r\u2028\u2029"]
    assert all(re.fullmatch(f"[{HS}]", ch) for ch in horizontal)


@pytest.mark.parametrize(
    ("source", "text", "found"),
    [
        (r"\bpass\b", "a pass b", True),
        (r"\bpass\b", "épassé", True),  # \b is ASCII-only: é is no word character
        (r"\bpass\b", "passwd", False),
        (r"\w+", "é", False),
        (r"\d", "٣", False),  # ARABIC-INDIC DIGIT THREE is not \d in JavaScript
        (r"a\sb", "a\ufeffb", True),
        (r"a.b", "a\u2028b", False),
        (r"end$", "end\n", False),  # $ is the end of the input, not before a final newline
    ],
)
def test_translated_sources_match_as_in_javascript(source: str, text: str, found: bool) -> None:
    assert (re.search(translate(source, edge_boundaries=False), text) is not None) is found
    assert (re.search(translate(source, edge_boundaries=True), text) is not None) is found


def test_js_compile_is_lazy_and_registers_the_pattern() -> None:
    before = len(JS_PATTERNS)
    pattern = js_compile(r"\bjsregex_test\b", re.IGNORECASE)
    try:
        assert JS_PATTERNS[-1][:2] == (r"\bjsregex_test\b", re.IGNORECASE)
        assert "_pattern" not in vars(pattern)  # nothing compiled yet
        assert pattern.search("a JSREGEX_TEST b") is not None
    finally:
        del JS_PATTERNS[before:]
