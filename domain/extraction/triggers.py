"""The trigger grammar of explicit memory requests (docs/decisions.md#explicit-requests), shared by
both parsers: the request phrases P1-P9 in English, Chinese, Japanese and Korean, the negation words,
deferrals and bare hedges, and the compiled patterns of explicit requests and of their negations.

Regex dialect: the reference patterns are JavaScript. Here ``WS`` stands for JavaScript's ``\\s``,
``HS`` for the same set without line terminators, ``DOT`` for JavaScript's ``.``, and ASCII word
boundaries are written as explicit lookarounds (``WORD_START``/``WORD_END``, see
:mod:`domain.jsregex`). The patterns are case-insensitive and those lookarounds are used unwrapped,
so they case-fold as they always have.
"""

from __future__ import annotations

import re
from typing import Final

from domain.jsregex import DOT, HS, LINE_TERMINATORS, WORD_END, WORD_START
from domain.text import WS, js_trim, lazy_compile

__all__ = [
    "DEFERRAL",
    "EXPLICIT_PATTERNS",
    "NEGATION",
    "NEGATION_LEAD",
    "NEG_EN",
    "NEG_VERB",
    "NEG_ZH",
    "PINNED_PATTERN",
    "SEP",
    "USER_SCOPE_LEAD",
    "is_bare_hedge",
    "request_phrases",
    "user_scope_body",
]

#: ``(?:^|\n)\s*`` under the m flag, written so that it never rescans whitespace: a trigger must
#: follow the start of its line and horizontal whitespace only (the same triggers match).
_LINE_START: Final = f"(?<![^{LINE_TERMINATORS}])[{HS}]*"
SEP: Final = "[:：,，]"
_QUESTION_WORDS: Final = "when|what|how|why|who|whom|whose|where|which|whether|if"


def _zh_remember(questions: bool) -> str:
    # 記得嗎 / 记得吗 is a question ("do you remember?"), not a request (docs/decisions.md#q-e4).
    ask = "(?![吗嗎])" if questions else ""
    return (
        "(?:请|請)?(?:帮我|幫我)?"
        f"(?:记住|記住|记得{ask}|記得{ask}|记下来|記下來)"
        "(?:这一点|這一點|这点|這點|这个|這個)?"
    )


def _ja_remember() -> str:
    # Longer (polite) forms first so that no suffix leaks into the body (docs/decisions.md#q-e1).
    return (
        "(?:覚えておいてください|覚えておいて|覚えといて|覚えてください|覚えて"
        "|忘れないでください|忘れないで"
        "|メモしておいてください|メモしておいて|メモしてください|メモして)"
    )


def _ko_remember(s: str) -> str:
    return (
        f"(?:기억해[{s}]*주세요|기억해[{s}]*줘|기억해"
        f"|잊지[{s}]*마세요|잊지 마|잊지마"
        f"|메모해[{s}]*주세요|메모해[{s}]*줘|메모해)"
    )


def _en_remember(s: str, questions: bool) -> str:
    # ``remember`` needs a word boundary (docs/decisions.md#q-e1), and ``remember when …?`` is a question.
    ask = f"(?![{WS}]+(?:{_QUESTION_WORDS}){WORD_END})" if questions else ""
    return f"(?:please[{s}]+)?remember{WORD_END}{ask}(?:[{s}]+(?:this|that){WORD_END})?"


def _en_save(s: str) -> str:
    return f"(?:please[{s}]+)?(?:save|add)[{s}]+(?:this|that)?[{s}]*(?:to|in)[{s}]+memory{WORD_END}"


def _en_commit(s: str) -> str:
    return f"(?:please[{s}]+)?commit[{s}]+(?:this|that)?[{s}]*to memory{WORD_END}"


_FROM_NOW_ON: Final = (
    "(?:从现在开始|從現在開始|从今以后|從今以後"
    f"|{WORD_START}(?:from now on(?:wards)?|going forwards?){WORD_END})"
)
_PREFERENCE_ZH: Final = "(?:我的偏好是|我偏好|以后请|以後請|以后都|以後都)"
_PREFERENCE_EN: Final = f"(?:my preference is|i prefer){WORD_END}"


