"""The five core operations as commands: ``message``, ``tool``, ``compacted``, ``end-session``,
``context`` (open session), plus the read-only ``compaction-prompt``.

A command given ``--parent`` describes a sub-agent session: it gets no injection and causes no
writes, so those commands return at once without opening the workspace.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any, Final

from adapters.commands import CommandError, context, file_arg, one_line, open_workspace, text_arg, write
from adapters.commands._run import run_operation
from domain import operations
from domain.ids import hash16
from domain.model import EventType, EvidenceInput
from domain.session import ToolEvent

_LABELS: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_DETECTED: "pending",
    EventType.EXTRACTION_CANDIDATE_ACCEPTED: "accept",
    EventType.PROMOTION_PROMOTED: "promoted",
    EventType.PROMOTION_ABSORBED_EXACT: "absorbed",
    EventType.PROMOTION_ABSORBED_IDENTITY: "absorbed",
    EventType.PROMOTION_SUPERSEDED: "superseded",
    EventType.MEMORY_SUPERSEDED: "superseded",
    EventType.PROMOTION_RETRY_SCHEDULED: "retry",
    EventType.PROMOTION_RETRY_EXHAUSTED: "exhausted",
}
_REJECTIONS: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_IGNORED: "ignored",
    EventType.EXTRACTION_CANDIDATE_REJECTED: "reject",
    EventType.PROMOTION_REJECTED_CAPACITY: "rejected",
}


def event_lines(events: Iterable[EvidenceInput]) -> list[str]:
    """A short, redacted account of what happened to each memory (one line per relevant event)."""
    lines: list[str] = []
    for ev in events:
        preview = one_line(ev.text_preview or "")
        kind = ev.memory.type if ev.memory is not None and ev.memory.type else "?"
        if ev.type in _LABELS and ev.outcome != "rejected":
            lines.append(f"{_LABELS[ev.type]} [{kind}] {preview}".rstrip())
        elif ev.type in _REJECTIONS or (ev.type in _LABELS and ev.outcome == "rejected"):
            label = _REJECTIONS.get(ev.type, "rejected")
            lines.append(f"{label} {','.join(ev.reason_codes) or 'rejected'}: {preview}".rstrip())
    return lines


def message(args: argparse.Namespace) -> int:
    text = text_arg(args.text)
    if args.parent:
        return 0
    ctx = context(args)
    message_id = args.message_id or f"msg_{hash16(f'{ctx.now_ms}:{text}')}"
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        args.session,
        lambda snap: operations.observe_user_message(snap, args.session, message_id, text, ctx.now_ms),
        with_others=False,
    )
    write("\n".join(event_lines(result.events)))
    return 0


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
    event = ToolEvent(
        tool=args.tool,
        args=_tool_args(args.args),
        output=text_arg(args.output),
        exit_code=args.exit_code,
    )
    if args.parent:
        return 0
    ctx = context(args)
    run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        args.session,
        lambda snap: operations.observe_tool_result(snap, args.session, event, ctx.now_ms),
        with_others=False,
    )
    return 0


def compacted(args: argparse.Namespace) -> int:
    summary = file_arg(args.file)
    if args.parent:
        return 0
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        args.session,
        lambda snap: operations.observe_compaction(snap, args.session, summary, ctx.now_ms),
    )
    write("\n".join(event_lines(result.events)))
    return 0


def end_session(args: argparse.Namespace) -> int:
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        args.session,
        lambda snap: operations.end_session(snap, args.session, ctx.now_ms),
        with_others=False,
    )
    lines = event_lines(result.events)
    write("\n".join(lines) if lines else "session ended")
    return 0


def context_cmd(args: argparse.Namespace) -> int:
    if args.parent:
        return 0
    ctx = context(args)
    result = run_operation(
        open_workspace(ctx),
        ctx.now_ms,
        args.session,
        lambda snap: operations.open_session(snap, args.session, ctx.now_ms),
    )
    write(result.output)
    return 0


def compaction_prompt(args: argparse.Namespace) -> int:
    ctx = context(args)
    loaded = open_workspace(ctx).read_session(args.session)
    write(operations.compaction_prompt(loaded.value, ctx.root))
    return 0
