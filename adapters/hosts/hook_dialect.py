"""The command-hook dialect that Claude Code and the Codex CLI share, and the engine that runs it.

Both hosts run a command per hook event with one JSON payload on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and per-event fields) and read its exit code and
stdout (``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` for events that can add
context). What differs between them — where a compaction summary is, where a shell command's exit
code is, what PreCompact may print, which event names exist — is a :class:`Dialect`; everything
else is here, once: each event becomes one command (:func:`command_of`) run by the one service.
docs/hosts.md describes the mapping event by event.

The hook never raises and always exits 0 (Claude Code reads exit code 2 as "block"): a failure is
one ``hook_failed`` evidence event, whose reason code is the event name only when the host defines
that name (anything else is the fixed code ``unknown_hook_event``, so no payload text reaches the
disk through it), and one redacted line on stderr.

Start-up time counts (a process per event, docs/performance.md): storage, ``msgspec`` and the core
are imported only by the events that need them, so an event workmem does not use costs little more
than the interpreter.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from adapters.host_names import HookEvent
from adapters.hosts.dialect import Dialect
from adapters.hosts.hook_tools import tool_event
from adapters.hosts.use_input import reply_text

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.commands import SessionCommand

#: Reason code of a payload whose event is unreadable or not one the host defines.
UNKNOWN_EVENT: Final = "unknown_hook_event"
MAX_MESSAGE_CHARS: Final = 240

SESSION_START: Final = HookEvent.SESSION_START
USER_PROMPT_SUBMIT: Final = HookEvent.USER_PROMPT_SUBMIT
POST_TOOL_USE: Final = HookEvent.POST_TOOL_USE
POST_TOOL_USE_FAILURE: Final = HookEvent.POST_TOOL_USE_FAILURE
PRE_COMPACT: Final = HookEvent.PRE_COMPACT
POST_COMPACT: Final = HookEvent.POST_COMPACT
SESSION_END: Final = HookEvent.SESSION_END
STOP: Final = HookEvent.STOP
#: The events that become a command (PreCompact only reads; every other event is a no-op).
COMMAND_EVENTS: Final = frozenset(
    {SESSION_START, USER_PROMPT_SUBMIT, POST_TOOL_USE, POST_TOOL_USE_FAILURE, POST_COMPACT, SESSION_END, STOP}
)
#: ``SessionEnd.reason`` values after which the session cannot come back: its state is dropped.
FINAL_END_REASONS: Final = frozenset({"clear", "logout"})

#: ``UserPromptSubmit.source`` values typed by a person (absent counts too); the others
#: (``system``, ``loop_wakeup``, ``schedule_wakeup``, ``poll_event``) are written by the host.
TYPED_PROMPT_SOURCES: Final = frozenset({"user", "sdk"})


class HookError(Exception):
    """A payload the adapter cannot act on; the message is one line and holds no payload text."""


class HookResult(NamedTuple):
    """What the hook prints: ``stdout`` for the host, ``stderr`` (one line) for the user."""

    stdout: str = ""
    stderr: str = ""


class HookEnv(NamedTuple):
    """Where and when: the data home, the workspace root the caller chose (``None``: the payload's
    ``cwd``, else the process's), the clock and the lock wait. Each is resolved lazily so that a bad
    setting is reported as a hook failure rather than raised."""

    home: Callable[[], Path]
    now_ms: Callable[[], int]
    lock_timeout_s: Callable[[], float]
    workspace: str | None = None
    #: an ``adapters.storage_io.SnapshotCache`` of a long-running caller (the hook server)
    cache: Any = None
    #: an ``adapters.service.CachesByWorkspace`` of a long-running caller (the hook server):
    #: the core's speed state, one per workspace (docs/decisions.md#d14)
    caches: Any = None


# ---------------------------------------------------------------------------------------------
# Payload fields
# ---------------------------------------------------------------------------------------------


def parse_payload(raw: str) -> dict[str, Any]:
    """The payload object; anything else is a :class:`HookError`."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        where = getattr(exc, "pos", 0)
        raise HookError(f"payload is not valid JSON ({type(exc).__name__} at char {where})") from None
    if not isinstance(value, dict):
        raise HookError("payload is not a JSON object")
    return value


def text_field(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def event_name(payload: Mapping[str, Any], dialect: Dialect) -> str:
    """The event name when the host defines it, else :data:`UNKNOWN_EVENT`."""
    name = payload.get("hook_event_name")
    return name if isinstance(name, str) and name in dialect.known_events else UNKNOWN_EVENT


def session_id(payload: Mapping[str, Any]) -> str | None:
    return text_field(payload, "session_id")


def workspace_root(payload: Mapping[str, Any], chosen: str | None) -> str:
    """The workspace: the repository that holds ``--workspace`` if given, else the payload's ``cwd``,
    else the process's directory (:func:`adapters.paths.workspace_root_of`). A ``cwd`` that is present
    but not a path, or names no directory, is an error (never a silent fallback, and never a
    workspace created for a directory nobody will open)."""
    if chosen is None and "cwd" in payload and text_field(payload, "cwd") is None:
        raise HookError("the payload's cwd is not a path")
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.paths import NoSuchWorkspace, workspace_root_of

    try:
        return workspace_root_of(chosen or text_field(payload, "cwd") or os.getcwd())
    except NoSuchWorkspace as exc:
        raise HookError(str(exc)) from None


def host_message_id(payload: Mapping[str, Any]) -> str | None:
    """The host's id for this prompt (Claude Code ``prompt_id``, Codex ``turn_id``), so the same text
    typed twice is two messages."""
    for key in ("prompt_id", "turn_id"):
        value = text_field(payload, key)
        if value is not None:
            return value
    return None


# ---------------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------------


def _workspace(payload: Mapping[str, Any], env: HookEnv) -> tuple[Workspace, str]:
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.filestore import Workspace

    root = workspace_root(payload, env.workspace)
    return Workspace(env.home(), root, lock_timeout_s=env.lock_timeout_s(), cache=env.cache), root


def command_of(payload: Mapping[str, Any], event: str, dialect: Dialect) -> SessionCommand | None:
    """The command a hook event asks for (the door's one job); ``None`` for events, tools and
    prompts workmem does not use. A sub-agent's event (``agent_id``) names its parent: the service
    then reads and writes nothing."""
    sid = session_id(payload)
    if sid is None:
        raise HookError("payload has no session_id")
    parent = text_field(payload, "agent_id")
    if event == STOP:
        reply = reply_text(payload)
        if not reply:
            return None  # nothing to read: the core is not even imported
        # start-up time: a hook call loads only what its event needs (docs/performance.md)
        from domain.operations.replies import AgentReply

        return AgentReply(session=sid, parent=parent, text=reply)
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from domain.commands import ContextMode, EndSession, OpenSession, ToolResult, UserMessage
    from domain.host_instructions import host_context

    if event == SESSION_START:
        resumed = payload.get("source") == "resume"  # the conversation still holds what it was handed
        return OpenSession(
            session=sid,
            parent=parent,
            context=ContextMode.APPENDED,
            resumed=resumed,
            host=host_context(dialect.host),
        )
    if event == USER_PROMPT_SUBMIT:
        source = payload.get("source")
        if source is not None and source not in TYPED_PROMPT_SOURCES:
            return None  # written by the host (a wake-up, a poll), not typed by a person
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise HookError("UserPromptSubmit payload has no prompt")
        return UserMessage(
            session=sid,
            parent=parent,
            text=prompt,
            message_id=host_message_id(payload),
            context=ContextMode.APPENDED,
        )
    if event in (POST_TOOL_USE, POST_TOOL_USE_FAILURE):
        tool = tool_event(payload, dialect)
        return ToolResult(session=sid, parent=parent, event=tool) if tool is not None else None
    if event == POST_COMPACT:
        # start-up time: a hook call loads only what its event needs (docs/performance.md)
        from domain.commands import Compacted

        return Compacted(
            session=sid, parent=parent, summary=dialect.summary(payload), host=host_context(dialect.host)
        )
    if event == SESSION_END:
        reason = payload.get("reason")
        return EndSession(session=sid, parent=parent, keep_hot_state=reason not in FINAL_END_REASONS)
    return None


def dispatch(payload: Mapping[str, Any], event: str, env: HookEnv, dialect: Dialect) -> str:
    """Run one event and return what to print. Events the host defines but workmem does not use are
    silent no-ops."""
    if event == UNKNOWN_EVENT:
        raise HookError(f"not a {dialect.host} hook event")
    if event == PRE_COMPACT:
        return _pre_compact(payload, env, dialect)
    if event not in COMMAND_EVENTS:
        return ""
    command = command_of(payload, event, dialect)
    if command is None or command.parent is not None:
        return ""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.service import execute

    ws, _root = _workspace(payload, env)
    result = execute(ws, command, env.now_ms(), env.caches.of(ws) if env.caches is not None else None)
    if result is None or event not in (SESSION_START, USER_PROMPT_SUBMIT):
        return ""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.recall_lookup import recalled_text

    recalled = recalled_text(result)  # just-in-time recall (docs/decisions.md#d16)
    return additional_context(event, "\n\n".join(p for p in (result.output, recalled) if p))


def _pre_compact(payload: Mapping[str, Any], env: HookEnv, dialect: Dialect) -> str:
    """PreCompact: read-only, what the host adds to its compaction prompt (nothing where it cannot)."""
    if dialect.pre_compact is None:
        return ""
    sid = session_id(payload)
    if sid is None:
        raise HookError("payload has no session_id")
    if text_field(payload, "agent_id") is not None:
        return ""
    ws, root = _workspace(payload, env)
    text = dialect.pre_compact(ws.read_session(sid).value, root)
    return text if text.endswith("\n") else text + "\n"


def additional_context(event: str, text: str) -> str:
    """The JSON the hosts read from SessionStart / UserPromptSubmit hooks; ``""`` for no text."""
    if not text:
        return ""
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(body, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------
# Failures
# ---------------------------------------------------------------------------------------------


def failure_message(exc: BaseException) -> str:
    """One redacted line of at most 240 characters (absolute paths are dropped by the log)."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from domain.safety import preview

    text = str(exc) or type(exc).__name__
    if not isinstance(exc, HookError) and type(exc).__name__ not in text:
        text = f"{type(exc).__name__}: {text}"
    return preview(text, MAX_MESSAGE_CHARS) or type(exc).__name__


def record_failure(
    payload: Mapping[str, Any] | None, event: str, message: str, env: HookEnv, dialect: Dialect
) -> None:
    """Append one ``hook_failed`` event to the workspace's evidence log; never raises."""
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.clock import real_now_ms
    from adapters.filestore import Workspace
    from domain import evidence
    from domain.enums import EventType, Outcome, Phase

    try:
        try:
            now_ms = env.now_ms()
        except Exception:
            now_ms = real_now_ms()
        root = workspace_root(payload or {}, env.workspace)
        sid = session_id(payload) if payload is not None else None
        failed = evidence.event(
            EventType.HOOK_FAILED,
            Phase.HOOK,
            Outcome.FAILED,
            (event,),
            details={"message": message, "host": dialect.host},
            session_id=sid,
        )
        Workspace(env.home(), root).emit([failed], now_ms)
    except Exception:  # the failure is already on stderr; nothing more can be done
        return


def run_hook(raw: str, env: HookEnv, dialect: Dialect) -> HookResult:
    """Handle one hook payload. Never raises."""
    payload: dict[str, Any] | None = None
    event = UNKNOWN_EVENT
    try:
        payload = parse_payload(raw)
        event = event_name(payload, dialect)
        return HookResult(stdout=dispatch(payload, event, env, dialect))
    except Exception as exc:
        message = failure_message(exc)
        record_failure(payload, event, message, env, dialect)
        return HookResult(stderr=f"workmem: {dialect.host} {event} hook failed: {message}\n")
