"""The memory quality gate: :func:`assess_memory_quality` and its rules.

The reference's ten rules, in their order, with the JavaScript regex dialect emulated (ASCII
``\\b``/``\\w``/``\\d``, JS whitespace, JS ``.`` and ``$``; see :mod:`domain.jsregex`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

import msgspec

from domain.enums import MemoryType
from domain.jsregex import js_compile as _js
from domain.safety.reasons import QualityReason
from domain.safety.redaction import REDACTED
from domain.text import js_trim

_I: Final = re.IGNORECASE

#: Every reason :func:`assess_memory_quality` can give, in the order it gives them.
QUALITY_REASON_ORDER: Final[tuple[QualityReason, ...]] = tuple(QualityReason)
#: Reasons that mark a memory as worthless whatever its type (the migration acts only on these):
#: every reason but the two soft ones, which depend on the memory's type.
HARD_QUALITY_REASONS: Final[frozenset[QualityReason]] = frozenset(QualityReason) - {
    QualityReason.BAD_FEEDBACK,
    QualityReason.BAD_DECISION,
}


def is_hard_quality_reason(reason: str) -> bool:
    return reason in HARD_QUALITY_REASONS


class QualityAssessment(msgspec.Struct, frozen=True):
    accepted: bool
    reasons: tuple[QualityReason, ...]


def _any(patterns: Iterable[re.Pattern[str]], text: str) -> bool:
    return any(p.search(text) for p in patterns)


_PROGRESS_TEST_COUNT: Final = _js(r"\d+\s+tests?\s+pass(?:ed)?", _I)
_PROGRESS_SUITE_COUNT: Final = _js(r"\d+\s+suites?\s+(?:pass|fail)", _I)
_PROGRESS_FILE_COUNT: Final = _js(r"\d+\s*(?:個|个)?\s*(?:files?|文件)", _I)
_PROGRESS_FILE_SNAPSHOT: Final = _js(
    r"同步|synced|uploaded|downloaded|completed|generated|created|modified|processed|完成", _I
)
_PROGRESS_FILE_LIMIT: Final = _js(
    r"limit|max|maximum|min|minimum|supports?|allowed|per\s+(?:batch|request|upload)", _I
)
_PROGRESS_DONE_VERB: Final = _js(
    r"\b(?:completed|done|finished|implemented|added|updated|fixed|reviewed|passed|modified)\b", _I
)
_PROGRESS_WORK_NOUN: Final = _js(
    r"\b(?:wave|phase|task|plan|pr|commit|ci|test|suite|implementation|session|change|fix|review|file)\b", _I
)
_PROGRESS_ZH_DONE: Final = _js(
    r"(?:已完成|完成|修復|实现|實作).{0,40}(?:wave|phase|task|plan|PR|測試|测试|實作|实现|修復)", _I
)
_PROGRESS_MILESTONE: Final = _js(
    r"(?:phases?|waves?|sprints?|milestones?|tasks?)\s*\d+(?:\s*[-–]\s*\d+)?", _I
)
_PROGRESS_MILESTONE_DONE: Final = _js(r"completed|done|finished|完成|已完成", _I)
_PROGRESS_ZH_MILESTONE: Final = _js(
    r"(?:已完成|完成).{0,30}(?:phases?|waves?|sprints?|milestones?|tasks?)", _I
)
_PROGRESS_NOW: Final = _js(
    r"\b(?:currently|right now|latest change|previous session|last wave|next step)\b", _I
)


def is_progress_snapshot_violation(text: str) -> bool:
    """True when ``text`` reports progress (test counts, finished phases, synced files, "currently")."""
    if _PROGRESS_TEST_COUNT.search(text) or _PROGRESS_SUITE_COUNT.search(text):
        return True
    if (
        _PROGRESS_FILE_COUNT.search(text)
        and _PROGRESS_FILE_SNAPSHOT.search(text)
        and not _PROGRESS_FILE_LIMIT.search(text)
    ):
        return True
    if _PROGRESS_DONE_VERB.search(text) and _PROGRESS_WORK_NOUN.search(text):
        return True
    if _PROGRESS_ZH_DONE.search(text):
        return True
    if _PROGRESS_MILESTONE.search(text) and _PROGRESS_MILESTONE_DONE.search(text):
        return True
    return bool(_PROGRESS_ZH_MILESTONE.search(text) or _PROGRESS_NOW.search(text))


_RAW_ERROR: Final = (
    _js(r"^\s*(Error|TypeError|ReferenceError|SyntaxError|Exception):", _I),
    _js(r"at \S+ \([^)]+:\d+:\d+\)"),
)
_COMMIT_OR_CI: Final = (
    _js(r"^(fix|feat|chore|docs|refactor|test):", _I),
    _js(r"\b[0-9a-f]{7,40}\b"),
    _js(r"\bCI\b.*\b(?:passed|failed|run|compatibility|flaky)\b", _I),
    _js(r"\b(?:passed|failed|run|compatibility|flaky)\b.*\bCI\b", _I),
    _js(r"\bcompatibility\s+run\s+\d+", _I),
)
_PATH: Final = _js(r"\/[\w.-]+(?:\/[\w.-]+)+")
_TEMPORARY: Final = (
    _js(r"^(currently|now|pending|in progress|todo|wip)\b", _I),
    _js(r"\b(?:run npm test|tests? are running|next reply|before continuing)\b", _I),
)
_ACTIVE_FILE: Final = _js(r"^(modified|created|deleted|renamed)\s+\S+\.\S+$", _I)
_CODE_OR_API: Final = (
    _js(r"^(function|class|interface|type|const|let|var)\s+\w+"),
    _js(r"^(GET|POST|PUT|DELETE|PATCH)\s+\/"),
)
_STABLE_PREFERENCE: Final = (
    _js(r"\b(?:user|the user)\s+(?:prefers|wants|asked|expects|requires|likes|dislikes)\b", _I),
    _js(r"\b(?:prefer|preference|going forward|from now on|always|never)\b", _I),
    _js(r"(?:使用者|用戶|用户).{0,12}(?:偏好|希望|要求|想要)"),
    _js(r"(?:以後|以后|請|请).{0,20}(?:使用|回答|保持|避免)"),
)
_FUTURE_RULE: Final = (
    _js(r"\b(?:use|keep|prefer|avoid|do not|don't|must|should|never|always|require|choose|reject)\b", _I),
    _js(r"(?:使用|保持|避免|不要|必須|必须|應該|应该|選擇|选择)"),
)
_ARCHITECTURE: Final = (
    _js(r"\b(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z][A-Z0-9]{3,})\b"),
    _js(
        r"\b(?:schema|model|scoring|retention|cap|evidence|normalization|root cause"
        r"|architecture(?!\s+keywords?)|boundary|rule|memory system)\b",
        _I,
    ),
    _js(r"(?:模型|架構|架构|证据|證據|規則|规则|邊界|边界|記憶系統|记忆系统|原因|採用|采用)"),
)
_IMPLEMENTED: Final = _js(r"\b(?:implemented|added|updated|fixed|completed|reviewed)\b", _I)
_WAS: Final = _js(r"\b(?:was|were|has been|had been)\b", _I)
_PREVIOUSLY: Final = _js(r"\b(?:previous|last|latest|this session|this wave|already)\b", _I)
_WORK_CONTEXT: Final = _js(r"\b(?:session|wave|task|test|CI|compatibility|commit)\b", _I)


def is_feedback_quality_violation(text: str) -> bool:
    """Feedback must state a stable preference or rule (``the user prefers``, ``always``, ``以後請``)."""
    return not _any(_STABLE_PREFERENCE, text)


def has_future_rule(text: str) -> bool:
    return _any(_FUTURE_RULE, text)


def is_architecture_like_decision(text: str) -> bool:
    """True for CONST_CASE or all-caps tokens (``HTTP``), or architecture vocabulary.

    The redaction marker ``[REDACTED]`` is read as ``[redacted]`` here, so that redacting a value in
    a decision never makes it look architectural (the reference lets ``REDACTED`` count as an
    all-caps word).
    """
    return _any(_ARCHITECTURE, text.replace(REDACTED, "[redacted]"))


def is_implementation_status_decision(text: str) -> bool:
    return bool(_IMPLEMENTED.search(text) or (_WAS.search(text) and _PREVIOUSLY.search(text)))


def is_decision_quality_violation(text: str) -> bool:
    """A decision must be a future-facing rule, or an architectural fact that is not a status report."""
    if has_future_rule(text):
        return is_implementation_status_decision(text)
    if is_architecture_like_decision(text):
        return is_implementation_status_decision(text) or bool(_WORK_CONTEXT.search(text))
    return True


def _quality_checks(type_: str) -> tuple[tuple[QualityReason, Callable[[str], bool]], ...]:
    return (
        (QualityReason.EMPTY, lambda t: len(t) == 0),
        (QualityReason.PROGRESS_SNAPSHOT, is_progress_snapshot_violation),
        (QualityReason.RAW_ERROR, lambda t: _any(_RAW_ERROR, t)),
        (QualityReason.COMMIT_OR_CI_SNAPSHOT, lambda t: _any(_COMMIT_OR_CI, t)),
        (QualityReason.PATH_HEAVY, lambda t: sum(1 for _ in _PATH.finditer(t)) > 2),
        (QualityReason.TEMPORARY_STATUS, lambda t: _any(_TEMPORARY, t)),
        (QualityReason.ACTIVE_FILE_SNAPSHOT, lambda t: _ACTIVE_FILE.search(t) is not None),
        (QualityReason.CODE_OR_API_SIGNATURE, lambda t: _any(_CODE_OR_API, t)),
        (
            QualityReason.BAD_FEEDBACK,
            lambda t: type_ == MemoryType.FEEDBACK and is_feedback_quality_violation(t),
        ),
        (
            QualityReason.BAD_DECISION,
            lambda t: type_ == MemoryType.DECISION and is_decision_quality_violation(t),
        ),
    )


def assess_memory_quality(type_: str, text: str) -> QualityAssessment:
    """The quality gate (``assessMemoryQuality``): every failed rule's reason, in the fixed order.

    ``text`` is trimmed first; ``type_`` is a memory type value and only decides ``bad_feedback`` and
    ``bad_decision`` (the soft reasons). Total: never raises.
    """
    trimmed = js_trim(text)
    reasons = tuple(reason for reason, failed in _quality_checks(type_) if failed(trimmed))
    return QualityAssessment(accepted=not reasons, reasons=reasons)
