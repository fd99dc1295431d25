"""Exact and identity keys (docs/decisions.md#memory-keys, docs/decisions.md#d9)."""

from __future__ import annotations

from functools import partial

import pytest

from domain.ids import hash16
from domain.keys import (
    concrete_identity,
    exact_key,
    identity_key,
    is_concrete_path,
    key_hash,
    normalize_path,
    normalize_url,
)
from domain.timeutil import parse_iso_ms
from tests.support.builders import memory

#: A compaction reference memory, as the key functions see it.
mem = partial(memory, id="m", type="reference", at=parse_iso_ms("2026-05-01T00:00:00.000Z") or 0)


# --- the reference's identity vectors that docs/decisions.md#d9 leaves unchanged ---------------

UNCHANGED_VECTORS = [
    ("Project config lives in `src/config.ts`", "reference", "reference:path:src/config.ts"),
    ("Config in package.json controls build", "project", "project:path:package.json"),
    ("See `README.MD`", "reference", "reference:path:README.MD"),
    ("Path C:\\Users\\me\\repo\\file.ts is key", "reference", "reference:path:Users/me/repo/file.ts"),
    ("User's config in `src/x.ts`", "reference", "reference:path:src/x.ts"),
    ("see 'foo bar.md'", "reference", "reference:path:foo bar.md"),
    ("http:// broken url but src/a.ts present", "project", "project:path:src/a.ts"),
    (
        "This repo uses opencode-agenthub plugin system",
        "project",
        "project:this repo uses opencode agenthub plugin system",
    ),
    ("Use `.env/` dir", "reference", "reference:use ` env ` dir"),
    ("https://GitHub.com/Foo/Bar/#readme.", "reference", "reference:url:https://github.com/Foo/Bar"),
    ("(https://example.com)", "reference", "reference:url:https://example.com/"),
    ("HTTPS://Example.COM:443/a/b/../c/?q=1#x", "reference", "reference:url:https://example.com/a/c?q=1"),
]


@pytest.mark.parametrize(("text", "type_", "expected"), UNCHANGED_VECTORS)
def test_identity_vectors_matching_the_reference(text: str, type_: str, expected: str) -> None:
    assert identity_key(mem(text, type=type_)) == expected


# --- the rows whose result docs/decisions.md#d9 changes (reference bug docs/decisions.md#s7) ----

B7_VECTORS = [
    # reference: reference:path:./src/config.ts (different from src/config.ts)
    ("Project config lives in `./src/config.ts`", "reference", "reference:path:src/config.ts"),
    # reference: project:path:unit/integration
    ("Tests use unit/integration split", "project", "project:tests use unit integration split"),
    # reference: project:path:24/7
    ("We run 24/7 monitoring", "project", "project:we run 24 7 monitoring"),
    # reference: reference:path:2026/04/28
    ("2026/04/28 release", "reference", "reference:2026 04 28 release"),
    # reference: canonical text (bare extension match was case-sensitive)
    ("Config in Package.JSON controls build", "project", "project:path:Package.JSON"),
    # reference: reference:path:/.local/share/opencode-working-memory (the ~ was dropped)
    (
        "Storage lives under ~/.local/share/opencode-working-memory/.",
        "reference",
        "reference:path:~/.local/share/opencode-working-memory",
    ),
    # reference: reference:path:src/lib (one separator, no extension: not a concrete path)
    ('Use "npm" and "src//lib///" dirs', "reference", "reference:use npm and src lib dirs"),
    # reference: reference:path:/ (a lone root names nothing)
    ('Quote "/" root', "reference", "reference:quote root"),
]


@pytest.mark.parametrize(("text", "type_", "expected"), B7_VECTORS)
def test_identity_vectors_fixed_by_d9_bug_b7(text: str, type_: str, expected: str) -> None:
    assert identity_key(mem(text, type=type_)) == expected


@pytest.mark.parametrize(
    "text",
    ["Use and/or carefully", "We run 24/7", "Split unit/integration", "Released 2026/04/28", "Add 1/2 cup"],
)
def test_b7_prose_slashes_are_not_paths(text: str) -> None:
    assert concrete_identity(text) is None


def test_b7_false_path_does_not_hide_a_real_one_later() -> None:
    assert concrete_identity("Use and/or in src/main.py docs") == "path:src/main.py"


