"""Forget and correct in the conversation (docs/decisions.md#d19): :func:`find_corrections` reads a
user message and finds the lines that take a stored memory back ("forget that …", "that's no longer
true: …", "we don't … anymore") or replace it ("actually, use X instead of Y", "from now on X, not
Y"), in English, Chinese, Japanese and Korean.

Like the remember triggers (:mod:`domain.extraction.triggers`) a request makes up its own line, and
a negated one is not a request: "don't forget that …", "别忘了 …", "忘れないで …" and "잊지 마 …" keep
a memory. In English and Chinese, which have no remember trigger of that form, such a line is
reported as a :attr:`CorrectionKind.REMEMBER` so that the caller can treat it as "remember: …"; in
Japanese and Korean the remember triggers already read it.

Only the lines are found here; which memory a line names is :mod:`domain.matching`'s question, and
what happens to it is :mod:`domain.operations.conversation`'s.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final

import msgspec

from domain.matching import terms
from domain.text import js_trim, lazy_compile, may_hold_correction

__all__ = ["Correction", "CorrectionKind", "find_corrections", "may_hold_correction"]

#: At most this many corrections are read from one message (the rest of its lines are left alone).
MAX_CORRECTIONS: Final = 3
_MIN_TARGET_CHARS: Final = 2


class CorrectionKind(StrEnum):
    FORGET = "forget"  # take the named memory back
    REPLACE = "replace"  # replace the memory that says ``old`` with one that says ``new``
    REMEMBER = "remember"  # "don't forget that …": a remember request, not a forget


class Correction(msgspec.Struct, frozen=True, kw_only=True):
    """One request of a message: its ``kind``, the line it makes up (``line``: index in the message's
    lines), the text naming the memory (``target``) and, for a replacement, the new wording ``new``."""

    kind: CorrectionKind
    line: int
    target: str
    new: str | None = None


_END: Final = r"[\s.!?。！？…]*\Z"
_SEP: Final = r"\s*[:：,，、\-—]?\s*"
_PLEASE: Final = r"(?:please\s+|pls\s+)?"
#: A colon or a dash: what makes "forget: …" or "no longer true — …" a request.
_COLON: Final = r"\s*[:：\-—]\s*"
_WE: Final = r"(?:we|i|you)"

# -- negated forgets: remember requests --------------------------------------------------------
_KEEP: Final = (
    lazy_compile(
        rf"\A{_PLEASE}(?:don['’]?t|do\s+not|never)\s+forget(?:\s+(?:that|this|about)\s+|{_COLON})(?P<body>.+?){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(
        rf"\A(?:请|請)?(?:不要|别|別|千万别|千萬別)(?:忘记|忘記|忘了|忘掉)(?:这一点|這一點|这个|這個)?{_COLON}(?P<body>.+?){_END}"
    ),
)
#: Negated forgets the remember triggers read already (Japanese, Korean): not a forget, nothing more.
_NEGATED: Final = lazy_compile(r"忘れないで|忘れるな|잊지\s*마|잊지\s*말")

# -- forget ------------------------------------------------------------------------------------
_FORGET: Final = (
    # English
    # "forget that …", "forget the rule about …", "forget: …" ("forget the tests for now" and
    # "forget that, …" are conversation, not requests)
    lazy_compile(
        rf"\A{_PLEASE}forget(?:\s+about)?\s+(?:that|this|the\s+(?:memory|note|rule)(?:\s+(?:that|about))?)\s+"
        rf"(?P<body>[^,，].*?){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(
        rf"\A{_PLEASE}forget(?:\s+(?:that|this|the\s+(?:memory|note|rule)))?{_COLON}(?P<body>.+?){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(
        r"\A(?:(?:that|this|it)(?:['’]s|\s+is)\s+|(?:that|this|it)\s+)?(?:no\s+longer|not)\s+"
        rf"(?:true|valid|correct|the\s+case|how\s+we\s+do\s+it)(?:\s+any\s?more)?{_COLON}(?P<body>.+?){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(
        rf"\A(?P<body>.+?)\s+(?:is|are)\s+no\s+longer\s+(?:true|valid|correct|the\s+case|used){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(rf"\A{_WE}\s+(?:don['’]?t|do\s+not)\s+(?P<body>.+?)\s+any\s?more{_END}", re.IGNORECASE),
    lazy_compile(rf"\A{_WE}\s+no\s+longer\s+(?P<body>.+?){_END}", re.IGNORECASE),
    # Chinese
    lazy_compile(
        rf"\A(?:请|請)?(?:忘记|忘記|忘掉)(?:这一点|這一點|这个|這個|这条|這條)?{_COLON}(?P<body>.+?){_END}"
    ),
    lazy_compile(
        r"\A(?:请|請)?(?:忘记|忘記|忘掉)(?:关于|關於)?(?P<body>.+?)"
        rf"(?:这件事|這件事|这条|這條|这一点|這一點|的记忆|的記憶)吧?{_END}"
    ),
    lazy_compile(
        r"\A(?:这|這|那|这个|這個)?(?:已经|已經)?"
        rf"(?:不再(?:是真的|成立|正确|正確|适用|適用)|不对了|不對了|过时了|過時了){_SEP}(?P<body>.+?){_END}"
    ),
    lazy_compile(rf"\A(?:我们|我們)(?:已经|已經)?不再(?P<body>.+?)了?{_END}"),
    # Japanese
    lazy_compile(rf"\A(?:忘れて(?:ください|ね)?){_COLON}(?P<body>.+?){_END}"),
    lazy_compile(rf"\A(?P<body>.+?)(?:は|を|のこと(?:は|を)?)?忘れて(?:ください|ね)?{_END}"),
    lazy_compile(
        rf"\A(?:それは)?もう(?:正しくない|正しくありません|有効ではない|違う){_SEP}(?P<body>.+?){_END}"
    ),
    lazy_compile(
        rf"\A(?:私たちは|うちは)?もう(?P<body>.+?)(?:は|を)?(?:使わない|使っていない|しない|していない)(?:です)?{_END}"
    ),
    # Korean
    lazy_compile(rf"\A잊어\s*(?:줘|주세요|버려)?{_COLON}(?P<body>.+?){_END}"),
    lazy_compile(rf"\A(?P<body>.+?)\s*(?:은|는|을|를)?\s*잊어\s*(?:줘|주세요|버려)?{_END}"),
    lazy_compile(
        rf"\A(?:그건|그것은)?\s*더\s*이상\s*(?:사실이\s*아니(?:야|에요|다)|맞지\s*않(?:아|아요|다)){_SEP}(?P<body>.+?){_END}"
    ),
    lazy_compile(
        r"\A(?:우리는?\s*)?더\s*이상\s+(?P<body>.+?)\s*(?:을|를)?\s*"
        rf"(?:안\s*(?:해|써|한다|씁니다|해요|써요)|(?:사용하지|쓰지|하지)\s*않(?:아|아요|는다|습니다)){_END}"
    ),
)

# -- replace: groups ``new`` and ``old`` --------------------------------------------------------
_REPLACE: Final = (
    # English
    lazy_compile(
        rf"\A(?:actually|no|instead|correction)?[\s,:]*{_PLEASE}use\s+(?P<new>.+?)\s+instead\s+of\s+(?P<old>.+?){_END}",
        re.IGNORECASE,
    ),
    lazy_compile(
        r"\A(?:from\s+now\s+on(?:wards)?|going\s+forwards?)[\s,:]+(?P<new>.+?)[\s,;]+(?:not|instead\s+of)\s+"
        rf"(?P<old>.+?){_END}",
        re.IGNORECASE,
    ),
    # Chinese
    lazy_compile(
        rf"\A(?:其实|其實|实际上|實際上)?[,，\s]*(?:用|使用|改用)(?P<new>.+?)(?:而不是|代替|取代)(?:用)?(?P<old>.+?){_END}"
    ),
    lazy_compile(
        r"\A(?:从现在开始|從現在開始|以后|以後|今后|今後)[,，\s]*(?P<new>.+?)[,，；;\s]+(?:而)?(?:不是|不要再?|不用再?|别再?|別再?)"
        rf"(?:用)?(?P<old>.+?){_END}"
    ),
    # Japanese
    lazy_compile(
        r"\A(?:実は|やっぱり|これからは|今後は)?[、,\s]*(?P<old>.+?)(?:ではなく|じゃなくて|の代わりに)[、,\s]*"
        rf"(?P<new>.+?)(?:を使って|を使う|を使います|にして)?(?:ください)?{_END}"
    ),
    # Korean
    lazy_compile(
        r"\A(?:사실은?|실은|앞으로는?|이제부터는?)?[,\s]*(?P<old>.+?)\s*(?:대신(?:에)?|말고)\s*(?P<new>.+?)\s*"
        rf"(?:(?:을|를)\s*)?(?:써\s*(?:줘|주세요)?|사용해\s*(?:줘|주세요)?|써요)?{_END}"
    ),
)

_NEGATED_NEW: Final = lazy_compile(
    r"\A(?:don['’]?t|do\s+not|never|not)\b|\A(?:不要|别|別|不用)", re.IGNORECASE
)
_LINES: Final = lazy_compile(r"\r\n|[\n\r\u2028\u2029]")


def _clean(text: str) -> str:
    return js_trim(text).strip("\"'“”‘’「」『』`").strip()


def _line_correction(line: str, index: int) -> Correction | None:
    for pattern in _KEEP:
        if (found := pattern.match(line)) is not None:
            return Correction(kind=CorrectionKind.REMEMBER, line=index, target=_clean(found.group("body")))
    if _NEGATED.search(line):
        return None
    for pattern in _REPLACE:
        if (found := pattern.match(line)) is not None:
            new, old = _clean(found.group("new")), _clean(found.group("old"))
            long_enough = min(len(old), len(new)) >= _MIN_TARGET_CHARS
            if long_enough and not _NEGATED_NEW.match(new):
                return Correction(kind=CorrectionKind.REPLACE, line=index, target=old, new=new)
    for pattern in _FORGET:
        if (found := pattern.match(line)) is not None:
            target = _clean(found.group("body"))
            if len(target) >= _MIN_TARGET_CHARS and terms(target):  # "forget it" names nothing
                return Correction(kind=CorrectionKind.FORGET, line=index, target=target)
    return None


def message_lines(text: str) -> list[str]:
    """The lines of a message, as :func:`find_corrections` numbers them."""
    return _LINES.split(text)


def find_corrections(text: str) -> tuple[Correction, ...]:
    """The corrections of a user message, in line order (at most :data:`MAX_CORRECTIONS`)."""
    if not may_hold_correction(text):
        return ()
    found: list[Correction] = []
    for index, raw in enumerate(message_lines(text)):
        line = js_trim(raw)
        if not line or not may_hold_correction(line):
            continue
        correction = _line_correction(line, index)
        if correction is not None:
            found.append(correction)
            if len(found) == MAX_CORRECTIONS:
                break
    return tuple(found)
