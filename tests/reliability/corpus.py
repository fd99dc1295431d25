"""The secrets corpus (``tests/data/secrets.json``): one realistic but fake credential per supported
format, each inside a sentence, with the exact bytes that must never be stored or shown; and the runs
of the command line that feed it through every input path and show everything stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, NamedTuple

from tests.support.cli import Cli, Run


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


def feed(cli: Cli) -> list[Run]:
    """Every secret through every CLI input path; returns every run."""
    runs: list[Run] = []
    summary_lines = []
    for n, case in enumerate(SECRETS):
        text = case.text
        runs.append(cli("remember", f"always remember that {text}"))
        runs.append(cli("message", "--session", "s1", f"remember: {text}"))
        runs.append(cli("message", "--session", "s1", f"from now on note {text}"))
        runs.append(cli("check", f"remember this: {text}"))
        args = json.dumps({"command": f"deploy --note '{text}'", "filePath": f"src/{text}.py"})
        runs.append(cli(*failed_tool("bash", args), stdin=f"Error: failed with {text}\nTypeError: {text}\n"))
        runs.append(cli("tool", "--session", "s1", "--tool", "edit", "--args", args))
        summary_lines.append(f"- [reference] the staging setup uses {text}")
        summary_lines.append(f"- [decision] we decided {n}: {text}")
    summary = (
        "Summary of work with " + SECRETS[0].text + "\n\nMemory candidates:\n" + "\n".join(summary_lines)
    )
    runs.append(cli("compacted", "--session", "s1", "-", stdin=summary))
    return runs


def diagnostics(cli: Cli) -> list[Run]:
    """Every view of what ``cli`` holds (contexts, lists, every diagnosis, a trace and an explanation
    of the first memories), then a supersede and a session end; returns every run."""
    runs = [
        cli("context", "--session", "s1"),
        cli("context", "--session", "s2"),
        cli("compaction-prompt", "--session", "s1"),
        cli("list"),
        cli("list", "--json", "--all"),
        cli("health"),
        cli("health", "--json"),
        cli("explain"),
        cli("quality"),
        cli("coverage"),
        cli("disappearances"),
        cli("rejections"),
        cli("rejections", "--json"),
    ]
    memories = json.loads(runs[4].out)["memories"]
    for memory in memories[:5]:
        runs.append(cli("trace", memory["id"]))
        runs.append(cli("explain", memory["id"]))
    if memories:
        runs.append(cli("supersede", memories[0]["id"], f"now we use {SECRETS[1].text}"))
    runs.append(cli("end-session", "--session", "s1"))
    runs.append(cli("list", "--json", "--all"))
    return runs
