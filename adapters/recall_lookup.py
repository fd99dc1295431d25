"""Just-in-time recall's look at a prompt (docs/decisions.md#d16), a service ``BEFORE`` step: a
prompt whose terms some memory holds well enough is followed, in the same transaction, by its recall
search, narrowed by the search index (:mod:`adapters.search_index`)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from adapters.search_index import disclosure, has_fts5, index_path, postings, term_rows
from domain.commands import Batch, Command, UserMessage
from domain.search.commands import Search
from domain.search.recall import LOOK_AT, MIN_RECALL_COVERAGE, MIN_TERMS
from domain.search.tokens import query_terms
from domain.search.values import Recalled

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from domain.operations import OpResult


def promising(rows: dict[str, set[int]], documents: int) -> bool:
    """Whether any memory holds enough of a prompt's terms to be recalled (a loose first look: the
    core decides, :mod:`domain.search.recall`)."""

    idf = {t: math.log(1.0 + (documents - len(r) + 0.5) / (len(r) + 0.5)) for t, r in rows.items()}
    weight = sum(idf.values()) or 1.0
    held: dict[int, list[str]] = {}
    for term, found in rows.items():
        for row in found:
            held.setdefault(row, []).append(term)
    loose = MIN_RECALL_COVERAGE * 0.8
    return any(len(ts) >= MIN_TERMS and sum(idf[t] for t in ts) / weight >= loose for ts in held.values())


def recalling(ws: Workspace, command: Command, now_ms: int) -> Command:
    """A prompt typed in a session (not a sub-agent's) whose terms some memory holds well enough is
    followed, in the same transaction, by its recall search (docs/decisions.md#d16). Any other
    command, and every prompt when recall is off or there is no index, as it is."""

    if not isinstance(command, UserMessage) or command.parent is not None or not has_fts5():
        return command
    if not disclosure().recall:
        return command
    started = time.perf_counter()
    path = index_path(ws)
    wanted = query_terms(command.text)
    found = term_rows(path, wanted) if len(wanted) >= 2 else None
    if found is None or not promising(found[0], found[1].documents):
        return command
    kept = postings(path, wanted)
    if kept is None:
        return command
    search = Search(
        query=command.text,
        limit=LOOK_AT,
        recall=True,
        found=kept[0],
        revision=kept[1],
        index_ms=(time.perf_counter() - started) * 1000,
    )
    return Batch(steps=(command, search))


def recalled_text(result: OpResult | None) -> str:
    """The text a prompt's recall adds to its turn ("" when it added nothing)."""

    answer = result.answer if result is not None else None
    return answer.text if isinstance(answer, Recalled) else ""
