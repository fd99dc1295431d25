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

EXE = "/opt/venv b/bin/workmem"
HERE = Path("settings.json")
EVENT_NAMES = [name for name, _ in CLAUDE_EVENTS] + ["Stop", "Notification", "PreToolUse"]

commands = st.text(max_size=20) | st.sampled_from(
    ["echo hi", "workmem --home x hook claude-code", "/x/workmem hook codex", "/x/workmem hook claude-code"]
)


def handlers(tail: tuple[str, ...]) -> st.SearchStrategy[Any]:
    command = commands.filter(lambda c: not is_workmem_command(c, *tail))
    handler = st.fixed_dictionaries(
        {"type": st.just("command"), "command": command}, optional={"timeout": st.integers(1, 60)}
    )
    return handler | json_values.filter(lambda v: not isinstance(v, dict) or "command" not in v)


def hook_tables(tail: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    group = st.fixed_dictionaries(
        {"hooks": st.lists(handlers(tail), max_size=3)}, optional={"matcher": st.text(max_size=10)}
    )
    events = st.sampled_from(EVENT_NAMES) | st.text(max_size=6)
    return st.dictionaries(
        events, st.lists(group | json_values, min_size=1, max_size=3), min_size=1, max_size=4
    )


def settings_with(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A settings object with other keys around an optional ``key`` (first or last)."""
    others = st.dictionaries(st.text(max_size=6).filter(lambda k: k != key), json_values, max_size=4)

    def build(rest: dict[str, Any], value: Any, first: bool) -> dict[str, Any]:
        if value is None:
            return rest
        return {key: value, **rest} if first else {**rest, key: value}

    return st.builds(build, others, st.none() | values, st.booleans())


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


plugin_specs = st.text(max_size=12) | st.just("file:///elsewhere/plugin.js") | json_values
servers = st.dictionaries(
    st.text(max_size=6).filter(lambda k: k != "workmem"), json_values, min_size=1, max_size=3
)


@given(settings_with("plugin", st.lists(plugin_specs, min_size=1, max_size=4)))
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
    names = st.text(max_size=6).filter(lambda k: k not in ours)
    return st.dictionaries(names, json_values, min_size=1, max_size=3)


def with_key(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def build(rest: dict[str, Any], value: Any, first: bool) -> dict[str, Any]:
        if value is None:
            return rest
        return {key: value, **rest} if first else {**rest, key: value}

    return st.builds(build, others(), st.none() | values, st.booleans())


ROOT = "<the project>"  # replaced by the project's real path
projects = st.dictionaries(
    st.sampled_from(["/elsewhere", ROOT]),
    st.dictionaries(st.sampled_from(["allowedTools", "x"]), json_values, min_size=1),
)
host_files = {
    "claude-code": {
        ".claude/settings.local.json": with_key("hooks", hook_tables(("hook", "claude-code"))),
        ".claude/settings.json": with_key("hooks", hook_tables(("hook", "claude-code"))),
        "home/.claude.json": with_key("mcpServers", servers).flatmap(
            lambda d: st.builds(lambda p: {**d, "projects": p} if p else d, projects)
        ),
        ".mcp.json": with_key("mcpServers", servers),
    },
    "codex": {".codex/hooks.json": with_key("hooks", hook_tables(("hook", "codex")))},
    "opencode": {
        "opencode.json": with_key("plugin", st.lists(plugin_specs, min_size=1, max_size=3)).flatmap(
            lambda d: st.builds(lambda m: {**d, "mcp": m} if m else d, st.none() | servers)
        )
    },
}


@st.composite
def host_settings(draw: st.DrawFn) -> tuple[str, dict[str, tuple[Any, Layout]]]:
    """A host and, for some of the JSON files install edits for it, their value and a layout."""
    host = draw(st.sampled_from(sorted(host_files)))
    files = {}
    for name, values in host_files[host].items():
        if draw(st.booleans()):
            files[name] = (draw(values), draw(layouts()))
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
bare_keys = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda k: k not in ("compact_prompt", "features", "mcp_servers", "hooks")
)
table_names = st.from_regex(r"T[0-9]{1,2}", fullmatch=True)  # never a bare key above (those are lower case)
toml_scalars = st.integers(-1000, 1000) | st.booleans() | st.text(max_size=10)
comments = st.none() | st.text(alphabet="abc xyz#", max_size=10)


def toml_line(key: str, value: Any, comment: str | None) -> str:
    return f"{key} = {tomlkit.item(value).as_string()}" + (f"  # {comment}" if comment is not None else "")


NO_LINES: st.SearchStrategy[list[str]] = st.just([])


def toml_lines(extra: st.SearchStrategy[list[str]] = NO_LINES) -> st.SearchStrategy[list[str]]:
    pairs = st.dictionaries(bare_keys, st.tuples(toml_scalars, comments), max_size=3)
    lines = pairs.map(lambda d: [toml_line(k, v, c) for k, (v, c) in d.items()])
    return st.tuples(lines, extra, st.booleans()).map(lambda t: t[0] + t[1] + ([""] if t[2] else []))


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    out = ["# a Codex configuration"] if draw(st.booleans()) else []
    out += draw(toml_lines())
    if draw(st.booleans()):
        hooks = ["hooks = false", "hooks = false  # off for now", "hooks=false#x", "  hooks = false # a # b"]
        out += ["[features]", *draw(toml_lines(st.sampled_from([[], *([line] for line in hooks)])))]
    if draw(st.booleans()):
        out += ["[mcp_servers.other]", 'command = "node"', ""]
    for name in draw(st.lists(table_names, max_size=2, unique=True)):
        out += [f"[{name}]", *draw(toml_lines())]
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
