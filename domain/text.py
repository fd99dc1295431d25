"""Text primitives shared by the whole core: JavaScript-compatible whitespace, canonical memory text
and the exact memory key.

Lengths and slices are measured in Unicode code points, not in UTF-16 units as in the reference
(docs/decisions.md#text-lengths-and-timestamps, docs/compatibility.md).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Final, cast

#: The characters JavaScript's ``\\s`` and ``String.prototype.trim`` treat as whitespace.
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: A regex character-class body for :data:`JS_WHITESPACE` (use inside ``[...]``).
WS: Final = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

_WS_RUN: Final = re.compile(f"[{WS}]+")


def js_trim(text: str) -> str:
    """``String.prototype.trim``: strip JavaScript whitespace from both ends."""
    return text.strip(JS_WHITESPACE)


def collapse_whitespace(text: str) -> str:
    """Replace each run of whitespace by one space and trim (``replace(/\\s+/g, " ").trim()``)."""
    return js_trim(_WS_RUN.sub(" ", text))


# ASCII punctuation in Unicode category P* (symbols such as $ + < = > ^ ` | ~ are not punctuation).
_ASCII_PUNCT: Final = "!\"#%&'()*,-./:;?@[\\]_{}"
_ASCII_CANON_RUN: Final = re.compile("[" + WS + re.escape(_ASCII_PUNCT) + "]+")


def _is_space_or_punct(ch: str) -> bool:
    return ch in JS_WHITESPACE or unicodedata.category(ch).startswith("P")


# A memo over plain strings: a pure function of its arguments, so it may serve every caller of the
# process (the core keeps no other state between calls, docs/decisions.md#d14).
@lru_cache(maxsize=65536)
def canonical_text(text: str) -> str:
    """NFKC, lower-case, every run of whitespace or Unicode punctuation (``[\\s\\p{P}]+``) becomes
    one space, trimmed. Idempotent."""
    folded = unicodedata.normalize("NFKC", text).lower()
    if folded.isascii():
        return _ASCII_CANON_RUN.sub(" ", folded).strip(" ")
    out: list[str] = []
    in_run = False
    for ch in folded:
        if _is_space_or_punct(ch):
            if not in_run:
                out.append(" ")
                in_run = True
        else:
            out.append(ch)
            in_run = False
    return "".join(out).strip(" ")


@lru_cache(maxsize=65536)  # over plain strings, as canonical_text
def memory_key(type_: str, text: str) -> str:
    """The exact key ``type:canonical(text)`` (``workspaceMemoryExactKey`` / ``memoryKey``)."""
    return f"{type_}:{canonical_text(text)}"


def truncate(text: str, limit: int) -> str:
    """The first ``limit`` code points of ``text``."""
    return text if len(text) <= limit else text[:limit]


class _LazyPattern:
    """A regular expression compiled on first use. After that first call, the compiled pattern's
    own bound methods replace these stubs on the instance, so later calls cost nothing extra.

    Compiling the core's patterns eagerly would cost every process that merely imports a module —
    for instance a tool-result hook that never assesses memory quality."""

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def _compiled(self) -> re.Pattern[str]:
        compiled = re.compile(self._source, self._flags)
        for name in ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split"):
            setattr(self, name, getattr(compiled, name))
        self.__dict__["_pattern"] = compiled
        return compiled

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().search(*args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().match(*args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().fullmatch(*args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().sub(*args, **kwargs)

    def subn(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().subn(*args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().finditer(*args, **kwargs)

    def findall(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().findall(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().split(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # pattern, flags, groupindex, ...
        compiled = self.__dict__.get("_pattern") or self._compiled()
        return getattr(compiled, name)


def lazy_compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile``, deferred to the first use of the pattern (see :class:`_LazyPattern`)."""
    return cast("re.Pattern[str]", _LazyPattern(source, flags))


_TRAILING_PUNCT: Final = lazy_compile("[),.;:!?]+\\Z")


def strip_trailing_punctuation(text: str) -> str:
    """``text`` without the sentence punctuation (``),.;:!?``) it ends with: a path or URL at the end
    of a sentence."""
    return _TRAILING_PUNCT.sub("", text)


