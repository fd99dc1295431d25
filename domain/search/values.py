"""What a search and a ``show`` answer (docs/decisions.md#d16): plain frozen values every door prints
or encodes as they are."""

from __future__ import annotations

from enum import StrEnum

import msgspec


class MatchMode(StrEnum):
    """How the terms of a query were combined."""

    ALL = "all"  # every term in each hit
    ANY = "any"  # no memory held every term: any term counts, and the answer says so
    NONE = "none"  # the query holds no term


class Verdict(StrEnum):
    MATCH = "match"
    #: memories hold some terms of the query, too few of its rarer ones to count as an answer
    BELOW_THRESHOLD = "below_threshold"
    NO_MATCH = "no_match"


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One memory that answers the query, and how to check it."""

    id: str
    short_id: str
    type: str
    status: str
    score: float
    strength: float
    age_days: int | None
    #: the text around the first matched word, each matched word between ``**``
    snippet: str
    matched: tuple[str, ...]
    #: how far the memory may be trusted now: ``fresh``, ``aging``, ``stale`` or ``expired``
    #: (docs/decisions.md#d18)
    grade: str = "fresh"
    #: file paths and symbols the memory's text names (code it cites)
    cites: tuple[str, ...] = ()
    #: ``file:line`` of the memory in the shared projection, where it exists (set by the shell)
    location: str | None = None
    #: the share of the query's term weight (idf) the memory holds
    coverage: float = 1.0


class SearchAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to one query. ``hidden``: memories that matched but are superseded, forgotten or
    past their ``valid_until`` (shown only with ``all``); ``below_threshold``: memories that matched
    too few terms."""

    verdict: Verdict
    mode: MatchMode
    terms: tuple[str, ...]
    hits: tuple[Hit, ...]
    limit: int
    matched: int
    hidden: int
    below_threshold: int
    searched: int
    #: sha256 prefix of the query (the query itself is never stored)
    query_hash: str
    #: whether the shell's index narrowed the candidates (the answer is the same without it)
    indexed: bool = False


class Reinforcement(msgspec.Struct, frozen=True, kw_only=True):
    count: int
    last_at: str | None = None
    last_session_hash: str | None = None


class ShowAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """One memory in full (``show``): the entry, where it came from, what it replaced or was replaced
    by, how often it was reinforced, and how to see its evidence."""

    found: bool
    query: str
    id: str | None = None
    short_id: str | None = None
    type: str | None = None
    status: str | None = None
    text: str | None = None
    rationale: str | None = None
    source: str | None = None
    scope: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    strength: float | None = None
    age_days: int | None = None
    in_block: bool = False
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    reinforcement: Reinforcement | None = None
    cites: tuple[str, ...] = ()
    location: str | None = None
    explain: str | None = None


class Recalled(msgspec.Struct, frozen=True, kw_only=True):
    """What a prompt recalled (just-in-time recall): the memories added to its turn, and the text."""

    hits: tuple[Hit, ...]
    text: str


Answer = SearchAnswer | ShowAnswer | Recalled
