"""The ``workmem`` commands, one module per group, imported lazily by :mod:`adapters.cli`.

Shared here: :class:`CommandError` (a failure that is not a bug, with its exit code), the command
context (data home, workspace root, the clock) and small input/output helpers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from adapters.exit_codes import (
    EXIT_OK as EXIT_OK,
    EXIT_REJECTED as EXIT_REJECTED,
    EXIT_STORAGE as EXIT_STORAGE,
    EXIT_USAGE as EXIT_USAGE,
)

# the commands' exit codes, re-exported for the command modules (one definition: adapters.exit_codes)
from adapters.locking import DEFAULT_LOCK_TIMEOUT_S, LOCK_TIMEOUT_ENV
from domain.text import strip_controls

if TYPE_CHECKING:
    import argparse

    from adapters.api import WorkingMemory
    from adapters.filestore import Workspace


class CommandError(Exception):
    """An expected failure: reported as one ``workmem: <message>`` line, exit ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


class Context(NamedTuple):
    home: Path
    root: str
    now_ms: int


def context(args: argparse.Namespace) -> Context:
    """Data home (``--home``, ``WORKMEM_HOME``, platform default), the workspace root (the repository
    that holds ``--workspace`` or the current directory, :func:`adapters.paths.workspace_root_of`) and
    the time (``WORKMEM_NOW`` or the real clock). A workspace directory that does not exist is a usage
    error: memories stored for it would be stored where nobody looks."""
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from adapters.clock import now_ms
    from adapters.paths import NoSuchWorkspace, data_home, workspace_root_of

    home = data_home(override=getattr(args, "home", None))
    try:
        root = workspace_root_of(getattr(args, "workspace", None) or os.getcwd())
    except NoSuchWorkspace as exc:
        raise CommandError(str(exc)) from None
    return Context(home, root, now_ms())


def lock_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """``WORKMEM_LOCK_TIMEOUT`` of ``environ`` (default: the process environment), else 5 s."""
    value = (os.environ if environ is None else environ).get(LOCK_TIMEOUT_ENV, "").strip()
    if not value:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise CommandError(f"{LOCK_TIMEOUT_ENV} must be a non-negative number of seconds, got {value[:40]!r}")
    return seconds


def open_workspace(ctx: Context) -> Workspace:
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from adapters.filestore import Workspace

    return Workspace(ctx.home, ctx.root, lock_timeout_s=lock_timeout_s())


def memory(ctx: Context) -> WorkingMemory:
    """The Python API for the command's workspace, data home and time (every command is a call of it)."""
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from adapters.api import WorkingMemory

    now = ctx.now_ms
    return WorkingMemory(ctx.root, home=ctx.home, clock=lambda: now, lock_timeout_s=lock_timeout_s())


def read_stdin() -> str:
    """Standard input as text; an unreadable stdin is a usage error (exit 2), not a storage one."""
    if sys.stdin is None:
        raise CommandError("cannot read standard input: it is closed")
    try:
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read standard input: {type(exc).__name__}") from None
    return data.decode("utf-8", errors="replace")


def text_arg(value: str | None) -> str:
    """A TEXT argument: ``-`` reads standard input."""
    if value is None:
        return ""
    return read_stdin() if value == "-" else value


def file_arg(path: str) -> str:
    """A FILE argument: ``-`` reads standard input; an unreadable file is a usage error."""
    if path == "-":
        return read_stdin()
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None


def write(text: str) -> None:
    """Print ``text`` followed by a newline (nothing at all for an empty text). Terminal escapes,
    control characters and bidi overrides never reach the terminal, whatever the text came from."""
    if text:
        text = strip_controls(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def write_json(value: Any) -> None:
    # start-up time: only a --json answer loads the json module (docs/performance.md)
    import json

    sys.stdout.write(strip_controls(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")
