"""The five core operations as commands: ``open-session`` (older name: ``context``), ``message``,
``tool``, ``compacted``, ``end-session``, plus the read-only ``compaction-prompt``. Each is one call of the
Python API (:mod:`adapters.api`); this module only reads the arguments and prints the result.

A command given ``--parent`` describes a sub-agent session: it gets no injection and causes no
writes, so those commands return at once without opening the workspace.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

import msgspec

from adapters.commands import EXIT_OK, CommandError, context, file_arg, memory, text_arg, write, write_json

if TYPE_CHECKING:
    from adapters.api import Observed


def _print(args: argparse.Namespace, observed: Observed | None, empty: str = "") -> None:
    """The decisions of an observation, one line each, then what a correction said in the message did
    (docs/decisions.md#d19); with ``--json`` ``{"decisions": [...], "note": ...}`` (a sub-agent's
    event, ``observed`` ``None``, decides nothing)."""
    decisions = observed.decisions if observed is not None else ()
    note = observed.note if observed is not None else ""
    if getattr(args, "json", False):
        found: dict[str, object] = {"decisions": [msgspec.to_builtins(d) for d in decisions]}
        if note:
            found["note"] = note
        write_json(found)
        return
    lines = [d.line() for d in decisions]
    if note:
        lines.append(note)
    write("\n".join(lines) if lines else empty)


def _parent(args: argparse.Namespace, name: str) -> None:
    """A sub-agent's event is handed nothing and decides nothing: no output, or with ``--json`` an
    empty value of the command's shape."""
    if getattr(args, "json", False):
        write_json({name: [] if name == "decisions" else ""})


def _text(args: argparse.Namespace, name: str, text: str) -> None:
    """A text the host reads (a context, a prompt); with ``--json`` ``{name: text}``."""
    if getattr(args, "json", False):
        write_json({name: text})
    else:
        write(text)


def message(args: argparse.Namespace) -> int:
    text = text_arg(args.text)
    if args.parent:
        _parent(args, "decisions")
        return EXIT_OK
    _print(args, memory(context(args)).user_message(args.session, text, message_id=args.message_id or None))
    return EXIT_OK


def reply(args: argparse.Namespace) -> int:
    """The agent's reply: the memories shown to the session it cites by id were used."""
    text = text_arg(args.text)
    if not args.parent:
        _print(args, memory(context(args)).agent_reply(args.session, text))
    return EXIT_OK


def _tool_args(raw: str | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except RecursionError:
        raise CommandError("--args is nested too deeply") from None
    except ValueError as exc:
        raise CommandError(f"--args is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CommandError('--args must be a JSON object, for example {"filePath": "src/app.ts"}')
    return value


def tool(args: argparse.Namespace) -> int:
    tool_args = _tool_args(args.args)
    output = text_arg(args.output)
    if args.parent:
        return EXIT_OK
    memory(context(args)).tool_result(
        args.session, args.tool, args=tool_args, output=output, exit_code=args.exit_code
    )
    return EXIT_OK


def compacted(args: argparse.Namespace) -> int:
    summary = file_arg(args.file)
    if args.parent:
        _parent(args, "decisions")
        return EXIT_OK
    _print(args, memory(context(args)).compacted(args.session, summary))
    return EXIT_OK


def end_session(args: argparse.Namespace) -> int:
    if args.parent:
        _parent(args, "decisions")
        return EXIT_OK
    ended = memory(context(args)).end_session(args.session, keep_hot_state=args.keep_hot_state)
    _print(args, ended, empty="session ended")
    return EXIT_OK


def open_session(args: argparse.Namespace) -> int:
    if args.parent:
        _parent(args, "context")
        return EXIT_OK
    _text(args, "context", memory(context(args)).open_session(args.session).text)
    return EXIT_OK


def compaction_prompt(args: argparse.Namespace) -> int:
    _text(args, "prompt", memory(context(args)).compaction_prompt(args.session).text)
    return EXIT_OK
