"""The Claude Code host: one hook payload (JSON on stdin) in, the hook's output out.

Claude Code runs a command hook with a JSON payload on stdin (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name`` and per-event fields) and reads its exit code and stdout. This adapter
maps each event onto one of the five core operations (DECISIONS D12):

===================== ==========================================================================
hook event            what happens
===================== ==========================================================================
SessionStart          ``open_session``; prints the frozen block and the hot state as
                      ``hookSpecificOutput.additionalContext``. With ``source == "compact"`` the
                      newest compaction summary in the transcript is observed first
                      (``observe_compaction``), in the same transaction.
UserPromptSubmit      ``observe_user_message`` (message id: ``hash16`` of session id and prompt);
                      prints the hot state as ``additionalContext`` only when it differs from the
                      hot state this host last injected (the frozen block is already in context).
PostToolUse           ``observe_tool_result`` for Read/Edit/MultiEdit/Write/NotebookEdit (file path),
PostToolUseFailure    Grep (its matches) and Bash (command, output, exit code); other tools are
                      ignored without opening the workspace.
PreCompact            read-only: prints the compaction instructions as plain text; Claude Code
                      appends a successful PreCompact hook's stdout to the compaction's custom
                      instructions.
SessionEnd            ``end_session``.
===================== ==========================================================================

A payload with an ``agent_id`` comes from inside a sub-agent: it gets no injection and causes no
writes. Whatever goes wrong (bad JSON, an unknown event, a lock timeout, a storage error) the hook
exits 0 — never 2, which Claude Code reads as "block" — and the failure becomes one ``hook_failed``
evidence event (reason code: the hook event name) appended outside the failed transaction, plus one
redacted line on stderr.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from msgspec.structs import replace

from domain import evidence, operations
from domain.ids import hash16
from domain.model import EventType, Outcome, Phase, SessionState
from domain.safety import preview
from domain.session import ToolEvent, render_hot_state

HOST: Final = "claude-code"
#: Session-state extra (kept by the codec like any unknown field): ``hash16`` of the hot state this
#: host last injected, so that a prompt re-injects it only when it changed.
INJECTED_HOT_STATE_KEY: Final = "claudeCodeInjectedHotState"
#: Reason code of a payload that could not be read far enough to know its event.
UNKNOWN_EVENT: Final = "unknown_hook_event"
MAX_MESSAGE_CHARS: Final = 240
MAX_EVENT_NAME_CHARS: Final = 64

SESSION_START: Final = "SessionStart"
USER_PROMPT_SUBMIT: Final = "UserPromptSubmit"
POST_TOOL_USE: Final = "PostToolUse"
POST_TOOL_USE_FAILURE: Final = "PostToolUseFailure"
PRE_COMPACT: Final = "PreCompact"
SESSION_END: Final = "SessionEnd"
HANDLED_EVENTS: Final = frozenset(
    {SESSION_START, USER_PROMPT_SUBMIT, POST_TOOL_USE, POST_TOOL_USE_FAILURE, PRE_COMPACT, SESSION_END}
)

#: Claude Code tool name -> (core tool name, key of the file path in ``tool_input``).
_FILE_TOOLS: Final[Mapping[str, tuple[str, str]]] = {
    "Read": ("read", "file_path"),
    "Edit": ("edit", "file_path"),
    "MultiEdit": ("edit", "file_path"),
    "Write": ("write", "file_path"),
    "NotebookEdit": ("edit", "notebook_path"),
}
_EXIT_CODE_FIELDS: Final = ("exit_code", "exitCode", "returnCode", "return_code", "code")
_EXIT_CODE_IN_ERROR: Final = re.compile(r"exit(?:[ _]?code)?[\s:=]*(-?[0-9]+)", re.IGNORECASE)


class HookError(Exception):
    """A payload this adapter cannot act on; the message is one line and holds no payload text."""


@dataclass(frozen=True)
class HookResult:
    """What the hook prints: ``stdout`` for Claude Code, ``stderr`` (one line) for the user."""

    stdout: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class HookEnv:
    """Where and when: the data home, the workspace root the caller chose (``None``: the payload's
    ``cwd``, else the process's), the clock and the lock wait. Each is resolved lazily so that a bad
    setting is reported as a hook failure rather than raised."""

    home: Callable[[], Path]
    now_ms: Callable[[], int]
    lock_timeout_s: Callable[[], float]
    workspace: str | None = None


# ---------------------------------------------------------------------------------------------
# Payload parsing
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


def event_name(payload: Mapping[str, Any]) -> str:
    name = payload.get("hook_event_name")
    return name[:MAX_EVENT_NAME_CHARS] if isinstance(name, str) and name else UNKNOWN_EVENT


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def session_id(payload: Mapping[str, Any]) -> str | None:
    return _text(payload, "session_id")


def is_sub_agent(payload: Mapping[str, Any]) -> bool:
    """Claude Code adds ``agent_id`` to the payload only when the hook fires inside a sub-agent (the
    ``session_id`` is then the parent's, so writing would pollute the parent's session)."""
    return _text(payload, "agent_id") is not None


def workspace_root(payload: Mapping[str, Any], chosen: str | None) -> str:
    """The workspace: ``--workspace`` if given, else the payload's ``cwd``, else the process's.
    A ``cwd`` that is present but not a path is an error, never a silent fallback."""
    if chosen is None and "cwd" in payload and _text(payload, "cwd") is None:
        raise HookError("the payload's cwd is not a path")
    root = chosen or _text(payload, "cwd") or os.getcwd()
    return os.path.abspath(os.path.expanduser(root))


# ---------------------------------------------------------------------------------------------
# Tool events
# ---------------------------------------------------------------------------------------------


def _flatten(value: Any) -> str:
    """Text content of a tool response: strings as they are, lists of text blocks joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for text in map(_flatten, value) if text)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    return ""


