"""The JSON shape of every stored struct is pinned: field order, camelCase names, omitted defaults,
keyword-only construction and immutability (docs/decisions.md#d11). A refactor of the struct
configuration must leave every encoded store, journal, session and evidence line byte-identical, so
this test encodes a fully populated and a minimal sample of each struct and compares the bytes with
``tests/data/model_encoding.json``."""

from __future__ import annotations

import enum
import inspect
import json
import types
import typing
from pathlib import Path
from typing import Any, Final, Union

import msgspec
import pytest

from domain import model
from domain.codec import encode_line

EXPECTED: Final = Path(__file__).parents[1] / "data" / "model_encoding.json"

STRUCTS: Final = tuple(
    value
    for value in vars(model).values()
    if isinstance(value, type)
    and issubclass(value, msgspec.Struct)
    and value.__module__ == model.__name__
    and not value.__name__.startswith("_")
)


def _sample(tp: Any, name: str) -> Any:
    """A non-default value of type ``tp`` for the field ``name``."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _sample(args[0], name)
    if origin is tuple:
        return (_sample(typing.get_args(tp)[0], name),)
    if origin is dict:
        return {"zKey": f"{name}-value"}
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _full(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return list(tp)[-1]
    if tp is str:
        return f"{name}-text"
    if tp is bool:
        return True
    if tp is int:
        return 7
    if tp is float:
        return 1.5
    if tp is Any:
        return f"{name}-any"
    raise AssertionError(f"no sample for {tp!r}")


def _full(tp: type[msgspec.Struct]) -> msgspec.Struct:
    hints = typing.get_type_hints(tp)
    values = {f.name: _sample(hints[f.name], f.name) for f in msgspec.structs.fields(tp)}
    return tp(**values)


def _minimal(tp: type[msgspec.Struct]) -> msgspec.Struct:
    hints = typing.get_type_hints(tp)
    values = {f.name: _sample(hints[f.name], f.name) for f in msgspec.structs.fields(tp) if f.required}
    return tp(**values)


def _describe(tp: type[msgspec.Struct]) -> dict[str, Any]:
    config = tp.__struct_config__
    return {
        "fields": list(tp.__struct_fields__),
        "encodeNames": list(tp.__struct_encode_fields__),
        "kwOnly": sorted(
            name
            for name, parameter in inspect.signature(tp).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
        ),
        "config": {
            name: repr(getattr(config, name))
            for name in ("frozen", "omit_defaults", "tag", "tag_field", "array_like", "forbid_unknown_fields")
        },
        "full": msgspec.json.encode(_full(tp)).decode(),
        "minimal": msgspec.json.encode(_minimal(tp)).decode(),
        "codecFull": encode_line(_full(tp)).decode(),
        "codecMinimal": encode_line(_minimal(tp)).decode(),
    }


def current() -> dict[str, Any]:
    return {tp.__name__: _describe(tp) for tp in STRUCTS}


def test_every_struct_is_sampled() -> None:
    assert len(STRUCTS) >= 16


@pytest.mark.parametrize("tp", STRUCTS, ids=lambda tp: tp.__name__)
def test_struct_encoding_is_unchanged(tp: type[msgspec.Struct]) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert _describe(tp) == expected[tp.__name__]


@pytest.mark.parametrize("tp", STRUCTS, ids=lambda tp: tp.__name__)
def test_structs_are_keyword_only_and_frozen(tp: type[msgspec.Struct]) -> None:
    sample = _full(tp)
    with pytest.raises(TypeError):
        tp(*msgspec.structs.astuple(sample))
    with pytest.raises(AttributeError):
        setattr(sample, msgspec.structs.fields(tp)[0].name, None)


if __name__ == "__main__":  # regenerate only when a change of the stored format is intended
    EXPECTED.write_text(json.dumps(current(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
