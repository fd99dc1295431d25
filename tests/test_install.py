"""``workmem install`` / ``uninstall``: every host and scope on temporary directories with a fake HOME,
CODEX_HOME and XDG_CONFIG_HOME; merging, idempotence, exact undo, formatting, permissions, dry runs
and the refusal of files that cannot be edited safely."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import adapters.install
from adapters.cli import main
from adapters.install import CLAUDE_TOOL_MATCHER, find_executable, is_workmem_command
from domain.extraction import static_compaction_prompt

CLAUDE_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
]
CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostCompact", "SessionEnd"]


class Run(NamedTuple):
    code: int
    out: str
    err: str


class Env(NamedTuple):
    root: Path
    home: Path
    exe: str
    plugin: Path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "WORKMEM_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    exe = str(tmp_path / "venv one" / "bin" / "workmem")  # a space: the command must be quoted
    monkeypatch.setattr(adapters.install, "find_executable", lambda: exe)
    plugin = tmp_path / "site" / "adapters" / "hosts" / "opencode"
    plugin.mkdir(parents=True)
    (plugin / "index.js").write_text("export default {}\n")
    monkeypatch.setattr(adapters.install, "opencode_plugin_dir", lambda: plugin)
    return Env(root, home, exe, plugin)


@pytest.fixture
def run(env: Env, capsys: pytest.CaptureFixture[str]) -> Any:
    def call(*args: str) -> Run:
        capsys.readouterr()
        code = main(["--workspace", str(env.root), *args])
        out, err = capsys.readouterr()
        return Run(code, out, err)

    return call


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]


def hook_cmd(env: Env, host: str) -> str:
    return f"'{env.exe}' hook {host}"


# --- Claude Code ------------------------------------------------------------------------------------
def test_claude_project_install_writes_every_event_with_timeout_and_private_files(env: Env, run: Any) -> None:
    result = run("install", "claude-code")
    assert result.code == 0, result.err
    path = env.root / ".claude" / "settings.json"
    assert result.out == f"created {path}\n"
    settings = read_json(path)
    assert list(settings["hooks"]) == CLAUDE_EVENTS
    for event in CLAUDE_EVENTS:
        (group,) = settings["hooks"][event]
        assert group["hooks"] == [{"type": "command", "command": hook_cmd(env, "claude-code"), "timeout": 10}]
        matcher = CLAUDE_TOOL_MATCHER if event.startswith("PostToolUse") else None
        assert group.get("matcher") == matcher
    assert "MultiEdit" not in CLAUDE_TOOL_MATCHER
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_claude_install_merges_keeps_layout_and_is_idempotent(env: Env, run: Any) -> None:
    path = env.root / ".claude" / "settings.json"
    path.parent.mkdir(mode=0o755)
    os.chmod(path.parent, 0o755)
    mine = {"type": "command", "command": "echo mine"}
    original = {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [mine]}], "SessionStart": [{"matcher": "startup", "hooks": [mine]}]},
        "permissions": {"allow": ["Bash(ls)"]},
    }
    text = json.dumps(original, indent="\t")  # tab indent, no final newline
    path.write_text(text)
    os.chmod(path, 0o644)
    assert run("install", "claude-code").code == 0
    new_text = path.read_text()
    assert new_text.startswith('{\n\t"model": "opus",') and not new_text.endswith("\n")
    settings = read_json(path)
    assert list(settings) == ["model", "hooks", "permissions"]
    assert settings["hooks"]["Stop"] == original["hooks"]["Stop"]  # type: ignore[index]
    assert commands(settings, "SessionStart") == ["echo mine", hook_cmd(env, "claude-code")]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the file's mode is kept
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o755  # a user's directory is not chmodded
    again = run("install", "claude-code")
    assert again.out == f"unchanged {path}\n" and path.read_text() == new_text
    assert run("uninstall", "claude-code").code == 0
    assert path.read_text() == text


def test_claude_reinstall_from_another_environment_replaces_the_old_entry(env: Env, run: Any) -> None:
    path = env.root / ".claude" / "settings.json"
    path.parent.mkdir()
    other = {"type": "command", "command": "echo other"}
    old = {"type": "command", "command": "/old/venv/bin/workmem hook claude-code", "timeout": 30}
    custom = {"type": "command", "command": "workmem --home /x hook claude-code"}  # not ours: extra words
    path.write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old, other]}, {"hooks": [custom]}]}})
    )
    assert run("install", "claude-code").code == 0
    settings = read_json(path)
    assert commands(settings, "UserPromptSubmit") == [
        "echo other",
        "workmem --home /x hook claude-code",
        hook_cmd(env, "claude-code"),
    ]
    assert run("uninstall", "claude-code").code == 0
    assert read_json(path) == {"hooks": {"UserPromptSubmit": [{"hooks": [other]}, {"hooks": [custom]}]}}


def test_claude_user_scope_and_claude_config_dir(env: Env, run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("install", "claude-code", "--user").code == 0
    assert (env.home / ".claude" / "settings.json").is_file()
    assert not (env.root / ".claude").exists()
    configured = env.home / "profile"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(configured))
    assert run("install", "claude-code", "--user", "--mcp").code == 0
    assert commands(read_json(configured / "settings.json"), "SessionEnd") == [hook_cmd(env, "claude-code")]
    assert read_json(configured / ".claude.json")["mcpServers"]["workmem"] == {
        "command": env.exe,
        "args": ["mcp"],
    }


def test_claude_mcp_project_and_user_files(env: Env, run: Any) -> None:
    claude_json = env.home / ".claude.json"
    claude_json.write_text(
        json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}, indent=2)
    )
    assert run("install", "claude-code", "--mcp").code == 0
    assert read_json(env.root / ".mcp.json") == {
        "mcpServers": {"workmem": {"command": env.exe, "args": ["mcp"]}}
    }
    assert run("install", "claude-code", "--user", "--mcp").code == 0
    assert list(read_json(claude_json)["mcpServers"]) == ["other", "workmem"]
    assert run("uninstall", "claude-code", "--user", "--mcp").code == 0
    assert read_json(claude_json) == {"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}
    assert run("uninstall", "claude-code", "--mcp").code == 0
    assert read_json(env.root / ".mcp.json") == {}


def test_an_mcp_entry_named_workmem_that_is_not_ours_is_refused(env: Env, run: Any) -> None:
    path = env.root / ".mcp.json"
    text = json.dumps({"mcpServers": {"workmem": {"command": "node", "args": ["server.js"]}}})
    path.write_text(text)
    result = run("install", "claude-code", "--mcp")
    assert result.code == 2 and "not workmem's" in result.err and result.err.count("\n") == 1
    assert path.read_text() == text
    assert run("uninstall", "claude-code", "--mcp").code == 0
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"hooks": []}', '"hooks" is list'),
        (b'{"hooks": {"SessionStart": {}}}', '"hooks.SessionStart" is dict'),
        (b'{"a": NaN}', "not valid JSON"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
)
def test_a_bad_settings_file_is_exit_2_one_line_and_untouched(
    env: Env, run: Any, content: bytes, reason: str
) -> None:
    path = env.root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(content)
    for command in ("install", "uninstall"):
        result = run(command, "claude-code")
        assert result.code == 2, result
        assert reason in result.err and result.err.count("\n") == 1 and "Traceback" not in result.err
        assert path.read_bytes() == content
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no temp file left


def test_an_unreadable_settings_file_is_exit_2(env: Env, run: Any) -> None:
    path = env.root / ".claude" / "settings.json"
    path.mkdir(parents=True)  # a directory where the file should be
    result = run("install", "claude-code")
    assert result.code == 2 and "cannot read it" in result.err


def test_a_symlinked_settings_file_is_written_through_the_link(env: Env, run: Any) -> None:
    real = env.home / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    link = env.root / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert run("install", "claude-code").code == 0
    assert link.is_symlink() and "hooks" in read_json(real)


def test_dry_run_prints_a_diff_and_writes_nothing(env: Env, run: Any) -> None:
    result = run("install", "claude-code", "--dry-run", "--mcp")
    assert result.code == 0
    settings = env.root / ".claude" / "settings.json"
    assert f"--- /dev/null\n+++ {settings}\n" in result.out
    assert '+  "mcpServers": {' in result.out
    assert not (env.root / ".claude").exists() and not (env.root / ".mcp.json").exists()
    assert run("install", "claude-code").code == 0
    before = settings.read_text()
    assert run("install", "claude-code", "--dry-run").out == "no changes\n"
    diff = run("uninstall", "claude-code", "--dry-run").out
    assert diff.startswith(f"--- {settings}\n+++ {settings}\n") and '-  "hooks": {' in diff
    assert settings.read_text() == before


# --- Codex ------------------------------------------------------------------------------------------
def test_codex_project_install_hooks_features_and_compact_prompt(env: Env, run: Any) -> None:
    assert run("install", "codex").code == 0
    hooks = read_json(env.root / ".codex" / "hooks.json")
    assert list(hooks["hooks"]) == CODEX_EVENTS
    for event in CODEX_EVENTS:
        assert hooks["hooks"][event] == [
            {"hooks": [{"type": "command", "command": hook_cmd(env, "codex"), "timeout": 10}]}
        ]
    text = (env.root / ".codex" / "config.toml").read_text()
    config = tomllib.loads(text)
    assert config == {"compact_prompt": static_compaction_prompt(), "features": {"hooks": True}}
    assert "Memory candidates:" in config["compact_prompt"]
    assert "[features] # added by workmem install\nhooks = true # added by workmem install\n" in text
    assert run("install", "codex").out.count("unchanged") == 2
    assert run("uninstall", "codex").code == 0
    assert (env.root / ".codex" / "config.toml").read_text() == ""
    assert read_json(env.root / ".codex" / "hooks.json") == {}


def test_codex_user_scope_honours_codex_home(env: Env, run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("install", "codex", "--user").code == 0
    assert (env.home / ".codex" / "hooks.json").is_file() and (env.home / ".codex" / "config.toml").is_file()
    codex_home = env.home / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert run("install", "codex", "--user", "--mcp").code == 0
    config = tomllib.loads((codex_home / "config.toml").read_text())
    assert config["mcp_servers"] == {"workmem": {"command": env.exe, "args": ["mcp"]}}


CODEX_CONFIG = """# my Codex settings
model = "o3"  # the model

