"""The shape of the imports (docs/architecture.md, "Packages and their interfaces"): no import
circles between modules, no private name imported from another module, and a function-local import
only where an optional extra or the start-up time needs it, with a comment that says which."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
CODE: Final = ("domain", "adapters", "workmem")
#: what a comment above a function-local import must name
LOCAL_IMPORT_REASONS: Final = ("start-up time", "optional extra")


def _sources(*folders: str) -> Iterator[Path]:
    for folder in folders:
        yield from sorted((REPO / folder).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_file(name: str) -> Path | None:
    base = REPO.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported (``if TYPE_CHECKING:`` blocks included: a type
    checker follows them)."""
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If | ast.Try):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    yield inner


def _targets(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.module is None or node.level:
        return
    for alias in node.names:
        submodule = f"{node.module}.{alias.name}"
        yield submodule if _module_file(submodule) is not None else node.module


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _sources(*CODE):
        name = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {
            target
            for node in _top_level_imports(tree)
            for target in _targets(node)
            if target.split(".")[0] in CODE and target != name and _module_file(target) is not None
        }
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    # A package's __init__ hands on names of its own modules: a module of the package that imports
    # the package's __init__ back makes a circle through it, and is reported like any other.
    circles = _circles(_graph())
    assert circles == [], f"import circles: {circles}"


def test_no_private_name_is_imported_from_another_module() -> None:
    found = []
    for path in _sources(*CODE, "bench", "tests", "property_tests"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            if node.module.split(".")[0] not in CODE:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.module}.{alias.name}")
    assert found == []


def _local_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    yield node


def _reason_above(lines: list[str], lineno: int) -> str:
    """The comment that heads the run of imports (and blank lines) ``lineno`` stands in, or ends the
    line that opens it (``try:  # optional extra``)."""
    at = lineno - 1
    while at > 0:
        text = lines[at - 1].strip()
        if "#" in text and not text.startswith(("import ", "from ")):
            block = [text[text.index("#") :]]
            while at > 1 and lines[at - 2].strip().startswith("#"):
                at -= 1
                block.insert(0, lines[at - 1].strip())
            return " ".join(block)
        if not text or text.startswith(("import ", "from ")):
            at -= 1
            continue
        return ""
    return ""


def test_function_local_imports_say_why() -> None:
    unexplained = []
    for path in _sources("adapters", "workmem"):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in _local_imports(ast.parse(text)):
            same_line = lines[node.lineno - 1]
            reason = _reason_above(lines, node.lineno) + same_line
            if not any(word in reason for word in LOCAL_IMPORT_REASONS):
                unexplained.append(f"{path.relative_to(REPO)}:{node.lineno} {same_line.strip()}")
    assert unexplained == []


def test_the_checks_see_what_they_look_for() -> None:
    """The checks above are not vacuous: they find a circle, a private import and a local import."""
    assert _circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    tree = ast.parse("def f():\n    import os\n")
    assert [n.lineno for n in _local_imports(tree)] == [2]
    assert _reason_above(["# start-up time: x", "import os", "", "from a import b"], 4).startswith("#")
    assert _reason_above(["x = 1", "import os"], 2) == ""
    assert "start-up time" in _reason_above(["# start-up time: a", "# b", "import gc"], 3)
    assert len(_graph()) > 100
