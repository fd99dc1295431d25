"""Turning text into memory candidates: explicit user requests and compaction summaries.

Two pure parsers live here:

* :func:`extract_explicit` reads a user message and finds explicit memory requests ("remember this: …",
  "記住：…", "from now on …", …). Every request becomes an ``explicit`` entry or an
  ``explicit_memory_ignored`` event that says why not (negated, deferred, too short, repeated, unsafe).
* :func:`parse_compaction_candidates` reads the ``Memory candidates:`` block of a compaction summary and
  turns each ``- [type] text`` line into a ``compaction`` entry, or an ``extraction_candidate_rejected``
  event with the gate's reason codes.

Both are total (they never raise), deterministic (ids come from :func:`domain.ids.memory_id`, time
from ``now_ms``) and send every text through the shared safety gate before it is stored
(docs/decisions.md#d4).

The package has one module per part: ``triggers`` (the request-phrase grammar both parsers share),
``explicit``, ``compaction``, ``prompt`` (the compaction prompt) and ``results`` (the values they
produce). Everything is re-exported here: ``from domain.extraction import extract_explicit``.
"""

from __future__ import annotations

from domain.extraction.compaction import parse_compaction_candidates
from domain.extraction.explicit import classify_explicit_memory, extract_explicit
from domain.extraction.prompt import (
    SUPERSEDE_RULE,
    build_compaction_addendum,
    build_compaction_prompt,
    static_compaction_prompt,
)
from domain.extraction.results import (
    ExtractionReason,
    ExtractionResult,
    RejectionRecord,
    SupersedeRequest,
    stale_after_days_for,
)
from domain.extraction.triggers import is_bare_hedge

__all__ = [
    "SUPERSEDE_RULE",
    "ExtractionReason",
    "ExtractionResult",
    "RejectionRecord",
    "SupersedeRequest",
    "build_compaction_addendum",
    "build_compaction_prompt",
    "classify_explicit_memory",
    "extract_explicit",
    "is_bare_hedge",
    "parse_compaction_candidates",
    "stale_after_days_for",
    "static_compaction_prompt",
]
