"""A memory's freshness in its projection file (docs/decisions.md#d17, docs/decisions.md#d18):
``volatility``, ``verified``, ``valid_until`` and ``cites`` travel with the memory, so a teammate's
clone knows when a fact expires and which code it describes. Only what was set on the memory is
written (a default volatility, worked out from the type and text, is not), times as ISO-8601 and
citations as ``PATH[:LINE[-LINE]]``; a citation's hash or identifiers stay on each machine (the first
session start there reads the code again and sets its own baseline).

The keys are read back into the memory's fields; a value that cannot be read is kept as an unknown
key of the file, as any other key workmem does not know."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from domain.enums import Volatility
from domain.freshness import parse_cite
from domain.model import Citation, MemoryEntry
from domain.projection.frontmatter import Value
from domain.timeutil import iso_from_ms, parse_iso_ms

#: The frontmatter keys of a memory's freshness, in the order of the issue that named them.
FRESHNESS_KEYS: Final = ("volatility", "verified", "valid_until", "cites")


def cite_text(cite: Citation) -> str:
    """``PATH[:LINE[-LINE]]`` of a citation (what ``--cite`` takes)."""
    if cite.start_line is None:
        return cite.path
    if cite.end_line is None or cite.end_line == cite.start_line:
        return f"{cite.path}:{cite.start_line}"
    return f"{cite.path}:{cite.start_line}-{cite.end_line}"


def _time(value: int | float | None) -> str | None:
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return None
    return iso_from_ms(value)


def freshness_fields(entry: MemoryEntry) -> tuple[tuple[str, Value], ...]:
    """The freshness keys of ``entry``'s file (only those set on the memory)."""
    out: list[tuple[str, Value]] = []
    if entry.volatility is not None:
        out.append(("volatility", entry.volatility.value))
    if (verified := _time(entry.verified)) is not None:
        out.append(("verified", verified))
    if (until := _time(entry.valid_until)) is not None:
        out.append(("valid_until", until))
    if entry.cites:
        out.append(("cites", tuple(cite_text(c) for c in entry.cites)))
    return tuple(out)


class ReadFreshness:
    """The freshness a file's keys say, and the keys that could not be read (kept as unknown)."""

    def __init__(self, extras: Mapping[str, Value]) -> None:
        self.volatility: Volatility | None = None
        self.verified: int | None = None
        self.valid_until: int | None = None
        self.cites: tuple[Citation, ...] | None = None
        self.unread: dict[str, Value] = {}
        for key in FRESHNESS_KEYS:
            if key in extras:
                self._read(key, extras[key])

    def _read(self, key: str, value: Value) -> None:
        if key == "volatility" and isinstance(value, str) and value in {v.value for v in Volatility}:
            self.volatility = Volatility(value)
        elif key in ("verified", "valid_until") and isinstance(value, str) and (ms := parse_iso_ms(value)):
            setattr(self, key, int(ms))
        elif key == "cites" and isinstance(value, str | tuple):
            specs = (value,) if isinstance(value, str) else value
            found = [parse_cite(spec) for spec in specs]
            if all(c is not None for c in found):
                self.cites = tuple(c for c in found if c is not None)
            else:
                self.unread[key] = value
        else:
            self.unread[key] = value

    def texts(self) -> dict[str, object]:
        """What is compared with a stored memory's :func:`freshness_fields` (a citation by its text)."""
        return {
            "volatility": self.volatility,
            "verified": self.verified,
            "valid_until": self.valid_until,
            "cites": tuple(cite_text(c) for c in self.cites) if self.cites else None,
        }


def stored_texts(entry: MemoryEntry) -> dict[str, object]:
    """A stored memory's freshness as :meth:`ReadFreshness.texts` gives it."""
    return {
        "volatility": entry.volatility,
        "verified": int(entry.verified) if _time(entry.verified) is not None else None,  # type: ignore[arg-type]
        "valid_until": int(entry.valid_until) if _time(entry.valid_until) is not None else None,  # type: ignore[arg-type]
        "cites": tuple(cite_text(c) for c in entry.cites) if entry.cites else None,
    }
