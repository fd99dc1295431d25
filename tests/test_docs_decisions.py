"""The project explains itself: every anchor of docs/decisions.md that code or docs cite exists, and
the comments and docstrings of the code and of its tests cite nothing outside the repository and
write a decision, bug or quirk id only as a citation of its anchor."""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DECISIONS = ROOT / "docs" / "decisions.md"
CITING_DIRS = ("domain", "adapters", "tests", "property_tests", "bench", "docs")
SHIPPED_DIRS = ("domain", "adapters")
#: Whose comments and docstrings must cite only the repository: the shipped code and the tests.
CHECKED_DIRS = (*SHIPPED_DIRS, "tests", "property_tests")
#: ...and the top-level conftest.py.
CHECKED_FILES = (ROOT / "conftest.py",)
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".json", ".js"}

#: The path docs/decisions.md, ``#`` and an anchor, anywhere; in docs, also relative links to
#: docs/decisions.md and, inside docs/decisions.md, links to its own anchors.
CITATION = re.compile(r"docs/decisions\.md#([\w-]+)")
RELATIVE_LINK = re.compile(r"\]\(decisions\.md#([\w-]+)\)")
INTERNAL_LINK = re.compile(r"\]\(#([\w-]+)\)")

#: A markdown file name (a name ending in ``.md``, with or without a directory).
MD_NAME = re.compile(r"[\w./-]*[\w-]\.md\b")
#: The name of the design-decision log that lives outside the repository.
OUTSIDE_LOG = re.compile(r"\bDECISIONS\b")
#: A section sign: spec sections exist only outside the repository.
SECTION = re.compile("\N{SECTION SIGN}")
#: A decision, bug or quirk id on its own: the letter D, B or S and a number, or Q-E or Q-C and a
#: digit. A reader cannot follow it; ``docs/decisions.md#`` and the lower-case id can be.
BARE_ID = re.compile(r"(?<![\w#/-])(?:[DBS]\d{1,2}|Q-[EC]\d)\b")


# ---------------------------------------------------------------------------------------------
# (a) headings and their slugs
# ---------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, every character that is not a letter, a digit, a
    space, ``-`` or ``_`` dropped, each space turned into ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(markdown: str) -> list[str]:
    """The ATX headings of a markdown text, outside fenced code blocks."""
    found: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.+?)\s*#*\s*$", line)):
            found.append(m.group(1))
    return found


def anchors(markdown: str) -> set[str]:
    """Every anchor the headings create; a repeated slug gets ``-1``, ``-2``, ... as on GitHub."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    for heading in headings(markdown):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def test_slug_follows_github() -> None:
    assert slug("D7") == "d7"
    assert slug("Q-E1") == "q-e1"
    assert slug("Hot session state: tool events") == "hot-session-state-tool-events"
    assert slug("Diagnostics: coverage, disappearances and quality") == (
        "diagnostics-coverage-disappearances-and-quality"
    )
    assert slug("Retention: strength and decay") == "retention-strength-and-decay"


def test_headings_skip_code_blocks_and_number_repeats() -> None:
    text = "# Title\n\n## D1\n\n```\n# not a heading\n```\n\n### D1\n"
    assert headings(text) == ["Title", "D1", "D1"]
    assert anchors(text) == {"title", "d1", "d1-1"}


def test_decisions_headings_are_unique() -> None:
    slugs = [slug(h) for h in headings(DECISIONS.read_text(encoding="utf-8"))]
    repeated = sorted({s for s in slugs if slugs.count(s) > 1})
    assert not repeated, f"repeated headings in docs/decisions.md: {repeated}"


def test_decisions_has_an_entry_per_decision() -> None:
    have = anchors(DECISIONS.read_text(encoding="utf-8"))
    assert {f"d{n}" for n in range(1, 13)} <= have


# ---------------------------------------------------------------------------------------------
# (b) every cited anchor exists
# ---------------------------------------------------------------------------------------------


def _files(dirs: Iterable[str], suffixes: set[str]) -> Iterator[Path]:
    for d in dirs:
        for path in sorted((ROOT / d).rglob("*")):
            if path.is_file() and path.suffix in suffixes and ".venv" not in path.parts:
                yield path


def cited_anchors(path: Path, text: str) -> Iterator[tuple[int, str]]:
    """(line, anchor) for every citation of a docs/decisions.md anchor in ``text``."""
    patterns = [CITATION]
    if path.parent == ROOT / "docs":
        patterns.append(INTERNAL_LINK if path.name == "decisions.md" else RELATIVE_LINK)
    for number, line in enumerate(text.splitlines(), 1):
        for pattern in patterns:
            for m in pattern.finditer(line):
                yield number, m.group(1)


def missing_anchors(files: Iterable[tuple[Path, str]], known: set[str]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}: #{anchor}"
        for path, text in files
        for number, anchor in cited_anchors(path, text)
        if anchor not in known
    ]


def test_missing_anchors_are_reported() -> None:
    known = {"d7", "hot-session-state"}
    code = "# see docs/decisions.md" + "#d7 and docs/decisions.md" + "#d99\n"
    doc = "[D7](decisions.md" + "#d7), [x](decisions.md" + "#nope)\n"
    internal = "[D7](#d7) [y](#gone)\n"
    files = [
        (ROOT / "domain" / "x.py", code),
        (ROOT / "docs" / "other.md", doc),
        (ROOT / "docs" / "decisions.md", internal),
    ]
    assert missing_anchors(files, known) == [
        "domain/x.py:1: #d99",
        "docs/other.md:1: #nope",
        "docs/decisions.md:1: #gone",
    ]


def test_every_cited_anchor_exists() -> None:
    known = anchors(DECISIONS.read_text(encoding="utf-8"))
    files = [(path, path.read_text(encoding="utf-8")) for path in _files(CITING_DIRS, TEXT_SUFFIXES)]
    missing = missing_anchors(files, known)
    assert not missing, "citations of docs/decisions.md without a matching heading:\n" + "\n".join(missing)


# ---------------------------------------------------------------------------------------------
# (c) comments and docstrings cite only the repository's own docs
# ---------------------------------------------------------------------------------------------


def prose(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and of every line of each docstring-like string statement."""
    lines = iter(source.splitlines(keepends=True))
    for token in tokenize.generate_tokens(lambda: next(lines, "")):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for offset, text in enumerate(node.value.value.split("\n")):
                yield node.lineno + offset, text


