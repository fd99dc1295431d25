"""``search`` and ``show`` (docs/decisions.md#d16): one call of the Python API each. An unknown id
is one line and exit 3; a limit below 1 is a usage error (exit 2)."""

from __future__ import annotations

import argparse

import msgspec

from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    CommandError,
    context,
    memory,
    write,
    write_json,
)
from adapters.search_door import format_search, format_show


def search(args: argparse.Namespace) -> int:

    if args.limit < 1:
        raise CommandError("--limit must be at least 1", EXIT_USAGE)
    answer = memory(context(args)).search(args.query, type=args.type, limit=args.limit, include_all=args.all)
    if args.json:
        write_json(msgspec.to_builtins(answer))
    else:
        write(format_search(answer))
    return EXIT_OK


def show(args: argparse.Namespace) -> int:

    answer = memory(context(args)).show(args.id)
    if not answer.found:
        raise CommandError(
            f"no memory with id {args.id} (see `workmem search` or `workmem list --all`)", EXIT_REJECTED
        )
    if args.json:
        write_json(msgspec.to_builtins(answer))
    else:
        write(format_show(answer))
    return EXIT_OK
