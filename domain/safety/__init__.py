"""The safety gate: credential redaction, prompt-injection defence and the memory quality gate.

Every text that can reach the journal, the store, session state, an evidence preview, a log line or a
rendered prompt goes through :func:`redact`; every candidate memory goes through :func:`admit`
(docs/decisions.md#d4), which gives the text to store or a :class:`Rejected` with its reason codes
(:class:`GateReason`, :class:`QualityReason`). The three parts:

* **Redaction** (:func:`redact`, :func:`preview`). First, well-known credential *formats* are replaced
  wherever they appear (PEM private-key blocks, JWTs, ``sk-``/``github_pat_``/``ghp_``/``AKIA``/
  ``xoxb-`` style tokens). Then the reference's *label* passes run in their order (PIN, username +
  password pair, password, Bearer, sensitive labels): a label, a delimiter and the value after it; the
  value becomes ``[REDACTED]`` and the label, the delimiter and any quotes are kept. On top of the
  reference, ``is`` and the particles ``は``/``는``/``은`` are delimiters too, ``Bearer = X`` and
  ``Bearer 是 X`` are covered, a quoted value is redacted up to its closing quote, and a bare-space
  delimiter (``Password sushi``) does not fire on ordinary words (``password reset``, ``Pin the
  version``).
* **Prompt injection** (:func:`is_prompt_injection`): the reference's rules R1 and R2, plus the plural
  ``ignore instructions`` and the ``disregard previous instructions`` family.
* **Quality** (:func:`assess_memory_quality`): the reference's ten rules, in their order, with the
  JavaScript regex dialect emulated (ASCII ``\\b``/``\\w``/``\\d``, JS whitespace, JS ``.`` and ``$``).

Lengths are counted in code points (docs/decisions.md#text-lengths-and-timestamps).

The package has one module per part: ``redaction`` (with its patterns in ``redaction_patterns``),
``injection``, ``quality``, ``gate`` and ``reasons`` (the reason-code enumerations); the JavaScript
regex dialect they share is :mod:`domain.jsregex`. Everything is re-exported here, so
``from domain.safety import redact`` is the way to use it.
"""

from __future__ import annotations

# The underscored names are internals that tests and the benchmark reach for under their old names:
# the JavaScript pattern registry and its translator, the unfiltered redaction, the preview memo.
from domain.safety.gate import Rejected, admit
from domain.safety.injection import is_prompt_injection
from domain.safety.quality import (
    HARD_QUALITY_REASONS,
    QUALITY_REASON_ORDER,
    QualityAssessment,
    assess_memory_quality,
    has_future_rule,
    is_architecture_like_decision,
    is_decision_quality_violation,
    is_feedback_quality_violation,
    is_hard_quality_reason,
    is_implementation_status_decision,
    is_progress_snapshot_violation,
)
from domain.safety.reasons import GateReason, QualityReason, RejectionReason
from domain.safety.redaction import REDACTED, preview, preview_memo, redact, redact_unfiltered, stored_text

__all__ = [
    "HARD_QUALITY_REASONS",
    "QUALITY_REASON_ORDER",
    "REDACTED",
    "GateReason",
    "QualityAssessment",
    "QualityReason",
    "Rejected",
    "RejectionReason",
    "admit",
    "assess_memory_quality",
    "has_future_rule",
    "is_architecture_like_decision",
    "is_decision_quality_violation",
    "is_feedback_quality_violation",
    "is_hard_quality_reason",
    "is_implementation_status_decision",
    "is_progress_snapshot_violation",
    "is_prompt_injection",
    "preview",
    "preview_memo",
    "redact",
    "redact_unfiltered",
    "stored_text",
]
