"""``workmem hook <host>``: run one host hook with its payload on standard input.

The hook always exits 0, whatever happens: a host may read another status as "block" (Claude Code
does for exit code 2). Failures are reported by the host adapter as one ``hook_failed`` evidence
event and one line on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from adapters.commands import EXIT_OK, lock_timeout_s, read_stdin

if TYPE_CHECKING:
    import argparse


def _home(args: argparse.Namespace) -> Path:
    from adapters.paths import data_home

    return data_home(override=getattr(args, "home", None))


def _now_ms() -> int:
    from adapters.clock import now_ms

    return now_ms()


HOSTS = ("claude-code", "codex")


class _ServerCall(NamedTuple):
    home: str
    fingerprint: str
    answer: tuple[str, str] | None


def _server_call(args: argparse.Namespace, raw: str, workspace: str | None) -> _ServerCall | None:
    """Hand the event to the hook server (adapters/hook_server.py); ``None`` when it is turned off
    or the data home cannot be resolved (the event is then handled here, with no server started)."""
    from adapters import hook_server

    if not hook_server.enabled():
        return None
    try:
        home = str(_home(args))
        fingerprint = hook_server.fingerprint()
        wait = lock_timeout_s() + hook_server.ANSWER_MARGIN_S
    except Exception:
        return None
    body = {
        "host": args.host,
        "stdin": raw,
        "home": home,
        "workspace": os.path.abspath(workspace) if workspace else None,
        "cwd": os.getcwd(),
        "env": {k: os.environ[k] for k in ("WORKMEM_NOW", "WORKMEM_LOCK_TIMEOUT") if k in os.environ},
    }
    answer = hook_server.request(hook_server.socket_path(home, fingerprint), body, wait)
    return _ServerCall(home, fingerprint, answer)


def hook(args: argparse.Namespace) -> int:
    if args.host not in HOSTS:
        # exit 0 all the same: the caller is a host, and some hosts read other statuses as "block"
        sys.stderr.write(f"workmem: unknown hook host {args.host[:40]!r} (supported: {', '.join(HOSTS)})\n")
        return EXIT_OK
    workspace = getattr(args, "workspace", None)
    try:
        raw = read_stdin()
    except Exception:  # unreadable or closed input fails like bad JSON: recorded, exit 0
        raw = ""
    server = None
    if getattr(args, "use_server", False):
        from adapters import hook_server

        if hook_server.worth_a_round_trip(raw):
            server = _server_call(args, raw, workspace)
    if server is not None and server.answer is not None:
        stdout, stderr = server.answer
    else:
        stdout, stderr = _run_here(args, raw, workspace)
        if server is not None:  # none answered: start one for the next event
            from adapters import hook_server

            hook_server.start(server.home, server.fingerprint)
    try:
        if stdout:
            sys.stdout.write(stdout)
            sys.stdout.flush()
        if stderr:
            sys.stderr.write(stderr)
    except Exception:  # a closed stream (None) or a broken pipe: the host is gone, stay silent
        pass
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
