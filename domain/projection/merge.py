"""The merge driver's core (docs/decisions.md#d17a): a field-wise three-way merge of projection files.

Git hands ``workmem merge-file`` the common ancestor and the two sides of one memory file. Each field
is merged on its own: a field changed on one side only takes that side; a field both sides changed
to the same value takes it; a field both sides changed differently takes, by its meaning,

* ``status``: the later of ``active < superseded < forgotten``;
* ``supersedes`` (and any other list): the union;
* ``verified``: the later time; ``valid_until``: the earlier time;
* the text: a three-way line merge (:func:`merge_lines`); lines both sides changed differently are a
  conflict, written with git's markers;
* any other field (``type``, ``scope``, ``source``, ...): a conflict, written with markers around the
  field.

``identity`` is never merged: it is the hash of the merged text. A side that cannot be read as a
memory file (it already holds markers, say) is merged as plain lines. The result is rendered as an
export would render it; with a conflict, sync quarantines the file until a person resolves it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from typing import Final

import msgspec
from msgspec.structs import replace
from returns.result import Success

from domain.enums import MemorySource, MemoryType, Scope
from domain.keys import key_hash
from domain.projection.document import KNOWN_KEYS, MemoryFile, parse, render
from domain.projection.frontmatter import Value
from domain.projection.reasons import STATUS_ORDER, FileStatus
from domain.text import memory_key
from domain.timeutil import parse_iso_ms

OURS: Final = "ours"
THEIRS: Final = "theirs"


class Merged(msgspec.Struct, frozen=True):
    text: str
    conflicts: int


# ---------------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------------

_Region = tuple[int, int, int, int, int, int]


def _sync_regions(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> list[_Region]:
    """Stretches of ``base`` that both sides kept, with where they are in each side."""
    a_blocks = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    b_blocks = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    regions: list[_Region] = []
    ia = ib = 0
    while ia < len(a_blocks) and ib < len(b_blocks):
        a_base, a_at, a_len = a_blocks[ia]
        b_base, b_at, b_len = b_blocks[ib]
        start, end = max(a_base, b_base), min(a_base + a_len, b_base + b_len)
        if start < end:
            a_sub, b_sub = a_at + start - a_base, b_at + start - b_base
            regions.append((start, end, a_sub, a_sub + end - start, b_sub, b_sub + end - start))
        if a_base + a_len < b_base + b_len:
            ia += 1
        else:
            ib += 1
    regions.append((len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)))
    return regions


def merge_lines(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str], labels: tuple[str, str] = (OURS, THEIRS)
) -> tuple[list[str], int]:
    """The three-way merge of line lists, and how many conflicts it wrote (between git's markers)."""
    out: list[str] = []
    conflicts = 0
    iz = ia = ib = 0
    for z_at, z_end, a_at, a_end, b_at, b_end in _sync_regions(base, ours, theirs):
        a_chunk, b_chunk, z_chunk = list(ours[ia:a_at]), list(theirs[ib:b_at]), list(base[iz:z_at])
        if a_chunk or b_chunk or z_chunk:
            if a_chunk == b_chunk or b_chunk == z_chunk:
                out += a_chunk
            elif a_chunk == z_chunk:
                out += b_chunk
            else:
                conflicts += 1
                out += [f"<<<<<<< {labels[0]}", *a_chunk, "=======", *b_chunk, f">>>>>>> {labels[1]}"]
        out += base[z_at:z_end]
        iz, ia, ib = z_end, a_end, b_end
    return out, conflicts


def merge_text(base: str, ours: str, theirs: str, labels: tuple[str, str] = (OURS, THEIRS)) -> Merged:
    lines, conflicts = merge_lines(base.split("\n"), ours.split("\n"), theirs.split("\n"), labels)
    return Merged("\n".join(lines), conflicts)


# ---------------------------------------------------------------------------------------------------
# Fields
# ---------------------------------------------------------------------------------------------------


def _time(value: Value) -> float:
    parsed = parse_iso_ms(value) if isinstance(value, str) else None
    return float(parsed) if parsed is not None else float("-inf")


def _later_status(a: Value, b: Value) -> Value:
    def rank(value: Value) -> int:
        return STATUS_ORDER.get(FileStatus(value), 0) if value in {s.value for s in FileStatus} else 0

    return a if rank(a) >= rank(b) else b


#: How a field both sides changed differently is decided; the others are a conflict.
_RULES: Final[dict[str, Callable[[Value, Value], Value]]] = {
    "status": _later_status,
    "verified": lambda a, b: a if _time(a) >= _time(b) else b,
    "valid_until": lambda a, b: a if _time(a) <= _time(b) else b,
}


def _decide(
    key: str, base: Value | None, ours: Value | None, theirs: Value | None
) -> tuple[Value | None, bool]:
    """The merged value of one field and whether it is a conflict (then ours is kept)."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    if ours is None or theirs is None:
        return ours, True
    rule = _RULES.get(key)
    if rule is not None:
        return rule(ours, theirs), False
    if isinstance(ours, tuple) and isinstance(theirs, tuple):
        return tuple(sorted(set(ours) | set(theirs))), False
    return ours, True


def _fields(file: MemoryFile | None) -> dict[str, Value]:
    if file is None:
        return {}
    out: dict[str, Value] = {"type": file.type.value, "scope": file.scope.value, "status": file.status.value}
    out["source"] = file.source.value
    out["supersedes"] = file.supersedes
    for key, value in (("id", file.id), ("created", file.created), ("rationale", file.rationale)):
        if value is not None:
            out[key] = value
    out.update(file.extras)
    return out


def _rebuilt(ours: MemoryFile, fields: dict[str, Value | None], body: str) -> MemoryFile:
    known = set(KNOWN_KEYS)
    extras = tuple(sorted((k, v) for k, v in fields.items() if k not in known and v is not None))

    def one(key: str) -> str | None:
        value = fields.get(key)
        return value if isinstance(value, str) else None

    supersedes = fields.get("supersedes")
    merged = replace(
        ours,
        id=one("id"),
        type=MemoryType(one("type") or ours.type.value),
        scope=Scope(one("scope") or ours.scope.value),
        source=MemorySource(one("source") or ours.source.value),
        status=FileStatus(one("status") or ours.status.value),
        created=one("created"),
        supersedes=supersedes if isinstance(supersedes, tuple) else (),
        rationale=one("rationale"),
        extras=extras,
        body=body,
    )
    return replace(merged, identity=key_hash(memory_key(merged.type.value, body)))


def _read(text: str, path: str) -> MemoryFile | None:
    found = parse(text, path)
    return found.unwrap().file if isinstance(found, Success) else None


def merge_files(
    base: str, ours: str, theirs: str, path: str, labels: tuple[str, str] = (OURS, THEIRS)
) -> Merged:
    """Merge the three versions of the projection file ``path`` (``base`` empty: both sides added
    it). See the module documentation."""
    a, b = _read(ours, path), _read(theirs, path)
    if a is None or b is None:
        return merge_text(base, ours, theirs, labels)
    o = _read(base, path) if base.strip() else None
    fa, fb, fo = _fields(a), _fields(b), _fields(o)
    merged: dict[str, Value | None] = {}
    conflicted: list[str] = []
    for key in sorted(set(fa) | set(fb)):
        value, conflict = _decide(key, fo.get(key), fa.get(key), fb.get(key))
        merged[key] = value
        if conflict:
            conflicted.append(key)
    body = merge_text(o.body if o is not None else "", a.body, b.body, labels)
    if a.body == b.body:
        body = Merged(a.body, 0)
    text = render(_rebuilt(a, merged, body.text))
    for key in conflicted:
        text = _mark_field(text, key, fa.get(key), fb.get(key), labels)
    return Merged(text, body.conflicts + len(conflicted))


def _mark_field(
    text: str, key: str, ours: Value | None, theirs: Value | None, labels: tuple[str, str]
) -> str:
    """``text`` with the line of ``key`` replaced by both sides' lines between git's markers."""
    from domain.projection.frontmatter import render as render_fields

    def line(value: Value | None) -> list[str]:
        return render_fields([(key, value)]).split("\n")[1:2] if value is not None else []

    lines = text.split("\n")
    end = lines.index("---", 1)
    at = next((i for i in range(1, end) if lines[i].startswith(f"{key}:")), end)
    block = [f"<<<<<<< {labels[0]}", *line(ours), "=======", *line(theirs), f">>>>>>> {labels[1]}"]
    replaced = lines[:at] + block + lines[at + 1 if at < end else at :]
    return "\n".join(replaced)
