"""What a one-shot ``workmem search`` loads (docs/performance.md, "Search"): the parser of the one
command the command line names, the same as in the whole parser, and none of the modules only other
commands run (git, the shared projection, the diagnostics, the settings editors, the salvage)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest

from adapters.api import WorkingMemory
from adapters.cli import build_parser, command_word
from tests.support.cli import subcommands

REPO: Final = Path(__file__).resolve().parents[2]

#: Modules a search never runs; each was imported by it once (they are what costs the start-up).
NOT_FOR_SEARCH: Final = (
    "adapters.config_files",
    "adapters.diagnostics_input",
    "adapters.git_sync",
    "adapters.hook_client",
    "adapters.install",
    "adapters.projection",
    "adapters.projection_export",
    "adapters.settings_edits",
    "adapters.sync",
    "domain.diagnostics",
    "domain.projection.importing",
    "domain.projection.merge",
    "domain.salvage",
    "difflib",
    "shlex",
    "subprocess",
    "tomlkit",
)


def _action(a: argparse.Action) -> tuple[Any, ...]:
    choices = None if isinstance(a, argparse._SubParsersAction) else a.choices  # nested: compared below
    kind = type(a).__name__
    return (
        kind,
        a.option_strings,
        a.dest,
        a.nargs,
        a.const,
        a.default,
        a.type,
        a.required,
        a.help,
        a.metavar,
        choices,
    )


def _shape(parser: argparse.ArgumentParser) -> list[Any]:
    """Everything a parser parses with and prints, its nested commands' too."""
    actions = [_action(a) for a in parser._actions]
    groups = [[a.dest for a in g._group_actions] for g in parser._mutually_exclusive_groups]
    nested = {name: _shape(sub) for name, sub in subcommands(parser).items()}
    return [parser.prog, parser.format_help(), actions, groups, parser._defaults, nested]


def test_a_named_command_gets_the_whole_parsers_own_parser_and_no_other() -> None:
    whole = subcommands(build_parser())
    assert len(whole) > 30
    for name, expected in whole.items():
        alone = subcommands(build_parser(name))
        assert set(alone) == {n for n, p in whole.items() if p is expected}, name
        assert _shape(alone[name]) == _shape(expected), name


@pytest.mark.parametrize("word", ["lst", "serach", "-h"])
def test_any_other_word_gets_the_whole_parser(word: str) -> None:
    assert set(subcommands(build_parser(word))) == set(subcommands(build_parser()))


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["search", "x"], "search"),
        (["--home", "h", "--workspace=w", "list", "--all"], "list"),
        (["--workspace", "search", "show", "R1"], "show"),
        (["--version"], None),
        (["--home", "h"], None),
        ([], None),
    ],
)
def test_the_command_word_follows_the_global_options(argv: list[str], word: str | None) -> None:
    assert command_word(argv) == word


def test_a_search_loads_none_of_what_other_commands_run(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    memory = WorkingMemory(project, home=home)
    memory.remember("The staging database failover runbook lives in docs/runbooks/failover.md")
    memory.search("warm up")  # builds the index, as the first search of a workspace does
    probe = (
        "import sys; from adapters.cli import main; "
        f"code = main(['--workspace', {str(project)!r}, 'search', 'failover runbook']); "
        "print(code, ' '.join(sorted(sys.modules)))"
    )
    env = {**os.environ, "WORKMEM_HOME": str(home), "WORKMEM_HOOK_SERVER": "0"}
    argv = [sys.executable, "-c", probe]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=True, timeout=60)
    last = done.stdout.splitlines()[-1].split()
    assert "1 of 1 matches" in done.stdout and last[0] == "0", done.stdout + done.stderr
    loaded = set(last[1:])
    assert "adapters.search_index" in loaded  # the probe ran the search
    assert sorted(m for m in NOT_FOR_SEARCH if m in loaded) == []


@pytest.mark.parametrize(("command", "collects"), [("search", False), ("show", False), ("list", True)])
def test_a_one_shot_read_runs_without_the_cyclic_collector(
    command: str, collects: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search or a show reads once and exits: the collector would only walk what importing the core
    and decoding the store made (``workmem hook`` runs so too); every other command keeps it."""
    import gc

    from adapters import cli
    from adapters.commands import memories, search

    seen: list[bool] = []

    def handler(args: argparse.Namespace) -> int:
        seen.append(gc.isenabled())
        return 0

    module = memories if command == "list" else search
    monkeypatch.setattr(module, "list_memories" if command == "list" else command, handler)
    assert cli.main([command, "x"] if command != "list" else [command]) == 0
    assert seen == [collects] and gc.isenabled()
