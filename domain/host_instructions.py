"""What the host's own instruction files already say (docs/decisions.md#d22): a memory that an
instruction file the host loads (its agent rules file, docs/hosts.md lists them) already states is
not injected a second time.

The shell reads the files (``adapters/host_instructions.py``: which files each host loads, a bounded
read) and widens the session start or compaction with :class:`HostContext`; the core only compares
text. The comparison is conservative: a memory is *covered* by a file when

* its canonical text (the exact key's text, :func:`domain.text.canonical_text`) equals the canonical
  text of a line or paragraph of the file, or
* its normalised text (at least three words) appears, on word boundaries, inside one line or
  paragraph of the file, and the two hold the same negation and contrast words
  (:class:`domain.consolidation.near_duplicates.Shape`): "use pnpm" is not covered by "never use
  pnpm".

A covered memory stays stored and keeps its strength; it is only left out of the block, with a
``render_omitted`` event whose reason is ``in_host_instructions`` and whose details name the file.
Only the memories a render would show are compared (the block is rendered again without the covered
ones, so their places go to the next memories): a large store costs no more than a small one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from enum import StrEnum
from typing import Final

import msgspec
from msgspec.structs import replace

from domain import evidence
from domain.consolidation.near_duplicates import Shape
from domain.model import EvidenceInput, MemoryEntry
from domain.text import canonical_text, lazy_compile

#: The reason code of the ``render_omitted`` event of a covered memory.
IN_HOST_INSTRUCTIONS: Final = "in_host_instructions"
#: A memory shorter than this many words is covered only by an equal line, never by containment.
MIN_CONTAINED_WORDS: Final = 3
#: At most this many lines and paragraphs of one file are compared (the shell caps the bytes too).
MAX_LINES: Final = 4000


class HostKind(StrEnum):
    """The host whose instruction files are read."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    OPENCODE = "opencode"


class InstructionFile(msgspec.Struct, frozen=True, kw_only=True):
    """One instruction file the host loads: its name as a person knows it (a path from the workspace
    root, or from ``~``) and its normalised logical lines (:func:`instruction_lines`)."""

    name: str
    lines: tuple[str, ...] = ()


class HostContext(msgspec.Struct, frozen=True, kw_only=True):
    """Which host a session start or a compaction comes from, and (filled in by the service before
    the transaction) what its instruction files say."""

    host: HostKind
    files: tuple[InstructionFile, ...] = ()


def host_context(name: str | None) -> HostContext | None:
    """The context of the host called ``name`` (``claude-code``, ``codex``, ``opencode``), else ``None``."""
    known = {kind.value: kind for kind in HostKind}
    return HostContext(host=known[name]) if name in known else None


_NOT_WORD: Final = lazy_compile(r"[^\w']+")
_MARKDOWN_LEAD: Final = lazy_compile(r"^\s*(?:[-*+>]|\d+[.)]|#+)\s+")


def normalized(text: str) -> str:
    """NFKC, lower case, curly apostrophes made straight, every run of other non-word characters one
    space, trimmed."""
    folded = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return _NOT_WORD.sub(" ", folded).strip()


def instruction_lines(text: str) -> tuple[str, ...]:
    """The normalised logical lines of an instruction file, at most :data:`MAX_LINES`: a list item or
    a heading starts one, a line without a list mark continues the one before (a wrapped item or
    paragraph), a blank line ends it. List marks and heading marks are dropped."""
    lines: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            lines.append(" ".join(current))
            current.clear()

    for raw in text.splitlines():
        starts = _MARKDOWN_LEAD.match(raw) is not None
        line = normalized(_MARKDOWN_LEAD.sub("", raw))
        if not line or starts:
            close()
        if line:
            current.append(line)
    close()
    return tuple(dict.fromkeys(lines))[:MAX_LINES]


class _Index:
    """The lines of the files prepared once per comparison: canonical texts, and one searchable text."""

    def __init__(self, files: Sequence[InstructionFile]) -> None:
        self.files = [
            (f.name, f.lines, frozenset(canonical_text(line) for line in f.lines), f" {' | '.join(f.lines)} ")
            for f in files
        ]

    def covering(self, text: str) -> str | None:
        key = canonical_text(text)
        mine = normalized(text)
        needle = f" {mine} " if len(mine.split()) >= MIN_CONTAINED_WORDS else None
        for name, lines, keys, joined in self.files:
            if key in keys:
                return name
            if needle is None or needle not in joined:
                continue
            markers = Shape(mine).markers
            if any(needle in f" {line} " and Shape(line).markers == markers for line in lines):
                return name
        return None


def covering_file(entry: MemoryEntry, files: Sequence[InstructionFile]) -> str | None:
    """The name of the first file in ``files`` that already says ``entry`` (module docstring)."""
    return _Index(files).covering(entry.text) if files else None


def instruction_index(context: HostContext | None) -> _Index | None:
    """What :func:`covered_among` compares with, prepared once per render (``None``: no files)."""
    return _Index(context.files) if context is not None and context.files else None


def covered_among(entries: Sequence[MemoryEntry], index: _Index | None) -> dict[str, EvidenceInput]:
    """The entries (by id) that the files behind ``index`` already say, each with its
    ``render_omitted`` event naming the file."""
    if index is None:
        return {}
    found: dict[str, EvidenceInput] = {}
    for entry in entries:
        name = index.covering(entry.text)
        if name is not None:
            event = evidence.omitted(entry, IN_HOST_INSTRUCTIONS)
            found[entry.id] = replace(event, details={**(event.details or {}), "file": name})
    return found