def test_b7_dot_slash_and_plain_are_the_same_identity() -> None:
    assert identity_key(mem("See ./docs/a.md")) == identity_key(mem("Read docs/a.md first"))
    assert identity_key(mem("See ././docs/a.md")) == "reference:path:docs/a.md"


def test_b7_leading_double_slash_collapses() -> None:
    assert normalize_path("//server/share/") == "/server/share"
    assert normalize_path("///a//b/") == "/a/b"


@pytest.mark.parametrize(
    ("path", "concrete"),
    [
        ("src/config.ts", True),
        ("src/main.py", True),  # any extension inside a directory
        ("main.py", False),  # a bare name needs one of the known extensions
        ("package.json", True),
        ("README.MD", True),
        ("/etc", True),
        ("../x", True),
        ("~/x", True),
        ("a/b/c", True),  # two separators with a non-numeric segment
        ("1/2/x", True),
        ("2026/04/28", False),
        ("1/2", False),
        ("unit/integration", False),
        ("docs/v1.2", False),  # a numeric "extension" is not an extension
        ("/", False),
        ("~", False),
        (".", False),
        ("..", False),
        ("", False),
    ],
)
def test_d9_concreteness(path: str, concrete: bool) -> None:
    assert is_concrete_path(path) is concrete


def test_feedback_and_decision_identity_is_the_exact_key() -> None:
    for type_ in ("feedback", "decision"):
        entry = mem("Config in `src/config.ts` https://example.com", type=type_)
        assert identity_key(entry) == exact_key(entry)


def test_exact_key_is_type_and_canonical_text() -> None:
    assert exact_key(mem("  Hello,   World!! `code` $5 + a_b-c  ", type="feedback")) == (
        "feedback:hello world `code` $5 + a b c"
    )
    assert exact_key(mem("Use X.", type="decision")) == exact_key(mem("use x", type="decision"))


def test_exact_equal_entries_may_have_different_identity_keys() -> None:
    a, b = mem("See src/a.ts"), mem("see src a ts")
    assert exact_key(a) == exact_key(b)
    assert identity_key(a) == "reference:path:src/a.ts"
    assert identity_key(b) == "reference:see src a ts"


def test_key_hash_is_hash16() -> None:
    assert key_hash("decision:use pnpm") == hash16("decision:use pnpm")
    assert len(key_hash("x")) == 16


# --- URL identity: the WHATWG effects ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://GitHub.com/Foo/Bar/#readme.", "https://github.com/Foo/Bar"),
        ("https://example.com)", "https://example.com/"),
        ("HTTPS://Example.COM:443/a/b/../c/?q=1#x", "https://example.com/a/c?q=1"),
        ("http://a.com:80/", "http://a.com/"),
        ("http://a.com:443/", "http://a.com:443/"),
        ("https://a.com:0443/x", "https://a.com/x"),
        ("https://a.com/a//b//", "https://a.com/a//b"),
        ("https://a.com//", "https://a.com/"),
        # the trailing ".." is sentence punctuation and is stripped before parsing
        ("https://a.com/%2e%2E/b/./c/..", "https://a.com/b/c"),
        ("https://a.com/b/c/../d", "https://a.com/b/d"),
        ("https://a.com?x", "https://a.com/?x"),
        ("https://a.com/x{y}^|é?q=é'", "https://a.com/x%7By%7D^|%C3%A9?q=%C3%A9%27"),
        ("https://user:p@ss@Host.com:080/", "https://user:p%40ss@host.com:80/"),
        ("https://0x7f.1/a", "https://127.0.0.1/a"),
        ("https://[1:2:0:0:0:0:0:3]/", "https://[1:2::3]/"),
        ("https://münchen.de/straße", "https://xn--mnchen-3ya.de/stra%C3%9Fe"),
        ("https://a.com\\b\\c", "https://a.com/b/c"),
        ("https:///a.com/x", "https://a.com/x"),
    ],
)
def test_url_normalisation(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["https://a.com:99999/", "https://a.com:8a/", "https://:80/", "https://1.2.3.256/", "https://a^b.com/"],
)
def test_url_that_does_not_parse_gives_none(raw: str) -> None:
    assert normalize_url(raw) is None


def test_unparseable_url_falls_through_to_paths() -> None:
    assert concrete_identity("`src/a.ts` at https://a.com:99999/") == "path:src/a.ts"


def test_url_wins_over_path() -> None:
    assert concrete_identity("`src/a.ts` at https://Example.com/a/") == "url:https://example.com/a"