def outside_citations(source: str) -> list[tuple[int, str]]:
    """Citations of things that do not exist in the repository: a markdown file that is not under
    docs/, the outside decision log, or a spec section (the section sign)."""
    found: list[tuple[int, str]] = []
    for line, text in prose(source):
        for m in MD_NAME.finditer(text):
            name = m.group(0)
            if not (name.startswith("docs/") and (ROOT / name).is_file()):
                found.append((line, name))
        found += [(line, m.group(0)) for m in OUTSIDE_LOG.finditer(text)]
        found += [(line, m.group(0)) for m in SECTION.finditer(text)]
    return found


def test_outside_citations_are_found() -> None:
    source = (
        '"""Storage (DECISIONS D5)."""\n'
        "# see docs/hosts.md and docs/decisions.md" + "#d5\n"
        "# see store-retention.md\n"
        "x = 'store-retention.md in a plain string is data, not a citation'\n"
        "def f() -> None:\n"
        '    """Prune (' + "\N{SECTION SIGN}" + '3.6); see docs/no-such-page.md."""\n'
    )
    assert sorted(outside_citations(source)) == [
        (1, "DECISIONS"),
        (3, "store-retention.md"),
        (6, "docs/no-such-page.md"),
        (6, "\N{SECTION SIGN}"),
    ]


def bare_ids(source: str) -> list[tuple[int, str]]:
    """Decision, bug and quirk ids that comments and docstrings name without their anchor."""
    return [(line, m.group(0)) for line, text in prose(source) for m in BARE_ID.finditer(text)]


def test_bare_ids_are_found() -> None:
    d7, qe1 = "D" + "7", "Q-" + "E1"
    source = (
        f"# fixes {d7}, see docs/decisions.md#d7\n"
        f"def test_b16_labels() -> None:\n"
        f'    """{qe1} fixed; S3D and B16x are no ids."""\n'
        f"    x = '{d7} in a plain string is data'\n"
    )
    assert bare_ids(source) == [(1, d7), (3, qe1)]


def _checked_files() -> Iterator[Path]:
    yield from _files(CHECKED_DIRS, {".py"})
    yield from CHECKED_FILES


def test_code_and_tests_cite_only_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _checked_files()
        for line, name in outside_citations(path.read_text(encoding="utf-8"))
    ]
    assert not found, "comments or docstrings cite texts outside the repository:\n" + "\n".join(found)


def test_code_and_tests_cite_decisions_by_their_anchor() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _checked_files()
        for line, name in bare_ids(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "comments or docstrings name a decision, bug or quirk without docs/decisions.md#<id>:\n"
        + "\n".join(found)
    )
