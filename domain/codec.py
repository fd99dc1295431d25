"""JSON encoding and decoding of the domain structs, pure (bytes in, values out).

Two promises (docs/decisions.md#d11):

* a store, journal or session file written by opencode-working-memory v1.3-v1.5 decodes; unknown
  fields at any level are kept in the struct's ``extras`` and written back on encode;
* bad input never raises: invalid JSON or a value of the wrong shape gives ``Failure(DecodeFailure)``.
  Inside a store or journal, one malformed entry does not sink the file: it is kept verbatim under
  ``workmemInvalidEntries`` (so nothing stored is lost) and ignored by the core.
"""

from __future__ import annotations

import types
import typing
from functools import lru_cache
from itertools import repeat
from typing import Any, Final, TypeVar, Union, get_args, get_origin

import msgspec
from returns.result import Failure, Result, Success

from domain.model import (
    EvidenceEvent,
    PendingJournal,
    SessionState,
    StoreLimits,
    WorkspaceRef,
    WorkspaceStore,
)

T = TypeVar("T", bound=msgspec.Struct)

EXTRAS_NAME: Final = "__extras__"
#: Lists of memories where one malformed item is set aside instead of failing the whole document.
_LENIENT_LISTS: Final = frozenset({"entries", "pendingMemories"})
INVALID_ENTRIES_KEY: Final = "workmemInvalidEntries"


class DecodeFailure(msgspec.Struct, frozen=True):
    """Why a document could not be decoded. ``kind`` is ``invalid_json`` or ``invalid_shape``."""

    kind: str
    message: str


_json_decoder: Final = msgspec.json.Decoder()
_json_encoder: Final = msgspec.json.Encoder()


def _struct_of(tp: Any) -> type[msgspec.Struct] | None:
    """The struct type inside ``tp`` (plain, optional, or a homogeneous tuple), if any."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return tp
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            found = _struct_of(arg)
            if found is not None:
                return found
    return None


def _is_sequence_of_struct(tp: Any) -> type[msgspec.Struct] | None:
    origin = get_origin(tp)
    if origin in (tuple, list):
        args = get_args(tp)
        if args:
            return _struct_of(args[0])
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            found = _is_sequence_of_struct(arg)
            if found is not None:
                return found
    return None


_FieldPlan = tuple[dict[str, tuple[str, type[msgspec.Struct] | None, bool]], bool]


# A memo over classes, constants of the program: what a struct's definition says, not a value built
# at run time, so it may serve every caller of the process (docs/decisions.md#d14).
@lru_cache(maxsize=256)
def _plan(tp: type[msgspec.Struct]) -> _FieldPlan:
    """encode name -> (python name, nested struct type, is_sequence); and whether tp keeps extras."""
    hints = typing.get_type_hints(tp)
    fields: dict[str, tuple[str, type[msgspec.Struct] | None, bool]] = {}
    has_extras = False
    for info in msgspec.structs.fields(tp):
        if info.encode_name == EXTRAS_NAME:
            has_extras = True
            continue
        hint = hints[info.name]
        seq = _is_sequence_of_struct(hint)
        if seq is not None:
            fields[info.encode_name] = (info.name, seq, True)
        else:
            fields[info.encode_name] = (info.name, _struct_of(hint), False)
    return fields, has_extras


# A memo over classes, like _plan.
@lru_cache(maxsize=256)
def _plain_names(tp: type[msgspec.Struct]) -> frozenset[str]:
    """The encode names of ``tp``'s fields that hold no struct: a document with only these keys has
    nothing to split."""
    return frozenset(name for name, spec in _plan(tp)[0].items() if spec[1] is None)


def _split(raw: Any, tp: type[msgspec.Struct], lenient_entries: bool, quick: bool = False) -> Any:
    """Move unknown keys of ``raw`` (recursively) into ``__extras__`` so msgspec can convert it.
    ``quick``: a lenient list whose items all have plain known keys is left for the one conversion of
    the whole document to check (the caller goes again without ``quick`` if that fails)."""
    if not isinstance(raw, dict):
        return raw
    if raw.keys() <= _plain_names(tp):
        return raw  # every key known, none nested (most memories): nothing to move
    fields, has_extras = _plan(tp)
    known: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in raw.items():
        spec = fields.get(key)
        if spec is None:
            if key == EXTRAS_NAME:
                continue
            extras[key] = value
            continue
        _, nested, is_seq = spec
        if nested is not None and is_seq and isinstance(value, list):
            if lenient_entries and key in _LENIENT_LISTS:
                plain = _plain_names(nested)
                # (the same test as ``isinstance(item, dict) and item.keys() <= plain`` per item, in C)
                if quick and all(map(isinstance, value, repeat(dict))) and all(map(plain.issuperset, value)):
                    known[key] = value
                    continue
                good: list[Any] = []
                for item in value:
                    prepared = _split(item, nested, lenient_entries)
                    try:
                        # the converted struct, not the dict: the list is not converted twice
                        good.append(msgspec.convert(prepared, nested))
                    except msgspec.ValidationError:
                        extras.setdefault(INVALID_ENTRIES_KEY, []).append(item)
                known[key] = good
            else:
                known[key] = [_split(item, nested, lenient_entries) for item in value]
        elif nested is not None and not is_seq:
            known[key] = _split(value, nested, lenient_entries)
        else:
            known[key] = value
    if has_extras and extras:
        known[EXTRAS_NAME] = extras
    return known


def convert(raw: Any, tp: type[T], *, lenient_entries: bool = True) -> Result[T, DecodeFailure]:
    """Turn already-parsed JSON into ``tp``, keeping unknown fields."""
    if lenient_entries:
        try:
            # one conversion of the whole document first (docs/performance.md, "Search")
            return Success(msgspec.convert(_split(raw, tp, True, quick=True), tp))
        except msgspec.ValidationError:
            pass  # an invalid entry somewhere: the careful way below keeps every other one
    try:
        return Success(msgspec.convert(_split(raw, tp, lenient_entries), tp))
    except msgspec.ValidationError as exc:
        return Failure(DecodeFailure("invalid_shape", str(exc)))


def parse_json(data: bytes | str) -> Result[Any, DecodeFailure]:
    try:
        return Success(_json_decoder.decode(data))
    except msgspec.DecodeError as exc:
        return Failure(DecodeFailure("invalid_json", str(exc)))


def decode(data: bytes | str, tp: type[T]) -> Result[T, DecodeFailure]:
    """Parse and convert one JSON document."""
    return parse_json(data).bind(lambda raw: convert(raw, tp))


#: Fields the reference always writes, even at their default value: (encode name, default) in order.
_ALWAYS: Final[dict[type[msgspec.Struct], tuple[tuple[str, Any], ...]]] = {
    WorkspaceStore: (("version", 1), ("limits", None), ("entries", []), ("migrations", [])),
    StoreLimits: (("maxRenderedChars", 3600), ("maxEntries", 28)),
    PendingJournal: (("version", 1), ("entries", [])),
    SessionState: (
        ("version", 1),
        ("turn", 0),
        ("activeFiles", []),
        ("openErrors", []),
        ("recentDecisions", []),
        ("pendingMemories", []),
    ),
    EvidenceEvent: (("reasonCodes", []),),
}


# A memo over classes, like _plan.
@lru_cache(maxsize=256)
def _nested_names(tp: type[msgspec.Struct]) -> frozenset[str]:
    """The encode names of ``tp``'s fields that hold structs (or sequences of them)."""
    return frozenset(name for name, spec in _plan(tp)[0].items() if spec[1] is not None)


