"""Properties of ``workmem install`` / ``uninstall`` over arbitrary pre-existing settings:
install∘install = install, and uninstall∘install gives back the same JSON value and, whatever the
layout of the JSON files (inline or one item per line, indent, CRLF, final newline) and of the Codex
``config.toml`` (comments, ``hooks = false  # why``), the same bytes; files install created are gone.

The documented exceptions are excluded from the generated files: an *empty* list or object under a
key install writes to (``"hooks": {}``, ``"SessionStart": []``, ``"plugin": []``) is removed by
uninstall, because nothing tells it apart from one install created, and a file holding nothing else
(``{}``) is removed (docs/hosts.md, "Installing")."""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit
from hypothesis import given, strategies as st

from adapters.codex_config import CodexConfigEdit
from adapters.install import Where, plan
from adapters.settings_edits import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    edit_entry,
    edit_hooks,
    edit_plugins,
    is_claude_server,
    is_opencode_server,
    is_workmem_command,
    is_workmem_exe,
    opencode_server,
)
from domain.extraction import static_compaction_prompt
from property_tests.json_documents import Layout, json_values, layouts, write
from property_tests.shapes import replace_if, steady_dictionaries, steady_lists

EXE = "/opt/venv b/bin/workmem"
HERE = Path("settings.json")
EVENT_NAMES = [name for name, _ in CLAUDE_EVENTS] + ["Stop", "Notification", "PreToolUse"]

COMMANDS = [
    "echo hi",
    "workmem --home x hook claude-code",
    "/x/workmem hook codex",
    "/x/workmem hook claude-code",
]
#: Every workmem hook command ends in ``hook <host>``: text without a ``k`` is never one.
free_commands = st.text(alphabet=st.characters(exclude_characters="kK"), max_size=20)


