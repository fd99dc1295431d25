"""Salvage of damaged store, journal and session documents: read everything that can still be read,
take what cannot from the file's last good generation when there is one, count what is lost, and
never pretend a damaged document is empty (docs/decisions.md#last-good-generation).

Three stages, each tried only when the previous one failed:

1. **strict**: the document decodes as it is (:func:`domain.codec.decode`);
2. **lenient**: invalid UTF-8 bytes and lone UTF-16 surrogate escapes (``"\\ud83d"``, which the
   reference writes when its 260-unit cut splits an emoji) are replaced by U+FFFD, then the document
   decodes; an entry of the wrong shape is kept verbatim under ``workmemInvalidEntries`` as usual;
3. **fragments**: the document is still not JSON (torn, zeroed, garbage anywhere). Every top-level
   field whose value survived whole is kept, and every complete entry of the main list (``entries``,
   ``pendingMemories``) is read (:mod:`domain.salvage_scan`: after damage the scan resynchronises on
   the next entry start at the entries' own nesting). What did not survive comes from ``previous``,
   the file's last good generation, when the caller has one: its other fields, and the entries the
   damaged bytes lack, by id (the damaged bytes hold the newer version of an entry, so theirs wins),
   except those the damaged bytes show were archived or absorbed since. Without a previous
   generation the rest comes from ``empty``.

The caller keeps the original bytes aside; this module only computes values and counts.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final, Generic, TypeVar

import msgspec

from domain.codec import INVALID_ENTRIES_KEY, convert, decode, encode_line, to_builtins
from domain.model import MemoryEntry
from domain.salvage_scan import Fragments, repair_text, scan_document

T = TypeVar("T", bound=msgspec.Struct)

__all__ = [
    "SalvageMode",
    "Salvaged",
    "describe_salvage",
    "getattr_list",
    "main_list",
    "repair_text",
    "salvage_document",
]


class SalvageMode:
    STRICT: Final = "strict"
    LENIENT: Final = "lenient"
    #: the document was read in fragments (some entries, some fields)
    ENTRIES: Final = "entries"
    #: nothing of the damaged document was readable: its last good generation stands in
    PREVIOUS: Final = "previous"


class Salvaged(msgspec.Struct, Generic[T], frozen=True):
    """A decoded (possibly repaired or recovered) document and what it cost.

    ``replaced_characters``: invalid byte sequences and lone surrogates replaced by U+FFFD;
    ``readable_entries``: entries of the main list read from the damaged bytes;
    ``unreadable_entries``: entries set aside (wrong shape) plus the places in the damaged bytes where
    an entry could not be read (a torn tail counts as one);
    ``previous_entries``: entries the damaged bytes lack that the last good generation gave back;
    ``lost_entries``: entries whose id is still visible in the damaged bytes but which came back from
    nowhere (a damaged place can hide more, which only the last good generation can give back)."""

    value: T
    mode: str
    replaced_characters: int = 0
    readable_entries: int = 0
    unreadable_entries: int = 0
    previous_entries: int = 0
    lost_entries: int = 0

    @property
    def damaged(self) -> bool:
        return self.mode != SalvageMode.STRICT


def main_list(tp: type[msgspec.Struct]) -> str:
    """The JSON name of the list of memories in a store, journal (``entries``) or session
    (``pendingMemories``)."""
    fields = {f.encode_name for f in msgspec.structs.fields(tp)}
    return "pendingMemories" if "pendingMemories" in fields else "entries"


def getattr_list(value: msgspec.Struct, encode_name: str) -> tuple[Any, ...]:
    """The tuple a struct holds under the JSON name ``encode_name``."""
    for info in msgspec.structs.fields(value):
        if info.encode_name == encode_name:
            found = getattr(value, info.name)
            return tuple(found) if isinstance(found, (list, tuple)) else ()
    return ()


def _invalid_count(value: msgspec.Struct) -> int:
    invalid = to_builtins(value).get(INVALID_ENTRIES_KEY)
    return len(invalid) if isinstance(invalid, list) else 0


def salvage_document(
    data: bytes,
    tp: type[T],
    empty: T | None = None,
    previous: T | None = None,
    *,
    settled: frozenset[str] = frozenset(),
) -> Salvaged[T] | None:
    """Decode ``data`` as ``tp`` as well as it can be decoded (see the module docstring), or
    ``None`` when nothing can be read and there is no ``previous`` generation. ``empty`` is the
    document the fragments fill when there is no previous generation (without either, a document
    whose required fields did not survive is unreadable). ``settled``: ids of entries that must not
    come back from the previous generation (a journal's entries the store already holds). Pure and
    total."""
    list_key = main_list(tp)
    strict = decode(data, tp).value_or(None)
    if strict is not None:
        return Salvaged(strict, SalvageMode.STRICT)
    text, replaced = repair_text(data)
    lenient = decode(text.encode("utf-8"), tp).value_or(None) if replaced else None
    if lenient is not None:
        readable = len(getattr_list(lenient, list_key))
        return Salvaged(lenient, SalvageMode.LENIENT, replaced, readable, _invalid_count(lenient))
    found = scan_document(text, list_key)
    return _assemble(tp, list_key, found, replaced, empty, previous, settled)


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and convert(item, MemoryEntry).value_or(None) is not None


def _with_fields(
    tp: type[T], base: dict[str, Any] | None, fields: dict[str, Any], list_key: str
) -> dict[str, Any] | None:
    """``base`` with each surviving field that keeps it a valid ``tp`` (its main list empty here);
    without a base every required field must have survived."""
    if base is None:
        doc = {**fields, list_key: []}
        return doc if convert(doc, tp).value_or(None) is not None else None
    out = dict(base)
    for key, value in fields.items():
        if convert({**out, key: value}, tp).value_or(None) is not None:
            out[key] = value
    return out


def _gone(doc: dict[str, Any], items: list[Any]) -> set[str]:
    """Ids the damaged document shows left the list on purpose: archived (a marker remains) or
    absorbed into another entry by dedupe."""
    gone: set[str] = set()
    for marker in doc.get("archived") or ():
        if isinstance(marker, dict) and isinstance(marker.get("memoryId"), str):
            gone.add(marker["memoryId"])
    for item in items:
        absorbed = item.get("absorbedIds") if isinstance(item, dict) else None
        if isinstance(absorbed, list):
            gone.update(x for x in absorbed if isinstance(x, str))
    return gone


def _item_id(item: Any) -> str | None:
    found = item.get("id") if isinstance(item, dict) else None
    return found if isinstance(found, str) else None


def _present(
    item: Any,
    item_id: str,
    shared: Counter[str | None],
    newer: dict[str, list[Any]],
    unmatched: dict[str, list[str]],
) -> bool:
    """Whether the damaged document holds the previous ``item`` (any version of it when its id is
    unique; an identical copy not matched yet when several previous items share the id)."""
    if shared[item_id] == 1:
        return True
    pool = unmatched.setdefault(item_id, [_canonical(x) for x in newer[item_id]])
    found = _canonical(item)
    if found in pool:
        pool.remove(found)
        return True
    return False


def _canonical(item: Any) -> str:
    """An item as one text: a memory as the codec writes it (absent and default fields alike),
    anything else as sorted JSON."""
    entry = convert(item, MemoryEntry).value_or(None) if isinstance(item, dict) else None
    if entry is not None:
        return encode_line(entry).decode("utf-8")
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def _merge(items: list[Any], earlier: list[Any], gone: set[str]) -> tuple[list[Any], int]:
    """The damaged document's items over the previous generation's, by id, in the previous order
    (items it did not have follow in their own order); and how many came from the previous one.
    Where several previous items share an id (a store the reference wrote, docs/decisions.md#s14),
    only an identical item counts as present."""
    newer: dict[str, list[Any]] = {}
    for item in items:
        item_id = _item_id(item)
        if item_id is not None:
            newer.setdefault(item_id, []).append(item)
    shared = Counter(_item_id(item) for item in earlier)
    unmatched: dict[str, list[str]] = {}
    out: list[Any] = []
    placed: set[str] = set()
    added = 0
    for item in earlier:
        item_id = _item_id(item)
        if item_id is not None and item_id in newer and _present(item, item_id, shared, newer, unmatched):
            if item_id not in placed:
                out.extend(newer[item_id])
                placed.add(item_id)
        elif item_id is None or item_id not in gone:
            out.append(item)
            added += 1
    out.extend(item for item in items if _item_id(item) not in placed)
    return out, added


def _assemble(
    tp: type[T],
    list_key: str,
    found: Fragments,
    replaced: int,
    empty: T | None,
    previous: T | None,
    settled: frozenset[str],
) -> Salvaged[T] | None:
    base_value = previous if previous is not None else empty
    base: dict[str, Any] | None = None
    earlier: list[Any] = []
    if base_value is not None:
        base = to_builtins(base_value)
        earlier = list(base.get(list_key) or ()) if previous is not None else []
        base[list_key] = []
    fields = {k: v for k, v in found.fields.items() if k != list_key}
    doc = _with_fields(tp, base, fields, list_key)
    items = list(found.items)
    if not items and not found.complete and previous is None:
        return None
    if doc is None:
        return None
    merged, added = items, 0
    if previous is not None and not found.complete:
        merged, added = _merge(items, earlier, _gone(doc, items) | settled)
    doc[list_key] = merged
    if isinstance(doc.get(INVALID_ENTRIES_KEY), list):
        doc[INVALID_ENTRIES_KEY] = list(doc[INVALID_ENTRIES_KEY])  # convert appends to it
    value = convert(doc, tp).value_or(None)
    if value is None:
        return None
    readable = sum(1 for item in items if _is_entry(item))
    kept = {entry.id for entry in getattr_list(value, list_key) if isinstance(entry, MemoryEntry)}
    lost = len(set(found.unreadable_ids) - kept)
    unreadable = len(items) - readable + found.unreadable_places
    mode = SalvageMode.ENTRIES if items or found.complete else SalvageMode.PREVIOUS
    return Salvaged(value, mode, replaced, readable, unreadable, added, lost)


def describe_salvage(salvaged: Salvaged[Any], previous_name: str | None = None) -> str:
    """A short, content-free description. Lenient: ``salvaged: 12 entries readable, 3 damaged
    characters replaced by U+FFFD``; in fragments: ``recovered 167 entries from the damaged bytes
    and 333 from the last good generation (NAME), 1 unreadable, 0 entries known lost``."""
    replaced = salvaged.replaced_characters
    if salvaged.mode in (SalvageMode.STRICT, SalvageMode.LENIENT):
        parts = [f"{salvaged.readable_entries} entries readable"]
        if salvaged.unreadable_entries:
            parts.append(f"{salvaged.unreadable_entries} unreadable")
        if replaced:
            parts.append(f"{replaced} damaged characters replaced by U+FFFD")
        return "salvaged: " + ", ".join(parts)
    text = f"recovered {salvaged.readable_entries} entries from the damaged bytes"
    if previous_name is not None:
        text += f" and {salvaged.previous_entries} from the last good generation ({previous_name})"
    parts = [text]
    if salvaged.unreadable_entries:
        parts.append(f"{salvaged.unreadable_entries} unreadable, {salvaged.lost_entries} entries known lost")
    if replaced:
        parts.append(f"{replaced} damaged characters replaced by U+FFFD")
    return ", ".join(parts)
