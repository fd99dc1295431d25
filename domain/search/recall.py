"""Just-in-time recall (docs/decisions.md#d16): on a prompt the user typed, the memories that match
it well and are not in the session's frozen block are added to that turn's context — at most
:data:`MAX_RECALLED`, within :data:`MAX_RECALL_TOKENS`, each once per session. The frozen block is not
touched (prompt caching keeps working); the session records what it recalled; each recalled memory
leaves a ``memory_recalled`` event with why (the query's hash, the terms it matched, its score).

A prompt is a sentence, not a query: a memory qualifies when it holds at least :data:`MIN_TERMS` of
the prompt's terms and at least :data:`MIN_RECALL_COVERAGE` of their weight."""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from domain.emitted import Emitted
from domain.enums import EventType, Outcome, Phase
from domain.evidence.build import event
from domain.ids import Digest
from domain.operations.values import OpResult, Snapshot, unchanged
from domain.search.values import Hit, Recalled, SearchAnswer

MAX_RECALLED: Final = 3
MAX_RECALL_TOKENS: Final = 300
MIN_TERMS: Final = 2
MIN_RECALL_COVERAGE: Final = 0.35
#: how many hits of the prompt's search are looked at
LOOK_AT: Final = 12
#: what the recalled memories are introduced with
RECALL_HEADER: Final = "Stored memories that match this prompt (not in the workspace block; verify if stale):"


def tokens(text: str) -> int:
    """A rough token count (four characters a token)."""
    return (len(text) + 3) // 4


def qualifies(hit: Hit) -> bool:
    return len(hit.matched) >= MIN_TERMS and hit.coverage >= MIN_RECALL_COVERAGE


def chosen(answer: SearchAnswer, shown: set[str], texts: dict[str, str]) -> tuple[tuple[Hit, ...], str]:
    """The hits to add and the text that adds them (empty when none)."""
    picked: list[Hit] = []
    lines = [RECALL_HEADER]
    for hit in answer.hits:
        if len(picked) >= MAX_RECALLED:
            break
        if hit.id in shown or not qualifies(hit):
            continue
        line = f"- [{hit.short_id}] ({hit.type}) {' '.join(texts.get(hit.id, hit.snippet).split())}"
        if tokens("\n".join([*lines, line])) > MAX_RECALL_TOKENS:
            continue
        picked.append(hit)
        lines.append(line)
    return tuple(picked), "\n".join(lines) if picked else ""


def recall(snap: Snapshot, answer: SearchAnswer) -> OpResult:
    """The recall step after a prompt's search: what to add, the session's record, the evidence."""
    session = snap.session
    result = unchanged(snap)
    if session is None or session.parent_session_id is not None or not snap.disclosure.recall:
        return result
    shown = set(session.block_ids) | set(session.recalled_ids)
    texts = {e.id: e.text for e in snap.store.entries if e.id in {h.id for h in answer.hits}}
    picked, text = chosen(answer, shown, texts)
    if not picked:
        return result
    recorded = replace(session, recalled_ids=(*session.recalled_ids, *(h.id for h in picked))[-500:])
    events = tuple(
        event(
            EventType.MEMORY_RECALLED,
            Phase.SEARCH,
            Outcome.RECALLED,
            ("prompt_match",),
            memory=next(e for e in snap.store.entries if e.id == hit.id),
            details={
                "queryHash": Digest(answer.query_hash),
                "matchedTerms": len(hit.matched),
                "queryTerms": len(answer.terms),
                "coverage": hit.coverage,
                "score": hit.score,
                "shortId": hit.short_id,
            },
            session_id=session.session_id,
        )
        for hit in picked
    )
    return replace(result, session=recorded, answer=Recalled(hits=picked, text=text)).emitting(
        Emitted(events=events)
    )
