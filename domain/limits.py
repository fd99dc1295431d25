"""Every limit of the core, in one place (docs/decisions.md#limits). :mod:`domain.model` re-exports
each name."""

from __future__ import annotations

from typing import Final

from domain.enums import MemoryType

DAY_MS: Final = 86_400_000
HOUR_MS: Final = 3_600_000


class LongTermLimits:
    MAX_RENDERED_CHARS: Final = 3600
    MAX_ENTRIES: Final = 28
    MAX_ENTRY_TEXT_CHARS: Final = 260
    MAX_RATIONALE_CHARS: Final = 180
    MIN_ENVELOPE_LENGTH: Final = 80
    #: Stored active entries above this are candidates for the archive (docs/decisions.md#d2).
    MAX_STORED_ACTIVE: Final = 500
    #: An entry must have gone unrendered this long before it may be archived (docs/decisions.md#d2).
    ARCHIVE_UNRENDERED_DAYS: Final = 30


RETENTION_TYPE_MAX: Final[dict[MemoryType, int]] = {
    MemoryType.FEEDBACK: 10,
    MemoryType.DECISION: 10,
    MemoryType.PROJECT: 8,
    MemoryType.REFERENCE: 6,
}


class HotStateLimits:
    MAX_RENDERED_CHARS: Final = 700
    MAX_ACTIVE_FILES_STORED: Final = 20
    MAX_ACTIVE_FILES_RENDERED: Final = 8
    MAX_OPEN_ERRORS_STORED: Final = 5
    MAX_OPEN_ERRORS_RENDERED: Final = 3
    MAX_RECENT_DECISIONS_STORED: Final = 8
    MAX_PENDING_MEMORIES_STORED: Final = 12
    MAX_PENDING_MEMORIES_RENDERED: Final = 6


class SessionFileLimits:
    #: A session that never ended is pruned once idle this long and nothing of it is left
    #: in the pending journal (its pending memories were adopted after 24 hours, docs/decisions.md#d7)
    PRUNE_IDLE_AFTER_MS: Final = 7 * DAY_MS


class PromotionRetryLimits:
    MAX_EXPLICIT_ATTEMPTS: Final = 3
    MAX_MANUAL_ATTEMPTS: Final = 3


class PendingJournalLimits:
    #: The journal's bound: compaction candidates beyond the 50 newest entries are cleared, requests
    #: a person made are promoted early instead (docs/decisions.md#pending-journal-bound).
    MAX_ENTRIES: Final = 50
    MAX_AGE_DAYS: Final = 30
    #: Owned entries of a session idle this long are adopted by the next promotion
    #: (docs/decisions.md#d7).
    ORPHAN_ADOPT_AFTER_MS: Final = DAY_MS
    #: A new session adopts the explicit requests of another session idle this long, so that a
    #: memory asked for in one OpenCode session (which never ends) reaches the next one the same day
    #: (docs/decisions.md#d22).
    REQUEST_ADOPT_AFTER_MS: Final = 5 * 60_000
    #: A record of a request promoted for its owner is kept as long as an idle owner's session file
    #: may be (docs/decisions.md#pending-journal-bound).
    PROMOTED_RECORD_TTL_MS: Final = SessionFileLimits.PRUNE_IDLE_AFTER_MS


class CacheLimits:
    MAX_PROCESSED_MESSAGES_PER_SESSION: Final = 50
    FROZEN_TTL_MS: Final = HOUR_MS
    #: how long an ended session's hot state waits for a resume (docs/hosts.md, "Resume")
    RESUME_HOT_STATE_TTL_MS: Final = DAY_MS


class EvidenceLogLimits:
    MAX_AGE_DAYS: Final = 90
    MAX_EVENTS_PER_WORKSPACE: Final = 5000
    MAX_BYTES_PER_WORKSPACE: Final = 2 * 1024 * 1024
    MAX_DETAIL_STRING_CHARS: Final = 240
    MAX_DETAIL_ARRAY_ITEMS: Final = 25
    MAX_PREVIEW_CHARS: Final = 120
    MAX_REJECTED_PREVIEW_CHARS: Final = 80


class DormancyLimits:
    WORKSPACE_DORMANT_AFTER_DAYS: Final = 14
    DORMANT_DECAY_MULTIPLIER: Final = 0.25
    MAX_DORMANT_SPANS: Final = 64
