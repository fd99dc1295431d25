"""Which stored memory a piece of conversation names (docs/decisions.md#d19): a small lexical matcher
with no index, used by forget and correct in the conversation, and the terms of a memory that are
rare in its store, used to see a shown memory being used.

A memory is named by its id (``mem_…``), by a short alias an earlier step handed out (``aliases``:
short id -> memory id; none yet), by its exact text, or else by the words they share: every term of
the target (a word, a path, an identifier; two-character runs of Chinese, Japanese and Korean text)
weighs ``log(1 + n / df)`` over the ``n`` candidates, so a rare word names a memory more than a
common one. The target must be mostly covered (:data:`MIN_SCORE`), and a second memory scoring
nearly as well (:data:`AMBIGUOUS_RATIO`) makes the answer ambiguous: nothing is changed on a guess.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Final

import msgspec

from domain.model import MemoryEntry
from domain.text import canonical_text, lazy_compile

__all__ = [
    "MatchKind",
    "MemoryMatch",
    "is_specific",
    "match_memory",
    "occurrences",
    "rare_terms",
    "terms",
]

MIN_SCORE: Final = 0.5
AMBIGUOUS_RATIO: Final = 0.85
#: The memories an ambiguous answer lists at most.
MAX_LISTED: Final = 5

_WORD: Final = lazy_compile(r"[a-z0-9_$@~][a-z0-9_$@~./:\-]*[a-z0-9_]|[a-z0-9]")
_PART: Final = lazy_compile(r"[a-z0-9_]+")
_CJK: Final = lazy_compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_MEMORY_ID: Final = lazy_compile(r"\bmem_[0-9]+_[a-z0-9]+\b", re.IGNORECASE)
_STOP: Final = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "is",
    "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "we", "i", "you",
    "our", "us", "my", "me", "they", "them", "he", "she", "do", "does", "did", "not", "no", "so", "as",
    "if", "then", "than", "but", "use", "uses", "used", "using", "always", "never", "please", "any",
    "more", "anymore", "now", "instead", "should", "must", "can", "will", "would", "just", "also", "all",
))  # fmt: skip


def terms(text: str) -> frozenset[str]:
    """The words of ``text`` that can name a memory: lower-case words, paths and identifiers (with
    their parts), and the two-character runs of its Chinese, Japanese and Korean text."""
    lowered = unicodedata.normalize("NFKC", text).lower()
    found: set[str] = set()
    for word in _WORD.findall(lowered):
        if word not in _STOP and len(word) > 1:
            found.add(word)
        for part in _PART.findall(word):
            if part != word and part not in _STOP and len(part) > 1:
                found.add(part)
    for run in _CJK.findall(lowered):
        if len(run) == 1:
            found.add(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(found)


class MatchKind(StrEnum):
    NONE = "none"
    ONE = "one"
    AMBIGUOUS = "ambiguous"


class MemoryMatch(msgspec.Struct, frozen=True, kw_only=True):
    """The answer: ``ids`` holds the one memory (``ONE``) or the close candidates, best first
    (``AMBIGUOUS``, at most :data:`MAX_LISTED`)."""

    kind: MatchKind
    ids: tuple[str, ...] = ()


_NO_MATCH: Final = MemoryMatch(kind=MatchKind.NONE)


def _named(target: str, entries: Sequence[MemoryEntry], aliases: Mapping[str, str]) -> MemoryMatch | None:
    """The memories ``target`` names by id or alias, or by its exact text."""
    held = {e.id for e in entries}
    named = [m.lower() for m in _MEMORY_ID.findall(target)]
    named += [aliases[w] for w in re.findall(r"[A-Za-z]+[0-9]+", target) if w in aliases]
    by_lower = {h.lower(): h for h in held}
    ids = tuple(dict.fromkeys(by_lower[n.lower()] for n in named if n.lower() in by_lower))
    if len(ids) == 1:
        return MemoryMatch(kind=MatchKind.ONE, ids=ids)
    if ids:
        return MemoryMatch(kind=MatchKind.AMBIGUOUS, ids=ids[:MAX_LISTED])
    wanted = canonical_text(target)
    exact = tuple(e.id for e in entries if canonical_text(e.text) == wanted)
    return MemoryMatch(kind=MatchKind.ONE, ids=exact) if len(exact) == 1 else None


def match_memory(
    target: str, entries: Sequence[MemoryEntry], *, aliases: Mapping[str, str] | None = None
) -> MemoryMatch:
    """Which of ``entries`` (the candidates: the store's active memories) ``target`` names."""
    named = _named(target, entries, aliases or {})
    if named is not None:
        return named
    wanted = terms(target)
    if not wanted or not entries:
        return _NO_MATCH
    # A term's document frequency by substring (a word inside a path counts: an overcount only makes
    # it weigh less); only the memories holding one of the target's terms are split into terms.
    texts = [unicodedata.normalize("NFKC", e.text).lower() for e in entries]
    n = len(entries)
    df = {t: sum(1 for text in texts if t in text) for t in wanted}
    weight = {t: math.log(1.0 + n / df[t]) if df[t] else math.log(1.0 + n) for t in wanted}
    total = sum(weight.values())
    scored: list[tuple[float, int]] = []
    for index, text in enumerate(texts):
        if not any(t in text for t in wanted):
            continue
        found = terms(entries[index].text)
        shared = wanted & found
        if not shared:
            continue
        covered = sum(weight[t] for t in shared) / total
        own = len(shared) / len(found) if found else 0.0
        scored.append((covered * (0.75 + 0.25 * own), index))
    scored.sort(key=lambda s: (-s[0], s[1]))
    if not scored or scored[0][0] < MIN_SCORE:
        return _NO_MATCH
    best = scored[0][0]
    close = [entries[i].id for score, i in scored if score >= best * AMBIGUOUS_RATIO]
    if len(close) == 1:
        return MemoryMatch(kind=MatchKind.ONE, ids=(close[0],))
    return MemoryMatch(kind=MatchKind.AMBIGUOUS, ids=tuple(close[:MAX_LISTED]))


def rare_terms(entry: MemoryEntry, df: Mapping[str, int], limit: int = 4) -> tuple[str, ...]:
    """The terms of ``entry`` that are rare in its store (``df``: in how many memories each term is)
    and specific enough to be noticed in a tool's input: a path, a command or an identifier
    (punctuation inside, a digit, or at least six characters), at most ``limit``, rarest first."""
    candidates = [t for t in cue_candidates(entry.text) if df.get(t, 0) <= 1]
    candidates.sort(key=lambda t: (not is_specific(t), -len(t), t))
    return tuple(candidates[:limit])


def cue_candidates(text: str) -> frozenset[str]:
    """The terms of ``text`` specific or long enough to be noticed in a tool's input: a path, a
    command or an identifier, or a word of six characters or more (no CJK runs)."""
    return frozenset(t for t in terms(text) if not _CJK.fullmatch(t) and (is_specific(t) or len(t) >= 6))


def is_specific(term: str) -> bool:
    """A term that names one thing: punctuation (a path, a flag, an identifier) or a digit inside."""
    return any(c in term for c in "./_-:$@~") or any(c.isdigit() for c in term)


def occurrences(wanted: Iterable[str], entries: Iterable[MemoryEntry], cap: int = 2) -> dict[str, int]:
    """How often each of the terms ``wanted`` occurs in the texts of ``entries`` (as a substring, so a
    word inside a path counts too: an overcount only makes a term less rare), counted up to ``cap``:
    :func:`rare_terms` only asks whether a term is in at most one memory, and a common term is
    settled at its second occurrence instead of a scan of every text. One joined text, scanned per
    term: a block's few hundred terms over 1,000 memories cost milliseconds, where the terms of every
    memory would cost tens (docs/decisions.md#d19)."""
    corpus = "\n".join(unicodedata.normalize("NFKC", e.text).lower() for e in entries)
    found: dict[str, int] = {}
    for term in set(wanted):
        if not term:
            found[term] = min(cap, len(corpus) + 1)  # as str.count counts the empty string
            continue
        count, start = 0, 0
        while count < cap and (at := corpus.find(term, start)) >= 0:
            count += 1
            start = at + len(term)  # non-overlapping, as str.count
        found[term] = count
    return found
