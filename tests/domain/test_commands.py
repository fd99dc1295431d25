"""The command union (docs/decisions.md#d13): every member of :data:`domain.commands.Command` has an
explicit :func:`domain.commands.footprint` case (a new command cannot fall through to the workspace's
footprint unnoticed: mypy fails on its ``assert_never``, and so does this test)."""

from __future__ import annotations

from enum import Enum
from typing import Any, get_args

import msgspec
from msgspec import inspect

from domain.commands import Batch, Command, Footprint, SessionCommand, footprint
from domain.reverify import Reverify
from domain.search.commands import Search, Show


def _sample(kind: inspect.Type) -> Any:
    """The simplest value of ``kind``: what a required field of a command is given here."""
    match kind:
        case inspect.StrType():
            return "x"
        case inspect.BoolType():
            return False
        case inspect.IntType() | inspect.FloatType():
            return 0
        case inspect.NoneType() | inspect.AnyType():
            return None
        case inspect.UnionType(types=types):
            none = any(isinstance(t, inspect.NoneType) for t in types)
            return None if none else _sample(types[0])
        case inspect.VarTupleType() | inspect.TupleType() | inspect.ListType() | inspect.SetType():
            return ()
        case inspect.DictType():
            return {}
        case inspect.EnumType(cls=cls):
            members: list[Enum] = list(cls)
            return members[0]
        case inspect.LiteralType(values=values):
            return values[0]
        case inspect.StructType(cls=cls):
            return _instance(cls)
    raise AssertionError(f"no sample value for {kind!r}")


def _instance(cls: type[msgspec.Struct]) -> Any:
    """An instance of ``cls`` with every required field given its simplest value."""
    info = inspect.type_info(cls)
    assert isinstance(info, inspect.StructType)
    return cls(**{f.name: _sample(f.type) for f in info.fields if f.required})


def test_every_member_of_the_command_union_has_a_footprint() -> None:
    members = get_args(Command)
    assert {Search, Show, Reverify} <= set(members)  # nested unions are members too
    for member in members:
        found = footprint(_instance(member))  # a member without a case fails here (assert_never)
        if member in get_args(SessionCommand):
            assert found is not None and found.session_id == "x", member  # the session it names
        elif member is Batch:
            assert found is None  # no steps: nothing read
        else:  # the user's commands, recovery, sync, search, re-verification
            assert found == Footprint(None, False, False), member
