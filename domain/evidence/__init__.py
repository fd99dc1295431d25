"""The evidence events the core emits. Events are plain values; the shell sanitises, hashes and
appends them (``domain.evidence_records`` and ``adapters.evidence_log``).

Every kind of event has a named constructor (``absorbed(loser, survivor, reason)``,
``archived(entry, limit, active_before)``, ...): :mod:`~domain.evidence.memories` for the life of a
stored memory, :mod:`~domain.evidence.flow` for intake, the pending journal, promotion and the
block, :mod:`~domain.evidence.sessions` for the workspace and its sessions; all are built with
:func:`event` (:mod:`~domain.evidence.build`).

Key fields of a :class:`~domain.model.MemoryRef` carry raw keys here (``decision:use pnpm``); they
are hashed before anything reaches disk.
"""

from domain.evidence.build import event, memory_ref, relation, with_session
from domain.evidence.flow import (
    PREVIEW_ACCEPTED,
    PREVIEW_REJECTED,
    SELECTED_REASONS,
    candidate_accepted,
    candidate_rejected,
    explicit_detected,
    explicit_ignored,
    omissions,
    omitted,
    pending_appended,
    pending_cleared,
    promoted,
    promotion_absorbed,
    promotion_rejected,
    rendered,
    skipped,
)
from domain.evidence.memories import (
    absorbed,
    archived,
    forgotten,
    gate_overridden,
    migrated_out,
    redacted,
    reinforced,
    renamed,
    restored,
    revived,
    supersede_refused,
    superseded,
)
from domain.evidence.sessions import (
    dormancy_recorded,
    hot_state_expired,
    session_pruned,
    session_suspended,
    summary_missing,
)

__all__ = [
    "PREVIEW_ACCEPTED",
    "PREVIEW_REJECTED",
    "SELECTED_REASONS",
    "absorbed",
    "archived",
    "candidate_accepted",
    "candidate_rejected",
    "dormancy_recorded",
    "event",
    "explicit_detected",
    "explicit_ignored",
    "forgotten",
    "gate_overridden",
    "hot_state_expired",
    "memory_ref",
    "migrated_out",
    "omissions",
    "omitted",
    "pending_appended",
    "pending_cleared",
    "promoted",
    "promotion_absorbed",
    "promotion_rejected",
    "redacted",
    "reinforced",
    "relation",
    "renamed",
    "rendered",
    "restored",
    "revived",
    "session_pruned",
    "session_suspended",
    "skipped",
    "summary_missing",
    "supersede_refused",
    "superseded",
    "with_session",
]