def request_phrases(s: str, questions: bool = True) -> tuple[str, ...]:
    """The trigger phrases P1-P6 of docs/decisions.md#explicit-requests (the ones a candidate body
    may start with). ``s`` is the space class allowed inside a phrase; ``questions=False`` drops the
    question exclusions, for negation (``don't remember when …`` still negates whatever trigger
    follows on the line)."""
    return (
        _zh_remember(questions),
        _ja_remember(),
        _ko_remember(s),
        _en_remember(s, questions),
        _en_save(s),
        _en_commit(s),
    )


def _all_phrases(s: str, questions: bool = True) -> tuple[str, ...]:
    """All nine trigger phrases P1-P9 (docs/decisions.md#explicit-requests), in the reference's order."""
    return (*request_phrases(s, questions), _FROM_NOW_ON, _PREFERENCE_ZH, _PREFERENCE_EN)


#: Which explicit patterns must start a line (P7 and P8 match anywhere).
_ANCHORED: Final = (True, True, True, True, True, True, False, False, True)

_BODY: Final = f"{SEP}?[{WS}]*(?P<body>{DOT}+)(?=[{LINE_TERMINATORS}]|\\Z)"


def _explicit_pattern(phrase: str, anchored: bool) -> re.Pattern[str]:
    lead = _LINE_START if anchored else ""
    return lazy_compile(f"{lead}(?P<trigger>{phrase}){_BODY}", re.IGNORECASE)


def _pinned_phrase(s: str) -> str:
    """ "Always remember: …" and its Chinese, Japanese and Korean equivalents: a request for a pinned
    memory (docs/decisions.md#d20). Only in a user message; a compaction candidate that starts
    with "Always remember to …" keeps its words (docs/decisions.md#q-c1)."""
    return (
        f"(?:please[{s}]+)?always[{s}]+remember{WORD_END}(?:[{s}]+(?:this|that){WORD_END})?"
        "|(?:请|請)?(?:永远|永遠|始终|始終|一直)(?:要)?(?:记住|記住)(?:这一点|這一點|这点|這點|这个|這個)?"
        "|(?:ずっと|いつも|常に)(?:覚えておいてください|覚えておいて|覚えといて|覚えてください|覚えて"
        "|忘れないでください|忘れないで)"
        f"|(?:항상|영원히|늘)[{s}]*"
        f"(?:기억해[{s}]*주세요|기억해[{s}]*줘|기억해|잊지[{s}]*마세요|잊지 마|잊지마)"
    )


EXPLICIT_PATTERNS: Final = (
    *(
        _explicit_pattern(phrase, anchored)
        for phrase, anchored in zip(_all_phrases(WS), _ANCHORED, strict=True)
    ),
    _explicit_pattern(_pinned_phrase(WS), True),
)
#: The index in :data:`EXPLICIT_PATTERNS` of the pinned request ("always remember: …").
PINNED_PATTERN: Final = len(EXPLICIT_PATTERNS) - 1

# Negation. A negation word right before any trigger phrase, or a negative request verb, starts a
# negation scope that runs to the end of the request's body line: every trigger inside it is negated
# (docs/decisions.md#q-e2: this covers the unanchored P7/P8 phrases too). The words and the trigger
# stay on one line.
NEG_EN: Final = f"{WORD_START}(?:do[{HS}]+not|don['’]t|dont|never|not|cannot|can['’]t)"
NEG_ZH: Final = "(?:不要|別|别|不用|不需要|勿)"
NEG_VERB: Final = f"(?:覚えないで|記憶しないで|メモしないで|기억하지[{HS}]*마|메모하지[{HS}]*마)"
_ANY_TRIGGER_HS: Final = "(?:" + "|".join(_all_phrases(HS, questions=False)) + ")"
_NEG_LEAD: Final = f"(?:{NEG_EN}[{HS}]+(?:please[{HS}]+)?|{NEG_ZH}[{HS}]*(?:幫我|帮我)?[{HS}]*)"
NEGATION: Final = lazy_compile(
    f"(?P<neg>{_NEG_LEAD}{_ANY_TRIGGER_HS}|{NEG_VERB}){SEP}?[{WS}]*(?P<body>{DOT}+)?",
    re.IGNORECASE,
)
#: What may stand between the start of a line and a negation for the line itself to be the request.
NEGATION_LEAD: Final = lazy_compile(f"[{HS}]*(?:please[{HS}]+)?", re.IGNORECASE)

