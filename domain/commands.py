"""Every way into workmem as one value: the command union and :func:`handle` (docs/decisions.md#d13).

A door (the CLI, the Python API, ``workmem serve``, the MCP server, a host hook, the simulator) turns
its input into one :data:`Command` and hands it to the one service (``adapters/service.py``), which
runs one transaction around :func:`handle`, so a rule written here holds at every door.
:func:`footprint` says what a command reads (derived from its type, never from flags of the door).

The host's context model is part of a command (:class:`ContextMode`): a host that rebuilds its
prompt from the context each turn (OpenCode, a Python host) is handed the whole context when a
session opens; a host that appends what it is handed to the conversation (Claude Code and Codex
``additionalContext``) is handed, on a prompt, only what changed since then, as the session records
(docs/decisions.md#hook-injection).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import NamedTuple, assert_never

import msgspec
from msgspec.structs import replace

from domain import operations
from domain.bounds import MEMORY_INPUT_CHARS, cut_at_whitespace
from domain.command_keys import message_key as message_key, summary_key as summary_key
from domain.context_handout import changes_since_handed_out, mark_handed_out
from domain.enums import Importance, MemoryType, Scope, Volatility
from domain.host_instructions import HostContext
from domain.model import Citation
from domain.operations import OpResult, Snapshot
from domain.operations.pinning import Pin, Unpin, set_pinned
from domain.operations.replies import AgentReply, observe_agent_reply
from domain.projection.records import ProjectionFile, TombstoneLine
from domain.recovery import Held, restore_held
from domain.reverify import Reverify, reverify
from domain.search.commands import ReadCommand, Search, Show, run_read
from domain.session import ToolEvent
from domain.text import may_hold_correction
from domain.workspace_merge import MergeWorkspace, merged


class ContextMode(StrEnum):
    """How the host keeps the context it is handed."""

    #: the host rebuilds its prompt from the context each turn: a session open hands the whole
    #: context, a message hands nothing
    REBUILT = "rebuilt"
    #: what the host is handed is appended to its conversation: a message hands only what changed
    #: since the last hand-out (the block after a new epoch, else the hot state when it changed)
    APPENDED = "appended"


class _Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="op"):
    """The base of every command (its ``op`` tag is the operation's name at every door)."""


class _SessionCommand(_Command, frozen=True, kw_only=True):
    """A host event of one session. ``parent``: a sub-agent's (no injection, no writes)."""

    session: str
    parent: str | None = None
    host: HostContext | None = None  # the host, and what its instruction files say (docs/decisions.md#d22)


class OpenSession(_SessionCommand, frozen=True, kw_only=True, tag="open-session"):
    """Open (or refresh) the session's cache epoch and hand out its context. ``resumed``: the host
    resumes a conversation that still holds what it was handed before (Claude Code and Codex
    ``SessionStart`` with source ``resume``; not after a compaction or a clear)."""

    context: ContextMode = ContextMode.REBUILT
    resumed: bool = False


class UserMessage(_SessionCommand, frozen=True, kw_only=True, tag="message"):
    """A message the user typed. ``message_id`` is the host's id for it (the same id twice is one
    message); without one, the message is identified by its session, time and text."""

    text: str
    message_id: str | None = None
    context: ContextMode = ContextMode.REBUILT


class ToolResult(_SessionCommand, frozen=True, kw_only=True, tag="tool"):
    """A finished tool call (the hot state's active files and open errors)."""

    event: ToolEvent


class Compacted(_SessionCommand, frozen=True, kw_only=True, tag="compacted"):
    """The host's compaction summary (the same summary twice in a session is one observation)."""

    summary: str


class EndSession(_SessionCommand, frozen=True, kw_only=True, tag="end-session"):
    """The session ended; ``keep_hot_state`` when the host can resume it under the same id."""

    keep_hot_state: bool = False


class Remember(_Command, frozen=True, kw_only=True, tag="remember"):
    """A memory the user stores by hand (``type``/``scope`` ``None``: from the text / the type,
    docs/decisions.md#d17; ``pin``, ``force``: docs/decisions.md#d20; freshness:
    docs/decisions.md#d18)."""

    text: str
    type: MemoryType | None = None
    importance: Importance | None = None
    rationale: str | None = None
    scope: Scope | None = None
    pin: bool = False
    force: bool = False
    volatility: Volatility | None = None
    valid_until: int | None = None
    cites: tuple[Citation, ...] = ()


class Forget(_Command, frozen=True, kw_only=True, tag="forget"):
    memory_id: str


class Supersede(_Command, frozen=True, kw_only=True, tag="supersede"):
    memory_id: str
    text: str
    type: MemoryType | None = None


class Restore(_Command, frozen=True, kw_only=True, tag="restore"):
    memory_id: str


class RestoreSetAside(_Command, frozen=True, kw_only=True, tag="recover"):
    """Bring back the memories a set-aside file (``source``) holds that the workspace lacks."""

    held: Held
    source: str


class ImportProjection(_Command, frozen=True, kw_only=True, tag="sync"):
    """What changed in the shared projection since the last sync (docs/decisions.md#d17).
    ``projected``: the scope it holds (``team`` in a repository, ``user`` in the user's own store)."""

    files: tuple[ProjectionFile, ...] = ()
    deleted: tuple[str, ...] = ()
    tombstones_added: tuple[TombstoneLine, ...] = ()
    tombstones_removed: tuple[str, ...] = ()
    #: ``tombstones.jsonl`` as the shell saw it (for its own records; the core reads the lines)
    tombstones_file: ProjectionFile | None = None
    projected: Scope = Scope.TEAM


class Batch(_Command, frozen=True, kw_only=True, tag="batch"):
    """Several commands as one transaction, each reading what the one before left. Their session
    commands name one session."""

    steps: tuple[Command, ...]


Command = (
    OpenSession
    | UserMessage
    | ToolResult
    | Compacted
    | EndSession
    | Remember
    | Forget
    | Supersede
    | Restore
    | RestoreSetAside
    | MergeWorkspace
    | ImportProjection
    | Pin
    | Unpin
    | AgentReply
    | ReadCommand
    | Reverify
    | Batch
)

SessionCommand = OpenSession | UserMessage | ToolResult | Compacted | EndSession | AgentReply


class Footprint(NamedTuple):
    """What a command reads: the session it runs for (``None``: the workspace only), whether the
    other sessions are needed (to adopt idle owners, docs/decisions.md#d7), and whether the store
    without its entries usually suffices (else the service runs the command on the full store)."""

    session_id: str | None
    other_sessions: bool
    store_head: bool


class MixedSessions(ValueError):
    """A batch whose commands name more than one session."""


def footprint(command: Command) -> Footprint | None:
    """What ``command`` reads; ``None`` when it reads and writes nothing (a sub-agent's event)."""
    match command:
        case OpenSession() | Compacted():
            return None if command.parent is not None else Footprint(command.session, True, False)
        case UserMessage() | ToolResult() | AgentReply():
            head = not isinstance(command, UserMessage) or not may_hold_correction(command.text)
            return None if command.parent is not None else Footprint(command.session, False, head)
        case EndSession():
            return None if command.parent is not None else Footprint(command.session, False, False)
        case Batch(steps=steps):
            return _batch_footprint(steps)
        case (
            Remember()
            | Forget()
            | Supersede()
            | Restore()
            | Pin()
            | Unpin()
            | RestoreSetAside()
            | MergeWorkspace()
            | ImportProjection()
            | Search()
            | Show()
            | Reverify()
        ):  # the user's commands, recovery, sync, search and re-verification: the workspace only
            return Footprint(None, False, False)
        case _:  # a new command has no footprint until it is given one here (mypy fails first)
            assert_never(command)


def _batch_footprint(steps: tuple[Command, ...]) -> Footprint | None:
    found = [f for f in map(footprint, steps) if f is not None]
    if not found:
        return None
    sessions = {f.session_id for f in found if f.session_id is not None}
    if len(sessions) > 1:
        raise MixedSessions("a batch of commands may name one session only")
    others, head = any(f.other_sessions for f in found), all(f.store_head for f in found)
    return Footprint(next(iter(sessions), None), others, head)


def handle(snap: Snapshot, command: Command, now_ms: int) -> OpResult:
    """What ``command`` does to the workspace ``snap`` at ``now_ms``: the one place a command meets
    the core operations (:mod:`domain.operations`)."""
    match command:
        case OpenSession():
            opened = operations.open_session(
                snap, command.session, now_ms, parent_session_id=command.parent, host=command.host
            )
            if command.context is not ContextMode.APPENDED:
                return opened
            if command.resumed:
                return changes_since_handed_out(opened, resumed=True)
            return mark_handed_out(opened, block=True, hot=True)
        case UserMessage():
            mid = message_key(command.message_id, command.text, now_ms)
            seen = operations.observe_user_message(
                snap, command.session, mid, command.text, now_ms, parent_session_id=command.parent
            )
            if command.context is not ContextMode.APPENDED:
                return seen  # its output: the note on forget and correct (docs/decisions.md#d19)
            shown = changes_since_handed_out(replace(seen, output=""))
            return replace(shown, output="\n\n".join(t for t in (seen.output, shown.output) if t))
        case ToolResult():
            return operations.observe_tool_result(
                snap, command.session, command.event, now_ms, parent_session_id=command.parent
            )
        case AgentReply():
            return observe_agent_reply(
                snap, command.session, command.text, now_ms, parent_session_id=command.parent
            )
        case Compacted():
            return operations.observe_compaction(
                snap,
                command.session,
                command.summary,
                now_ms,
                parent_session_id=command.parent,
                summary_id=summary_key(command.summary),
                host=command.host,
            )
        case EndSession():
            return operations.end_session(
                snap,
                command.session,
                now_ms,
                parent_session_id=command.parent,
                keep_hot_state=command.keep_hot_state,
            )
        case Remember():
            complete = completed(command)
            kind = complete.type or MemoryType.FEEDBACK  # always set by completed()
            return operations.remember(snap, complete.text, kind, now_ms, options=complete)
        case Forget():
            return operations.forget(snap, command.memory_id, now_ms)
        case Supersede():
            return operations.supersede(snap, command.memory_id, command.text, now_ms, type_=command.type)
        case Restore():
            return operations.restore(snap, command.memory_id, now_ms)
        case Pin() | Unpin():
            return set_pinned(snap, command.memory_id, isinstance(command, Pin), now_ms)
        case RestoreSetAside():
            return restore_held(snap, command.held, command.source, now_ms)
        case MergeWorkspace():
            return merged(snap, command, now_ms)
        case ImportProjection():
            from domain.projection.importing import import_projection

            return import_projection(
                snap,
                command.files,
                now_ms,
                deleted=command.deleted,
                tombstones_added=command.tombstones_added,
                tombstones_removed=command.tombstones_removed,
                projected=command.projected,
            )
        case Search() | Show():
            return run_read(snap, command, now_ms)
        case Reverify():
            return reverify(snap, command.observed, now_ms)
        case Batch(steps=steps):
            return _batch(snap, steps, now_ms)


def completed(command: Remember) -> Remember:
    """``command`` as it is stored: its text cut at :data:`MEMORY_INPUT_CHARS` (a memory is stored
    with 260 characters, so a huge text is never classified and gated whole) and its type classified
    from the text when none was given."""
    text = cut_at_whitespace(command.text, MEMORY_INPUT_CHARS)
    if text == command.text and command.type is not None:
        return command
    from domain.extraction import classify_explicit_memory

    return replace(command, text=text, type=command.type or classify_explicit_memory(text))


def _batch(snap: Snapshot, steps: tuple[Command, ...], now_ms: int) -> OpResult:
    if not steps:
        return operations.unchanged(snap)

    def step(command: Command) -> Callable[[Snapshot], OpResult]:
        return lambda following: handle(following, command, now_ms)

    result = handle(snap, steps[0], now_ms)
    for command in steps[1:]:
        result = result.then(step(command))
    return result
