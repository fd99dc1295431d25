"""The reason codes of the safety gate and of the quality gate (docs/decisions.md#d4,
docs/decisions.md#quality-gate). The string values are the ones evidence events and the rejection log
carry; a member compares equal to its value."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeAlias

__all__ = ["GateReason", "QualityReason", "RejectionReason"]


class GateReason(StrEnum):
    """Why :func:`domain.safety.admit` turned a memory down before the quality gate, and the reason
    an accepted compaction candidate's event names."""

    TOO_SHORT = "too_short"
    EMPTY = "empty"
    PROMPT_INJECTION = "prompt_injection"
    QUALITY_GATE_PASSED = "quality_gate_passed"


class QualityReason(StrEnum):
    """The quality gate's reasons, in the order :func:`domain.safety.assess_memory_quality` gives
    them (docs/decisions.md#quality-gate). ``BAD_FEEDBACK`` and ``BAD_DECISION`` are the soft ones."""

    EMPTY = "empty"
    PROGRESS_SNAPSHOT = "progress_snapshot"
    RAW_ERROR = "raw_error"
    COMMIT_OR_CI_SNAPSHOT = "commit_or_ci_snapshot"
    PATH_HEAVY = "path_heavy"
    TEMPORARY_STATUS = "temporary_status"
    ACTIVE_FILE_SNAPSHOT = "active_file_snapshot"
    CODE_OR_API_SIGNATURE = "code_or_api_signature"
    BAD_FEEDBACK = "bad_feedback"
    BAD_DECISION = "bad_decision"


#: A reason a rejected memory carries: one of the gate's own, or the quality gate's.
RejectionReason: TypeAlias = GateReason | QualityReason