[features]
hooks = false
web_search = true

[projects."/src/app"]
trust_level = "trusted"
"""


def test_codex_config_keeps_comments_and_undoes_exactly(env: Env, run: Any) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_CONFIG)
    assert run("install", "codex", "--mcp").code == 0
    text = path.read_text()
    assert "hooks = true # set by workmem install (was false)\nweb_search = true\n" in text
    assert '# my Codex settings\nmodel = "o3"  # the model\n' in text
    config = tomllib.loads(text)
    assert config["features"] == {"hooks": True, "web_search": True}
    assert config["mcp_servers"]["workmem"] == {"command": env.exe, "args": ["mcp"]}
    assert run("install", "codex", "--mcp").code == 0 and path.read_text() == text
    assert run("uninstall", "codex", "--mcp").code == 0
    assert path.read_text() == CODEX_CONFIG


def test_codex_keeps_the_users_own_hooks_true_and_compact_prompt(env: Env, run: Any) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    original = 'compact_prompt = "Summarise tersely."\n\n[features]\nhooks = true\n'
    path.write_text(original)
    result = run("install", "codex")
    assert result.code == 0 and "kept your own compact_prompt" in result.err
    assert path.read_text() == original  # nothing of ours to add to config.toml
    assert run("uninstall", "codex").code == 0 and path.read_text() == original


def test_codex_replaces_an_older_workmem_prompt(env: Env, run: Any) -> None:
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
def test_a_bad_codex_config_is_exit_2_and_untouched(env: Env, run: Any, content: str, reason: str) -> None:
    path = env.root / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(content)
    result = run("install", "codex", "--mcp")
    assert result.code == 2 and reason in result.err and result.err.count("\n") == 1
    assert path.read_text() == content
    assert not (env.root / ".codex" / "hooks.json").exists()  # nothing is written when one file is bad


# --- OpenCode ---------------------------------------------------------------------------------------
def test_opencode_project_plugin_and_mcp(env: Env, run: Any) -> None:
    path = env.root / "opencode.json"
    original = {"$schema": "https://opencode.ai/config.json", "plugin": ["opencode-foo"], "mcp": {"x": {}}}
    path.write_text(json.dumps(original, indent=4) + "\n")
    assert run("install", "opencode", "--mcp").code == 0
    config = read_json(path)
    assert config["plugin"] == ["opencode-foo", f"file://{env.plugin}"]
    assert config["mcp"]["workmem"] == {"type": "local", "command": [env.exe, "mcp"], "enabled": True}
    assert path.read_text().startswith('{\n    "$schema"')
    assert run("uninstall", "opencode", "--mcp").code == 0
    assert read_json(path) == original


def test_opencode_user_scope_honours_xdg_config_home(
    env: Env, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("install", "opencode", "--user").code == 0
    assert read_json(env.home / ".config" / "opencode" / "opencode.json") == {
        "plugin": [f"file://{env.plugin}"]
    }
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env.home / "xdg"))
    assert run("install", "opencode", "--user").code == 0
    assert (env.home / "xdg" / "opencode" / "opencode.json").is_file()


def test_opencode_reinstall_replaces_a_plugin_path_from_another_install(env: Env, run: Any) -> None:
    path = env.root / "opencode.json"
    path.write_text(json.dumps({"plugin": ["file:///old/site/adapters/hosts/opencode", "other"]}))
    assert run("install", "opencode").code == 0
    assert read_json(path)["plugin"] == ["other", f"file://{env.plugin}"]


def test_opencode_jsonc_is_edited_only_when_it_is_plain_json(env: Env, run: Any) -> None:
    path = env.root / "opencode.jsonc"
    commented = '{\n  // my plugins\n  "plugin": []\n}\n'
    path.write_text(commented)
    result = run("install", "opencode")
    assert result.code == 2 and "not plain JSON (comments or trailing commas?)" in result.err
    assert path.read_text() == commented and not (env.root / "opencode.json").exists()
    path.write_text('{"plugin": ["a"]}\n')
    assert run("install", "opencode").code == 0
    assert read_json(path)["plugin"] == ["a", f"file://{env.plugin}"]


def test_opencode_install_refuses_without_the_plugin_files(env: Env, run: Any) -> None:
    (env.plugin / "index.js").unlink()
    result = run("install", "opencode")
    assert result.code == 2 and "plugin is missing" in result.err
    assert not (env.root / "opencode.json").exists()


# --- the command line -------------------------------------------------------------------------------
def test_usage_errors_are_exit_2(env: Env, run: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(env.root / "missing"), "install", "claude-code"]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert not (env.root / "missing").exists()
    assert run("install", "cursor").code == 2
    assert run("install", "codex", "--project", "--user").code == 2
    assert run("uninstall").code == 2


def test_install_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--help"]) == 0
    assert "claude-code, codex or opencode" in capsys.readouterr().out


def test_find_executable_is_the_absolute_workmem_of_this_environment() -> None:
    exe = find_executable()
    assert os.path.isabs(exe) and Path(exe).name == "workmem"
    assert Path(exe).parent == Path(sys.executable).parent or os.access(exe, os.X_OK)


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/a/b/workmem hook codex", True),
        ("'/a b/workmem' hook codex", True),
        ("workmem hook codex", True),
        ("/c/venv/Scripts/workmem.exe hook codex", True),
        ("/a/workmem hook claude-code", False),
        ("/a/workmem --home x hook codex", False),
        ("/a/not-workmem hook codex", False),
        ("'unterminated hook codex", False),
    ],
)
def test_recognising_our_hook_command(command: str, ours: bool) -> None:
    assert is_workmem_command(command, "hook", "codex") is ours


def test_a_file_changed_during_the_edit_is_not_overwritten(tmp_path: Path) -> None:
    from adapters.config_files import ConfigError, replace_file

    path = tmp_path / "settings.json"
    path.write_text('{"a": 2}')
    with pytest.raises(ConfigError, match="changed while workmem was editing it"):
        replace_file(path, '{"a": 1}', '{"a": 1, "hooks": {}}')
    assert path.read_text() == '{"a": 2}'
    replace_file(path, '{"a": 2}', "{}")
    assert path.read_text() == "{}"


def test_the_plugin_directory_is_inside_the_installed_hosts_package() -> None:
    import adapters.hosts

    found = adapters.install.opencode_plugin_dir()
    assert found == Path(adapters.hosts.__file__).resolve().parent / "opencode"


def test_a_hook_process_never_imports_the_installer(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys, io; from adapters.cli import main; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'));"
        " main(['hook', 'claude-code']); print(sorted(m for m in sys.modules"
        " if m.startswith(('tomlkit', 'adapters.install', 'adapters.codex_config'))))"
    )
    env = {**os.environ, "WORKMEM_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[]", done


def test_the_hand_written_registration_in_the_docs_is_what_install_writes() -> None:
    from adapters.install import CLAUDE_EVENTS as EVENTS, edit_hooks

    docs = (Path(__file__).resolve().parent.parent / "docs" / "hosts.md").read_text()
    section = docs[docs.index("### Registering the hooks") :]
    start = section.index("```json\n") + len("```json\n")
    block = section[start : section.index("\n```", start)]
    written = edit_hooks(Path("x"), {}, EVENTS, "workmem hook claude-code", ("hook", "claude-code"))
    assert json.loads(block) == written
