"""The pure half of the evidence log: turning what the core emits into stored records, reading them
back and pruning them (docs/decisions.md#evidence-log-records,
docs/decisions.md#evidence-log-append-and-prune).

Privacy rules applied to every record (``build_record``):

* reason codes and detail keys keep only ``[A-Za-z0-9_.:-]``;
* session ids, message ids and memory keys are always replaced by ``hash16`` of the raw value, even
  when the raw value already looks like a 16-hex hash (the reference stored such values verbatim,
  docs/decisions.md#b9);
* detail strings and ``textPreview`` are redacted, whitespace-collapsed and capped; detail strings also
  lose absolute file-system paths (the reference leaked them through ``hook_failed`` messages,
  docs/decisions.md#b18).

Questions about the records (which events concern a memory, what its status is) are answered by the
diagnostics alone (:mod:`domain.diagnostics`, docs/decisions.md#evidence-log-per-memory-lifecycle).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

import msgspec

from domain.codec import convert, encode_line, parse_json
from domain.enums import EventType
from domain.ids import Digest, hash16
from domain.limits import DAY_MS, EvidenceLogLimits
from domain.model import EvidenceEvent, EvidenceInput, MemoryRef, Relation
from domain.safety.redaction import preview, redact
from domain.text import lazy_compile
from domain.timeutil import parse_iso_ms

MAX_REASON_CODES: Final = 25
MAX_REASON_CODE_CHARS: Final = 120
MAX_RELATIONS: Final = 25
MAX_DETAIL_KEYS: Final = 50
MAX_DETAIL_KEY_CHARS: Final = 80
MAX_MEMORY_ID_CHARS: Final = 160

_CODE_UNSAFE: Final = lazy_compile(r"[^a-zA-Z0-9_.:-]")
_HEX16: Final = lazy_compile(r"^[a-fA-F0-9]{16}\Z")
#: Absolute paths in detail strings (docs/decisions.md#b18): POSIX paths with at least two segments,
#: ``~/`` paths and Windows drive paths. Quotes, ``:;,()<>`` and whitespace end a path, so
#: ``…/x.json: EISDIR`` style messages keep their tail.
_ABS_PATH: Final = lazy_compile(
    r"(?<![A-Za-z0-9_.~/\\-])(?:"
    r"/[^\s/\"'`:;,()<>]+(?:/[^\s/\"'`:;,()<>]*)+"
    r"|~/[^\s\"'`:;,()<>]*"
    r"|[A-Za-z]:\\[^\s\"'`;,()<>]*"
    r")"
)
PATH_PLACEHOLDER: Final = "<path>"

_INT_LIMIT: Final = 2**63


# ---------------------------------------------------------------------------------------------
# Building records (docs/decisions.md#evidence-log-records)
# ---------------------------------------------------------------------------------------------


def clean_code(value: str, limit: int = MAX_REASON_CODE_CHARS) -> str:
    """Every character outside ``[a-zA-Z0-9_.:-]`` becomes ``_``; cut to ``limit`` characters."""
    return _CODE_UNSAFE.sub("_", value)[:limit]


def clean_reason_codes(codes: Iterable[str]) -> tuple[str, ...]:
    cleaned = (clean_code(code) for code in codes if isinstance(code, str))
    return tuple(code for code in cleaned if code)[:MAX_REASON_CODES]


def privacy_hash(value: str | None) -> str | None:
    """``hash16(value)`` for a non-empty value, else ``None``. Always hashes (docs/decisions.md#b9)."""
    if not value:
        return None
    return hash16(value)


def is_hash16(value: str) -> bool:
    return bool(_HEX16.match(value))


def scrub_paths(text: str) -> str:
    return _ABS_PATH.sub(PATH_PLACEHOLDER, text)


def preview_text(text: str, limit: int) -> str:
    """Redact, collapse whitespace, trim, cut to ``limit`` code points (a fixed point of redaction)."""
    return preview(text, limit)


def detail_text(text: str) -> str:
    """A detail string: redacted, without absolute paths, collapsed, at most 240 code points."""
    return preview(scrub_paths(redact(text)), EvidenceLogLimits.MAX_DETAIL_STRING_CHARS)


def sanitize_memory_ref(ref: MemoryRef | None) -> MemoryRef | None:
    if ref is None:
        return None
    memory_id = None
    if isinstance(ref.memory_id, str) and ref.memory_id:
        memory_id = ref.memory_id[:MAX_MEMORY_ID_CHARS]
    cleaned = MemoryRef(
        memory_id=memory_id,
        memory_key_hash=privacy_hash(ref.memory_key_hash),
        identity_key_hash=privacy_hash(ref.identity_key_hash),
        type=str(ref.type) if ref.type else None,
        source=str(ref.source) if ref.source else None,
        status=str(ref.status) if ref.status else None,
    )
    return None if cleaned == MemoryRef() else cleaned


def sanitize_relations(relations: Iterable[Relation]) -> tuple[Relation, ...]:
    out: list[Relation] = []
    for rel in relations:
        if len(out) >= MAX_RELATIONS:
            break
        out.append(Relation(role=rel.role, memory=sanitize_memory_ref(rel.memory)))
    return tuple(out)


def _finite_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return -_INT_LIMIT < value < _INT_LIMIT
    return math.isfinite(value)


def _detail_value(value: object) -> tuple[bool, Any]:
    """(keep, sanitised value) for one detail value, following the reference's type rules."""
    if isinstance(value, Digest):
        return True, str(value)  # a hash: nothing to redact (class Digest)
    if isinstance(value, StrEnum):
        return True, value.value  # one of the program's own words: nothing to redact
    if isinstance(value, str):
        return True, detail_text(value)
    if isinstance(value, bool) or value is None:
        return True, value
    if isinstance(value, int | float):
        return (True, value) if _finite_number(value) else (False, None)
    if isinstance(value, list | tuple):
        items = list(value)
        if all(isinstance(item, str) for item in items):
            return True, [detail_text(item) for item in items[: EvidenceLogLimits.MAX_DETAIL_ARRAY_ITEMS]]
        if all(_finite_number(item) for item in items):
            return True, items[: EvidenceLogLimits.MAX_DETAIL_ARRAY_ITEMS]
    return False, None


def sanitize_details(details: Mapping[str, object]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for count, (raw_key, raw_value) in enumerate(details.items()):
        if count >= MAX_DETAIL_KEYS:
            break
        key = clean_code(str(raw_key), MAX_DETAIL_KEY_CHARS)
        if not key:
            continue
        keep, value = _detail_value(raw_value)
        if keep:
            out[key] = value
    return out


def preview_limit(event_type: str) -> int:
    if event_type == EventType.EXTRACTION_CANDIDATE_REJECTED.value:
        return EvidenceLogLimits.MAX_REJECTED_PREVIEW_CHARS
    return EvidenceLogLimits.MAX_PREVIEW_CHARS


def build_record(
    inp: EvidenceInput,
    *,
    event_id: str,
    created_at: str,
    workspace_key: str,
    workspace_root_hash: str,
) -> EvidenceEvent:
    """The stored form of one core event, sanitised as docs/decisions.md#evidence-log-records describes
    (with the docs/decisions.md#b9 and docs/decisions.md#b18 fixes)."""
    event_type = str(inp.type)
    text_preview = preview_text(inp.text_preview, preview_limit(event_type)) if inp.text_preview else None
    return EvidenceEvent(
        version=1,
        event_id=event_id,
        created_at=created_at,
        workspace_key=workspace_key,
        workspace_root_hash=workspace_root_hash,
        type=event_type,
        phase=str(inp.phase),
        outcome=str(inp.outcome),
        reason_codes=clean_reason_codes(inp.reason_codes),
        session_hash=privacy_hash(inp.session_id),
        message_hash=privacy_hash(inp.message_id),
        memory=sanitize_memory_ref(inp.memory),
        relations=sanitize_relations(inp.relations),
        details=sanitize_details(inp.details),
        text_preview=text_preview or None,
    )


# ---------------------------------------------------------------------------------------------
# Reading lines back
# ---------------------------------------------------------------------------------------------

_typed_decoder: Final = msgspec.json.Decoder(EvidenceEvent)
_OPTIONAL_FIELDS: Final = ("sessionHash", "messageHash", "memory", "details", "textPreview")
_TEXT_FIELDS: Final = ("workspaceKey", "workspaceRootHash", "phase", "outcome")


def _plausible(event: EvidenceEvent) -> bool:
    return event.version == 1 and bool(event.event_id) and bool(event.created_at) and bool(event.type)


def _converts(raw: Any, tp: type[msgspec.Struct]) -> bool:
    return convert(raw, tp).map(lambda _: True).value_or(False)


def _repair(raw: dict[str, Any]) -> EvidenceEvent | None:
    """Lenient conversion of a line that passed the validity check but not the typed decoder: missing
    text fields become ``""``, missing reason codes ``[]`` (docs/decisions.md#b32), malformed optional
    parts are dropped."""
    fixed = dict(raw)
    for name in _TEXT_FIELDS:
        if not isinstance(fixed.get(name), str):
            fixed[name] = ""
    codes = fixed.get("reasonCodes")
    fixed["reasonCodes"] = [c for c in codes if isinstance(c, str)] if isinstance(codes, list) else []
    relations = fixed.get("relations")
    if relations is not None:
        items = relations if isinstance(relations, list) else []
        fixed["relations"] = [r for r in items if _converts(r, Relation)]
    base = {k: fixed[k] for k in ("version", "eventId", "createdAt", "type", *_TEXT_FIELDS, "reasonCodes")}
    for name in _OPTIONAL_FIELDS:
        if name in fixed and not _converts({**base, name: fixed[name]}, EvidenceEvent):
            del fixed[name]
    result = convert(fixed, EvidenceEvent)
    return result.value_or(None)


def parse_event_line(line: str | bytes) -> EvidenceEvent | None:
    """One stored record, or ``None`` when the line is not a valid record. A line is valid iff it is
    a JSON object with ``version`` 1 and non-empty string ``eventId``, ``createdAt`` and ``type``;
    everything else is read leniently."""
    try:
        event = _typed_decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        event = None
    if event is not None:
        return event if _plausible(event) else None
    raw = parse_json(line).value_or(None)
    if not isinstance(raw, dict):
        return None
    version = raw.get("version")
    if isinstance(version, bool) or not isinstance(version, int | float) or version != 1:
        return None
    for name in ("eventId", "createdAt", "type"):
        value = raw.get(name)
        if not isinstance(value, str) or not value:
            return None
    raw["version"] = 1
    return _repair(raw)


def event_time_ms(event: EvidenceEvent) -> int:
    """``createdAt`` in ms; an unparsable timestamp counts as 0 (the epoch), as in the reference."""
    parsed = parse_iso_ms(event.created_at)
    return 0 if parsed is None else parsed


def serialized_size(event: EvidenceEvent) -> int:
    """Bytes of the event's JSONL line including its newline."""
    return len(encode_line(event)) + 1


# ---------------------------------------------------------------------------------------------
# Prune (docs/decisions.md#evidence-log-append-and-prune)
# ---------------------------------------------------------------------------------------------


def prune_indices(
    events: Sequence[EvidenceEvent],
    now_ms: int,
    *,
    sizes: Sequence[int] | None = None,
    max_age_days: int = EvidenceLogLimits.MAX_AGE_DAYS,
    max_events: int = EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE,
    max_bytes: int = EvidenceLogLimits.MAX_BYTES_PER_WORKSPACE,
) -> tuple[int, ...]:
    """Which events survive a prune, as indices into ``events`` in their new (stored) order.

    Drop events older than 90 days (an unparsable ``createdAt`` counts as the epoch), sort the rest by
    time with ties kept in file order, keep the newest 5000, then drop the oldest until the serialised
    log (``sizes[i]`` bytes per line, newline included) fits in 2 MiB. The limits are parameters only
    so that tests can exercise them at a small scale.
    """
    if sizes is None:
        sizes = [serialized_size(e) for e in events]
    cutoff = now_ms - max_age_days * DAY_MS
    timed = [(event_time_ms(e), i) for i, e in enumerate(events)]
    kept = sorted((t, i) for t, i in timed if t >= cutoff)
    if len(kept) > max_events:
        kept = kept[len(kept) - max_events :]
    total = sum(sizes[i] for _, i in kept)
    start = 0
    while start < len(kept) and total > max_bytes:
        total -= sizes[kept[start][1]]
        start += 1
    return tuple(i for _, i in kept[start:])


def prune(events: Sequence[EvidenceEvent], now_ms: int) -> tuple[EvidenceEvent, ...]:
    """The events a prune keeps, in stored order (see :func:`prune_indices`)."""
    return tuple(events[i] for i in prune_indices(events, now_ms))


# ---------------------------------------------------------------------------------------------
# Records imported from another tool
# ---------------------------------------------------------------------------------------------


def _keep_hash(value: str | None) -> str | None:
    """A hash field of an imported record: a 16-hex value is the reference's own hash and is kept (so
    imported and new events still correlate); anything else is a raw value and gets hashed."""
    if not value:
        return None
    return value.lower() if is_hash16(value) else hash16(value)


def _imported_ref(ref: MemoryRef | None) -> MemoryRef | None:
    cleaned = sanitize_memory_ref(ref)
    if cleaned is None or ref is None:
        return cleaned
    return msgspec.structs.replace(
        cleaned,
        memory_key_hash=_keep_hash(ref.memory_key_hash),
        identity_key_hash=_keep_hash(ref.identity_key_hash),
    )


def sanitize_imported(event: EvidenceEvent) -> EvidenceEvent:
    """An evidence record written by another tool (``import-owm``), made as private as workmem's
    own: raw ids and keys hashed, previews and details redacted and without absolute paths."""
    return msgspec.structs.replace(
        event,
        reason_codes=clean_reason_codes(event.reason_codes),
        session_hash=_keep_hash(event.session_hash),
        message_hash=_keep_hash(event.message_hash),
        memory=_imported_ref(event.memory),
        relations=tuple(
            Relation(role=rel.role, memory=_imported_ref(rel.memory))
            for rel in event.relations[:MAX_RELATIONS]
        ),
        details=sanitize_details(event.details),
        text_preview=(
            preview_text(event.text_preview, preview_limit(event.type)) if event.text_preview else None
        ),
    )
