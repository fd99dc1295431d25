"""The rule of the house: ``domain/`` never touches the outside world (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parent.parent / "domain"
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