#: Characters that must never reach the store, a prompt or a terminal: C0 controls except tab and
#: newline, DEL, C1 controls, and the bidirectional overrides and isolates (``U+202E`` and friends)
#: that make a terminal or an editor show text in a different order than it is read.
_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: Terminal escape sequences, removed whole so that no ``[31m`` residue is left: CSI (colours,
#: cursor moves), OSC with its terminator (titles, hyperlinks, clipboard writes), and two-character
#: escapes.
_ESCAPE_SEQUENCE: Final = re.compile(
    "\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\\\)|[@-Z\\\\^_])"
)
#: Controls that separate words or lines are replaced by a space rather than removed.
_SPACING_CONTROLS: Final = str.maketrans(
    {"\v": " ", "\f": " ", "\x1c": " ", "\x1d": " ", "\x1e": " ", "\x1f": " ", "\x85": " "}
)


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (from a JSON ``"\\ud83d"`` escape or an undecodable
    byte) replaced by U+FFFD, so it can always be encoded as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def replace_surrogates_in(value: Any) -> Any:
    """:func:`replace_surrogates` applied to every string (keys too) of parsed JSON."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, dict):
        return {replace_surrogates_in(k): replace_surrogates_in(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [replace_surrogates_in(v) for v in value]
    return value


def strip_controls(text: str) -> str:
    """``text`` without terminal escape sequences, control characters (other than tab and newline)
    or bidirectional overrides, and with lone surrogates replaced by U+FFFD. A carriage return
    becomes a newline (``\\r\\n`` one newline). Idempotent; text without such characters is returned
    unchanged."""
    if text.isprintable():  # no control, format (bidi) or surrogate character at all: the usual case
        return text
    text = replace_surrogates(text)
    if _CONTROL.search(text) is None:
        return text
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_SPACING_CONTROLS)
    return _CONTROL.sub("", text)


#: Every character ``str.splitlines`` breaks on, in runs.
_LINE_BREAK_RUN: Final = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")


def single_line(text: str) -> str:
    """``text`` with each run of line breaks shown as one space: one rendered item is one line, so a
    stored text can never forge a section header or a second ``- `` item of its own."""
    return _LINE_BREAK_RUN.sub(" ", text) if _LINE_BREAK_RUN.search(text) else text


#: Words one of which every explicit memory request (and every negated one) contains, compared with
#: the lower-cased text: the English trigger words (none holds an ``i``, ``s`` or ``k``, the letters
#: that case-insensitive matching also finds in non-ASCII characters) and the Chinese, Japanese and
#: Korean trigger stems. A property test ties this list to the trigger patterns of
#: ``domain.extraction``.
REQUEST_WORDS: Final = (
    "remember", "memory", "from now on", "forward", "prefer",
    "记住", "記住", "记得", "記得", "记下来", "記下來", "从现在开始", "從現在開始", "从今以后", "從今以後",
    "偏好", "以后请", "以後請", "以后都", "以後都",
    "覚え", "忘れないで", "メモ", "記憶",
    "기억", "잊지", "메모",
)  # fmt: skip


def may_hold_memory_request(text: str) -> bool:
    """``False`` when ``text`` cannot hold an explicit memory request, so a message without any can
    skip the trigger patterns (and the cost of compiling them) altogether."""
    lowered = text.lower()
    return any(word in lowered for word in REQUEST_WORDS)


_LINE_BREAKS: Final = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` with every run of line-breaking characters (as ``str.splitlines`` sees them) shown
    as one space, so that one decision stays one line of output."""
    return _LINE_BREAKS.sub(" ", text)


#: Words without which a message cannot hold a correction (so most messages skip the patterns of
#: ``domain.extraction.corrections``, and the service reads them on the store's head only,
#: docs/decisions.md#d19).
CORRECTION_WORDS: Final = (
    "forget", "no longer", "anymore", "any more", "instead of", "from now on", "going forward",
    "忘", "不再", "从现在开始", "從現在開始", "以后", "以後", "今后", "今後",
    "不对", "不對", "过时", "過時", "而不是", "代替", "取代", "改用", "换成", "換成",
    "もう", "ではなく", "じゃなくて", "代わりに",
    "잊어", "잊지", "더 이상", "대신", "말고",
)  # fmt: skip


def may_hold_correction(text: str) -> bool:
    """``False`` when ``text`` cannot hold a correction."""
    lowered = text.lower()
    return any(word in lowered for word in CORRECTION_WORDS)
