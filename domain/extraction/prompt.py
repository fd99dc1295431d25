"""The compaction prompt: what workmem asks a host's summariser to write, so that its summary ends with
a ``Memory candidates:`` block (docs/decisions.md#d10)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "SUPERSEDE_RULE",
    "build_compaction_addendum",
    "build_compaction_prompt",
    "static_compaction_prompt",
]

#: The one rule line workmem adds to the reference prompt (docs/decisions.md#d10): a new decision may
#: name the numbered memory of the background block that it replaces.
SUPERSEDE_RULE: Final = (
    "- If a new decision replaces a memory labelled [M<n>] in the background context, end its line with"
    " (supersedes M<n>)."
)

_PROMPT_LINES: Final = (
    "Provide a detailed summary for continuing our conversation above.",
    "Focus on information that would help another agent continue the work: the goal, user instructions,"
    " completed work, current state, decisions, relevant files, and next steps.",
    "",
    "Do not call any tools. Respond only with the summary text.",
    "Respond in the same language as the user's messages in the conversation.",
    "",
    "Formatting rules:",
    '- Start the response with "## Goal".',
    "- Use Markdown headings only.",
    "- Do not output YAML frontmatter.",
    "- Do not output horizontal rules.",
    "- Do not wrap the summary in delimiter lines such as ---.",
    "- Do not use code fences around the summary.",
    "",
    "Use this structure:",
    "",
    "## Goal",
    "",
    "## Instructions",
    "",
    "## Progress",
    "",
    "## Key Decisions",
    "",
    "## Discoveries",
    "",
    "## Next Steps",
    "",
    "## Relevant Files",
    "",
    "At the end of the summary, include a Memory candidates section only if there are durable facts that"
    " will change future behavior.",
    "",
    "CRITICAL MEMORY RULES:",
    "- Most compactions should produce ZERO memories. Empty is correct when nothing durable changed.",
    "- NO completion or progress statements: do not extract completed work, passing tests, commits,"
    " PR status, wave/task/phase completion, or current state.",
    "- NO session-internal implementation notes: do not extract what files were edited, what bug was"
    " just fixed, what command just ran, or what the assistant reviewed.",
    "- feedback ONLY means stable user preferences or user instructions, written in imperative/future-facing"
    " form.",
    "- decision ONLY means rules that apply to FUTURE work, not decisions already implemented in this"
    " session.",
    "- project/reference ONLY when the fact is stable across sessions and hard to rediscover from the"
    " repository.",
    SUPERSEDE_RULE,
    "- If unsure, skip it.",
    "",
    "Good memory examples:",
    "- [feedback] User prefers architecture reviews in Traditional Chinese.",
    "- [decision] Do not add semantic merge to memory dedupe.",
    "- [project] This repository is an OpenCode plugin using local JSON stores.",
    "- [reference] Workspace memory is rendered as frozen system[1]; pending memories remain in hot state"
    " until compaction.",
    "",
    "Bad memory examples to skip:",
    "- Wave 2 completed successfully.",
    "- 180 tests passed and CI is green.",
    "- Implemented owner-aware cleanup in plugin.ts.",
    "- The assistant reviewed code reviewer feedback and updated the plan.",
    "- Commit a762e86 contains the owner scope fix.",
    "",
    "Format when there ARE durable memories:",
    "Memory candidates:",
    "- [feedback|decision|project|reference] future-facing durable fact",
    "",
    "Format when there are NO durable memories:",
    "Memory candidates:",
    "(none)",
    "",
    "Background context, use this to inform the summary above.",
    "Do not output this context verbatim:",
    "",
)


def build_compaction_prompt(context: str) -> str:
    """The prompt that replaces the host's default compaction prompt; ``context`` (frozen workspace
    block, hot state, todos, …) is appended as background."""
    return "\n".join((*_PROMPT_LINES, context))


#: Where the memory rules start in the full prompt, and where its background part starts.
_RULES_START: Final = _PROMPT_LINES.index("CRITICAL MEMORY RULES:")
_BACKGROUND_START: Final = _PROMPT_LINES.index("Background context, use this to inform the summary above.")


def static_compaction_prompt() -> str:
    """The full replacement prompt without a background part: for hosts whose compaction prompt is
    fixed in a configuration file (the Codex CLI's ``compact_prompt``), where no per-session context
    can be added."""
    return "\n".join(_PROMPT_LINES[:_BACKGROUND_START]).rstrip("\n") + "\n"


#: The opening of the addendum for hosts that keep their own summary prompt and append ours to it.
#: Claude Code appends a PreCompact hook's output as additional instructions, then reminds the model
#: to answer with an analysis block and a summary block only: a section asked for after
#: ``</summary>`` is lost with a model that obeys that reminder, so the candidates are asked for as
#: the summary block's last part (the parser reads them wherever they are). See docs/hosts.md.
_ADDENDUM_HEAD: Final = (
    "Inside your <summary> block, as its last section (just before the closing </summary> tag), add a"
    " Memory candidates section, only if there are durable facts that will change future behavior."
    " Keep your summary's own structure; this section is its last part.",
    "",
)
_ADDENDUM_BACKGROUND: Final = (
    "",
    "Background context (the current workspace memory and session state), to inform the summary."
    " Do not output it verbatim:",
    "",
)


def build_compaction_addendum(context: str) -> str:
    """The memory-candidate instructions as an addendum to a host's own summary prompt: the rules,
    examples and output format of :func:`build_compaction_prompt`, without its summary structure,
    then ``context`` as background (last, so a host that cuts long instructions cuts it first)."""
    rules = _PROMPT_LINES[_RULES_START:_BACKGROUND_START]
    lines = [*_ADDENDUM_HEAD, *rules]
    while lines and not lines[-1]:
        lines.pop()
    if context:
        lines.extend((*_ADDENDUM_BACKGROUND, context))
    return "\n".join(lines)