def _grep_output(response: Any) -> str:
    """Grep results as ``path:`` lines: ``content`` mode keeps its ``path:line:text`` lines; file
    lists (``filenames``) become one ``path:`` line each."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return ""
    parts: list[str] = []
    content = _flatten(response.get("content"))
    if content:
        parts.append(content)
    names = response.get("filenames")
    if isinstance(names, list):
        parts.extend(f"{name}:" for name in names if isinstance(name, str))
    return "\n".join(parts)


def _exit_code_field(response: Mapping[str, Any]) -> int | None:
    for key in _EXIT_CODE_FIELDS:
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _bash_event(payload: Mapping[str, Any], tool_input: Mapping[str, Any]) -> ToolEvent | None:
    command = tool_input.get("command")
    if not isinstance(command, str) or not command:
        return None
    response = payload.get("tool_response")
    if event_name(payload) == POST_TOOL_USE_FAILURE:
        # Claude Code reports a non-zero exit through PostToolUseFailure, with an ``error`` text.
        error = _flatten(payload.get("error")) or _flatten(response)
        match = _EXIT_CODE_IN_ERROR.search(error)
        failed = int(match.group(1)) if match else 1
        return ToolEvent(tool="bash", args={"command": command}, output=error, exit_code=failed or 1)
    code: int | None = None
    if isinstance(response, dict):
        streams = (_flatten(response.get("stdout")), _flatten(response.get("stderr")))
        output = "\n".join(p for p in streams if p)
        code = _exit_code_field(response)
    else:
        output = _flatten(response)
    # PostToolUse fires only for commands that succeeded; an explicit code in the response wins.
    exit_code = 0 if code is None else code
    return ToolEvent(tool="bash", args={"command": command}, output=output, exit_code=exit_code)


def tool_event(payload: Mapping[str, Any]) -> ToolEvent | None:
    """The core :class:`ToolEvent` for a PostToolUse(Failure) payload, or ``None`` for tools (and
    inputs) the hot state does not follow."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        return None
    if name in _FILE_TOOLS:
        if event_name(payload) == POST_TOOL_USE_FAILURE:
            return None
        core, key = _FILE_TOOLS[name]
        path = tool_input.get(key)
        return ToolEvent(tool=core, args={"filePath": path}) if isinstance(path, str) and path else None
    if name == "Grep":
        if event_name(payload) == POST_TOOL_USE_FAILURE:
            return None
        output = _grep_output(payload.get("tool_response"))
        return ToolEvent(tool="grep", args=dict(tool_input), output=output)
    if name == "Bash":
        return _bash_event(payload, tool_input)
    return None


# ---------------------------------------------------------------------------------------------
# The compaction summary in the transcript
# ---------------------------------------------------------------------------------------------


def _summary_text(record: Mapping[str, Any]) -> str | None:
    if record.get("isCompactSummary") is not True:
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    text = _flatten(content)
    return text or None


def compaction_summary(transcript_path: str | None) -> str:
    """The newest compaction summary in a Claude Code transcript (JSONL): the text of the last
    record marked ``"isCompactSummary": true`` (a user message whose content is a string or a list
    of text blocks). Missing, unreadable or malformed lines are skipped; no summary gives ``""``."""
    if not transcript_path:
        return ""
    found = ""
    try:
        with open(os.path.expanduser(transcript_path), "rb") as handle:
            for line in handle:
                if b"isCompactSummary" not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    text = _summary_text(record)
                    if text is not None:
                        found = text
    except OSError:
        return found
    return found


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def additional_context(event: str, text: str) -> str:
    """The JSON Claude Code reads from SessionStart / UserPromptSubmit hooks; ``""`` for no text."""
    if not text:
        return ""
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(body, ensure_ascii=False) + "\n"


def _note_injected(result: operations.OpResult, hot_state: str) -> operations.OpResult:
    session = result.session
    if session is None:
        return result
    extras = {**session.extras, INJECTED_HOT_STATE_KEY: hash16(hot_state)}
    marked: SessionState = replace(session, extras=extras)
    return replace(result, session=marked)


def _hot_state(result: operations.OpResult) -> str:
    if result.session is None or result.session.parent_session_id is not None:
        return ""
    return render_hot_state(result.session, result.store.workspace.root)


# ---------------------------------------------------------------------------------------------
# The events
# ---------------------------------------------------------------------------------------------


