"""The rule of the house: ``domain/`` never touches the outside world and keeps no state between
calls (docs/architecture.md, docs/decisions.md#d14)."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.enums import MemoryType
from domain.model import MemoryEntry

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
FORBIDDEN_MODULES = {
    "adapters",
    "os",
    "sys",
    "time",
    "random",
    "uuid",
    "pathlib",
    "filelock",
    "platformdirs",
    "shutil",
    "subprocess",
    "socket",
    "secrets",
    "tempfile",
    "io",
}
FORBIDDEN_CALLS = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
    ("time", "monotonic"),
    ("time", "perf_counter"),
}
FORBIDDEN_NAMES = {"open", "input", "print", "exec", "eval", "__import__"}


def _modules() -> list[Path]:
    return sorted(DOMAIN.rglob("*.py"))


def violations(source: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                base = func.value
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
                if (name, func.attr) in FORBIDDEN_CALLS:
                    found.append(f"call {name}.{func.attr}()")
            elif isinstance(func, ast.Name) and func.id in FORBIDDEN_NAMES:
                found.append(f"call {func.id}()")
    return found


def test_domain_has_modules() -> None:
    assert len(_modules()) >= 5


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_domain_module_is_pure(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "snippet",
    [
        "import os",
        "from pathlib import Path",
        "import time",
        "from adapters import cli",
        "from datetime import datetime\nx = datetime.now()",
        "import random",
        "import uuid",
        "from filelock import FileLock",
        "import platformdirs",
        "import sys",
        "open('x')",
        "import time as t",
    ],
)
def test_checker_catches_impurity(snippet: str) -> None:
    assert violations(snippet) != []


# ---------------------------------------------------------------------------------------------
# No module-level mutable state (docs/decisions.md#d14)
# ---------------------------------------------------------------------------------------------

#: Calls that make a mutable container.
MUTABLE_FACTORIES = {"dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "deque", "Counter"}
#: An annotation naming a mutable container (``frozenset[...]`` does not match).
CONTAINER_ANNOTATION = re.compile(r"\b(?:dict|list|set|Dict|List|Set|MutableMapping|MutableSequence)\b")
#: Methods that change a container in place.
MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "clear", "update", "setdefault", "add", "discard",
    "remove", "sort", "reverse", "appendleft", "extendleft", "popleft", "move_to_end",
}  # fmt: skip
#: Module-level containers that are filled while the modules import and never change afterwards,
#: with the reason each may stay. Nothing else may be mutated.
FILLED_AT_IMPORT = {
    # every pattern js_compile made while the modules imported, for the tests that check them all
    ("domain/jsregex.py", "JS_PATTERNS"),
}


def _is_final(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(head, ast.Name) and head.id == "Final") or (
        isinstance(head, ast.Attribute) and head.attr == "Final"
    )


def _makes_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_FACTORIES
    return False


def _top_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module-level statements, also inside a top-level ``if``/``try``."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop(0)
        yield node
        if isinstance(node, ast.If | ast.Try):
            stack.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)


def module_containers(tree: ast.Module) -> dict[str, ast.stmt]:
    """Names a module binds at module level to a mutable container (``__all__`` aside)."""
    found: dict[str, ast.stmt] = {}
    for node in _top_level(tree):
        if isinstance(node, ast.Assign) and _makes_container(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id != "__all__":
                    found[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotated = CONTAINER_ANNOTATION.search(ast.unparse(node.annotation)) is not None
            if _makes_container(node.value) or annotated:
                found[node.target.id] = node
    return found


def _base(expr: ast.expr) -> str | None:
    """The name an expression changes when it is changed in place: ``NAME``, ``NAME[...]``,
    ``module.NAME`` (for a plain ``module``)."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id != "self":
        return expr.attr
    return None


def _mutated(node: ast.AST) -> str | None:
    """The name a node changes in place (``NAME.clear()``, ``NAME[k] = v``, ``del NAME[k]``,
    ``NAME += ...``), or ``None``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
        return _base(node.func.value)
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign | ast.Delete):
        targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
    elif isinstance(node, ast.AugAssign):
        targets = [node.target]
    for target in targets:
        name = _base(target)
        if name is not None:
            return name
    return None


def _keyed_by_id(node: ast.AST) -> str | None:
    """The name of a table looked up by ``id(...)``: ``NAME[id(x)]``, ``NAME.get(id(x))``."""

    def is_id(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "id"

    if isinstance(node, ast.Subscript) and is_id(node.slice):
        return _base(node.value)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"get", "pop", "setdefault"}
        and node.args
        and is_id(node.args[0])
    ):
        return _base(node.func.value)
    return None


def _function_locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    args = function.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _scoped(node: ast.AST, local: frozenset[str] = frozenset()) -> Iterator[tuple[ast.AST, frozenset[str]]]:
    """Every node under ``node`` with the names local to the functions around it."""
    for child in ast.iter_child_nodes(node):
        inner = local
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner = local | _function_locals(child)
        yield child, inner
        yield from _scoped(child, inner)


def state_violations(sources: dict[str, str]) -> list[str]:
    """Module-level mutable state in ``sources`` (path -> text): a module-level container that is not
    ``Final``; a module-level container (of any of the modules) changed in place, outside
    :data:`FILLED_AT_IMPORT`; a ``global`` statement; a module-level table looked up by ``id()``."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    containers = {path: module_containers(tree) for path, tree in trees.items()}
    shared = {name for names in containers.values() for name in names}
    found: list[str] = []
    for path, names in containers.items():
        for name, binding in names.items():
            if not (isinstance(binding, ast.AnnAssign) and _is_final(binding.annotation)):
                found.append(f"{path}: module-level container {name} is not Final")
    for path, tree in trees.items():
        for node, local in _scoped(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Global):
                found.append(f"{path}: global {', '.join(node.names)} (line {line})")
            changed = _mutated(node)
            if changed in shared and changed not in local and (path, changed) not in FILLED_AT_IMPORT:
                found.append(f"{path}: {changed} is changed in place (line {line})")
            table = _keyed_by_id(node)
            if table is not None and table not in local:
                found.append(f"{path}: {table} is looked up by id() (line {line})")
    return sorted(found)


