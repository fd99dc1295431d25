"""``workmem hook <host>``: run one host hook with its payload on standard input.

The hook always exits 0, whatever happens: a host may read another status as "block" (Claude Code
does for exit code 2). Failures are reported by the host adapter as one ``hook_failed`` evidence
event and one line on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from adapters.commands import EXIT_OK, lock_timeout_s, read_stdin
from adapters.host_names import HOOK_HOSTS

if TYPE_CHECKING:
    import argparse


def _home(args: argparse.Namespace) -> Path:
    from adapters.paths import data_home

    return data_home(override=getattr(args, "home", None))


def _now_ms() -> int:
    from adapters.clock import now_ms

    return now_ms()


def hook(args: argparse.Namespace) -> int:
    if args.host not in HOOK_HOSTS:
        # exit 0 all the same: the caller is a host, and some hosts read other statuses as "block"
        sys.stderr.write(
            f"workmem: unknown hook host {args.host[:40]!r} (supported: {', '.join(HOOK_HOSTS)})\n"
        )
        return EXIT_OK
    workspace = getattr(args, "workspace", None)
    try:
        raw = read_stdin()
    except Exception:  # unreadable or closed input fails like bad JSON: recorded, exit 0
        raw = ""
    try:
        stdout, stderr = _run_here(args, raw, workspace)
    except Exception as exc:  # run_hook never raises; this is for a failure around it
        stdout, stderr = "", f"workmem: {args.host} hook failed: {type(exc).__name__}\n"
    from adapters.hook_client import write_output

    write_output(stdout, stderr)
    return EXIT_OK


def _run_here(args: argparse.Namespace, raw: str, workspace: str | None) -> tuple[str, str]:
    """Handle the event in this process."""
    from adapters.hosts.hook_dialect import HookEnv

    if args.host == "codex":
        from adapters.hosts.codex import run_hook
    else:
        from adapters.hosts.claude_code import run_hook
    env = HookEnv(
        home=lambda: _home(args),
        now_ms=_now_ms,
        lock_timeout_s=lock_timeout_s,
        workspace=os.path.abspath(workspace) if workspace else None,
    )
    result = run_hook(raw, env)
    return result.stdout, result.stderr
