"""``workmem install`` / ``uninstall`` for Claude Code, and what every host shares: merging,
idempotence, the exact undo of the text, per-user files for machine-specific paths, files removed
when nothing is left in them, next steps, permissions, dry runs and the refusal of files that cannot
be edited safely. Codex and OpenCode: tests/adapters/test_install_codex_opencode.py."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.install import CLAUDE_TOOL_MATCHER, find_executable, is_workmem_command
from tests.support.install import (
    Env,
    Run,
    commands,
    files_lines,
    hook_cmd,
    make_env,
    next_steps,
    read_json,
    runner,
)

CLAUDE_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "Stop",
]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return make_env(tmp_path, monkeypatch)


@pytest.fixture
def run(env: Env, capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    return runner(env, capsys)


def local(env: Env) -> Path:
    return env.root / ".claude" / "settings.local.json"


# --- Claude Code ------------------------------------------------------------------------------------
def test_claude_project_install_writes_the_per_user_file_with_every_event_and_private_modes(
    env: Env, run: Callable[..., Run]
) -> None:
    result = run("install", "claude-code")
    assert result.code == 0, result.err
    path = local(env)
    assert files_lines(result.out) == [f"created {path}"]
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
    assert not (env.root / ".claude" / "settings.json").exists()  # the team's file gets no local path


def test_claude_project_install_moves_an_older_entry_out_of_the_teams_file(
    env: Env, run: Callable[..., Run]
) -> None:
    shared = env.root / ".claude" / "settings.json"
    shared.parent.mkdir()
    older = {"type": "command", "command": "/old/venv/bin/workmem hook claude-code", "timeout": 10}
    mine = {"type": "command", "command": "echo mine"}
    original = {"model": "opus", "hooks": {"Stop": [{"hooks": [mine]}]}}
    with_older = {**original, "hooks": {"Stop": [{"hooks": [mine]}], "SessionStart": [{"hooks": [older]}]}}
    shared.write_text(json.dumps(with_older, indent=2) + "\n")
    assert run("install", "claude-code").code == 0
    assert shared.read_text() == json.dumps(original, indent=2) + "\n"
    assert commands(read_json(local(env)), "SessionStart") == [hook_cmd(env, "claude-code")]


def test_claude_install_merges_keeps_the_text_and_uninstall_gives_it_back(
    env: Env, run: Callable[..., Run]
) -> None:
    path = local(env)
    path.parent.mkdir(mode=0o755)
    os.chmod(path.parent, 0o755)
    text = (
        '{\r\n\t"permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},\r\n'
        '\t"hooks": {\r\n\t\t"Notification": [{"hooks": [{"type": "command", "command": "echo mine"}]}],\r\n'
        '\t\t"SessionStart": [\r\n'
        '\t\t\t{"matcher": "startup", "hooks": [{"type": "command", "command": "echo s"}]}\r\n'
        "\t\t]\r\n\t},\r\n"
        '\t"model": "opus"\r\n}'
    )  # CRLF, tabs, inline arrays and objects, no final newline
    path.write_text(text, newline="")
    os.chmod(path, 0o644)
    assert run("install", "claude-code").code == 0
    new_text = path.read_bytes().decode()
    for line in text.split("\r\n"):
        if not line.strip().startswith(("]", "}")):
            assert line in new_text  # nothing of the user's is re-flowed
    assert "\n" not in new_text.replace("\r\n", "") and not new_text.endswith("\n")
    settings = json.loads(new_text)
    assert list(settings) == ["permissions", "hooks", "model"]
    assert commands(settings, "SessionStart") == ["echo s", hook_cmd(env, "claude-code")]
    assert '\t\t\t{\r\n\t\t\t\t"hooks": [\r\n' in new_text  # our group: one item per line, the file's indent
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the file's mode is kept
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o755  # a user's directory is not chmodded
    again = run("install", "claude-code")
    assert files_lines(again.out) == [f"unchanged {path}"] and path.read_bytes().decode() == new_text
    assert run("uninstall", "claude-code").code == 0
    assert path.read_bytes().decode() == text


def test_claude_reinstall_from_another_environment_replaces_the_old_entry(
    env: Env, run: Callable[..., Run]
) -> None:
    path = local(env)
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


def test_uninstall_removes_the_files_and_directory_install_created(env: Env, run: Callable[..., Run]) -> None:
    assert run("install", "claude-code", "--mcp").code == 0
    claude_json = env.home / ".claude.json"
    assert local(env).is_file() and claude_json.is_file()
    result = run("uninstall", "claude-code", "--mcp")
    assert result.code == 0
    assert files_lines(result.out) == [f"removed {local(env)}", f"removed {claude_json}"]
    assert not (env.root / ".claude").exists() and not claude_json.exists()
    assert next_steps(result.out) == ""


def test_uninstall_keeps_a_file_with_something_else_in_it(env: Env, run: Callable[..., Run]) -> None:
    assert run("install", "claude-code").code == 0
    (env.root / ".claude" / "agents.md").write_text("mine\n")
    settings = read_json(local(env))
    local(env).write_text(json.dumps({**settings, "model": "opus"}, indent=2) + "\n")
    assert run("uninstall", "claude-code").code == 0
    assert local(env).read_text() == '{\n  "model": "opus"\n}\n'


def test_claude_user_scope_and_claude_config_dir(
    env: Env, run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_claude_project_mcp_goes_to_the_users_own_scope_for_the_project(
    env: Env, run: Callable[..., Run]
) -> None:
    claude_json = env.home / ".claude.json"
    original = {"numStartups": 3, "mcpServers": {"other": {"command": "x"}}, "projects": {"/p": {"a": 1}}}
    claude_json.write_text(json.dumps(original, indent=2))
    shared = env.root / ".mcp.json"
    older = {"command": "/old/bin/workmem", "args": ["mcp"]}
    shared.write_text(json.dumps({"mcpServers": {"workmem": older}}))
    assert run("install", "claude-code", "--mcp").code == 0
    project = os.path.realpath(env.root)
    assert read_json(claude_json)["projects"] == {
        "/p": {"a": 1},
        project: {"mcpServers": {"workmem": {"command": env.exe, "args": ["mcp"]}}},
    }
    assert not shared.exists()  # an older install's entry left the team's file, and nothing else was in it
    assert run("install", "claude-code", "--user", "--mcp").code == 0
    assert list(read_json(claude_json)["mcpServers"]) == ["other", "workmem"]
    assert run("uninstall", "claude-code", "--user", "--mcp").code == 0
    assert run("uninstall", "claude-code", "--mcp").code == 0
    assert claude_json.read_text() == json.dumps(original, indent=2)


def test_an_mcp_entry_named_workmem_that_is_not_ours_is_refused(env: Env, run: Callable[..., Run]) -> None:
    path = env.home / ".claude.json"
    project = os.path.realpath(env.root)
    theirs = {"command": "node", "args": ["server.js"]}
    text = json.dumps({"projects": {project: {"mcpServers": {"workmem": theirs}}}})
    path.write_text(text)
    result = run("install", "claude-code", "--mcp")
    assert result.code == 2 and "not workmem's" in result.err and result.err.count("\n") == 1
    assert path.read_text() == text
    assert run("uninstall", "claude-code", "--mcp").code == 0
    assert path.read_text() == text


def test_claude_next_steps(env: Env, run: Callable[..., Run]) -> None:
    steps = next_steps(run("install", "claude-code", "--mcp").out)
    assert steps.startswith("next steps for claude-code:\n  1. restart Claude Code in ")
    assert "/hooks" in steps and "workmem health" in steps and "workmem list" in steps
    assert "/mcp lists the workmem server" in steps and "nothing to approve" in steps
    assert "settings.local.json is yours" in steps
    user = next_steps(run("install", "claude-code", "--user").out)
    assert "every project" in user and "settings.local.json" not in user and "/mcp" not in user


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
    env: Env, run: Callable[..., Run], content: bytes, reason: str
) -> None:
    path = local(env)
    path.parent.mkdir()
    path.write_bytes(content)
    for command in ("install", "uninstall"):
        result = run(command, "claude-code")
        assert result.code == 2, result
        assert reason in result.err and result.err.count("\n") == 1 and "Traceback" not in result.err
        assert path.read_bytes() == content
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.local.json"]  # no temp file left


def test_a_duplicate_key_on_the_way_to_an_edit_is_refused(env: Env, run: Callable[..., Run]) -> None:
    path = local(env)
    path.parent.mkdir()
    content = '{"hooks": {}, "model": "a", "hooks": {"Stop": []}}'
    path.write_text(content)
    result = run("install", "claude-code")
    assert result.code == 2 and '"hooks" appears 2 times' in result.err and path.read_text() == content
    path.write_text('{"model": "a", "model": "b"}')  # elsewhere it does not matter
    assert run("install", "claude-code").code == 0


def test_an_unreadable_settings_file_is_exit_2(env: Env, run: Callable[..., Run]) -> None:
    local(env).mkdir(parents=True)  # a directory where the file should be
    result = run("install", "claude-code")
    assert result.code == 2 and "cannot read it" in result.err


def test_a_symlinked_settings_file_is_written_through_the_link_and_kept(
    env: Env, run: Callable[..., Run]
) -> None:
    real = env.home / "dotfiles" / "settings.local.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = local(env)
    link.parent.mkdir()
    link.symlink_to(real)
    assert run("install", "claude-code").code == 0
    assert link.is_symlink() and "hooks" in read_json(real)
    assert run("uninstall", "claude-code").code == 0
    assert link.is_symlink() and real.read_text() == "{}\n"


def test_dry_run_prints_a_diff_and_writes_nothing(env: Env, run: Callable[..., Run]) -> None:
    result = run("install", "claude-code", "--dry-run", "--mcp")
    assert result.code == 0
    settings = local(env)
    assert f"--- /dev/null\n+++ {settings}\n" in result.out
    assert '+  "projects": {' in result.out and "next steps" not in result.out
    assert not (env.root / ".claude").exists() and not (env.home / ".claude.json").exists()
    assert run("install", "claude-code").code == 0
    before = settings.read_text()
    assert run("install", "claude-code", "--dry-run").out == "no changes\n"
    diff = run("uninstall", "claude-code", "--dry-run").out
    assert diff.startswith(f"--- {settings}\n+++ /dev/null\n") and '-  "hooks": {' in diff
    assert settings.read_text() == before


# --- the command line -------------------------------------------------------------------------------
def test_usage_errors_are_exit_2(
    env: Env, run: Callable[..., Run], capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_a_file_changed_during_the_edit_is_not_overwritten_or_removed(tmp_path: Path) -> None:
    from adapters.config_files import ConfigError, remove_file, replace_file

    path = tmp_path / "settings.json"
    path.write_text('{"a": 2}')
    with pytest.raises(ConfigError, match="changed while workmem was editing it"):
        replace_file(path, '{"a": 1}', '{"a": 1, "hooks": {}}')
    with pytest.raises(ConfigError, match="changed while workmem was editing it"):
        remove_file(path, '{"a": 1}')
    assert path.read_text() == '{"a": 2}'
    replace_file(path, '{"a": 2}', "{}")
    assert path.read_text() == "{}"
    remove_file(path, "{}")
    assert not path.exists()


def test_the_plugin_directory_is_inside_the_installed_hosts_package() -> None:
    from adapters import hosts, install

    found = install.opencode_plugin_dir()
    assert found == Path(hosts.__file__).resolve().parent / "opencode"


def test_a_hook_process_never_imports_the_installer(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys, io; from adapters.cli import main; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'));"
        " main(['hook', 'claude-code']); print(sorted(m for m in sys.modules"
        " if m.startswith(('tomlkit', 'adapters.install', 'adapters.codex_config', 'adapters.json_splice',"
        " 'adapters.settings_edits'))))"
    )
    env = {**os.environ, "WORKMEM_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[]", done


def test_the_hand_written_registration_in_the_docs_is_what_install_writes() -> None:
    from adapters.install import CLAUDE_EVENTS as EVENTS, edit_hooks

    docs = (Path(__file__).resolve().parents[2] / "docs" / "hosts.md").read_text()
    section = docs[docs.index("### Registering the hooks") :]
    start = section.index("```json\n") + len("```json\n")
    block = section[start : section.index("\n```", start)]
    written = edit_hooks(Path("x"), {}, EVENTS, "workmem hook claude-code", ("hook", "claude-code"))
    assert json.loads(block) == written
