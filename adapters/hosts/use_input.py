"""What Claude Code and Codex send that shows a memory being used (docs/decisions.md#d19, docs/hosts.md):
the new text a file tool writes (``tool_input``), and the agent's last reply (``Stop``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: The keys of ``tool_input`` that hold the text a file tool writes (never the text it replaces).
_WRITTEN: Final = ("content", "new_string", "new_source")
#: Where a reply stops being read (the core reads no more than this either).
MAX_INPUT_CHARS: Final = 20_000


def written_text(tool_input: Mapping[str, Any]) -> str:
    """The text an Edit, MultiEdit, Write or NotebookEdit call writes, as one string."""
    parts = [tool_input[key] for key in _WRITTEN if isinstance(tool_input.get(key), str)]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        parts.extend(
            e["new_string"] for e in edits if isinstance(e, dict) and isinstance(e.get("new_string"), str)
        )
    return "\n".join(parts)[:MAX_INPUT_CHARS]


def reply_text(payload: Mapping[str, Any]) -> str:
    """The agent's last reply of a ``Stop`` payload (``""`` when there is none)."""
    value = payload.get("last_assistant_message")
    return value[:MAX_INPUT_CHARS] if isinstance(value, str) else ""
