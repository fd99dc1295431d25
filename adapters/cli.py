"""The ``workmem`` command line. Imports only what the chosen command needs, so start-up stays fast.

Every command lives in a module of :mod:`adapters.commands`, named in the parser as
``"module:function"`` and imported only when that command runs. A handler takes the parsed arguments
and returns an exit code; failures are reported here as exactly one ``workmem: …`` line on stderr.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from adapters import __version__
from adapters.exit_codes import EXIT_INTERRUPTED, EXIT_OK, EXIT_STORAGE, EXIT_UNEXPECTED, EXIT_USAGE, HELP
from adapters.host_names import INSTALL_HOSTS

if TYPE_CHECKING:
    import argparse


EPILOG = (
    HELP
    + """

environment:
  WORKMEM_HOME          data directory (default: the platform's user data directory)
  WORKMEM_NOW           fixed clock: ISO-8601 time or epoch milliseconds
  WORKMEM_LOCK_TIMEOUT  seconds to wait for a workspace lock (default 5)
  WORKMEM_DEBUG=1       show a traceback for unexpected failures
  WORKMEM_HOOK_SERVER=0 hook calls handle their events themselves (no hook server)

Global options go before the command, --json after it: workmem --workspace . list --json"""
)

TYPES = ("feedback", "project", "decision", "reference")
SCOPES = ("team", "personal", "user")


def _terminal_safe(text: str) -> str:
    """No terminal escape, control character or bidi override in a message (imported late: the
    hook path keeps its start-up small)."""
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from domain.text import strip_controls

    return strip_controls(text)


def _usage_error(message: str) -> None:
    sys.stderr.write(f"workmem: {_terminal_safe(' '.join(message.split()))}\n")  # always one line
    raise SystemExit(EXIT_USAGE)


_INVALID_CHOICE: Final = r"invalid choice: '([^']*)' \(choose from (.*)\)"


def _suggested(message: str) -> str:
    """argparse's "invalid choice" message as one short line naming the nearest choice
    (``workmem lst`` -> "unknown command 'lst'; did you mean list?")."""
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    import re

    found = re.search(_INVALID_CHOICE, message)
    if found is None:
        return message
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    import difflib

    wanted, choices = found.group(1), re.findall(r"'([^']*)'", found.group(2))
    near = difflib.get_close_matches(wanted, choices, n=1, cutoff=0.5)
    what = "command" if message.startswith("argument COMMAND") else "choice"
    if near:
        hint = f"did you mean {near[0]}?"
    else:
        hint = "see `workmem --help`" if what == "command" else f"choose from {', '.join(choices)}"
    return f"unknown {what} {wanted!r}; {hint}"


def _command(
    sub: Any, name: str, handler: str, help_text: str, *, json_flag: bool = False, aliases: Sequence[str] = ()
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text, aliases=list(aliases)
    )
    parser.set_defaults(handler=handler)
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _session_args(parser: argparse.ArgumentParser, *, parent: bool = True) -> None:
    parser.add_argument("--session", required=True, metavar="S", help="the host's session id")
    if parent:
        parser.add_argument(
            "--parent", metavar="P", help="parent session id (a sub-agent session: no injection, no writes)"
        )


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, the command the command line names, the parser of
    that command alone (the same parser as in the whole one) when there is one by that name."""
    # start-up time: a host hook call never builds the parser (docs/performance.md)
    import argparse

    from adapters.commands import wiring

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            _usage_error(_suggested(message))

    parser = _Parser(
        prog="workmem",
        description="Durable, decaying working memory for AI coding agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"workmem {__version__}")
    parser.add_argument("--home", metavar="DIR", help="data directory (overrides WORKMEM_HOME)")
    parser.add_argument("--workspace", metavar="DIR", help="workspace root (default: the current directory)")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only is not None:
        sub = wiring.OneCommand(sub, only)

    # --- intake ---------------------------------------------------------------------------------
    p = _command(
        sub, "check", "intake:check", "show what workmem would keep from TEXT (no storage)", json_flag=True
    )
    p.add_argument("text", metavar="TEXT", help="a user message or a compaction summary ('-' reads stdin)")
    p = _command(sub, "remember", "intake:remember", "store a manual memory", json_flag=True)
    p.add_argument("text", metavar="TEXT", help="the memory ('-' reads stdin)")
    p.add_argument("--type", choices=TYPES, help="memory type (default: classified from the text)")
    p.add_argument("--importance", choices=("low", "normal", "high"), help="user importance")
    p.add_argument("--scope", choices=SCOPES, help="team, personal or user (default: by type; docs/hosts.md)")
    p.add_argument("--volatility", choices=("stable", "normal", "volatile"), help="default: by type, text")
    p.add_argument("--valid-until", metavar="DATE", help="YYYY-MM-DD: not shown after that day")
    p.add_argument(
        "--cite", action="append", default=[], metavar="PATH[:LINE[-LINE]]", help="code it describes"
    )
    # start-up time: each command loads only the modules it runs (--pin, --force, pin, unpin)
    from adapters.commands.pinning import add_commands as add_pin_commands

    add_pin_commands(sub, _command, p)

    # --- the core operations ----------------------------------------------------------------------
    p = _command(
        sub, "message", "session:message", "observe a user message (explicit memory requests)", json_flag=True
    )
    _session_args(p)
    p.add_argument(
        "--message-id", metavar="ID", help="host message id (default: derived from the time and the text)"
    )
    p.add_argument("text", nargs="?", default="-", metavar="TEXT", help="message text ('-' or absent: stdin)")
    p = _command(sub, "tool", "session:tool", "observe a tool result (hot session state)")
    _session_args(p)
    p.add_argument(
        "--tool", required=True, metavar="NAME", help="tool name: read, edit, write, grep, bash, ..."
    )
    p.add_argument(
        "--args", metavar="JSON", help='tool arguments as a JSON object, e.g. {"filePath": "src/a.ts"}'
    )
    p.add_argument("--output", metavar="TEXT", help="tool output ('-' reads stdin)")
    p.add_argument("--exit-code", type=int, metavar="N", help="exit code of a command")
    p = _command(
        sub, "reply", "session:reply", "observe the agent's reply (memories it cites by id)", json_flag=True
    )
    _session_args(p)
    p.add_argument("text", nargs="?", default="-", metavar="TEXT", help="reply text ('-' or absent: stdin)")
    p = _command(sub, "compacted", "session:compacted", "observe a compaction summary", json_flag=True)
    _session_args(p)
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="summary file ('-' or absent: stdin)")
    p = _command(
        sub,
        "end-session",
        "session:end_session",
        "end a session (promotes what it still owns)",
        json_flag=True,
    )
    _session_args(p)
    p.add_argument(
        "--keep-hot-state", action="store_true", help="keep the hot state for a resume under the same id"
    )
    p = _command(
        sub,
        "open-session",
        "session:open_session",
        "open a session's cache epoch and print the context to inject ('context' is its older name)",
        aliases=("context",),
        json_flag=True,
    )
    _session_args(p)
    p = _command(
        sub, "compaction-prompt", "session:compaction_prompt", "print the compaction prompt", json_flag=True
    )
    _session_args(p, parent=False)
    _command(
        sub, "serve", "adapters.serve:serve", "answer JSON-lines requests on stdin/stdout (docs/protocol.md)"
    )
    _command(
        sub, "mcp", "adapters.mcp_server:mcp_cmd", "an MCP stdio server for the agent (needs workmem[mcp])"
    )
    p = _command(sub, "hook", "hooks:hook", "run a host hook: payload JSON on stdin, always exits 0")
    p.add_argument("host", metavar="HOST", help="the host whose hook payload is on stdin: claude-code, codex")

    # --- hosts ------------------------------------------------------------------------------------
    for name, verb in (("install", "register workmem's hooks with"), ("uninstall", "remove workmem from")):
        p = _command(
            sub,
            name,
            f"install:{name}",
            f"{verb} a host's settings (merging; see docs/hosts.md)",
            json_flag=True,
        )
        p.add_argument(
            "host",
            choices=(*INSTALL_HOSTS, "git"),
            metavar="HOST",
            help="claude-code, codex or opencode; git: the merge driver",
        )
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--project", action="store_true", help="the workspace's settings (the default)")
        scope.add_argument("--user", action="store_true", help="the user's settings, for every project")
        p.add_argument("--dry-run", action="store_true", help="print the diff of every file, write nothing")
        p.add_argument("--mcp", action="store_true", help="also the MCP server (`workmem mcp`)")

    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from adapters.commands.sync import add_commands

    add_commands(sub, _command)

    wiring.add_commands(sub, _command)

    wiring.add_maintenance(sub, _command)
    if isinstance(sub, wiring.OneCommand) and not sub.found:
        return build_parser()  # no such command: the whole parser says so, naming the nearest
    return parser


def _handler(spec: str) -> Callable[[argparse.Namespace], int]:
    module_name, function = spec.split(":")
    qualified = module_name if "." in module_name else f"adapters.commands.{module_name}"
    module = importlib.import_module(qualified)
    found: Callable[[argparse.Namespace], int] = getattr(module, function)
    return found


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "(no message)"


def _storage_error(exc: BaseException) -> bool:
    storage = sys.modules.get("adapters.storage_io")
    if storage is not None and isinstance(exc, storage.StorageError):
        return True
    lock = sys.modules.get("adapters.locking")
    if lock is not None and isinstance(exc, lock.Timeout):
        return True
    third_party = sys.modules.get("filelock")
    return third_party is not None and isinstance(exc, third_party.Timeout)


def _known_error(exc: BaseException) -> tuple[int, str] | None:
    """Exit code and message for an error that is not a bug."""
    commands = sys.modules.get("adapters.commands")
    if commands is not None and isinstance(exc, commands.CommandError):
        return exc.code, _one_line(str(exc))
    api = sys.modules.get("adapters.api")
    if api is not None and isinstance(exc, api.InvalidInput):
        return EXIT_USAGE, _one_line(str(exc))
    clock = sys.modules.get("adapters.clock")
    if clock is not None and isinstance(exc, clock.ClockError):
        return EXIT_USAGE, _one_line(str(exc))
    if _storage_error(exc):
        return EXIT_STORAGE, "storage unavailable: " + _one_line(str(exc))
    if isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
        where = f" ({exc.filename})" if exc.filename else ""
        return EXIT_STORAGE, "storage unavailable: " + _one_line(f"{reason}{where}")
    return None


_GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--home", "--workspace"})
#: Commands that read once and exit (no server, no loop): they run without the cyclic collector.
ONE_SHOT_READS: Final = frozenset({"search", "show"})


def command_word(argv: Sequence[str]) -> str | None:
    """The first word after the global options (``workmem [--home DIR] [--workspace DIR] COMMAND
    …``), ``None`` when there is none or it is an option."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in _GLOBAL_OPTIONS_WITH_VALUE:
            index += 2
        elif word.startswith(("--home=", "--workspace=")):
            index += 1
        else:
            return None if word.startswith("-") else word
    return None


def _is_hook_call(argv: Sequence[str]) -> bool:
    """Whether the command line asks for a host hook: its command word is ``hook``."""
    return command_word(argv) == "hook"


def _clean_argument(value: str) -> str:
    """Command-line bytes that are not UTF-8 arrive as lone surrogates; they cannot be stored as
    JSON, so they become U+FFFD here rather than failing a write half-way."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def hook_fast_path(argv: Sequence[str]) -> argparse.Namespace | None:
    """``[--home DIR] [--workspace DIR] hook HOST`` and nothing else, parsed without building the
    whole parser: a host runs this on every event, so start-up time counts (docs/performance.md)."""
    if "hook" not in argv:
        return None  # no hook call: nothing more to load
    # start-up time: each command loads only the modules it runs (docs/performance.md)
    from types import SimpleNamespace

    from adapters.hook_client import parse_hook_call

    parsed = parse_hook_call(list(argv))
    if parsed is None:
        return None
    host, home, workspace = parsed
    args = SimpleNamespace(command="hook", handler="hooks:hook", host=host, home=home, workspace=workspace)
    return cast("argparse.Namespace", args)  # the handler reads attributes only


def main(argv: Sequence[str] | None = None) -> int:
    arguments = [_clean_argument(a) for a in (sys.argv[1:] if argv is None else argv)]
    args = hook_fast_path(arguments)
    if args is None and command_word(arguments) not in ONE_SHOT_READS:
        return _main(arguments, None)
    # start-up time: a hook process lives for one event, a search or a show for one read, and each
    # frees everything at exit: the cyclic garbage collector would only spend time walking the
    # objects that importing the core and decoding the store create.
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(arguments, args)
    finally:
        if was_enabled:
            gc.enable()


def _main(arguments: list[str], args: argparse.Namespace | None) -> int:
    try:
        if args is None:
            parser = build_parser(command_word(arguments))
            args = parser.parse_args(arguments)
            if args.command is None:
                parser.print_help()
                return EXIT_OK
        return _handler(args.handler)(args)
    except SystemExit as exc:
        code = int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
        # A host hook never exits with a status its host reads as "block" (exit 2 blocks in some
        # hosts, docs/decisions.md#d12); the one-line usage error on stderr remains.
        return EXIT_OK if code == EXIT_USAGE and _is_hook_call(arguments) else code
    except KeyboardInterrupt:
        sys.stderr.write("workmem: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (``workmem list | head``): silence the final flush
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        except (OSError, ValueError):
            pass
        return EXIT_OK
    except Exception as exc:  # one line, never a traceback unless asked
        known = _known_error(exc)
        if known is not None:
            code, message = known
            sys.stderr.write(f"workmem: {_terminal_safe(message)}\n")
            return code
        if os.environ.get("WORKMEM_DEBUG") == "1":
            raise
        detail = _terminal_safe(_one_line(str(exc)))
        sys.stderr.write(f"workmem: unexpected failure: {type(exc).__name__}: {detail}\n")
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
