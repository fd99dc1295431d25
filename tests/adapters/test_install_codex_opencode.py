"""``workmem install`` / ``uninstall`` for Codex (``hooks.json`` and ``config.toml``) and OpenCode
(``opencode.json``): what each writes, the exact undo, the command a team's files get, and the next
steps printed for each host."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.codex_config import MCP_ENV_VARS
from domain.extraction import static_compaction_prompt
from tests.support.install import (
    Env,
    Run,
    files_lines,
    hook_cmd,
    make_env,
    next_steps,
    read_json,
    runner,
)

CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostCompact", "SessionEnd", "Stop"]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return make_env(tmp_path, monkeypatch)


@pytest.fixture
def run(env: Env, capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    return runner(env, capsys)


def server(command: str) -> dict[str, object]:
    return {"command": command, "args": ["mcp"], "env_vars": list(MCP_ENV_VARS)}


# --- Codex ------------------------------------------------------------------------------------------
def test_codex_project_install_hooks_features_and_compact_prompt(env: Env, run: Callable[..., Run]) -> None:
    result = run("install", "codex")
    assert result.code == 0
    hooks = read_json(env.root / ".codex" / "hooks.json")
    assert list(hooks["hooks"]) == CODEX_EVENTS
    for event in CODEX_EVENTS:
        timeout = 3 if event == "SessionEnd" else 10  # Codex cuts SessionEnd to 3 s and says so every run
        assert hooks["hooks"][event] == [
            {"hooks": [{"type": "command", "command": hook_cmd(env, "codex"), "timeout": timeout}]}
        ]
    text = (env.root / ".codex" / "config.toml").read_text()
    config = tomllib.loads(text)
    assert config == {"compact_prompt": static_compaction_prompt(), "features": {"hooks": True}}
    assert "Memory candidates:" in config["compact_prompt"]
    assert "[features] # added by workmem install\nhooks = true # added by workmem install\n" in text
    assert "hooks = true (it was unset) makes Codex run every hook configured" in result.err
    again = run("install", "codex")
    assert [line.split()[0] for line in files_lines(again.out)] == ["unchanged", "unchanged"]
    assert run("uninstall", "codex").code == 0
    assert not (env.root / ".codex").exists()  # install created the directory and both files


def test_codex_user_scope_honours_codex_home_and_forwards_the_data_home_to_mcp(
    env: Env, run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("install", "codex", "--user").code == 0
    assert (env.home / ".codex" / "hooks.json").is_file() and (env.home / ".codex" / "config.toml").is_file()
    codex_home = env.home / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert run("install", "codex", "--user", "--mcp").code == 0
    config = tomllib.loads((codex_home / "config.toml").read_text())
    assert config["mcp_servers"] == {"workmem": server(env.exe)}
    assert {"WORKMEM_HOME", "XDG_DATA_HOME"} <= set(MCP_ENV_VARS)


def test_codex_updates_an_older_mcp_table_without_env_vars(env: Env, run: Callable[..., Run]) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    older = 'model = "o3"\n\n[mcp_servers.workmem]\ncommand = "/old/bin/workmem"\nargs = ["mcp"]\n'
    path.write_text(older)
    assert run("install", "codex", "--mcp").code == 0
    assert tomllib.loads(path.read_text())["mcp_servers"]["workmem"] == server(env.exe)
    assert run("uninstall", "codex", "--mcp").code == 0
    assert path.read_text() == 'model = "o3"\n'
    path.write_text(older.removeprefix('model = "o3"\n\n'))  # a table first in the file
    assert run("install", "codex", "--mcp").code == 0
    assert run("uninstall", "codex", "--mcp").code == 0
    assert not path.exists()  # nothing else was in it


CODEX_CONFIG = """# my Codex settings
model = "o3"  # the model

[features]
hooks = false  # off until the team agrees
web_search = true

