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
from typing import TYPE_CHECKING, Any, cast

from adapters import __version__
from adapters.exit_codes import EXIT_INTERRUPTED, EXIT_OK, EXIT_STORAGE, EXIT_UNEXPECTED, EXIT_USAGE, HELP

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
HOSTS = ("claude-code", "codex", "opencode")


def _terminal_safe(text: str) -> str:
    """No terminal escape, control character or bidi override in a message (imported late: the
    hook path keeps its start-up small)."""
    from domain.text import strip_controls

    return strip_controls(text)


def _usage_error(message: str) -> None:
    sys.stderr.write(f"workmem: {_terminal_safe(' '.join(message.split()))}\n")  # always one line
    raise SystemExit(EXIT_USAGE)


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


def _raw_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--raw", action="store_true", help="show paths and unredacted root (default: redacted)"
    )


def build_parser() -> argparse.ArgumentParser:
    # imported here, not at the top: a host hook call never builds the parser (docs/performance.md)
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            _usage_error(message)

    parser = _Parser(
        prog="workmem",
        description="Durable, decaying working memory for AI coding agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"workmem {__version__}")
    parser.add_argument("--home", metavar="DIR", help="data directory (overrides WORKMEM_HOME)")
    parser.add_argument("--workspace", metavar="DIR", help="workspace root (default: the current directory)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # --- intake ---------------------------------------------------------------------------------
    p = _command(sub, "check", "intake:check", "show what workmem would keep from TEXT (no storage)")
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

    # --- the core operations ----------------------------------------------------------------------
    p = _command(sub, "message", "session:message", "observe a user message (explicit memory requests)")
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
    p = _command(sub, "compacted", "session:compacted", "observe a compaction summary")
    _session_args(p)
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="summary file ('-' or absent: stdin)")
    p = _command(sub, "end-session", "session:end_session", "end a session (promotes what it still owns)")
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
    )
    _session_args(p)
    p = _command(sub, "compaction-prompt", "session:compaction_prompt", "print the compaction prompt")
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
        p = _command(sub, name, f"install:{name}", f"{verb} a host's settings (merging; see docs/hosts.md)")
        p.add_argument(
            "host",
            choices=(*HOSTS, "git"),
            metavar="HOST",
            help="claude-code, codex or opencode; git: the merge driver",
        )
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--project", action="store_true", help="the workspace's settings (the default)")
        scope.add_argument("--user", action="store_true", help="the user's settings, for every project")
        p.add_argument("--dry-run", action="store_true", help="print the diff of every file, write nothing")
        p.add_argument("--mcp", action="store_true", help="also the MCP server (`workmem mcp`)")

    from adapters.commands.sync import add_commands

    add_commands(sub, _command)

    # --- memories ---------------------------------------------------------------------------------
    p = _command(sub, "list", "memories:list_memories", "list stored memories (read-only)", json_flag=True)
    p.add_argument("--all", action="store_true", help="include superseded and forgotten memories")
    p = _command(sub, "forget", "memories:forget", "stop using a memory (kept, can be restored)")
    p.add_argument("id", metavar="ID")
    p = _command(sub, "supersede", "memories:supersede", "replace a memory by a new text")
    p.add_argument("id", metavar="ID")
    p.add_argument("text", metavar="TEXT")
    p = _command(
        sub, "restore", "memories:restore", "undo forget/supersede, or bring back an archived memory"
    )
    p.add_argument("id", metavar="ID")

    # --- diagnostics (read-only) ------------------------------------------------------------------
    p = _command(sub, "health", "diagnostics:health_cmd", "workspace memory health", json_flag=True)
    _raw_flag(p)
    p.add_argument("--all", action="store_true", help="every workspace under the data directory")
    p = _command(sub, "explain", "diagnostics:explain", "why each memory is (not) in the block")
    _raw_flag(p)
    p.add_argument("id", nargs="?", metavar="ID", help="only this memory")
    p = _command(sub, "trace", "diagnostics:trace", "the evidence lifecycle of one memory")
    _raw_flag(p)
    p.add_argument("id", metavar="ID")
    p = _command(sub, "quality", "diagnostics:quality", "memory quality inspection", json_flag=True)
    _raw_flag(p)
    p = _command(sub, "coverage", "diagnostics:coverage", "evidence coverage per memory", json_flag=True)
    _raw_flag(p)
    p.add_argument("--include-historical", action="store_true", help="also ids only known from evidence")
    p = _command(
        sub,
        "disappearances",
        "diagnostics:disappearances",
        "memories known only from evidence",
        json_flag=True,
    )
    _raw_flag(p)
    p.add_argument("--explain", action="store_true", help="show the terminal evidence")
    p = _command(sub, "rejections", "diagnostics:rejections", "the extraction rejection log", json_flag=True)
    _raw_flag(p)
    p.add_argument("--reason", metavar="R", help="only records with this reason code")
    p.add_argument("--unique", action="store_true", help="first record per type and text")
    p.add_argument("--quality", action="store_true", help="false-positive inspection")
    p.add_argument("--soft-only", action="store_true", help="only records with a soft reason")
    p.add_argument("--trigger-only", action="store_true", help="only explicit-trigger records")
    p.add_argument("--since", metavar="WHEN", help="14d, 12h, 30m or an ISO time")
    p = _command(sub, "audit", "diagnostics:audit", "what the store migrations changed", json_flag=True)
    _raw_flag(p)
    p.add_argument("--all", action="store_true", help="every workspace, not only this one")

    # --- maintenance ------------------------------------------------------------------------------
    p = _command(sub, "import-owm", "maintenance:import_owm", "copy opencode-working-memory stores in")
    p.add_argument("dir", nargs="?", metavar="DIR", help="default: $XDG_DATA_HOME/opencode-working-memory")
    p = _command(
        sub,
        "cleanup",
        "maintenance:cleanup",
        "find (and quarantine) leftover test workspaces",
        json_flag=True,
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only list candidates (the default)")
    mode.add_argument("--quarantine", action="store_true", help="move candidates aside (nothing is deleted)")
    p.add_argument(
        "--older-than-days", type=_non_negative, metavar="N", help="ignore directories newer than N days"
    )
    p.add_argument("--include-orphans", action="store_true", help="also missing non-temp roots")
    p = _command(
        sub, "recover", "recover:recover", "list what was set aside; restore memories from it", json_flag=True
    )
    p.add_argument("--restore", metavar="NAME", help="bring back the memories NAME holds that are missing")
    p.add_argument("--dry-run", action="store_true", help="with --restore: only say what it would bring back")
    _command(sub, "tour", "adapters.tour:tour", "a 60-second scripted tour on a temporary workspace")
    p = _command(
        sub, "simulate", "simulate:simulate_cmd", "run a scenario offline: months in seconds", json_flag=True
    )
    p.add_argument(
        "scenario", nargs="?", metavar="SCENARIO", help="scenario file (TOML); optional with --from-store"
    )
    p.add_argument("--days", type=int, metavar="N", help="simulate N days (overrides the scenario)")
    p.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter or field"
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--compare", nargs="+", metavar="NAME=VALUE", help="compare a variant with the baseline"
    )
    mode.add_argument("--sweep", metavar="NAME=V1,V2,...", help="one run per value, one summary row each")
    p.add_argument("--from-store", action="store_true", help="start from this workspace's store (read-only)")
    p.add_argument("--plot", metavar="FILE", help="write charts to FILE.svg or FILE.png (the sim extra)")
    return parser


def _non_negative(value: str) -> float:
    import argparse

    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value!r}")
    return number


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


def _is_hook_call(argv: Sequence[str]) -> bool:
    """Whether the command line asks for a host hook: the first word after the global options
    (``workmem [--home DIR] [--workspace DIR] hook …``) is ``hook``."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in _GLOBAL_OPTIONS_WITH_VALUE:
            index += 2
        elif word.startswith(("--home=", "--workspace=")):
            index += 1
        else:
            return word == "hook"
    return False


def _clean_argument(value: str) -> str:
    """Command-line bytes that are not UTF-8 arrive as lone surrogates; they cannot be stored as
    JSON, so they become U+FFFD here rather than failing a write half-way."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def _hook_fast_path(argv: Sequence[str]) -> argparse.Namespace | None:
    """``[--home DIR] [--workspace DIR] hook HOST`` and nothing else, parsed without building the
    whole parser: a host runs this on every event, so start-up time counts (docs/performance.md)."""
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
    args = _hook_fast_path(arguments)
    if args is None:
        return _main(arguments, None)
    # A hook process lives for one event and frees everything at exit: the cyclic garbage collector
    # would only spend time walking the objects that importing the core creates.
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
            parser = build_parser()
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