DEFERRAL: Final = lazy_compile("(?:再说|再說|later|next time)", re.IGNORECASE)
#: A trigger's remainder that is only a hedge or a courtesy (``from now onwards if possible``) says
#: nothing to remember.
_HEDGE_WORDS: Final = (
    "please|pls|thanks|thank you|thx|ok|okay|too|also|as well|for now|if possible|if at all possible"
    "|if you can|if you could|when possible|whenever possible|where possible|as much as possible"
    "|if needed|as needed|if necessary|if that'?s (?:ok|okay|fine|alright)|if you don'?t mind"
)
_HEDGE_ONLY: Final = lazy_compile(
    f"(?:(?:{_HEDGE_WORDS})[{WS},;:.!?…]*)+",
    re.IGNORECASE,
)


def is_bare_hedge(body: str) -> bool:
    """True when ``body`` is nothing but hedges and courtesies (``if possible``, ``please, thanks``)."""
    return _HEDGE_ONLY.fullmatch(js_trim(body)) is not None


#: A request's body that starts by saying it holds in every project ("remember for all projects:
#: …", "记住所有项目：…", "覚えて：すべてのプロジェクトで…", "기억해: 모든 프로젝트에서 …") is a
#: memory of scope ``user`` (docs/decisions.md#d17); the lead is not part of the memory.
USER_SCOPE_LEAD: Final = lazy_compile(
    "(?:"
    f"(?:for|in|across)[{HS}]+(?:all|every)[{HS}]+(?:(?:of[{HS}]+)?my[{HS}]+)?"
    f"(?:projects?|repos|repositories|repository|workspaces?){WORD_END}"
    f"|(?:everywhere|globally){WORD_END}"
    "|(?:对|對|在)?(?:所有|全部|每个|每個)的?(?:项目|項目|專案|仓库|倉庫|工作区|工作區)(?:都|中|里|裡|通用)?"
    "|全局"
    "|(?:すべての|全ての|全)プロジェクト(?:共通で?|で)?"
    f"|모든[{HS}]*프로젝트(?:에서|에)?"
    f")[{HS}]*[:：,，、-]?[{HS}]*",
    re.IGNORECASE,
)


def user_scope_body(body: str) -> str | None:
    """``body`` without its "for all projects" lead, or ``None`` when it has none."""
    found = USER_SCOPE_LEAD.match(body)
    return body[found.end() :] if found is not None and found.end() < len(body) else None


#: A request's body that starts with a time bound ("remember until 2027-03-01: …", "记住：2027-03-01之前
#: …", "覚えて：2027-03-01まで …", "기억해: 2027-03-01까지 …") sets the memory's ``valid_until``
#: (docs/decisions.md#d18); the lead is not part of the memory. Only an ISO date is unambiguous.
UNTIL_LEAD: Final = lazy_compile(
    "(?:"
    f"(?:valid[{HS}]+)?(?:until|till|through|thru)[{HS}]+(?P<en>\\d{{4}}-\\d{{2}}-\\d{{2}}){WORD_END}"
    "|(?:直到|到)?(?P<zh>\\d{4}-\\d{2}-\\d{2})(?:之前|以前|前|为止|為止)"
    "|(?P<ja>\\d{4}-\\d{2}-\\d{2})(?:まで)"
    "|(?P<ko>\\d{4}-\\d{2}-\\d{2})(?:까지)"
    f")[{HS}]*[:：,，、-]?[{HS}]*",
    re.IGNORECASE,
)


def until_body(body: str) -> tuple[str, str] | None:
    """``body`` without its time-bound lead and the date it names, or ``None`` when it has none."""
    found = UNTIL_LEAD.match(body)
    if found is None or found.end() >= len(body):
        return None
    date = found.group("en") or found.group("zh") or found.group("ja") or found.group("ko")
    return body[found.end() :], date
