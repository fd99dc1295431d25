"""The ``workmem`` command line. Imports only what the chosen command needs, so start-up stays fast."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from adapters import __version__

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_REJECTED = 3
EXIT_STORAGE = 4

EPILOG = """exit codes:
  0  success
  1  unexpected failure
  2  usage error
  3  input rejected (for example by the safety gate)
  4  storage unavailable (lock timeout, permission)

Set WORKMEM_DEBUG=1 to see a traceback for unexpected failures."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"workmem: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="workmem",
        description="Durable, decaying working memory for AI coding agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"workmem {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_OK
        return EXIT_OK
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except Exception as exc:  # one line, never a traceback unless asked
        if os.environ.get("WORKMEM_DEBUG") == "1":
            raise
        sys.stderr.write(f"workmem: unexpected failure: {type(exc).__name__}: {exc}\n")
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