def _merge(first: operations.OpResult, second: operations.OpResult) -> operations.OpResult:
    """``second`` ran on the values ``first`` produced: keep both sets of side records."""
    return replace(
        second,
        events=first.events + second.events,
        audit=first.audit + second.audit,
        archived=first.archived + second.archived,
        rejections=first.rejections + second.rejections,
    )


def _open(sid: str, summary: str | None, now_ms: int) -> Callable[[operations.Snapshot], operations.OpResult]:
    def step(snap: operations.Snapshot) -> operations.OpResult:
        result: operations.OpResult | None = None
        if summary is not None:
            result = operations.observe_compaction(snap, sid, summary, now_ms)
            snap = replace(snap, store=result.store, journal=result.journal, session=result.session)
        opened = operations.open_session(snap, sid, now_ms)
        if result is not None:
            opened = _merge(result, opened)
        return _note_injected(opened, _hot_state(opened))

    return step


def _prompt(sid: str, prompt: str, now_ms: int) -> Callable[[operations.Snapshot], operations.OpResult]:
    message_id = "msg_" + hash16(sid + "\x1f" + prompt)

    def step(snap: operations.Snapshot) -> operations.OpResult:
        result = operations.observe_user_message(snap, sid, message_id, prompt, now_ms)
        hot = _hot_state(result)
        session = result.session
        if session is None or session.extras.get(INJECTED_HOT_STATE_KEY) == hash16(hot):
            return result
        return replace(_note_injected(result, hot), output=hot)

    return step


def _dispatch(payload: Mapping[str, Any], event: str, env: HookEnv) -> str:
    """Run one handled event and return what to print."""
    from adapters.commands._run import run_operation
    from adapters.filestore import Workspace

    if event not in HANDLED_EVENTS:
        raise HookError(f"unsupported hook event {event!r}")
    sid = session_id(payload)
    if sid is None:
        raise HookError("payload has no session_id")
    if is_sub_agent(payload):
        return ""
    tool: ToolEvent | None = None
    if event in (POST_TOOL_USE, POST_TOOL_USE_FAILURE):
        tool = tool_event(payload)
        if tool is None:
            return ""
    root = workspace_root(payload, env.workspace)
    now_ms = env.now_ms()
    ws = Workspace(env.home(), root, lock_timeout_s=env.lock_timeout_s())
    if event == SESSION_START:
        compacted = payload.get("source") == "compact"
        summary = compaction_summary(_text(payload, "transcript_path")) if compacted else None
        result = run_operation(ws, now_ms, sid, _open(sid, summary, now_ms))
        return additional_context(SESSION_START, result.output)
    if event == USER_PROMPT_SUBMIT:
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise HookError("UserPromptSubmit payload has no prompt")
        result = run_operation(ws, now_ms, sid, _prompt(sid, prompt, now_ms), with_others=False)
        return additional_context(USER_PROMPT_SUBMIT, result.output)
    if tool is not None:
        event_value = tool
        run_operation(
            ws,
            now_ms,
            sid,
            lambda snap: operations.observe_tool_result(snap, sid, event_value, now_ms),
            with_others=False,
        )
        return ""
    if event == PRE_COMPACT:
        session = ws.read_session(sid).value
        prompt_text = operations.compaction_prompt(session, root)
        return prompt_text if prompt_text.endswith("\n") else prompt_text + "\n"
    # SessionEnd
    run_operation(ws, now_ms, sid, lambda snap: operations.end_session(snap, sid, now_ms), with_others=False)
    return ""


# ---------------------------------------------------------------------------------------------
# Failures
# ---------------------------------------------------------------------------------------------


def failure_message(exc: BaseException) -> str:
    """One redacted line of at most 240 characters (absolute paths are dropped by the log)."""
    text = str(exc) or type(exc).__name__
    if not isinstance(exc, HookError) and type(exc).__name__ not in text:
        text = f"{type(exc).__name__}: {text}"
    return preview(text, MAX_MESSAGE_CHARS) or type(exc).__name__


def record_failure(payload: Mapping[str, Any] | None, event: str, message: str, env: HookEnv) -> None:
    """Append one ``hook_failed`` event to the workspace's evidence log; never raises."""
    from adapters.clock import real_now_ms
    from adapters.filestore import Workspace

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
            details={"message": message, "host": HOST},
            session_id=sid,
        )
        Workspace(env.home(), root).emit([failed], now_ms)
    except Exception:  # the failure is already on stderr; nothing more can be done
        return


def run_hook(raw: str, env: HookEnv) -> HookResult:
    """Handle one hook payload. Never raises."""
    payload: dict[str, Any] | None = None
    event = UNKNOWN_EVENT
    try:
        payload = parse_payload(raw)
        event = event_name(payload)
        return HookResult(stdout=_dispatch(payload, event, env))
    except Exception as exc:
        message = failure_message(exc)
        record_failure(payload, event, message, env)
        shown = preview(event, MAX_EVENT_NAME_CHARS)
        return HookResult(stderr=f"workmem: {HOST} {shown} hook failed: {message}\n")
