"""The immutable value types of workmem and the limits that bound them.

Every struct is a frozen ``msgspec.Struct`` whose JSON field names are the camelCase names used by
opencode-working-memory v1.3-v1.5 stores, so that a store written by the reference decodes here and
re-encodes with the same names. Optional fields default to ``None`` (or an empty tuple) and are left
out of the JSON when they hold their default, which mirrors how the reference omits ``undefined``.

Unknown JSON fields are kept by the codec (``domain.codec``) in the ``extras`` mapping of the struct
that carried them and written back on encode; the domain itself never reads them. The enumerations
are defined in ``domain.enums`` and importable from here.
"""

from typing import Any, dataclass_transform

import msgspec

from domain.enums import (
    DecisionSource,
    ErrorCategory,
    ErrorStatus,
    EventType,
    FileAction,
    Importance,
    MemorySource,
    MemoryStatus,
    MemoryType,
    Outcome,
    Phase,
    RelationRole,
    Scope,
    Volatility,
)
from domain.limits import (
    LongTermLimits,
)

# ---------------------------------------------------------------------------------------------
# Memory entries and stores
# ---------------------------------------------------------------------------------------------

Extras = dict[str, Any]


class _KeywordOnly(msgspec.StructMeta):
    """Makes ``kw_only=True`` the default of every subclass: msgspec inherits ``frozen``,
    ``omit_defaults`` and ``rename`` from a base struct but applies ``kw_only`` only to the fields the
    class itself declares."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **config: Any
    ) -> "_KeywordOnly":
        config.setdefault("kw_only", True)
        return super().__new__(mcls, name, bases, namespace, **config)


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(msgspec.field,))
class _Base(msgspec.Struct, metaclass=_KeywordOnly, frozen=True, omit_defaults=True, rename="camel"):
    """Shared struct configuration: immutable, keyword-only, camelCase JSON, defaults omitted.
    Subclasses declare fields only (their encoding is pinned by ``tests/domain/test_model_encoding.py``)."""


class Citation(_Base):
    """A file a memory describes (docs/decisions.md#d18): a line span with the hash of its
    whitespace-normalised text, or a whole file with the identifiers the memory names that occur in
    it. ``path`` is relative to the workspace root. Neither hash nor identifiers: not yet read (the
    first observation sets the baseline)."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    span_hash: str | None = None
    identifiers: tuple[str, ...] = ()
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class MemoryEntry(_Base):
    """One durable memory (``LongTermMemoryEntry`` in the reference), also used for pending memories."""

    id: str
    type: MemoryType
    text: str
    source: MemorySource
    confidence: float
    status: MemoryStatus
    created_at: str
    updated_at: str
    rationale: str | None = None
    stale_after_days: int | float | None = None
    supersedes: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    pending_owner_session_id: str | None = msgspec.field(default=None, name="pendingOwnerSessionID")
    pending_message_id: str | None = msgspec.field(default=None, name="pendingMessageID")
    promotion_attempts: int | None = None
    last_promotion_attempt_at: str | None = None
    last_promotion_failure_reason: str | None = None
    retention_clock: int | float | None = None
    reinforcement_count: int | None = None
    last_reinforced_at: int | float | None = None
    last_reinforced_session_id: str | None = msgspec.field(default=None, name="lastReinforcedSessionID")
    user_importance: Importance | None = None
    safety_critical: bool | None = None
    # --- workmem additions (all optional, omitted when empty) ---
    #: id of the memory that replaced this one (docs/decisions.md#d10).
    superseded_by: str | None = None
    #: ms of the last time this entry was shown in a rendered block (the archive rule,
    #: docs/decisions.md#d2).
    last_rendered_at: int | float | None = None
    #: ids of duplicates absorbed into this entry (docs/decisions.md#d2).
    absorbed_ids: tuple[str, ...] | None = None
    #: who the memory is for; ``None``: the default of its type (docs/decisions.md#d17).
    scope: Scope | None = None
    #: always shown first in the block and never archived, within the pinned budget
    #: (docs/decisions.md#d20); omitted when ``False``.
    pinned: bool = False
    #: the short number of the memory in its store, shown as ``R12`` (docs/decisions.md#d16).
    short_id: int | None = None
    #: freshness (docs/decisions.md#d18): ``None`` is the default of the type and text
    volatility: Volatility | None = None
    #: ms of the last confirmation that the memory is true; ``None``: when it was written
    verified: int | float | None = None
    #: ms after which the memory is expired (never rendered, kept stored)
    valid_until: int | float | None = None
    #: the code the memory describes, checked at each session start
    cites: tuple[Citation, ...] | None = None
    #: why re-verification marked the memory stale (the citation named); cleared by a verification
    stale_reason: str | None = None
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class WorkspaceRef(_Base):
    root: str
    key: str
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class StoreLimits(_Base):
    max_rendered_chars: int = LongTermLimits.MAX_RENDERED_CHARS
    max_entries: int = LongTermLimits.MAX_ENTRIES
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class DormantSpan(_Base):
    """A closed stretch of workspace inactivity, in epoch ms (docs/decisions.md#d3)."""

    start: int | float
    end: int | float
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class Tombstone(_Base):
    """A hash-only record that keeps a forgotten or superseded memory from being re-extracted
    (docs/decisions.md#d10)."""

    key_hash: str
    memory_id: str
    reason: str
    created_at: str
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class ArchiveMarker(_Base):
    """What the store remembers of an entry moved to ``archive.jsonl`` (docs/decisions.md#d2): enough to
    revive it."""

    memory_id: str
    key_hash: str
    identity_key_hash: str
    archived_at: str
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class WorkspaceStore(_Base):
    """``workspace-memory.json``."""

    version: int = 1
    workspace: WorkspaceRef
    limits: StoreLimits = msgspec.field(default_factory=StoreLimits)
    entries: tuple[MemoryEntry, ...] = ()
    migrations: tuple[str, ...] = ()
    updated_at: str
    last_activity_at: str | None = None
    # --- workmem additions ---
    #: monotonically increasing write counter (docs/decisions.md#d5); ``None`` for a store never
    #: written by workmem.
    revision: int | None = None
    dormant_spans: tuple[DormantSpan, ...] = ()
    tombstones: tuple[Tombstone, ...] = ()
    archived: tuple[ArchiveMarker, ...] = ()
    #: the last short number given to a memory of this store (docs/decisions.md#d16).
    last_short_id: int | None = None
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class PromotedForOwner(_Base):
    """A request that left the journal through a promotion other than its owner's: adopted from an
    idle owner (docs/decisions.md#d7) or promoted early over the journal's bound
    (docs/decisions.md#pending-journal-bound). The owner's session drops its copy of it; a copy whose
    journal entry is gone without such a record is kept."""

    memory_id: str
    owner_session_id: str = msgspec.field(name="ownerSessionID")
    reason: str
    promoted_at: str
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class PendingJournal(_Base):
    """``workspace-pending-journal.json``."""

    version: int = 1
    workspace: WorkspaceRef
    entries: tuple[MemoryEntry, ...] = ()
    updated_at: str
    revision: int | None = None
    # --- workmem additions ---
    #: requests promoted for their owners, until the owner's session has seen it
    #: (docs/decisions.md#pending-journal-bound)
    promoted_for_owners: tuple[PromotedForOwner, ...] = ()
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


# ---------------------------------------------------------------------------------------------
# Session state (hot state)
# ---------------------------------------------------------------------------------------------


class ActiveFile(_Base):
    path: str
    action: FileAction
    count: int
    last_seen: int | float
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class OpenError(_Base):
    id: str
    category: ErrorCategory
    summary: str
    fingerprint: str
    status: ErrorStatus
    first_seen: int | float
    last_seen: int | float
    seen_count: int
    command: str | None = None
    file: str | None = None
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class SessionDecision(_Base):
    id: str
    text: str
    source: DecisionSource
    created_at: int | float
    rationale: str | None = None
    promoted_to_long_term: bool | None = None
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class UseCue(_Base):
    """A memory shown to this session and the terms of it that are rare in its store: the signs of
    its use in a tool's input (docs/decisions.md#d19)."""

    memory_id: str
    terms: tuple[str, ...] = ()
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


class SessionState(_Base):
    """``sessions/<sha256(session)[:32]>.json``."""

    version: int = 1
    session_id: str = msgspec.field(name="sessionID")
    turn: int = 0
    updated_at: str
    active_files: tuple[ActiveFile, ...] = ()
    open_errors: tuple[OpenError, ...] = ()
    recent_decisions: tuple[SessionDecision, ...] = ()
    pending_memories: tuple[MemoryEntry, ...] = ()
    # --- workmem additions (issue: session lifecycle) ---
    parent_session_id: str | None = msgspec.field(default=None, name="parentSessionID")
    #: cache epoch counter; a new epoch refreshes the frozen workspace block.
    epoch: int = 0
    #: the workspace block frozen for this epoch, byte for byte.
    frozen_block: str | None = None
    #: memory ids of the block entries in render order; ``[M1]`` is index 0.
    block_ids: tuple[str, ...] = ()
    #: the same block with ``[M1]``, ``[M2]``, ... labels, used only inside the compaction prompt
    #: (docs/decisions.md#d10).
    numbered_block: str | None = None
    frozen_at_ms: int | float | None = None
    #: message ids already observed (bounded), so a message is processed at most once.
    processed_message_ids: tuple[str, ...] = ()
    last_activity_ms: int | float | None = None
    revision: int | None = None
    #: set when the host ended the session but it may come back (a resume): its hot state is kept,
    #: its pending memories are already promoted.
    ended_at_ms: int | float | None = None
    #: ``hash16`` of the frozen block and of the hot state last handed to a host that appends what
    #: it is handed to its conversation (docs/decisions.md#hook-injection).
    injected_block_hash: str | None = None
    injected_hot_state_hash: str | None = None
    #: the memories shown to this session (every epoch's block) with their cues, and the ones its
    #: use reinforced already (at most once per session, docs/decisions.md#d19)
    use_cues: tuple[UseCue, ...] = ()
    used_memory_ids: tuple[str, ...] = ()
    #: ids of the memories just-in-time recall added to a turn of this session, each once
    #: (docs/decisions.md#d16)
    recalled_ids: tuple[str, ...] = ()
    extras: Extras = msgspec.field(default_factory=dict, name="__extras__")


# ---------------------------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------------------------


class MemoryRef(_Base):
    """``MemoryEvidenceRef``: which memory an event is about. Key fields hold raw keys in the core;
    the evidence log hashes them before anything reaches disk."""

    memory_id: str | None = None
    memory_key_hash: str | None = None
    identity_key_hash: str | None = None
    type: str | None = None
    source: str | None = None
    status: str | None = None


class Relation(_Base):
    role: RelationRole
    memory: MemoryRef | None = None


DetailValue = str | int | float | bool | None | tuple[str, ...] | tuple[int | float, ...]


class EvidenceInput(_Base):
    """An evidence event as the core emits it (``EvidenceEventInput``). The shell adds
    ``version``, ``eventId``, ``createdAt``, ``workspaceKey`` and ``workspaceRootHash`` and
    sanitises every field before appending it to the log."""

    type: EventType
    phase: Phase
    outcome: Outcome
    reason_codes: tuple[str, ...] = ()
    #: the raw session and message ids; the log keeps only their hashes (``sessionHash``,
    #: ``messageHash`` of the record)
    session_id: str | None = msgspec.field(default=None, name="sessionHash")
    message_id: str | None = msgspec.field(default=None, name="messageHash")
    memory: MemoryRef | None = None
    relations: tuple[Relation, ...] = ()
    details: dict[str, DetailValue] = msgspec.field(default_factory=dict)
    text_preview: str | None = None


class EvidenceEvent(_Base):
    """One line of ``evidence/events.jsonl`` (schema v1, key order as the reference writes it)."""

    version: int
    event_id: str
    created_at: str
    workspace_key: str
    workspace_root_hash: str
    type: str
    phase: str
    outcome: str
    reason_codes: tuple[str, ...] = ()
    session_hash: str | None = None
    message_hash: str | None = None
    memory: MemoryRef | None = None
    relations: tuple[Relation, ...] = ()
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    text_preview: str | None = None
