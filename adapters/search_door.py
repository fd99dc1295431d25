"""Search and show as every door gives them (docs/decisions.md#d16): the command through the one
service, then what only the shell knows added to the answer (where a memory's projection file puts
it, ``file:line`` relative to the workspace root), and the plain-text form the CLI and the MCP tool
print."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from msgspec.structs import replace

from adapters.api_values import InvalidInput, memory_type_of
from domain.search.commands import Search, Show
from domain.search.values import Hit, MatchMode, SearchAnswer, ShowAnswer, Verdict

if TYPE_CHECKING:
    from domain.commands import Command
    from domain.enums import MemoryType
    from domain.operations import OpResult


class SearchMethods:
    """``search`` and ``show`` of :class:`adapters.api.WorkingMemory`."""

    root: str

    def execute(self, command: Command, *, now_ms: int | None = None) -> OpResult | None:
        raise NotImplementedError  # WorkingMemory.execute

    def search(
        self,
        query: str,
        *,
        type: MemoryType | str | None = None,
        limit: int = 5,
        include_all: bool = False,
    ) -> SearchAnswer:
        """The memories whose words answer ``query`` (any text is a valid query), best first, each with
        its short id, a snippet and its citation; superseded and forgotten ones only with
        ``include_all`` (docs/decisions.md#d16). Raises ``StorageError``, and ``InvalidInput`` for a
        limit that is not a positive integer or a query that is not a string."""

        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput("the limit must be a positive integer")
        if not isinstance(query, str):
            raise InvalidInput("the query must be a string")
        command = Search(query=query, type=memory_type_of(type), limit=limit, include_all=include_all)
        return search_answer(self.execute(command), self.root)

    def show(self, memory_id: str) -> ShowAnswer:
        """One memory in full, by its id or its short id (``R12``); ``found`` is false for an unknown
        id. Raises ``StorageError``."""

        return show_answer(self.execute(Show(memory_id=str(memory_id))), self.root)


def located(root: str, memory_id: str) -> str | None:
    """``path:line`` of the memory's projection file, relative to ``root``, where it exists."""
    # start-up time: a workspace that shares nothing never loads the projection (docs/performance.md)
    from adapters.projection_export import location

    found = location(root, memory_id)
    if found is None:
        return None
    path, line = found
    return f"{os.path.relpath(path, root)}:{line}"


def search_answer(result: OpResult | None, root: str) -> SearchAnswer:
    answer = result.answer if result is not None else None
    if not isinstance(answer, SearchAnswer):
        raise TypeError("the search command gave no search answer")
    if not os.path.isdir(os.path.join(root, ".workmem")):
        return answer
    hits = tuple(replace(h, location=located(root, h.id)) for h in answer.hits)
    return replace(answer, hits=hits)


def show_answer(result: OpResult | None, root: str) -> ShowAnswer:
    answer = result.answer if result is not None else None
    if not isinstance(answer, ShowAnswer):
        raise TypeError("the show command gave no show answer")
    if not answer.found or answer.id is None or not os.path.isdir(os.path.join(root, ".workmem")):
        return answer
    return replace(answer, location=located(root, answer.id))


def _age(days: int | None) -> str:
    return "age ?" if days is None else f"{days}d old"


def _hit_lines(hit: Hit) -> list[str]:
    marks = [m for m in (hit.status, hit.grade) if m not in ("active", "fresh", "aging")]
    status = "".join(f" {m}" for m in marks)
    lines = [f"{hit.short_id} [{hit.type}{status}] strength {hit.strength:.2f}, {_age(hit.age_days)}"]
    lines.append(f"  {hit.snippet}")
    cite = [hit.id] + ([hit.location] if hit.location else []) + list(hit.cites)
    lines.append("  cite: " + " · ".join(cite))
    return lines


def format_search(answer: SearchAnswer) -> str:
    """The answer for a person or a model: a summary line, then three lines per hit."""
    hidden = (
        f"; {answer.hidden} superseded, forgotten or expired hidden (--all shows them)"
        if answer.hidden
        else ""
    )
    if answer.verdict is Verdict.NO_MATCH:
        why = (
            "the query has no searchable word"
            if answer.mode is MatchMode.NONE
            else "no memory holds these words"
        )
        return f"no match: {why} ({answer.searched} memories searched){hidden}"
    if answer.verdict is Verdict.BELOW_THRESHOLD:
        return (
            f"no match above the threshold: {answer.below_threshold} memories hold only some of the "
            f"rarer words ({answer.searched} memories searched){hidden}"
        )
    mode = "" if answer.mode is MatchMode.ALL else " (no memory holds every word: any word counts)"
    head = f"{len(answer.hits)} of {answer.matched} matches, limit {answer.limit}{mode}{hidden}"
    lines = [head]
    for hit in answer.hits:
        lines.extend(_hit_lines(hit))
    lines.append("`workmem show ID` gives a memory in full.")
    return "\n".join(lines)


def format_show(answer: ShowAnswer) -> str:
    if not answer.found:
        return f"no memory with id {answer.query}"
    lines = [
        f"{answer.short_id} {answer.id} [{answer.type}] {answer.status}",
        answer.text or "",
    ]
    if answer.rationale:
        lines.append(f"Why: {answer.rationale}")
    lines.append(
        f"source {answer.source}, scope {answer.scope or 'default'}, created {answer.created_at}, "
        f"updated {answer.updated_at}"
    )
    lines.append(
        f"strength {answer.strength or 0:.3f}, {_age(answer.age_days)}, in the block: {answer.in_block}"
    )
    if answer.reinforcement is not None and answer.reinforcement.count:
        lines.append(f"reinforced {answer.reinforcement.count}x, last {answer.reinforcement.last_at}")
    if answer.supersedes:
        lines.append("replaces: " + " → ".join(answer.supersedes))
    if answer.superseded_by:
        lines.append("replaced by: " + " → ".join(answer.superseded_by))
    cite = ([answer.location] if answer.location else []) + list(answer.cites)
    if cite:
        lines.append("cite: " + " · ".join(cite))
    lines.append(f"evidence: {answer.explain}")
    return "\n".join(lines)