def handlers(tail: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """A handler that is not ours for ``tail`` (any other command, or any JSON value: the keys of a
    generated object are at most six characters long, so never ``command``)."""
    others = [c for c in COMMANDS if not is_workmem_command(c, *tail)]
    command = st.one_of(free_commands, st.sampled_from(others))
    handler = st.fixed_dictionaries(
        {"type": st.just("command"), "command": command, "timeout": st.none() | st.integers(1, 60)}
    ).map(lambda h: {k: v for k, v in h.items() if v is not None})
    return st.one_of(json_values, handler)


def hook_tables(tail: tuple[str, ...], max_events: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    group = st.fixed_dictionaries(
        {"hooks": steady_lists(handlers(tail), max_size=3), "matcher": st.none() | st.text(max_size=10)}
    ).map(lambda g: {k: v for k, v in g.items() if v is not None})
    events = st.one_of(st.sampled_from(EVENT_NAMES), st.text(max_size=6))
    return steady_dictionaries(
        events,
        steady_lists(st.one_of(group, json_values), min_size=1, max_size=3),
        min_size=1,
        max_size=max_events,
    )


def settings_with(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A settings object with other keys around an optional ``key`` (first or last)."""
    names = st.text(max_size=6).map(replace_if(lambda k: k == key, lambda k: k + "~"))
    others = steady_dictionaries(names, json_values, max_size=4)

    def build(rest: dict[str, Any], value: Any, present: bool, first: bool) -> dict[str, Any]:
        if not present:
            return rest
        return {key: value, **rest} if first else {**rest, key: value}

    # ``value`` is drawn even when absent: every example costs the same (property_tests/shapes.py)
    return st.builds(build, others, values, st.booleans(), st.booleans())


def check_round_trip(
    edit: Callable[[dict[str, Any], bool], dict[str, Any]], settings: dict[str, Any]
) -> None:
    installed = edit(settings, True)
    assert edit(installed, True) == installed
    assert edit(installed, False) == settings
    assert edit(settings, False) == settings  # nothing of ours: uninstall changes nothing


@given(settings_with("hooks", hook_tables(("hook", "claude-code"))))
def test_claude_hooks_round_trip(settings: dict[str, Any]) -> None:
    command = f"'{EXE}' hook claude-code"
    tail = ("hook", "claude-code")
    check_round_trip(
        lambda v, on: edit_hooks(HERE, v, CLAUDE_EVENTS, command if on else None, tail), settings
    )


@given(settings_with("hooks", hook_tables(("hook", "codex"))))
def test_codex_hooks_round_trip(settings: dict[str, Any]) -> None:
    command = f"'{EXE}' hook codex"
    tail = ("hook", "codex")
    check_round_trip(lambda v, on: edit_hooks(HERE, v, CODEX_EVENTS, command if on else None, tail), settings)


plugin_specs = st.one_of(json_values, st.text(max_size=12), st.just("file:///elsewhere/plugin.js"))
servers = steady_dictionaries(
    st.text(max_size=6).map(replace_if(lambda k: k == "workmem", lambda k: k + "~")),
    json_values,
    min_size=1,
    max_size=3,
)


@given(settings_with("plugin", steady_lists(plugin_specs, min_size=1, max_size=4)))
def test_opencode_plugin_round_trip(settings: dict[str, Any]) -> None:
    spec = "file:///site/adapters/hosts/opencode"
    check_round_trip(lambda v, on: edit_plugins(HERE, v, spec if on else None), settings)


@given(settings_with("mcp", servers))
def test_opencode_mcp_round_trip(settings: dict[str, Any]) -> None:
    wanted = opencode_server(EXE)
    check_round_trip(
        lambda v, on: edit_entry(HERE, v, "mcp", wanted if on else None, is_opencode_server), settings
    )


def others() -> st.SearchStrategy[dict[str, Any]]:
    """Keys of the user's that no install touches (at least one: a file never starts empty)."""
    ours = ("hooks", "mcpServers", "projects", "plugin", "mcp")
    names = st.text(max_size=6).map(replace_if(lambda k: k in ours, lambda k: k + "~"))
    return steady_dictionaries(names, json_values, min_size=1, max_size=3)


def with_key(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def build(rest: dict[str, Any], value: Any, present: bool, first: bool) -> dict[str, Any]:
        if not present:
            return rest
        return {key: value, **rest} if first else {**rest, key: value}

    return st.builds(build, others(), values, st.booleans(), st.booleans())


ROOT = "<the project>"  # replaced by the project's real path
projects = steady_dictionaries(
    st.sampled_from(["/elsewhere", ROOT]),
    steady_dictionaries(st.sampled_from(["allowedTools", "x"]), json_values, min_size=1, max_size=2),
    max_size=2,
)
host_files = {
    "claude-code": {
        # two events per table here (four above): every file is drawn, and a host's files together
        # must stay within what hypothesis draws for one example
        ".claude/settings.local.json": with_key("hooks", hook_tables(("hook", "claude-code"), max_events=2)),
        ".claude/settings.json": with_key("hooks", hook_tables(("hook", "claude-code"), max_events=2)),
        "home/.claude.json": with_key("mcpServers", servers).flatmap(
            lambda d: st.builds(lambda p: {**d, "projects": p} if p else d, projects)
        ),
        ".mcp.json": with_key("mcpServers", servers),
    },
    "codex": {".codex/hooks.json": with_key("hooks", hook_tables(("hook", "codex"), max_events=2))},
    "opencode": {
        "opencode.json": with_key("plugin", steady_lists(plugin_specs, min_size=1, max_size=3)).flatmap(
            lambda d: st.builds(lambda m, present: {**d, "mcp": m} if present else d, servers, st.booleans())
        )
    },
}


@st.composite
def host_settings(draw: st.DrawFn) -> tuple[str, dict[str, tuple[Any, Layout]]]:
    """A host and, for some of the JSON files install edits for it, their value and a layout."""
    host = draw(st.sampled_from(sorted(host_files)))
    files = {}
    for name, values in host_files[host].items():
        value, layout = draw(values), draw(layouts())  # drawn either way: every example costs the same
        if draw(st.booleans()):
            files[name] = (value, layout)
    return host, files


@given(host_settings(), st.booleans(), st.booleans())
def test_install_then_uninstall_gives_every_json_file_back_byte_for_byte(
    case: tuple[str, dict[str, tuple[Any, Layout]]], user: bool, mcp: bool
) -> None:
    host, files = case
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        root, home = base / "proj", base / "home"
        root.mkdir()
        for name, (value, layout) in files.items():
            if "projects" in value:
                value = {
                    **value,
                    "projects": {
                        os.path.realpath(root) if k == ROOT else k: v for k, v in value["projects"].items()
                    },
                }
            path = base / name if name.startswith("home/") else root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(write(value, layout).encode())
        before = snapshot(base)
        env = {"XDG_CONFIG_HOME": str(home / ".config"), "CODEX_HOME": str(home / ".codex")}
        where = Where(user=user, root=root, env=env, home=home)

        def apply(remove: bool) -> bool:
            result = plan(host, where, EXE, mcp=mcp, remove=remove)
            for change in result.changes:
                if change.changed and change.new is None:
                    change.path.unlink()
                elif change.changed and change.new is not None:
                    change.path.parent.mkdir(parents=True, exist_ok=True)
                    change.path.write_bytes(change.new.encode())
            for directory in result.prune if remove else []:
                if directory.is_dir() and not any(directory.iterdir()):
                    directory.rmdir()
            return any(c.changed for c in result.changes)

        apply(remove=False)
        assert not apply(remove=False)
        apply(remove=True)
        for path in sorted(home.rglob("*"), reverse=True):
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()  # directories the plan created for files it then removed
        if home.is_dir() and not any(home.iterdir()):
            home.rmdir()
        assert snapshot(base) == before


def snapshot(base: Path) -> dict[str, bytes | None]:
    paths = sorted(base.rglob("*"))
    return {str(p.relative_to(base)): p.read_bytes() if p.is_file() else None for p in paths}


# --- the Codex config.toml ---------------------------------------------------------------------------
#: Bare keys of the user's: never one install writes (``hooks`` becomes ``hooks_``).
bare_keys = st.builds(
    str.__add__,
    st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=6),
).map(replace_if(lambda k: k in ("compact_prompt", "features", "mcp_servers", "hooks"), lambda k: k + "_"))
table_names = st.text("0123456789", min_size=1, max_size=2).map(
    "T".__add__
)  # never a bare key above (those are lower case)
toml_scalars = st.one_of(st.integers(-1000, 1000), st.booleans(), st.text(max_size=10))
comments = st.one_of(st.text(alphabet="abc xyz#", max_size=10), st.none())


def toml_line(key: str, value: Any, comment: str | None) -> str:
    return f"{key} = {tomlkit.item(value).as_string()}" + (f"  # {comment}" if comment is not None else "")


NO_LINES: st.SearchStrategy[list[str]] = st.just([])


def toml_lines(extra: st.SearchStrategy[list[str]] = NO_LINES) -> st.SearchStrategy[list[str]]:
    pairs = steady_dictionaries(bare_keys, st.tuples(toml_scalars, comments), max_size=3)
    lines = pairs.map(lambda d: [toml_line(k, v, c) for k, (v, c) in d.items()])
    return st.tuples(lines, extra, st.booleans()).map(lambda t: t[0] + t[1] + ([""] if t[2] else []))


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    out = ["# a Codex configuration"] if draw(st.booleans()) else []
    out += draw(toml_lines())
    # Every part is drawn whether it is used or not: each example costs the same (property_tests/shapes.py).
    hooks = ["hooks = false", "hooks = false  # off for now", "hooks=false#x", "  hooks = false # a # b"]
    features = draw(toml_lines(st.sampled_from([[], *([line] for line in hooks)])))
    if draw(st.booleans()):
        out += ["[features]", *features]
    if draw(st.booleans()):
        out += ["[mcp_servers.other]", 'command = "node"', ""]
    names = draw(steady_lists(table_names, min_size=2, max_size=2))
    tables = [draw(toml_lines()) for _ in names]
    for name, lines in list(zip(dict.fromkeys(names), tables, strict=False))[: draw(st.integers(0, 2))]:
        out += [f"[{name}]", *lines]
    return "\n".join(out) + ("\n" if draw(st.booleans()) else "") if out else ""


@given(toml_documents(), st.booleans())
def test_codex_config_round_trip(text: str, mcp: bool) -> None:
    prompt = static_compaction_prompt()
    edit = CodexConfigEdit(Path("config.toml"), is_workmem_exe)
    installed = edit.install(text, prompt, EXE if mcp else None)
    assert edit.install(installed, prompt, EXE if mcp else None) == installed
    value = tomllib.loads(installed)
    assert value["features"]["hooks"] is True and value["compact_prompt"] == prompt
    assert ("workmem" in value.get("mcp_servers", {})) is mcp
    removed = edit.uninstall(installed, prompt, mcp)
    assert tomllib.loads(removed) == tomllib.loads(text)
    assert removed == text
    assert not is_claude_server(value.get("mcp_servers", {}).get("other"))
