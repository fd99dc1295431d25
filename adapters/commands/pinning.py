"""``pin ID`` / ``unpin ID`` (docs/decisions.md#d20) and what ``remember`` repeats back: the memory as
stored, its redactions, its pin, a quality refusal in words."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from adapters.commands import (
    EXIT_OK,
    EXIT_REJECTED,
    CommandError,
    context,
    memory,
    write,
    write_json,
)
from domain.pinning import PIN_MAX_CHARS, PIN_MAX_ENTRIES
from domain.text import one_line

if TYPE_CHECKING:
    from adapters.api import Pinning, Remembered


def add_commands(
    sub: Any, command: Callable[..., argparse.ArgumentParser], remember: argparse.ArgumentParser
) -> None:
    """``remember --pin/--force`` and the parsers of ``pin`` and ``unpin`` (called by
    :func:`adapters.cli.build_parser`)."""
    remember.add_argument("--pin", action="store_true", help="pin it: always shown first, never decays out")
    remember.add_argument("--force", action="store_true", help="keep it although the quality gate refuses it")
    p = command(
        sub, "pin", "pinning:pin", "always show a memory first, never let it decay out", json_flag=True
    )
    p.add_argument("id", metavar="ID")
    p = command(sub, "unpin", "pinning:unpin", "rank a pinned memory as usual again", json_flag=True)
    p.add_argument("id", metavar="ID")


def _excerpt(text: str, limit: int = 60) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def budget_full(pinned: Sequence[str], budget: str) -> str:
    """The one line that refuses a pin past the budget, naming what is pinned."""
    named = "; ".join(_excerpt(p) for p in pinned) or "nothing"
    return f"the pinned budget is full ({budget}); pinned now: {named}. Unpin one first (workmem unpin ID)"


def not_pinned(args: argparse.Namespace, what: str) -> CommandError:
    """The exit-3 error of a memory kept but not pinned because the pinned budget is full
    (``remember --pin``, a ``restore`` of a pinned memory; docs/decisions.md#d20)."""
    rows = [f"{r.id}: {r.text}" for r in memory(context(args)).list() if r.pinned]
    budget = f"at most {PIN_MAX_ENTRIES} memories, {PIN_MAX_CHARS} characters"
    return CommandError(f"{what}, but not pinned: {budget_full(rows, budget)}", EXIT_REJECTED)


def _pinning(args: argparse.Namespace, result: Pinning) -> int:
    if result.outcome == "unknown":
        raise CommandError(f"no active memory with id {result.target} (see `workmem list`)", EXIT_REJECTED)
    if result.outcome == "rejected":
        raise CommandError(
            f"cannot pin {result.target}: {budget_full(result.pinned, result.budget)}", EXIT_REJECTED
        )
    if args.json:
        write_json(msgspec.to_builtins(result))
    elif result.outcome == "unchanged":
        write(f"{result.target} was {'pinned' if args.handler.endswith(':pin') else 'not pinned'} already")
    else:
        write(f"{result.target} {result.outcome} (pinned: {result.budget})")
    return EXIT_OK


def pin(args: argparse.Namespace) -> int:
    return _pinning(args, memory(context(args)).pin(args.id))


def unpin(args: argparse.Namespace) -> int:
    return _pinning(args, memory(context(args)).unpin(args.id))


#: A gate reason in words (the codes are docs/decisions.md#quality-gate's).
_IN_WORDS: Final = {
    "too_short": "too short to mean anything in a later session",
    "empty": "empty",
    "prompt_injection": "it reads like an instruction to the agent",
    "progress_snapshot": "a progress note, not a lasting fact",
    "raw_error": "a raw error message",
    "commit_or_ci_snapshot": "a commit or CI status",
    "path_heavy": "mostly file paths",
    "temporary_status": "a temporary status",
    "active_file_snapshot": "a list of the files being worked on",
    "code_or_api_signature": "a code or API signature",
    "bad_feedback": "not a preference or rule",
    "bad_decision": "not a decision with its choice",
}


def refusal(reasons: Sequence[str]) -> str:
    """``rejected: CODES (in words)`` and how to keep it anyway when only the quality rules refused."""
    words = "; ".join(_IN_WORDS.get(r, r) for r in reasons)
    forceable = bool(reasons) and not {"empty", "prompt_injection"} & set(reasons)
    hint = "; `--force` keeps it" if forceable else ""
    return f"rejected: {','.join(reasons) or 'rejected'} ({words}){hint}"


def remembered_lines(result: Remembered) -> list[str]:
    """What ``remember`` repeats back: the id, outcome and type, then the text as stored, and its
    redactions, pin and forcing."""
    lines = [f"{result.id} {result.outcome} [{result.type}]"]
    if result.text is not None:
        lines.append(f"  stored: {one_line(result.text)}")
    if result.redactions:
        lines.append(f"  {result.redactions} secret(s) redacted before storing")
    if result.forced:
        lines.append("  kept although the quality gate refused it (--force; logged)")
    if result.pinned:
        lines.append("  pinned: shown first in every block")
    return lines
