"""The held-out credential set (``tests/data/secrets_heldout.json``) and the doors it is planted through.

The set was written before the rule corpus (docs/decisions.md#credential-rule-corpus) was added, from
credential formats and labelled values the hand-written patterns did not name, so it measures how
redaction does on credentials nobody tuned it for. Each positive case has the exact bytes that must
never be stored or shown; each negative is prose that must come out of :func:`domain.safety.redact`
unchanged.

:data:`DOORS` plants every positive case through one way into workmem each (a fresh data home per
door) and returns the formats whose secret is found afterwards in any file under the data home or in
any output. ``python -m tests.reliability.heldout`` prints the leak counts (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple
from unittest import mock

HELDOUT_PATH: Final = Path(__file__).resolve().parent.parent / "data" / "secrets_heldout.json"
ROOT: Final = Path(__file__).resolve().parent.parent.parent
NOW_ISO: Final = "2026-05-01T09:00:00.000Z"
#: Secrets shorter than this (PINs) count only as a whole word: four digits also occur inside ids.
_SHORT: Final = 10
#: A longer secret leaks when any run of this many of its characters is found (a cut to the
#: 260 characters of a stored memory may keep only part of it).
_WINDOW: Final = 20


class HeldOutCase(NamedTuple):
    kind: str  # format, prose, leadin, entropy, negative
    format: str
    lang: str
    secret: str  # "" for a negative
    text: str


def load_heldout() -> list[HeldOutCase]:
    raw = json.loads(HELDOUT_PATH.read_text(encoding="utf-8"))
    return [HeldOutCase(i["kind"], i["format"], i["lang"], i.get("secret", ""), i["text"]) for i in raw]


HELDOUT: Final = load_heldout()
POSITIVES: Final = [c for c in HELDOUT if c.kind != "negative"]
NEGATIVES: Final = [c for c in HELDOUT if c.kind == "negative"]


def _pattern(secret: str) -> re.Pattern[str]:
    if len(secret) < _SHORT:
        return re.compile(f"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])")
    # windows every half window: any leaked run of 1.5 windows holds one of them
    starts = {*range(0, max(1, len(secret) - _WINDOW + 1), _WINDOW // 2), max(0, len(secret) - _WINDOW)}
    return re.compile("|".join(re.escape(secret[i : i + _WINDOW]) for i in sorted(starts)))


def leaked(cases: Sequence[HeldOutCase], blobs: Sequence[str]) -> list[str]:
    """The formats of ``cases`` whose secret occurs in one of ``blobs``."""
    return [c.format for c in cases if any(_pattern(c.secret).search(blob) for blob in blobs)]


def redaction_leaks(cases: Sequence[HeldOutCase] = POSITIVES) -> list[str]:
    """The formats whose secret survives :func:`domain.safety.redact` itself."""
    from domain.safety import redact

    return [c.format for c in cases if _pattern(c.secret).search(redact(c.text))]


def false_positives(cases: Sequence[HeldOutCase] = NEGATIVES) -> list[str]:
    """The negatives that :func:`domain.safety.redact` changes."""
    from domain.safety import redact

    return [c.text for c in cases if redact(c.text) != c.text]


# ---------------------------------------------------------------------------------------------
# The doors
# ---------------------------------------------------------------------------------------------


class Door:
    """One fresh data home and workspace, the CLI driven in-process, and everything it printed."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.workspace = base / "project"
        self.workspace.mkdir(parents=True)
        self.outputs: list[str] = []
        #: files a person wrote into the projection by hand (what they hold is theirs to fix)
        self.planted: set[Path] = set()

    def env(self) -> contextlib.AbstractContextManager[object]:
        """The environment the door's calls run in: its data home, the fixed clock, no hook server."""
        env = {"WORKMEM_HOME": str(self.home), "WORKMEM_NOW": NOW_ISO, "WORKMEM_HOOK_SERVER": "0"}
        return mock.patch.dict(os.environ, env)

    def cli(self, *args: str, stdin: str | None = None, workspace: bool = True) -> str:
        from adapters.cli import main

        out, err = io.StringIO(), io.StringIO()
        saved_stdin = sys.stdin
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")))
        prefix = ["--workspace", str(self.workspace)] if workspace else []
        try:
            with self.env(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main([*prefix, *args])
        finally:
            sys.stdin = saved_stdin
        self.outputs += [out.getvalue(), err.getvalue()]
        return out.getvalue()

    def inspect(self, sessions: Sequence[str] = ("s1",)) -> None:
        """What a user or a host is shown afterwards: contexts, lists, diagnostics."""
        for session in sessions:
            self.cli("context", "--session", session)
        inspections = (("list", "--json", "--all"), ("health",), ("explain",), ("rejections", "--json"))
        for args in (*inspections, ("sync",)):
            self.cli(*args)

    def leaks(self, cases: Sequence[HeldOutCase]) -> list[str]:
        """What any file of the data home or of the shared projection (``.workmem/``, which
        ``inspect`` exports to) holds, or any output."""
        shared = self.workspace / ".workmem"
        projection = [p for p in shared.rglob("*") if p.is_file() and p not in self.planted]
        files = sorted(p for p in self.home.rglob("*") if p.is_file()) + projection
        stored = [p.read_bytes().decode("utf-8", "replace") for p in files]
        return leaked(cases, [*stored, *self.outputs])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _chunks(cases: Sequence[HeldOutCase], size: int) -> Iterator[Sequence[HeldOutCase]]:
    for start in range(0, len(cases), size):
        yield cases[start : start + size]


def _summary(cases: Sequence[HeldOutCase], n: int) -> str:
    lines = "\n".join(f"- [reference] the setup {n} uses {_one_line(c.text)}" for c in cases)
    body = "\n".join(c.text for c in cases[:3])
    return f"Summary of work {n}:\n{body}\n\nMemory candidates:\n{lines}\n"


def door_remember_cli(door: Door, cases: Sequence[HeldOutCase]) -> None:
    for case in cases:
        door.cli("remember", "--", case.text)
    door.inspect()


def door_remember_api(door: Door, cases: Sequence[HeldOutCase]) -> None:
    with door.env():
        from adapters.api import WorkingMemory

        memory = WorkingMemory(door.workspace, home=door.home)
        for case in cases:
            door.outputs.append(repr(memory.remember(case.text)))
        door.outputs += [repr(memory.list(include_all=True)), memory.block().text]
    door.inspect()


def door_message(door: Door, cases: Sequence[HeldOutCase]) -> None:
    for case in cases:
        door.cli("message", "--session", "s1", f"remember this: {case.text}")
    door.inspect()


def door_compaction(door: Door, cases: Sequence[HeldOutCase]) -> None:
    for n, chunk in enumerate(_chunks(cases, 40)):
        door.cli("compacted", "--session", "s1", "-", stdin=_summary(chunk, n))
    door.inspect()


def door_post_compact(door: Door, cases: Sequence[HeldOutCase]) -> None:
    def hook(**payload: Any) -> None:
        payload = {"session_id": "s1", "cwd": str(door.workspace), **payload}
        door.cli("hook", "claude-code", stdin=json.dumps(payload), workspace=False)

    hook(hook_event_name="SessionStart", source="startup")
    for n, chunk in enumerate(_chunks(cases, 40)):
        hook(hook_event_name="PreCompact")
        hook(hook_event_name="PostCompact", compact_summary=_summary(chunk, n))
    hook(hook_event_name="SessionStart", source="compact")
    hook(hook_event_name="UserPromptSubmit", prompt="go on", prompt_id="p")
    door.inspect()


def door_tool_output(door: Door, cases: Sequence[HeldOutCase]) -> None:
    for case in cases:
        args = json.dumps({"command": f"deploy --note '{case.text}'", "filePath": f"src/{case.text}.py"})
        output = f"Error: failed with {case.text}\nTypeError: {case.text}\n"
        failed = ("--exit-code", "1", "--output", "-")
        door.cli("tool", "--session", "s1", "--tool", "bash", "--args", args, *failed, stdin=output)
        door.cli("tool", "--session", "s1", "--tool", "edit", "--args", args)
    door.inspect()


def _serve(door: Door, requests: list[dict[str, Any]]) -> None:
    env = {**os.environ, "WORKMEM_HOME": str(door.home), "WORKMEM_NOW": NOW_ISO, "PYTHONPATH": str(ROOT)}
    lines = b"".join(json.dumps({"id": n, "workspace": str(door.workspace), **r}).encode() + b"\n"
                     for n, r in enumerate(requests))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "serve"], input=lines, env=env,
                          capture_output=True, timeout=600, check=False)  # fmt: skip
    door.outputs += [done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")]


def door_serve(door: Door, cases: Sequence[HeldOutCase]) -> None:
    requests: list[dict[str, Any]] = []
    for case in cases:
        requests.append({"op": "remember", "text": case.text})
        requests.append({"op": "message", "session": "s1", "text": f"remember this: {case.text}"})
    requests.append({"op": "context", "session": "s1"})
    _serve(door, requests)
    door.inspect()


def door_mcp(door: Door, cases: Sequence[HeldOutCase]) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "adapters.cli", "--workspace", str(door.workspace), "mcp"],
        env={"WORKMEM_HOME": str(door.home), "WORKMEM_NOW": NOW_ISO, "PYTHONPATH": str(ROOT)},
    )

    async def session_run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for case in cases:
                result = await session.call_tool("remember", {"text": case.text})
                door.outputs.append("\n".join(getattr(c, "text", "") for c in result.content))
            listed = await session.call_tool("list", {"include_all": True})
            door.outputs.append("\n".join(getattr(c, "text", "") for c in listed.content))
            block = await session.read_resource("workmem://block")
            door.outputs.append("\n".join(getattr(c, "text", "") for c in block.contents))

    anyio.run(session_run)
    door.inspect()


