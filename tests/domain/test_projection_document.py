"""One projection file (docs/decisions.md#d17): what it looks like, what a person may write by hand,
and the diagnostic, with its line, of a file that cannot be read."""

from __future__ import annotations

from returns.result import Failure, Success

from domain.enums import MemorySource, MemoryType, Scope
from domain.projection.document import Diagnostic, MemoryFile, Parsed, file_path, parse, render
from domain.projection.frontmatter import scalar
from domain.projection.reasons import FileStatus
from domain.projection.tombstones import parse as parse_tombstones

CANONICAL = """\
---
id: mem_1777626000000_k3x9q2
type: decision
scope: team
status: active
created: 2026-05-01T09:00:00.000Z
source: manual
supersedes: [mem_1777539600000_a81bz0]
identity: 5f1c0e8a9d2b7c44
verified: 2026-06-01
---
Use exponential backoff with jitter for HTTP retries.
"""


def _parsed(text: str, path: str = "memories/decision/mem_1777626000000_k3x9q2.md") -> Parsed:
    found = parse(text, path)
    assert isinstance(found, Success), found
    parsed: Parsed = found.unwrap()
    return parsed


def _problem(text: str, path: str = "memories/decision/x.md") -> Diagnostic:
    found = parse(text, path)
    assert isinstance(found, Failure), found
    problem: Diagnostic = found.failure()
    return problem


def test_a_file_reads_and_renders_back_byte_for_byte() -> None:
    parsed = _parsed(CANONICAL)
    assert parsed.file == MemoryFile(
        id="mem_1777626000000_k3x9q2",
        type=MemoryType.DECISION,
        scope=Scope.TEAM,
        status=FileStatus.ACTIVE,
        created="2026-05-01T09:00:00.000Z",
        source=MemorySource.MANUAL,
        supersedes=("mem_1777539600000_a81bz0",),
        identity="5f1c0e8a9d2b7c44",
        extras=(("verified", "2026-06-01"),),
        body="Use exponential backoff with jitter for HTTP retries.",
    )
    assert parsed.body_line == 12
    assert render(parsed.file) == CANONICAL


def test_what_a_person_types_by_hand_reads_too() -> None:
    text = (
        "---\r\n# a comment\r\ntype: 'project'\r\n\r\nsupersedes:\r\n  - mem_1_a\r\n  - \"mem_2_b\"\r\n"
        "cites: [src/a.py:12, 'src/b.py:3']\r\nowner: Jane Doe   # the team lead\r\n---\r\n"
        "The build runs on Node 20.\r\n"
    )
    file = _parsed(text, "memories/project/notes.md").file
    assert file.id is None and file.type is MemoryType.PROJECT
    assert file.scope is Scope.TEAM and file.source is MemorySource.MANUAL  # defaults
    assert file.supersedes == ("mem_1_a", "mem_2_b")
    assert dict(file.extras) == {"cites": ("src/a.py:12", "src/b.py:3"), "owner": "Jane Doe"}
    assert file.body == "The build runs on Node 20."


def test_the_type_may_come_from_the_folder() -> None:
    assert _parsed("---\n---\nA reference kept by folder\n", "memories/reference/a.md").file.type is (
        MemoryType.REFERENCE
    )


def test_unreadable_files_say_why_and_where() -> None:
    conflict = "---\ntype: decision\n---\n<<<<<<< ours\nA\n=======\nB\n>>>>>>> theirs\n"
    assert _problem(conflict) == Diagnostic(
        "memories/decision/x.md", 4, "conflict_markers", "the file holds merge conflict markers"
    )
    assert _problem("no frontmatter\n").line == 1
    assert _problem("---\ntype: decision\n").reason == "bad_frontmatter"
    assert (
        _problem("---\ntype: decision\nstatus: gone\n---\nx\n").line,
        _problem("---\nx y\n---\n").line,
    ) == (3, 2)
    unknown = _problem("---\nid: a\ntype: wish\n---\nx\n")
    assert (unknown.reason, unknown.line) == ("unknown_type", 3)
    assert _problem("---\ncreated: yesterday\n---\nx\n").reason == "bad_frontmatter"
    assert _problem("---\ntype: decision\ntype: project\n---\nx\n").message == "the key 'type' is given twice"
    assert _problem('---\ntype: "decision\n---\nx\n').message == "a double-quoted value is not closed"


def test_a_lone_separator_line_in_a_text_is_not_a_conflict() -> None:
    assert _parsed("---\ntype: decision\n---\nabove\n=======\nbelow\n").file.body == "above\n=======\nbelow"


def test_values_that_would_read_as_something_else_are_quoted() -> None:
    assert [scalar(v) for v in ("mem_1_a", "2026-05-01T09:00:00.000Z", "a b")] == [
        "mem_1_a",
        "2026-05-01T09:00:00.000Z",
        "a b",
    ]
    assert [scalar(v) for v in ("true", "1234", "a: b", "#x", "", "[x]", 'say "hi"')] == [
        '"true"',
        '"1234"',
        '"a: b"',
        '"#x"',
        '""',
        '"[x]"',
        '"say \\"hi\\""',
    ]


def test_a_file_is_named_after_its_id_or_a_hash_of_an_unsafe_one() -> None:
    assert file_path(MemoryType.DECISION, "mem_1_abc") == "memories/decision/mem_1_abc.md"
    unsafe = file_path(MemoryType.PROJECT, "../../etc/passwd")
    assert unsafe.startswith("memories/project/id-") and unsafe.count("/") == 2


def test_tombstone_lines_are_read_one_per_identity_and_a_bad_line_is_reported() -> None:
    text = (
        '{"created": "2026-05-01T09:00:00.000Z", "id": "m1", "identity": "0123456789abcdef", '
        '"reason": "forgotten"}\n'
        "not json\n"
        '{"created": "x", "id": "m2", "identity": "0123456789abcdef", "reason": "forgotten"}\n'
    )
    lines, problems = parse_tombstones(text)
    assert [line.id for line in lines] == ["m1"]
    assert [p.line for p in problems] == [2]


def test_pinned_reads_and_renders_back_and_a_bad_value_is_reported() -> None:
    text = (
        "---\nid: mem_1\ntype: decision\nscope: team\nstatus: active\nsource: manual\n"
        "pinned: true\n---\nUse blue-green deploys\n"
    )
    parsed = _parsed(text, "memories/decision/mem_1.md")
    assert parsed.file.pinned and render(parsed.file) == text
    assert not _parsed(text.replace("pinned: true\n", "")).file.pinned
    problem = _problem(text.replace("pinned: true", "pinned: maybe"))
    assert (problem.line, problem.message) == (7, "pinned must be true or false")
