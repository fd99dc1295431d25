"""The OpenAI Codex CLI host (``workmem hook codex``): its side of the shared hook dialect.

Codex (0.171) speaks Claude Code's hook dialect with these differences (docs/hosts.md, "Codex CLI"):

- ``PostToolUse`` for a shell command carries the output only (``tool_response`` is a string) and
  there is no ``PostToolUseFailure``: the exit code is read from the rollout (``transcript_path``),
  the ``item_completed`` record of the ``CommandExecution`` whose id is the payload's
  ``tool_use_id`` (else a ``function_call_output`` saying ``Process exited with code N``). With no
  rollout the exit code is unknown and the command changes no open error.
- ``PostCompact`` carries no summary: at that moment the rollout already holds it, in the newest
  ``compacted`` record (after Codex's fixed preface) or the newest assistant message marked
  ``metadata.compaction_output``.
- ``PreCompact`` cannot change the compaction prompt (``compact_prompt`` in ``config.toml`` replaces
  it, which ``workmem install codex`` writes): it is a silent no-op here.
- ``transcript_path`` may be ``null``; every ``codex exec`` ends with ``SessionEnd`` (``reason``
  ``other``), so a session's hot state is kept for the ``exec resume`` that follows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from adapters.hosts.dialect import Dialect
from adapters.hosts.hook_dialect import HookEnv, HookResult, run_hook as _run_hook, text_field
from adapters.hosts.transcripts import flatten_text, records

__all__ = ["DIALECT", "HOST", "compaction_summary", "rollout_exit_code", "run_hook"]

HOST: Final = "codex"

#: The hook events Codex 0.171 defines (its command hooks' JSON schemas).
HOOK_EVENTS: Final = frozenset(
    {
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "PreCompact",
        "PostCompact", "Stop", "SubagentStart", "SubagentStop", "Interrupt", "SessionEnd",
    }
)  # fmt: skip

#: The end of the fixed text Codex puts before the summary in a ``compacted`` record.
_PREFACE_END: Final = "use the information in this summary to assist with your own analysis:"
_PROCESS_EXITED: Final = re.compile(r"Process exited with code (-?[0-9]+)")


def _payload(record: Mapping[str, Any]) -> Mapping[str, Any]:
    value = record.get("payload")
    return value if isinstance(value, dict) else {}


def compaction_summary(transcript_path: str | None) -> str:
    """The newest compaction summary in a Codex rollout (JSONL), or ``""``."""
    found = ""
    for record in records(transcript_path, b"compact"):
        payload = _payload(record)
        if record.get("type") == "compacted":
            message = payload.get("message")
            if isinstance(message, str) and message.strip():
                cut = message.find(_PREFACE_END)
                found = message[cut + len(_PREFACE_END) :] if cut >= 0 else message
        elif record.get("type") == "response_item" and payload.get("role") == "assistant":
            metadata = record.get("metadata")
            if isinstance(metadata, dict) and metadata.get("compaction_output") is True:
                found = flatten_text(payload.get("content")) or found
    return found.strip()


def rollout_exit_code(transcript_path: str | None, call_id: str | None) -> int | None:
    """The exit code of the shell call ``call_id`` as the rollout recorded it, or ``None``."""
    if not call_id:
        return None
    code: int | None = None
    for record in records(transcript_path, call_id.encode("utf-8", "replace")):
        payload = _payload(record)
        item = payload.get("item")
        if payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("id") == call_id:
            value = item.get("exit_code")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        if payload.get("type") == "function_call_output" and payload.get("call_id") == call_id:
            match = _PROCESS_EXITED.search(flatten_text(payload.get("output")))
            if match:
                code = int(match.group(1))
    return code


def _summary(payload: Mapping[str, Any]) -> str:
    return compaction_summary(text_field(payload, "transcript_path"))


def _bash_exit_code(payload: Mapping[str, Any], call_id: str | None) -> int | None:
    return rollout_exit_code(text_field(payload, "transcript_path"), call_id)


DIALECT: Final = Dialect(
    host=HOST, known_events=HOOK_EVENTS, summary=_summary, bash_exit_code=_bash_exit_code
)


def run_hook(raw: str, env: HookEnv) -> HookResult:
    """Handle one Codex hook payload. Never raises."""
    return _run_hook(raw, env, DIALECT)