def door_projection(door: Door, cases: Sequence[HeldOutCase]) -> None:
    """A person types each case into a memory file of the shared projection, and writes team
    memories whose export the cases could reach (docs/decisions.md#d17)."""
    door.cli("sync")
    folder = door.workspace / ".workmem" / "memories" / "decision"
    folder.mkdir(parents=True, exist_ok=True)
    for n, case in enumerate(cases):
        path = folder / f"typed-{n}.md"
        path.write_text(f"---\ntype: decision\n---\nThe release {n} uses {case.text}\n", encoding="utf-8")
        door.planted.add(path)
        door.cli("remember", "--type", "project", "--scope", "team", "--", f"project {n}: {case.text}")
    door.cli("sync")
    door.inspect()


#: Every door, by name.
DOORS: Final[dict[str, Callable[[Door, Sequence[HeldOutCase]], None]]] = {
    "remember (CLI)": door_remember_cli,
    "remember (API)": door_remember_api,
    "user message": door_message,
    "compaction candidates": door_compaction,
    "PostCompact hook": door_post_compact,
    "tool output": door_tool_output,
    "MCP remember": door_mcp,
    "serve remember/message": door_serve,
    "projection file": door_projection,
}


def door_leaks(name: str, base: Path, cases: Sequence[HeldOutCase] = POSITIVES) -> list[str]:
    """Plant ``cases`` through door ``name`` in a fresh data home under ``base``; the formats leaked."""
    door = Door(base)
    DOORS[name](door, cases)
    return door.leaks(cases)


def main(argv: Sequence[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:]) or list(DOORS)
    print(f"held-out set: {len(POSITIVES)} plantings, {len(NEGATIVES)} negatives")
    found = redaction_leaks()
    print(f"redact(): {len(found)} leaked")
    for fmt in found:
        print(f"    {fmt}")
    changed = false_positives()
    print(f"negatives changed by redact(): {len(changed)}")
    for text in changed:
        print(f"    {text}")
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            found = door_leaks(name, Path(tmp))
        print(f"{name}: {len(found)} leaked")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
