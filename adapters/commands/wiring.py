"""The parsers of the memory, diagnostics and workspace commands (called by
:func:`adapters.cli.build_parser`; kept here so that the command line's module stays small). Only
argument definitions live here: each handler is named as ``"module:function"`` and imported when its
command runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from domain.enums import MemoryType


class _Unused:
    """The parser of a command the command line does not name: it takes every definition and keeps
    none (each method returns the object itself, so a group or a nested parser is one too)."""

    def __getattr__(self, name: str) -> Callable[..., _Unused]:
        return self.ignore

    def ignore(self, *args: Any, **kwargs: Any) -> _Unused:
        return self


class OneCommand:
    """The subcommands as :func:`adapters.cli.build_parser` fills them when the command line names
    ``name``: only that command's parser is built (a parser per command costs start-up time that a
    one-shot command pays on each run, docs/performance.md); ``found`` says whether one was."""

    def __init__(self, sub: Any, name: str) -> None:
        self._sub = sub
        self.name = name
        self.found = False

    def add_parser(self, name: str, *, aliases: Sequence[str] = (), **kwargs: Any) -> Any:
        if self.name != name and self.name not in aliases:
            return _Unused()
        self.found = True
        return self._sub.add_parser(name, aliases=aliases, **kwargs)


def _raw_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--raw", action="store_true", help="show paths and unredacted root (default: redacted)"
    )


def add_commands(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    _memories(sub, command)
    _diagnostics(sub, command)
    _workspaces(sub, command)


def _memories(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command(
        sub,
        "list",
        "memories:list_memories",
        "list stored memories and pending requests (read-only)",
        json_flag=True,
    )
    p.add_argument("--all", action="store_true", help="include superseded and forgotten memories")
    p = command(sub, "search", "search:search", "find memories by their words (read-only)", json_flag=True)
    p.add_argument("query", metavar="QUERY", help="any text: words, a phrase, a path, a question")
    p.add_argument("--type", choices=[t.value for t in MemoryType], help="only memories of this type")
    p.add_argument("--limit", type=int, default=5, metavar="K", help="at most K hits (default 5)")
    p.add_argument("--all", action="store_true", help="include superseded and forgotten memories")
    p = command(sub, "show", "search:show", "one memory in full: by id or short id (R12)", json_flag=True)
    p.add_argument("id", metavar="ID")
    p = command(
        sub, "forget", "memories:forget", "stop using a memory (kept, can be restored)", json_flag=True
    )
    p.add_argument("id", metavar="ID")
    p = command(sub, "supersede", "memories:supersede", "replace a memory by a new text", json_flag=True)
    p.add_argument("id", metavar="ID")
    p.add_argument("text", metavar="TEXT")
    p = command(
        sub,
        "restore",
        "memories:restore",
        "undo forget/supersede, or bring back an archived memory",
        json_flag=True,
    )
    p.add_argument("id", metavar="ID")


def _diagnostics(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command(sub, "health", "diagnostics:health_cmd", "workspace memory health", json_flag=True)
    _raw_flag(p)
    p.add_argument("--all", action="store_true", help="every workspace under the data directory")
    p.add_argument("--verbose", "-v", action="store_true", help="every detail below the summary")
    p = command(
        sub, "explain", "explaining:explain", "why a memory is (not) in the block, in words", json_flag=True
    )
    _raw_flag(p)
    p.add_argument("id", nargs="?", metavar="ID", help="only this memory")
    p.add_argument("--verbose", "-v", action="store_true", help="the status and evidence behind each verdict")
    p = command(sub, "trace", "explaining:trace", "the evidence lifecycle of one memory", json_flag=True)
    _raw_flag(p)
    p.add_argument("id", metavar="ID")
    p = command(sub, "quality", "diagnostics:quality", "memory quality inspection", json_flag=True)
    _raw_flag(p)
    p = command(sub, "coverage", "diagnostics:coverage", "evidence coverage per memory", json_flag=True)
    _raw_flag(p)
    p.add_argument("--include-historical", action="store_true", help="also ids only known from evidence")
    p = command(
        sub,
        "disappearances",
        "diagnostics:disappearances",
        "memories that left the block or the store",
        json_flag=True,
    )
    _raw_flag(p)
    p.add_argument("--explain", action="store_true", help="show the terminal evidence")
    p = command(sub, "rejections", "diagnostics:rejections", "the extraction rejection log", json_flag=True)
    _raw_flag(p)
    p.add_argument("--reason", metavar="R", help="only records with this reason code")
    p.add_argument("--unique", action="store_true", help="first record per type and text")
    p.add_argument("--quality", action="store_true", help="false-positive inspection")
    p.add_argument("--soft-only", action="store_true", help="only records with a soft reason")
    p.add_argument("--trigger-only", action="store_true", help="only explicit-trigger records")
    p.add_argument("--since", metavar="WHEN", help="14d, 12h, 30m or an ISO time")
    p = command(sub, "audit", "diagnostics:audit", "what the store migrations changed", json_flag=True)
    _raw_flag(p)
    p.add_argument("--all", action="store_true", help="every workspace, not only this one")


def _workspaces(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    p = command(
        sub,
        "workspaces",
        "workspaces:workspaces_cmd",
        "stores of this repository kept under an old sub-directory: list them, merge them in",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="this repository's stores under old sub-directories")
    listing.add_argument("--json", action="store_true", help="print the result as JSON")
    merge = actions.add_parser("merge", help="merge them into the repository's store (each kept aside)")
    merge.add_argument("--dry-run", action="store_true", help="only say what would be merged")
    merge.add_argument("--json", action="store_true", help="print the result as JSON")


def add_maintenance(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    """The maintenance commands: import-owm, cleanup, recover, tour, simulate."""
    p = command(
        sub, "import-owm", "maintenance:import_owm", "copy opencode-working-memory stores in", json_flag=True
    )
    p.add_argument("dir", nargs="?", metavar="DIR", help="default: $XDG_DATA_HOME/opencode-working-memory")
    p = command(
        sub,
        "cleanup",
        "maintenance:cleanup",
        "find (and quarantine) leftover test workspaces",
        json_flag=True,
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only list candidates (the default)")
    mode.add_argument("--quarantine", action="store_true", help="move candidates aside (nothing is deleted)")
    p.add_argument(
        "--older-than-days", type=_non_negative, metavar="N", help="ignore directories newer than N days"
    )
    p.add_argument("--include-orphans", action="store_true", help="also missing non-temp roots")
    p = command(
        sub, "recover", "recover:recover", "list what was set aside; restore memories from it", json_flag=True
    )
    p.add_argument("--restore", metavar="NAME", help="bring back the memories NAME holds that are missing")
    p.add_argument("--dry-run", action="store_true", help="with --restore: only say what it would bring back")
    command(sub, "tour", "adapters.tour:tour", "a 60-second scripted tour on a temporary workspace")
    p = command(
        sub, "simulate", "simulate:simulate_cmd", "run a scenario offline: months in seconds", json_flag=True
    )
    p.add_argument(
        "scenario", nargs="?", metavar="SCENARIO", help="scenario file (TOML); optional with --from-store"
    )
    p.add_argument("--days", type=int, metavar="N", help="simulate N days (overrides the scenario)")
    p.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter or field"
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--compare", nargs="+", metavar="NAME=VALUE", help="compare a variant with the baseline"
    )
    mode.add_argument("--sweep", metavar="NAME=V1,V2,...", help="one run per value, one summary row each")
    p.add_argument("--from-store", action="store_true", help="start from this workspace's store (read-only)")
    p.add_argument("--plot", metavar="FILE", help="write charts to FILE.svg or FILE.png (the sim extra)")


def _non_negative(value: str) -> float:
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    import argparse

    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value!r}")
    return number