def test_domain_keeps_no_module_level_mutable_state() -> None:
    sources = {str(p.relative_to(DOMAIN.parent)): p.read_text(encoding="utf-8") for p in _modules()}
    assert state_violations(sources) == []


@pytest.mark.parametrize(
    "snippet",
    [
        "_T = {}",
        "_T: dict[int, str] = {}",
        "_L: list[int] = []",
        "_S = set()",
        "from typing import Final\n_T: Final[dict[int, object]] = {}\ndef f(x):\n    _T[id(x)] = x",
        "from typing import Final\n_T: Final = {}\ndef f():\n    _T.clear()",
        "from typing import Final\n_L: Final[list[int]] = []\ndef f():\n    _L.append(1)",
        "from typing import Final\n_L: Final[list[int]] = []\ndef f():\n    _L[:] = [1]",
        "from typing import Final\n_D: Final = {'a': 1}\ndef f():\n    del _D['a']",
        "from typing import Final\n_D: Final = {'a': 1}\n_D['b'] = 2",
        "from typing import Final\n_D: Final = {'a': 1}\ndef f(x):\n    return _D.get(id(x))",
        "_N = 0\ndef f():\n    global _N\n    _N += 1",
    ],
)
def test_checker_catches_module_state(snippet: str) -> None:
    assert state_violations({"m.py": snippet}) != []


def test_checker_catches_a_container_changed_from_another_module() -> None:
    owner = "from typing import Final\nTABLE: Final[dict[str, int]] = {}"
    user = "from m import TABLE\ndef f():\n    TABLE['x'] = 1"
    assert state_violations({"m.py": owner, "n.py": user}) != []
    assert state_violations({"m.py": owner, "n.py": "import m\ndef f():\n    m.TABLE.update(x=1)"}) != []


@pytest.mark.parametrize(
    "snippet",
    [
        "from typing import Final\n_T: Final = {'a': 1}\ndef f(k):\n    return _T.get(k)",
        "from typing import Final\n_T: Final[dict[str, int]] = {k: 1 for k in 'ab'}",
        "__all__ = ['f']\ndef f():\n    seen = {}\n    seen[id(f)] = 1\n    seen.clear()\n    return seen",
        "class C:\n    def __init__(self):\n        self.table = {}\n    def f(self, x):\n"
        "        self.table[id(x)] = x\n        self.table.clear()",
    ],
)
def test_checker_accepts_constants_and_local_state(snippet: str) -> None:
    assert state_violations({"m.py": snippet}) == []


# ---------------------------------------------------------------------------------------------
# Memos only over plain strings and numbers (docs/decisions.md#d14)
# ---------------------------------------------------------------------------------------------


def _plain(hint: Any) -> bool:
    """A plain string or number (an enumeration of strings or numbers too), ``None``, or a class: a
    constant of the program, never a value built at run time."""
    if hint is type(None):
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return all(_plain(arg) for arg in typing.get_args(hint))
    if origin is type:
        return True
    return isinstance(hint, type) and issubclass(hint, str | int | float)


def memo_violations(function: Callable[..., Any], name: str) -> list[str]:
    """Parameters of a memoised ``function`` that are not plain strings, numbers or classes."""
    wrapped = getattr(function, "__wrapped__", function)
    hints = typing.get_type_hints(wrapped)
    found = []
    for parameter in inspect.signature(wrapped).parameters.values():
        hint = hints.get(parameter.name)
        if hint is None or not _plain(hint):
            found.append(f"{name}({parameter.name}: {hint})")
    return found


def _memos() -> Iterator[tuple[str, Callable[..., Any]]]:
    for path in _modules():
        module_name = ".".join(path.relative_to(DOMAIN.parent).with_suffix("").parts)
        module = importlib.import_module(module_name.removesuffix(".__init__"))
        for name, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", value


def test_domain_memoises_only_over_plain_strings_and_numbers() -> None:
    found = [v for name, memo in _memos() for v in memo_violations(memo, name)]
    assert list(_memos()), "no memo found: the check looks in the wrong place"
    assert found == []


def test_memo_checker_catches_a_memo_over_values() -> None:
    @functools.lru_cache(maxsize=8)
    def over_entry(entry: MemoryEntry) -> str:
        return entry.id

    @functools.lru_cache(maxsize=8)
    def over_strings(text: str, kind: MemoryType, limit: int | None) -> str:
        return text

    @functools.lru_cache(maxsize=8)
    def over_tuple(items: tuple[str, ...]) -> int:
        return len(items)

    assert memo_violations(over_entry, "over_entry") != []
    assert memo_violations(over_tuple, "over_tuple") != []
    assert memo_violations(over_strings, "over_strings") == []
