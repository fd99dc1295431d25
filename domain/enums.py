"""The enumerations of workmem's stored values and evidence events. Their string values are the ones
opencode-working-memory v1.3-v1.5 writes; workmem's additions are listed in docs/compatibility.md.
:mod:`domain.model` re-exports every name."""

from enum import StrEnum
from typing import Final


class MemoryType(StrEnum):
    FEEDBACK = "feedback"
    PROJECT = "project"
    DECISION = "decision"
    REFERENCE = "reference"


class MemorySource(StrEnum):
    EXPLICIT = "explicit"
    COMPACTION = "compaction"
    MANUAL = "manual"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"


class Scope(StrEnum):
    """Who a memory is for (docs/decisions.md#d17): ``team`` memories are projected into the
    repository's ``.workmem/`` and travel through git; ``personal`` ones stay on this machine;
    ``user`` ones are kept once, in the user's own store, and shown in every workspace."""

    TEAM = "team"
    PERSONAL = "personal"
    USER = "user"


class Importance(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


#: Render section order (fixed by the reference).
SECTION_ORDER: Final[tuple[MemoryType, ...]] = (
    MemoryType.FEEDBACK,
    MemoryType.PROJECT,
    MemoryType.DECISION,
    MemoryType.REFERENCE,
)


class FileAction(StrEnum):
    READ = "read"
    GREP = "grep"
    EDIT = "edit"
    WRITE = "write"


class ErrorCategory(StrEnum):
    TYPECHECK = "typecheck"
    TEST = "test"
    LINT = "lint"
    BUILD = "build"
    RUNTIME = "runtime"
    TOOL = "tool"


class ErrorStatus(StrEnum):
    OPEN = "open"
    MAYBE_FIXED = "maybe_fixed"


class DecisionSource(StrEnum):
    ASSISTANT = "assistant"
    USER = "user"
    COMPACTION = "compaction"


class EventType(StrEnum):
    EXTRACTION_CANDIDATE_ACCEPTED = "extraction_candidate_accepted"
    EXTRACTION_CANDIDATE_REJECTED = "extraction_candidate_rejected"
    EXPLICIT_MEMORY_DETECTED = "explicit_memory_detected"
    EXPLICIT_MEMORY_IGNORED = "explicit_memory_ignored"
    PENDING_MEMORY_APPENDED = "pending_memory_appended"
    PENDING_MEMORY_CLEARED = "pending_memory_cleared"
    PROMOTION_PROMOTED = "promotion_promoted"
    PROMOTION_ABSORBED_EXACT = "promotion_absorbed_exact"
    PROMOTION_ABSORBED_IDENTITY = "promotion_absorbed_identity"
    PROMOTION_SUPERSEDED = "promotion_superseded"
    PROMOTION_REJECTED_CAPACITY = "promotion_rejected_capacity"
    PROMOTION_RETRY_SCHEDULED = "promotion_retry_scheduled"
    PROMOTION_RETRY_EXHAUSTED = "promotion_retry_exhausted"
    MEMORY_REINFORCED = "memory_reinforced"
    RENDER_SELECTED = "render_selected"
    RENDER_OMITTED = "render_omitted"
    MEMORY_REMOVED_CAPACITY = "memory_removed_capacity"
    STORAGE_CORRUPT_JSON_QUARANTINED = "storage_corrupt_json_quarantined"
    STORAGE_STALE_LOCK_RECOVERED = "storage_stale_lock_recovered"
    STORAGE_LOCK_TIMEOUT = "storage_lock_timeout"
    HOOK_FAILED = "hook_failed"
    # workmem additions (docs/compatibility.md)
    MEMORY_ABSORBED = "memory_absorbed"
    MEMORY_ARCHIVED = "memory_archived"
    MEMORY_REVIVED = "memory_revived"
    MEMORY_SUPERSEDED = "memory_superseded"
    MEMORY_FORGOTTEN = "memory_forgotten"
    MEMORY_RESTORED = "memory_restored"
    MEMORY_NOT_RESTORED = "memory_not_restored"
    MEMORY_MIGRATED = "memory_migrated"
    MEMORY_REDACTED = "memory_redacted"
    #: a compaction was observed without a summary to read candidates from (never a silent loss)
    COMPACTION_SUMMARY_MISSING = "compaction_summary_missing"
    #: a session ended but its hot state is kept for a resume (docs/hosts.md)
    SESSION_SUSPENDED = "session_suspended"
    #: a resumed session's kept hot state was older than the resume window and was dropped
    SESSION_HOT_STATE_EXPIRED = "session_hot_state_expired"
    WORKSPACE_DORMANCY_RECORDED = "workspace_dormancy_recorded"
    STORAGE_STALE_WRITE_REJECTED = "storage_stale_write_rejected"
    #: a pending memory that did not make it into the store for a reason other than capacity
    #: (docs/decisions.md#b16)
    PROMOTION_REJECTED = "promotion_rejected"
    #: the file of a session idle past the adoption limit, whose pending memories were adopted
    SESSION_PRUNED = "session_pruned"
    #: a file of the shared projection was taken into the store, turned down by the gate, or set
    #: aside as unreadable (docs/decisions.md#d17)
    PROJECTION_FILE_IMPORTED = "projection_file_imported"
    PROJECTION_FILE_REJECTED = "projection_file_rejected"
    PROJECTION_FILE_QUARANTINED = "projection_file_quarantined"
    #: the user pinned or unpinned a memory (docs/decisions.md#d20)
    MEMORY_PINNED = "memory_pinned"
    MEMORY_UNPINNED = "memory_unpinned"
    #: a manual memory the quality gate refused was kept because the user insisted (``--force``)
    MEMORY_GATE_OVERRIDDEN = "memory_gate_overridden"
    #: a memory shown to a session was used in it: cited by id, or its rare terms in a tool's input
    #: (docs/decisions.md#d19)
    MEMORY_USED = "memory_used"
    #: a search was answered (the query's hash, counts and timing; never the query,
    #: docs/decisions.md#d16)
    SEARCH_ANSWERED = "search_answered"
    #: memories added to a turn's context because the user's prompt matched them
    MEMORY_RECALLED = "memory_recalled"
    #: the search index was missing, stale or unreadable and was built again from the store
    SEARCH_INDEX_REBUILT = "search_index_rebuilt"
    #: re-verification against the cited code changed a memory's freshness (docs/decisions.md#d18)
    MEMORY_FRESHNESS_CHANGED = "memory_freshness_changed"


class Phase(StrEnum):
    EXTRACTION = "extraction"
    EXPLICIT = "explicit"
    PENDING_JOURNAL = "pending_journal"
    PROMOTION = "promotion"
    REINFORCEMENT = "reinforcement"
    RENDER = "render"
    STORAGE = "storage"
    HOOK = "hook"
    # workmem additions
    CONSOLIDATION = "consolidation"
    MIGRATION = "migration"
    LIFECYCLE = "lifecycle"
    PROJECTION = "projection"
    SEARCH = "search"
    FRESHNESS = "freshness"


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    PROMOTED = "promoted"
    ABSORBED = "absorbed"
    SUPERSEDED = "superseded"
    RENDERED = "rendered"
    OMITTED = "omitted"
    REMOVED = "removed"
    RETRIED = "retried"
    EXHAUSTED = "exhausted"
    REINFORCED = "reinforced"
    QUARANTINED = "quarantined"
    FAILED = "failed"
    RECOVERED = "recovered"
    # workmem additions
    ARCHIVED = "archived"
    REVIVED = "revived"
    CLEARED = "cleared"
    FORGOTTEN = "forgotten"
    RESTORED = "restored"
    KEPT_OUT = "kept_out"
    RECORDED = "recorded"
    ANSWERED = "answered"
    RECALLED = "recalled"
    REBUILT = "rebuilt"
    REDACTED = "redacted"
    IMPORTED = "imported"
    VERIFIED = "verified"
    STALE = "stale"


class RelationRole(StrEnum):
    CANDIDATE = "candidate"
    PENDING = "pending"
    PROMOTED = "promoted"
    RETAINED = "retained"
    ABSORBED = "absorbed"
    SUPERSEDED = "superseded"
    SUPERSEDED_BY = "superseded_by"
    REINFORCED = "reinforced"
    REINFORCED_BY = "reinforced_by"
    RENDERED = "rendered"
    OMITTED = "omitted"
    REMOVED = "removed"


class Volatility(StrEnum):
    """How fast a memory may stop being true (docs/decisions.md#d18)."""

    STABLE = "stable"
    NORMAL = "normal"
    VOLATILE = "volatile"


class Grade(StrEnum):
    """How far a memory can be trusted now (docs/decisions.md#d18): by the age of its last
    verification against its volatility window, or past its hard expiry."""

    FRESH = "fresh"
    AGING = "aging"
    STALE = "stale"
    EXPIRED = "expired"
