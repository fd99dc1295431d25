"""The hosts workmem knows, by the names every door uses (``install HOST``, ``hook HOST``). A leaf
module: the thin hook client imports it too, so it imports nothing."""

from __future__ import annotations

from enum import StrEnum

# start-up time: the thin hook client imports this module, and ``typing`` costs it milliseconds
# (docs/performance.md); type checkers read the name TYPE_CHECKING as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: hosts ``workmem install`` writes settings for
INSTALL_HOSTS: Final = ("claude-code", "codex", "opencode")
#: hosts that call ``workmem hook HOST`` (OpenCode runs its own plugin and talks to ``workmem serve``)
HOOK_HOSTS: Final = ("claude-code", "codex")


class HookEvent(StrEnum):
    """The hook events workmem acts on, by the name Claude Code and Codex give them (each host's whole
    list is in its adapter, ``adapters/hosts/``)."""

    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    SESSION_END = "SessionEnd"
    STOP = "Stop"