def _fixup(value: Any, tp: type[msgspec.Struct]) -> Any:
    """Merge extras back, restore always-written fields, and recurse into nested structs."""
    if not isinstance(value, dict):
        return value
    always = _ALWAYS.get(tp)
    if not always and EXTRAS_NAME not in value and _nested_names(tp).isdisjoint(value):
        return value  # nothing to merge, restore or recurse into (most memories)
    fields, _ = _plan(tp)
    extras = value.pop(EXTRAS_NAME, None)
    if always:
        for name, default in always:
            if name not in value:
                nested = fields[name][1]
                value[name] = _fixup({}, nested) if default is None and nested is not None else default
        # keep the struct's field order
        value = {name: value[name] for name in fields if name in value}
    out: dict[str, Any] = {}
    for key, item in value.items():
        spec = fields.get(key)
        nested = spec[1] if spec is not None else None
        if nested is not None and spec is not None and spec[2] and isinstance(item, (list, tuple)):
            out[key] = [_fixup(x, nested) for x in item]
        elif nested is not None:
            out[key] = _fixup(item, nested)
        else:
            out[key] = item
    if isinstance(extras, dict):
        for key, item in extras.items():
            if key not in out:
                out[key] = item
    return out


def to_builtins(value: msgspec.Struct) -> Any:
    """The JSON-ready form of a struct, with its extras merged back in."""
    return _fixup(msgspec.to_builtins(value), type(value))


def encode_pretty(value: msgspec.Struct) -> bytes:
    """2-space indented JSON, like the reference's ``JSON.stringify(data, null, 2)``."""
    return msgspec.json.format(_json_encoder.encode(to_builtins(value)), indent=2)


def encode_line(value: msgspec.Struct) -> bytes:
    """Compact JSON without a newline (one JSONL record)."""
    return _json_encoder.encode(to_builtins(value))


def decode_store(data: bytes | str) -> Result[WorkspaceStore, DecodeFailure]:
    return decode(data, WorkspaceStore)


class _StoreHead(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The few top-level fields of a workspace store that a message or tool observation reads."""

    workspace: WorkspaceRef
    updated_at: str
    last_activity_at: str | None = None
    revision: int | None = None


def decode_store_head(data: bytes | str) -> WorkspaceStore | None:
    """The store's workspace, ``updatedAt`` and ``lastActivityAt`` without its entries (a fraction
    of a full decode), as a :class:`WorkspaceStore` with no entries; ``None`` for anything that is
    not a store workmem wrote (no ``revision``) or does not decode: read it in full then.

    The value stands in for the store only in an operation that leaves the store as it is; the shell
    checks that (docs/performance.md)."""
    try:
        head = msgspec.json.decode(data, type=_StoreHead)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if head.revision is None:
        return None
    return WorkspaceStore(
        workspace=head.workspace,
        updated_at=head.updated_at,
        last_activity_at=head.last_activity_at,
        revision=head.revision,
    )


def decode_journal(data: bytes | str) -> Result[PendingJournal, DecodeFailure]:
    return decode(data, PendingJournal)


def decode_session(data: bytes | str) -> Result[SessionState, DecodeFailure]:
    return decode(data, SessionState)
