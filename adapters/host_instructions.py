"""The service's step that reads the host's own instruction files before a session start or a
compaction (docs/decisions.md#d22, docs/hosts.md "Instruction files"), so that the core can leave out
of the block what they already say.

Which files each host loads is :func:`candidates` (the table of docs/hosts.md, "Instruction files"):
only those at the workspace root and in the user's home. Files in subdirectories and ``@`` imports
are not read, so a memory is never hidden on the strength of a file the host might not load.

The read is bounded: a regular file only (no FIFO, no device), at most :data:`MAX_BYTES` of it, and a
symbolic link is followed only when it stays inside the directory the file belongs to (the workspace
root, or the host's directory in the home). A file that cannot be read is skipped; the step never
fails the command.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from domain.commands import Batch, Command, Compacted, OpenSession
from domain.host_instructions import HostContext, HostKind, InstructionFile, instruction_lines

if TYPE_CHECKING:
    from adapters.filestore import Workspace

#: At most this much of one instruction file is read (Codex itself stops at 32 KiB).
MAX_BYTES: Final = 32 * 1024

_O_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def read_bounded(path: Path, base: Path) -> str | None:
    """The text of ``path`` (at most :data:`MAX_BYTES`, undecodable bytes replaced), or ``None`` when
    it is missing, not a regular file, or a link that leads outside ``base``."""
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(base.resolve(strict=True)):
            return None
        fd = os.open(real, _O_FLAGS)
    except (OSError, RuntimeError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _dir(env: Mapping[str, str], variable: str, default: Path) -> Path:
    value = env.get(variable, "")
    return Path(value) if value and os.path.isabs(value) else default


def candidates(host: HostKind, root: str, env: Mapping[str, str]) -> list[tuple[str, Path, Path, bool]]:
    """The files ``host`` loads, as (name shown, path, the directory it must stay in, whether it is
    the first of a group of alternatives that ends at the next ``True``)."""
    home = _home(env)
    project = Path(root)
    if host is HostKind.CLAUDE_CODE:
        user = _dir(env, "CLAUDE_CONFIG_DIR", home / ".claude")
        return [
            ("CLAUDE.md", project / "CLAUDE.md", project, True),
            (".claude/CLAUDE.md", project / ".claude" / "CLAUDE.md", project, True),
            ("CLAUDE.local.md", project / "CLAUDE.local.md", project, True),
            ("~/.claude/CLAUDE.md", user / "CLAUDE.md", user, True),
        ]
    if host is HostKind.CODEX:
        codex = _dir(env, "CODEX_HOME", home / ".codex")
        return [
            ("AGENTS.override.md", project / "AGENTS.override.md", project, True),
            ("AGENTS.md", project / "AGENTS.md", project, False),
            ("~/.codex/AGENTS.override.md", codex / "AGENTS.override.md", codex, True),
            ("~/.codex/AGENTS.md", codex / "AGENTS.md", codex, False),
        ]
    config = _dir(env, "XDG_CONFIG_HOME", home / ".config") / "opencode"
    found = [
        ("AGENTS.md", project / "AGENTS.md", project, True),
        ("CLAUDE.md", project / "CLAUDE.md", project, False),
        ("~/.config/opencode/AGENTS.md", config / "AGENTS.md", config, True),
    ]
    if not (env.get("OPENCODE_DISABLE_CLAUDE_CODE") or env.get("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT")):
        found.append(("~/.claude/CLAUDE.md", home / ".claude" / "CLAUDE.md", home / ".claude", False))
    return found


def read_instructions(host: HostKind, root: str, env: Mapping[str, str]) -> tuple[InstructionFile, ...]:
    """What ``host``'s instruction files for the workspace ``root`` say (module docstring): of each
    group of alternatives, the first file that exists (an empty one too: reading on could hide a
    memory on the strength of a file the host does not load)."""
    files: list[InstructionFile] = []
    taken = False
    for name, path, base, starts_group in candidates(host, root, env):
        if starts_group:
            taken = False
        if taken:
            continue
        text = read_bounded(path, base)
        if text is None:
            continue
        taken = True  # the host loads this one, not the alternatives after it
        lines = instruction_lines(text)
        if lines:
            files.append(InstructionFile(name=name, lines=lines))
    return tuple(files)


def _widened(command: Command, root: str, env: Mapping[str, str]) -> Command:
    if isinstance(command, Batch):
        steps = tuple(_widened(step, root, env) for step in command.steps)
        return command if steps == command.steps else replace(command, steps=steps)
    if not isinstance(command, OpenSession | Compacted) or command.host is None or command.parent is not None:
        return command
    files = read_instructions(command.host.host, root, env)
    return replace(command, host=HostContext(host=command.host.host, files=files)) if files else command


def before(ws: Workspace, command: Command, now_ms: int) -> Command:
    """A session start or compaction that names its host gets what the host's instruction files say."""
    return _widened(command, ws.root, os.environ)
