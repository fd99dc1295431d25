"""Events of the workspace and its sessions: dormancy, session files pruned, hot state kept or
dropped, and a compaction whose summary could not be read (docs/decisions.md#host-events)."""

from __future__ import annotations

from domain.enums import EventType, Outcome, Phase
from domain.evidence.build import event
from domain.limits import DAY_MS
from domain.model import EvidenceInput


def dormancy_recorded(start_ms: float, end_ms: float) -> EvidenceInput:
    """The workspace was dormant from ``start_ms`` to ``end_ms`` (docs/decisions.md#d3)."""
    days = round((end_ms - start_ms) / DAY_MS, 3)
    kind = (EventType.WORKSPACE_DORMANCY_RECORDED, Phase.STORAGE, Outcome.RECORDED)
    return event(*kind, ("dormant_span_recorded",), details={"dormantDays": days})


def session_pruned(session_id: str, pending_adopted: int) -> EvidenceInput:
    """A session that never ended was idle for a week with nothing left pending: its file goes."""
    kind = (EventType.SESSION_PRUNED, Phase.LIFECYCLE, Outcome.REMOVED)
    details = {"pendingAdopted": pending_adopted}
    return event(*kind, ("idle_session_pruned",), details=details, session_id=session_id)


def hot_state_expired(active_files: int, open_errors: int, ended_days_ago: float) -> EvidenceInput:
    """A kept hot state came back after the resume window and was dropped."""
    details = {"activeFiles": active_files, "openErrors": open_errors, "endedDaysAgo": ended_days_ago}
    kind = (EventType.SESSION_HOT_STATE_EXPIRED, Phase.LIFECYCLE, Outcome.REMOVED)
    return event(*kind, ("resume_window_passed",), details=details)


def session_suspended(session_id: str, active_files: int, open_errors: int) -> EvidenceInput:
    """A session ended with its hot state kept for a resume."""
    details = {"activeFiles": active_files, "openErrors": open_errors}
    kind = (EventType.SESSION_SUSPENDED, Phase.LIFECYCLE, Outcome.RECORDED)
    return event(*kind, ("hot_state_kept_for_resume",), details=details, session_id=session_id)


def summary_missing() -> EvidenceInput:
    """A compaction came with an empty summary: its candidates could not be read."""
    return event(EventType.COMPACTION_SUMMARY_MISSING, Phase.EXTRACTION, Outcome.FAILED, ("summary_missing",))
