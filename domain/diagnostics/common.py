"""What every diagnostic report shares (docs/decisions.md#diagnostics): the loaded input, the
JavaScript-compatible formatting helpers, the display scrubbing of memory text and the grouping of
evidence events by memory id."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final, Protocol

import msgspec

from domain.enums import MemorySource, MemoryType
from domain.ids import hash16
from domain.limits import DAY_MS
from domain.model import EvidenceEvent, MemoryEntry, PendingJournal, WorkspaceRef, WorkspaceStore
from domain.safety import redact
from domain.text import WS, collapse_whitespace
from domain.timeutil import iso_from_ms, parse_iso_ms

#: Diagnostic type order (not the render section order).
TYPES: Final = (MemoryType.FEEDBACK, MemoryType.DECISION, MemoryType.PROJECT, MemoryType.REFERENCE)
SOURCES: Final = (MemorySource.EXPLICIT, MemorySource.MANUAL, MemorySource.COMPACTION)


# ---------------------------------------------------------------------------------------------
# Small formatting helpers (JavaScript-compatible where the output format depends on it)
# ---------------------------------------------------------------------------------------------


_ABS_PATH: Final = re.compile(
    rf"(?:^|[{WS}\"'`(=:\[])(/(?:Users|home|private|tmp|var|opt|Volumes|[^{WS}\"'`)\],;:]+)/[^{WS}\"'`)\],;:]*)"
)


def redact_absolute_paths(text: str) -> str:
    """Replace absolute POSIX paths with ``<path>`` (the character before the path is kept)."""
    return _ABS_PATH.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + "<path>", text)


def clean_text(text: str, raw: bool = False) -> str:
    """Memory text for display: credentials redacted, then absolute paths; unchanged when ``raw``."""
    return text if raw else redact_absolute_paths(redact(text))


def clean_path(path: str, raw: bool = False) -> str:
    return path if raw else "<path>"


def shorten(text: str, limit: int = 120) -> str:
    """Whitespace collapsed; longer than ``limit`` -> the first ``limit - 1`` characters and ``…``."""
    collapsed = collapse_whitespace(text)
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1] + "…"


def to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: exact decimal value of the double, ties away from zero; a
    negative value keeps its sign even when it rounds to zero, ``-0`` does not."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    exact = Decimal(value) if value != 0 else Decimal(0)
    return str(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def format_strength(value: float | None) -> str:
    return to_fixed(value, 3) if value is not None and math.isfinite(value) else "0.000"


def format_percent(ratio: float) -> str:
    return f"{to_fixed(ratio * 100, 1)}%"


def json_string(text: str) -> str:
    """``JSON.stringify`` of a string (non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def js_value(value: object) -> str:
    """``String(value)`` for the JSON-like values found in evidence details."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list | tuple):
        return ",".join("" if v is None else js_value(v) for v in value)
    return str(value)


def format_details(details: Mapping[str, Any] | None) -> str:
    """``key=value`` pairs, space-joined, array values joined by ``|``; ``none`` when empty."""
    if not details:
        return "none"
    parts = []
    for key, value in details.items():
        shown = "|".join(js_value(v) for v in value) if isinstance(value, list | tuple) else js_value(value)
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def unique(values: Iterable[str | None]) -> tuple[str, ...]:
    """Non-empty values, first occurrence order."""
    return tuple(dict.fromkeys(v for v in values if v))


def sorted_counts(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Count descending, then key by code point (the reference uses ``localeCompare``)."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def counts_object(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted_counts(Counter(values)))


def within_days(iso: str, days: int, now_ms: int) -> bool:
    moment = parse_iso_ms(iso)
    return moment is not None and moment >= now_ms - days * DAY_MS


def workspace_identity(key: str | None, root: str | None, raw: bool, root_hash: str | None = None) -> str:
    parts = []
    if key:
        parts.append(f"workspaceKey={key}")
    if root and raw:
        parts.append(f"workspaceRoot={root}")
    elif root_hash:
        parts.append(f"workspaceRootHash={root_hash}")
    elif root:
        parts.append(f"workspaceRootHash={hash16(root)}")
    return " ".join(parts)


def file_name(path: str) -> str:
    return re.split(r"[/\\]", path)[-1]


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


class RejectionLike(Protocol):
    """What the diagnostics read from an extraction-rejection record (``RejectionRecord``)."""

    @property
    def timestamp(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def reasons(self) -> Sequence[str]: ...
    @property
    def source(self) -> str: ...
    @property
    def workspace_key(self) -> str | None: ...
    @property
    def workspace_root_hash(self) -> str | None: ...


class DiagInput(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one workspace diagnosis reads, already loaded by the shell."""

    root: str = ""  # the workspace root the user asked about
    key: str = ""  # its workspace key
    store: WorkspaceStore | None = None  # None: missing or unreadable (treated as empty)
    journal: PendingJournal | None = None  # None: missing (treated as empty)
    events: tuple[EvidenceEvent, ...] = ()  # evidence log, in log order
    rejections: tuple[RejectionLike, ...] = ()  # extraction-rejection records (already filtered)
    memory_path: str = ""
    pending_path: str = ""
    #: corrupt files moved aside by the storage layer (docs/decisions.md#d5), listed by health.
    quarantined_files: tuple[str, ...] = ()
    #: the shell's ``workspaceRootHash`` (hash of the resolved root, distinct from the key,
    #: docs/decisions.md#b8).
    root_hash: str = ""


def effective_store(src: DiagInput) -> WorkspaceStore:
    """The store to diagnose: the loaded one, or an empty store for the requested workspace."""
    if src.store is not None:
        return src.store
    return WorkspaceStore(workspace=WorkspaceRef(root=src.root, key=src.key), updated_at=iso_from_ms(0))


def journal_entries(src: DiagInput) -> tuple[MemoryEntry, ...]:
    return src.journal.entries if src.journal is not None else ()


# ---------------------------------------------------------------------------------------------
# Evidence helpers
# ---------------------------------------------------------------------------------------------


def event_memory_ids(event: EvidenceEvent) -> tuple[str, ...]:
    """Every memory id an event names: its own memory, then its relations."""
    own = event.memory.memory_id if event.memory is not None else None
    related = (r.memory.memory_id if r.memory is not None else None for r in event.relations)
    return unique((own, *related))


def group_by_memory_id(events: Iterable[EvidenceEvent]) -> dict[str, tuple[EvidenceEvent, ...]]:
    """Events grouped under every memory id they name, each group in log order."""
    grouped: dict[str, list[EvidenceEvent]] = {}
    for event in events:
        for memory_id in event_memory_ids(event):
            grouped.setdefault(memory_id, []).append(event)
    return {memory_id: tuple(group) for memory_id, group in grouped.items()}


def first_memory_id(event: EvidenceEvent) -> str | None:
    if event.memory is not None and event.memory.memory_id:
        return event.memory.memory_id
    for rel in event.relations:
        if rel.memory is not None and rel.memory.memory_id:
            return rel.memory.memory_id
    return None
