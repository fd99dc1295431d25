"""Freshness: how far a memory can be trusted now (docs/decisions.md#d18).

Strength decay says how long ago a memory was written or repeated; freshness says whether it may
still be true. Every memory has a volatility (``stable``, ``normal``, ``volatile``): the one it was
given, else the default of its type (decisions and feedback ``stable``, references and project facts
``normal``) promoted to ``volatile`` by its text (versions, ports, URLs with a host, dates,
"currently", "this week" and their Chinese, Japanese and Korean equivalents). Its grade compares the
age of its last verification (``verified``; the time it was written when it never was) with the
window of its volatility:

    fresh   age <  window / 2
    aging   age <  window
    stale   age >= window, or re-verification found its cited code changed or gone
    expired now >= valid_until (whatever else holds)

An expired memory is never rendered and stays stored; a stale one is rendered with its age
(``[unverified 40 d]``) or its reason, and ranks lower (:data:`STALE_RANK_FACTOR`). Everything here
is pure: the grade is a function of the entry and ``now_ms``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Final

from msgspec.structs import replace

from domain.enums import Grade, MemoryType, Volatility
from domain.ids import hash16
from domain.limits import DAY_MS
from domain.model import Citation, MemoryEntry
from domain.text import lazy_compile
from domain.timeutil import parse_iso_ms

#: Days a verification lasts per volatility: fresh under half of it, stale from all of it
#: (docs/decisions.md#d18 has the simulator run that chose them).
WINDOW_DAYS: Final[dict[Volatility, float]] = {
    Volatility.STABLE: 180.0,
    Volatility.NORMAL: 30.0,
    Volatility.VOLATILE: 7.0,
}

#: A stale memory ranks as if its strength were this share of what it is.
STALE_RANK_FACTOR: Final = 0.5

_STABLE_TYPES: Final = frozenset({MemoryType.DECISION, MemoryType.FEEDBACK})

#: What makes a text volatile: a version, a port, a URL with a host, a date, a word of the moment.
#: Each pattern runs only when a cheap test says it may match (the ranking asks this of every memory
#: it has not seen yet, docs/performance.md).
_DOTTED_VERSION: Final = lazy_compile(r"\d\.\d+\.\d|\bv\d+\.\d")  # 1.2.3, v3.1 (not a bare v2: /api/v2)
_NAMED_VERSION: Final = lazy_compile(
    r"\b(?:version|release|python|node|java|go|rust|postgres|postgresql|django|react) \d"
)
_PORT_WORD: Final = lazy_compile(r"port\s*(?:is\s+|=\s*|:\s*)?\d{2,5}\b")
_HOST_PORT: Final = lazy_compile(r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}):\d{2,5}\b")
_DATE: Final = lazy_compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
#: Cheap tests that must pass before a pattern runs: a pattern that starts with a literal is searched
#: fast, one that starts with ``\b`` or ``\d`` is tried at every position (microseconds a text).
_DOT_DIGIT: Final = lazy_compile(r"\.\d")
_COLON_DIGIT: Final = lazy_compile(r":\d")
_DASH_DIGIT: Final = lazy_compile(r"[-/]\d")
_PRODUCTS: Final = ("version", "release", "python", "node", "java", "go ", "rust", "postgres", "django")
_URL_WITH_HOST: Final = lazy_compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:]+", 0x2)
_MOMENT_WORDS: Final = ("currently", "at the moment", "right now", "for now", "temporarily", "this ")
_MOMENT: Final = lazy_compile(
    r"\b(?:currently|at the moment|right now|for now|temporarily|this (?:week|sprint|month|quarter))\b", 0x2
)
_MOMENT_CJK: Final = (
    "目前", "当前", "現在", "现在", "本周", "这周", "這週", "暂时", "暫時", "今週", "今のところ", "一時的",
    "현재", "지금", "이번 주", "이번주", "당분간", "일시적",
)  # fmt: skip


# A memo over plain strings: a pure function of its argument, so it may serve every caller of the
# process (docs/decisions.md#d14); the ranking asks it of every memory it has not ranked yet.
@lru_cache(maxsize=65536)
def volatile_text(text: str) -> bool:
    """Whether ``text`` names something that changes: a version, a port, a URL with a host, a date,
    or a word of the moment ("currently", "this week", 目前, 今週, 현재, ...)."""
    lowered = text.lower()
    if _DOT_DIGIT.search(text) is not None and _DOTTED_VERSION.search(lowered) is not None:
        return True
    if "port" in lowered and _PORT_WORD.search(lowered) is not None:
        return True
    if _COLON_DIGIT.search(text) is not None and _HOST_PORT.search(lowered) is not None:
        return True
    if _DASH_DIGIT.search(text) is not None and _DATE.search(text) is not None:
        return True
    if "://" in text and _URL_WITH_HOST.search(text) is not None:
        return True
    for word in _PRODUCTS:
        if word in lowered:
            if _NAMED_VERSION.search(lowered) is not None:
                return True
            break
    for word in _MOMENT_WORDS:
        if word in lowered:
            if _MOMENT.search(text) is not None:
                return True
            break
    if text.isascii():
        return False
    return any(word in text for word in _MOMENT_CJK)


def default_volatility(type_: MemoryType, text: str) -> Volatility:
    """The volatility of a memory that was given none: ``volatile`` when its text names something
    that changes (:func:`volatile_text`), else ``stable`` for decisions and feedback and ``normal``
    for references and project facts."""
    if volatile_text(text):
        return Volatility.VOLATILE
    return Volatility.STABLE if type_ in _STABLE_TYPES else Volatility.NORMAL


def volatility_of(entry: MemoryEntry) -> Volatility:
    return entry.volatility if entry.volatility is not None else default_volatility(entry.type, entry.text)


def _finite(value: int | float | None) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def verified_ms(entry: MemoryEntry) -> float | None:
    """When the memory was last confirmed true: ``verified``, else when it was written
    (``updatedAt``, else ``createdAt``); ``None`` when none of them is valid."""
    found = _finite(entry.verified)
    if found is not None:
        return found
    for stamp in (entry.updated_at, entry.created_at):
        parsed = parse_iso_ms(stamp) if isinstance(stamp, str) else None
        if parsed is not None:
            return float(parsed)
    return None


def is_expired(entry: MemoryEntry, now_ms: float) -> bool:
    """Past its ``valid_until``: never rendered nor searched by default, kept stored."""
    until = _finite(entry.valid_until)
    return until is not None and now_ms >= until


def unverified_days(entry: MemoryEntry, now_ms: float) -> int:
    """Whole days since the last verification (0 when unknown or in the future)."""
    since = verified_ms(entry)
    return 0 if since is None else max(0, math.floor((now_ms - since) / DAY_MS))


def grade(entry: MemoryEntry, now_ms: float) -> Grade:
    """The grade of ``entry`` at ``now_ms`` (module docstring)."""
    if is_expired(entry, now_ms):
        return Grade.EXPIRED
    if entry.stale_reason:
        return Grade.STALE
    since = verified_ms(entry)
    if since is None:  # no valid time at all: its age is unknown, never a reason to mark it
        return Grade.AGING
    age_days = (now_ms - since) / DAY_MS
    window = WINDOW_DAYS[volatility_of(entry)]
    if age_days >= window:
        return Grade.STALE
    return Grade.AGING if age_days >= window / 2 else Grade.FRESH


def rank_factor(entry: MemoryEntry, now_ms: float) -> float:
    """What the ranking multiplies the strength by: :data:`STALE_RANK_FACTOR` for a memory that is
    stale by its reason or its age (its expiry aside: the render never ranks an expired memory)."""
    since = verified_ms(entry)
    if entry.stale_reason:
        return STALE_RANK_FACTOR
    if since is None:
        return 1.0
    window = WINDOW_DAYS[volatility_of(entry)]
    return STALE_RANK_FACTOR if now_ms >= since + window * DAY_MS else 1.0


def stale_label(entry: MemoryEntry, now_ms: float) -> str | None:
    """The mark a stale memory carries in the block (without the leading space), ``None`` when it is
    not stale: its reason when re-verification found one, else its age."""
    if grade(entry, now_ms) is not Grade.STALE:
        return None
    if entry.stale_reason:
        return f"[{entry.stale_reason}, verify]"
    return f"[unverified {unverified_days(entry, now_ms)} d]"


def describe(entry: MemoryEntry, now_ms: float) -> str:
    """One line for ``show``/``list``: grade, volatility, age, expiry and reason."""
    found = grade(entry, now_ms)
    parts = [found.value, volatility_of(entry).value, f"verified {unverified_days(entry, now_ms)} d ago"]
    until = _finite(entry.valid_until)
    if until is not None:
        from domain.timeutil import iso_from_ms

        parts.append(f"valid until {iso_from_ms(until - 1)[:10]}")
    if entry.stale_reason:
        parts.append(entry.stale_reason)
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------------
# Citations
# ---------------------------------------------------------------------------------------------------

#: A path-like token: at least one slash or a file extension, no scheme.
_PATH_TOKEN: Final = lazy_compile(r"(?<![\w:/.-])(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8}\b(?!:/)")
#: An identifier the way code spells one: snake_case, camelCase, PascalCase with a second capital,
#: or a name called with ``()``.
_IDENTIFIER: Final = lazy_compile(
    r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Za-z_]\w{2,}(?=\())"
)
_CITE_SPEC: Final = lazy_compile(r"(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?\Z")

#: At most this many citations per memory are kept.
MAX_CITES: Final = 8


def path_candidates(text: str) -> tuple[str, ...]:
    """Tokens of ``text`` that may name a file of the workspace (the shell keeps those that do)."""
    found: list[str] = []
    for match in _PATH_TOKEN.finditer(text):
        token = match.group(0).removeprefix("./")
        if token not in found and not token.replace(".", "").isdigit():
            found.append(token)
    return tuple(found[:MAX_CITES])


def code_identifiers(text: str) -> tuple[str, ...]:
    """The identifiers ``text`` names, in order, each once."""
    found: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        name = match.group(0)
        if name not in found and "." not in name:
            found.append(name)
    return tuple(found)


def parse_cite(spec: str) -> Citation | None:
    """``PATH[:LINE[-LINE]]`` as a citation not read yet; ``None`` for an empty path or lines that
    are not ``1 <= start <= end``."""
    match = _CITE_SPEC.match(spec.strip())
    if match is None or not match.group("path").strip() or match.group("path").startswith(":"):
        return None
    path = match.group("path").strip().removeprefix("./")
    start_text, end_text = match.group("start"), match.group("end")
    if start_text is None:
        return Citation(path=path)
    start = int(start_text)
    end = int(end_text) if end_text is not None else start
    if not 1 <= start <= end:
        return None
    return Citation(path=path, start_line=start, end_line=end)


def span_hash(lines: list[str]) -> str:
    """The hash of a span of lines, whitespace-normalised (re-indenting is not a change)."""
    return hash16(" ".join(" ".join(lines).split()))


_ISO_DATE: Final = lazy_compile(r"(\d{4})-(\d{2})-(\d{2})\Z")


def parse_until(text: str) -> int | None:
    """``YYYY-MM-DD`` as the end of that day (UTC, in ms): a memory valid until a date is valid
    through it. ``None`` when it is not such a date."""
    import datetime as dt

    match = _ISO_DATE.match(text.strip())
    if match is None:
        return None
    try:
        day = dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
    return (day.toordinal() + 1 - dt.date(1970, 1, 1).toordinal()) * int(DAY_MS)


def cite_label(cite: Citation) -> str:
    if cite.start_line is None:
        return cite.path
    if cite.end_line is None or cite.end_line == cite.start_line:
        return f"{cite.path}:{cite.start_line}"
    return f"{cite.path}:{cite.start_line}-{cite.end_line}"


def with_freshness(
    entry: MemoryEntry,
    volatility: Volatility | None,
    valid_until: int | float | None,
    cites: tuple[Citation, ...],
) -> MemoryEntry:
    """``entry`` with the freshness a command gave it (what it does not give is left as it is)."""
    changes: dict[str, object] = {}
    if volatility is not None:
        changes["volatility"] = volatility
    if valid_until is not None:
        changes["valid_until"] = valid_until
    if cites:
        changes["cites"] = cites[:MAX_CITES]
    return replace(entry, **changes) if changes else entry


def confirmed(
    entry: MemoryEntry,
    now_ms: int,
    volatility: Volatility | None = None,
    valid_until: int | float | None = None,
    cites: tuple[Citation, ...] = (),
) -> MemoryEntry:
    """A memory the user stated again: verified now (a reason it was stale for is cleared), with the
    freshness the new statement gave."""
    return with_freshness(replace(entry, verified=now_ms, stale_reason=None), volatility, valid_until, cites)
