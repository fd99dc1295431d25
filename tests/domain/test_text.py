"""Text primitives: JavaScript whitespace, canonical text, memory keys and deferred patterns."""

from __future__ import annotations

import re

from domain.text import canonical_text, collapse_whitespace, js_trim, lazy_compile, memory_key


def test_js_trim_and_collapse_use_the_javascript_whitespace_set() -> None:
    assert js_trim("\ufeff\u3000 text \u00a0") == "text"
    assert js_trim("\x1ctext") == "\x1ctext"  # not JavaScript whitespace
    assert collapse_whitespace(" a \t\n b\u2028c ") == "a b c"


def test_canonical_text_keeps_symbols_and_strips_punctuation() -> None:
    assert canonical_text("  Hello,   World!! `code` $5 + a_b-c  ") == "hello world `code` $5 + a b c"
    assert canonical_text("Ｕｓｅ pnpm — always…") == "use pnpm always"
    assert canonical_text(canonical_text("Ｕｓｅ, pnpm!")) == canonical_text("Ｕｓｅ, pnpm!")
    assert memory_key("decision", "Use X.") == memory_key("decision", "use x") == "decision:use x"


def test_a_deferred_pattern_compiles_on_first_use_and_then_behaves_like_re() -> None:
    lazy = lazy_compile(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)
    assert "_pattern" not in vars(lazy)
    match = lazy.search("x ABC-12 y")
    assert match is not None and match.group("word") == "ABC"
    assert "_pattern" in vars(lazy)
    assert lazy.sub("<>", "a-1 b-2") == "<> <>"
    assert [m.group(2) for m in lazy.finditer("a-1 b-2")] == ["1", "2"]
    assert lazy.fullmatch("q-9") is not None and lazy.match("-") is None
    assert lazy.groupindex == {"word": 1} and lazy.flags & re.IGNORECASE
