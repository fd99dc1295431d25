"""The secrets corpus (``tests/data/secrets.json``): one realistic but fake credential per supported
format, each inside a sentence, with the exact bytes that must never be stored or shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, NamedTuple


class SecretCase(NamedTuple):
    format: str
    secret: str
    text: str


CORPUS_PATH: Final = Path(__file__).resolve().parent.parent / "data" / "secrets.json"


def load_corpus() -> list[SecretCase]:
    raw = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))
    return [SecretCase(item["format"], item["secret"], item["text"]) for item in raw]


SECRETS: Final = load_corpus()


def failed_tool(tool: str, args: str, output: str = "-", session: str = "s1") -> list[str]:
    """The ``workmem tool`` arguments of a failed call (exit code 1) with ``output`` (``-``: stdin)."""
    return [
        "tool",
        "--session",
        session,
        "--tool",
        tool,
        "--args",
        args,
        "--exit-code",
        "1",
        "--output",
        output,
    ]