[projects."/src/app"]
trust_level = "trusted"
"""


def test_codex_config_keeps_comments_warns_and_undoes_exactly(env: Env, run: Callable[..., Run]) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_CONFIG)
    result = run("install", "codex", "--mcp")
    assert result.code == 0
    text = path.read_text()
    assert (
        "hooks = true  # off until the team agrees # set by workmem install (was false)\nweb_search = true\n"
        in text
    )
    assert '# my Codex settings\nmodel = "o3"  # the model\n' in text
    assert "hooks = true (it was false) makes Codex run every hook configured for it" in result.err
    config = tomllib.loads(text)
    assert config["features"] == {"hooks": True, "web_search": True}
    assert config["mcp_servers"]["workmem"] == server(env.exe)
    assert run("install", "codex", "--mcp").code == 0 and path.read_text() == text
    assert run("uninstall", "codex", "--mcp").code == 0
    assert path.read_text() == CODEX_CONFIG


def test_codex_keeps_the_users_own_hooks_true_and_compact_prompt(env: Env, run: Callable[..., Run]) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    original = 'compact_prompt = "Summarise tersely."\n\n[features]\nhooks = true\n'
    path.write_text(original)
    result = run("install", "codex")
    assert result.code == 0 and "kept your own compact_prompt" in result.err
    assert "makes Codex run every hook" not in result.err
    assert path.read_text() == original  # nothing of ours to add to config.toml
    assert run("uninstall", "codex").code == 0 and path.read_text() == original


def test_codex_replaces_an_older_workmem_prompt(env: Env, run: Callable[..., Run]) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "o3"\ncompact_prompt = "old workmem prompt" # added by workmem install\n')
    assert run("install", "codex").code == 0
    assert tomllib.loads(path.read_text())["compact_prompt"] == static_compaction_prompt()
    assert run("uninstall", "codex").code == 0
    assert tomllib.loads(path.read_text()) == {"model": "o3"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("model = \n", "not valid TOML"),
        ("features = { web = true }\n", "cannot set hooks = true"),
        ('[mcp_servers.workmem]\ncommand = "node"\n', "not workmem's"),
    ],
)
def test_a_bad_codex_config_is_exit_2_and_untouched(
    env: Env, run: Callable[..., Run], content: str, reason: str
) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(content)
    result = run("install", "codex", "--mcp")
    assert result.code == 2 and reason in result.err and result.err.count("\n") == 1
    assert path.read_text() == content
    assert not (env.root / ".codex" / "hooks.json").exists()  # nothing is written when one file is bad


def test_codex_project_files_get_a_command_every_machine_can_run(
    env: Env, run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run("install", "codex", "--mcp")  # this workmem is not the one on PATH
    assert "works on this machine only" in result.err and env.exe in result.err
    env.put_exe_on_path(monkeypatch)
    result = run("install", "codex", "--mcp")
    assert "works on this machine only" not in result.err
    hooks = read_json(env.root / ".codex" / "hooks.json")
    handlers = [h["command"] for g in hooks["hooks"]["SessionStart"] for h in g["hooks"]]
    assert handlers == ["workmem hook codex"]
    config = tomllib.loads((env.root / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["workmem"] == server("workmem")
    assert run("install", "codex", "--user").code == 0  # the user's own files keep the absolute path
    assert hook_cmd(env, "codex") in (env.home / ".codex" / "hooks.json").read_text()


def test_codex_next_steps(env: Env, run: Callable[..., Run]) -> None:
    steps = next_steps(run("install", "codex", "--mcp").out)
    assert steps.startswith("next steps for codex:\n  1. trust the project when Codex asks")
    assert "hooks need review" in steps and "/hooks" in steps and "does not run them" in steps
    assert "workmem health" in steps and "/mcp lists the workmem server" in steps
    user = next_steps(run("install", "codex", "--user").out)
    assert "trust the project" not in user and "hooks need review" in user


# --- OpenCode ---------------------------------------------------------------------------------------
def test_opencode_project_plugin_and_mcp_keep_the_text(
    env: Env, run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    env.put_exe_on_path(monkeypatch)
    path = env.root / "opencode.json"
    text = (
        '{\n    "$schema": "https://opencode.ai/config.json",\n    "plugin": ["opencode-foo"],\n'
        '    "mcp": {"x": {}}\n}\n'
    )
    path.write_text(text)
    result = run("install", "opencode", "--mcp")
    assert result.code == 0 and result.err == ""
    new = path.read_text()
    assert f'    "plugin": ["opencode-foo", "file://{env.plugin}"],\n' in new
    config = json.loads(new)
    assert config["mcp"]["workmem"] == {"type": "local", "command": ["workmem", "mcp"], "enabled": True}
    assert run("uninstall", "opencode", "--mcp").code == 0
    assert path.read_text() == text


def test_opencode_user_scope_honours_xdg_config_home(
    env: Env, run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("install", "opencode", "--user", "--mcp").code == 0
    assert read_json(env.home / ".config" / "opencode" / "opencode.json") == {
        "plugin": [f"file://{env.plugin}"],
        "mcp": {"workmem": {"type": "local", "command": [env.exe, "mcp"], "enabled": True}},
    }
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env.home / "xdg"))
    assert run("install", "opencode", "--user").code == 0
    assert (env.home / "xdg" / "opencode" / "opencode.json").is_file()


def test_opencode_reinstall_replaces_a_plugin_path_from_another_install(
    env: Env, run: Callable[..., Run]
) -> None:
    path = env.root / "opencode.json"
    path.write_text(json.dumps({"plugin": ["file:///old/site/adapters/hosts/opencode", "other"]}))
    assert run("install", "opencode").code == 0
    assert read_json(path)["plugin"] == ["other", f"file://{env.plugin}"]


def test_opencode_jsonc_is_edited_only_when_it_is_plain_json(env: Env, run: Callable[..., Run]) -> None:
    path = env.root / "opencode.jsonc"
    commented = '{\n  // my plugins\n  "plugin": []\n}\n'
    path.write_text(commented)
    result = run("install", "opencode")
    assert result.code == 2 and "not plain JSON (comments or trailing commas?)" in result.err
    assert path.read_text() == commented and not (env.root / "opencode.json").exists()
    path.write_text('{"plugin": ["a"]}\n')
    assert run("install", "opencode").code == 0
    assert read_json(path)["plugin"] == ["a", f"file://{env.plugin}"]


def test_opencode_install_refuses_without_the_plugin_files(env: Env, run: Callable[..., Run]) -> None:
    (env.plugin / "index.js").unlink()
    result = run("install", "opencode")
    assert result.code == 2 and "plugin is missing" in result.err
    assert not (env.root / "opencode.json").exists()


def test_opencode_next_steps(env: Env, run: Callable[..., Run]) -> None:
    steps = next_steps(run("install", "opencode").out)
    assert steps.startswith("next steps for opencode:\n  1. restart OpenCode in ")
    assert "workmem serve` from PATH" in steps and "workmem health" in steps
    assert "names the plugin directory of this machine" in steps and "--user" in steps
    assert "plugin directory of this machine" not in next_steps(run("install", "opencode", "--user").out)
