"""Properties of ``workmem install`` / ``uninstall`` over arbitrary pre-existing settings:
install∘install = install, and uninstall∘install gives back the same JSON value (and, for a file
written in a regular JSON or TOML layout, the same text).

The one documented exception is excluded from the generated files: an *empty* list or object under
a key install writes to (``"hooks": {}``, ``"SessionStart": []``, ``"plugin": []``) is removed by
uninstall, because nothing tells it apart from one install created (docs/hosts.md, "Installing")."""

from __future__ import annotations

import json
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit
from hypothesis import given, strategies as st

from adapters.codex_config import CodexConfigEdit
from adapters.install import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    Where,
    _is_claude_server,
    _is_opencode_server,
    _opencode_server,
    edit_entry,
    edit_hooks,
    edit_plugins,
    is_workmem_command,
    is_workmem_exe,
    plan,
)
from domain.extraction import static_compaction_prompt

EXE = "/opt/venv b/bin/workmem"
HERE = Path("settings.json")
EVENT_NAMES = [name for name, _ in CLAUDE_EVENTS] + ["Stop", "Notification", "PreToolUse"]

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
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
    wanted = _opencode_server(EXE)
    check_round_trip(
        lambda v, on: edit_entry(HERE, v, "mcp", wanted if on else None, _is_opencode_server), settings
    )


@given(
    settings_with("hooks", hook_tables(("hook", "claude-code"))),
    settings_with("mcpServers", servers),
    st.sampled_from([2, 4, "\t", None]),
    st.booleans(),
    st.booleans(),
)
def test_claude_files_round_trip_as_text(
    settings: dict[str, Any], mcp: dict[str, Any], indent: int | str | None, newline: bool, ascii: bool
) -> None:
    """Through the whole plan, on files: the text itself comes back after install then uninstall."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / ".claude").mkdir()
        files = {root / ".claude" / "settings.json": settings, root / ".mcp.json": mcp}
        originals = {}
        for path, value in files.items():
            originals[path] = json.dumps(value, indent=indent, ensure_ascii=ascii) + ("\n" if newline else "")
            path.write_text(originals[path])
        where = Where(user=False, root=root, env={}, home=root / "home")

        def apply(remove: bool) -> bool:
            changes = plan("claude-code", where, EXE, mcp=True, remove=remove).changes
            for change in changes:
                if change.changed and change.new is not None:
                    change.path.write_text(change.new)
            return any(c.changed for c in changes)

        assert apply(remove=False)
        assert not apply(remove=False)
        assert apply(remove=True)
        for path, text in originals.items():
            assert path.read_text() == text


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
        out += ["[features]", *draw(toml_lines(st.sampled_from([[], ["hooks = false"]])))]
    if draw(st.booleans()):
        out += ["[mcp_servers.other]", 'command = "node"', ""]
    for name in draw(st.lists(table_names, max_size=2, unique=True)):
        out += [f"[{name}]", *draw(toml_lines())]
    return "\n".join(out) + "\n" if out else ""


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
    assert not _is_claude_server(value.get("mcp_servers", {}).get("other"))
