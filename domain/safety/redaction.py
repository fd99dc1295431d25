"""Credential redaction: :func:`redact`, and the excerpts built on it (:func:`preview`,
:func:`stored_text`).

First, well-known credential *formats* are replaced wherever they appear (PEM private-key blocks,
JWTs, ``sk-``/``github_pat_``/``ghp_``/``AKIA``/``xoxb-`` style tokens). Then the reference's *label*
passes run in their order (PIN, username + password pair, password, Bearer, sensitive labels): a
label, a delimiter and the value after it; the value becomes ``[REDACTED]`` and the label, the
delimiter and any quotes are kept. The patterns are in :mod:`domain.safety.redaction_patterns`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from domain.bounds import cut_at_whitespace
from domain.safety.redaction_patterns import (
    EXPLICIT_DELIM_CHARS,
    LABEL_PASSES,
    LEADING_WORD,
    MAY_NEED_REDACTION,
    MAY_NEED_REDACTION_ASCII,
    PLURAL_PASS,
    STOP_WORDS,
    TOKEN_PASSES,
    VALUE_GROUPS,
)
from domain.text import JS_WHITESPACE, collapse_whitespace, strip_controls, truncate

__all__ = ["REDACTED", "preview", "redact", "stored_text"]

#: What a redacted value becomes. It starts with ``[``, which no value may start with, so it is never
#: redacted again.
REDACTED: Final = "[REDACTED]"


def _redact_values(match: re.Match[str]) -> str:
    whole = match.group(0)
    base = match.start()
    spans = sorted(match.span(g) for g in VALUE_GROUPS if g in match.re.groupindex and match.start(g) >= 0)
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(whole[pos : start - base])
        out.append(REDACTED)
        pos = end - base
    out.append(whole[pos:])
    return "".join(out)


def _is_prose(match: re.Match[str], always_check_value: bool = False) -> bool:
    """True when a value slot follows a bare-space or ``is`` delimiter, unquoted, and its leading
    word is a stop word (``password reset``): then the match is not a credential. With
    ``always_check_value`` the stop-word check applies after any delimiter (plural labels)."""
    text = match.string
    lead_start = match.start()
    for tag in ("1", "2"):
        if f"v{tag}" not in match.re.groupindex:
            break
        quoted = next((g for g in (f"qv{tag}", f"cv{tag}") if match.start(g) >= 0), None)
        if quoted is not None:
            lead_start = match.end(quoted)
            continue
        start, end = match.span(f"v{tag}")
        lead = text[lead_start:start]
        lead_start = end
        # Only the delimiter right before the value counts: words between a label and ``is``
        # (``password for my-db is``) may hold a dash.
        explicit = lead.endswith(("`", "'", '"')) or lead.rstrip(JS_WHITESPACE)[-1:] in EXPLICIT_DELIM_CHARS
        if explicit and not always_check_value:
            continue
        word = LEADING_WORD.match(text, start, end)
        if word is not None and word.group(0).lower() in STOP_WORDS:
            return True
    return False


def _label_pass(pattern: re.Pattern[str], text: str, *, always_check_value: bool = False) -> str:
    """``pattern.sub(_redact_values, text)``, except that a match that is prose is skipped and the
    search goes on from the next character, as a failed lookahead would."""
    out: list[str] = []
    last = 0
    pos = 0
    while pos <= len(text):
        match = pattern.search(text, pos)
        if match is None:
            break
        if _is_prose(match, always_check_value):
            pos = match.start() + 1
            continue
        out.append(text[last : match.start()])
        out.append(_redact_values(match))
        last = match.end()
        pos = max(last, match.start() + 1)
    out.append(text[last:])
    return "".join(out)


def _replace_token(match: re.Match[str]) -> str:
    """A format match becomes ``[REDACTED]``; a ``keep`` group (the URL before a password, the
    ``AccountKey=`` label) stays in front of it."""
    keep = match.group("keep") if "keep" in match.re.groupindex else None
    return (keep or "") + REDACTED


def _redact_once(text: str) -> str:
    for token in TOKEN_PASSES:
        text = token.sub(_replace_token, text)
    for label in LABEL_PASSES:
        text = _label_pass(label, text)
    return _label_pass(PLURAL_PASS, text, always_check_value=True)


def _redact_unfiltered(text: str) -> str:
    """All passes, repeated until nothing changes (bounded), without the pre-filter."""
    text = strip_controls(text)
    for _ in range(6):
        redacted = _redact_once(text)
        if redacted == text:
            return text
        text = redacted
    return text


def redact(text: str) -> str:
    """Replace every credential in ``text`` by ``[REDACTED]``, keeping labels, delimiters and quotes.

    Total and idempotent: ``redact(redact(x)) == redact(x)`` (the passes are repeated until they
    change nothing, and ``[REDACTED]`` is never a value).

    Control characters, terminal escape sequences and bidirectional overrides are removed first
    (:func:`domain.text.strip_controls`), so the one gate every stored or shown text passes also keeps
    them out of the store, the rendered block and the terminal.
    """
    text = strip_controls(text)
    if text.isascii():
        if not MAY_NEED_REDACTION_ASCII.search(text.lower()):
            return text
    elif not MAY_NEED_REDACTION.search(text):
        return text
    return _redact_unfiltered(text)


#: A long text is cut (at a whitespace) this far beyond the excerpt it is shown or stored as, before
#: it is redacted: redaction then costs the same for a 50 MB text as for a short one, and no
#: credential that reaches into the excerpt is split.
_CUT_MARGIN: Final = 4096


def _stable_cut(excerpt: str, limit: int) -> str:
    """Cut and redact again until the text is a fixed point of both: cutting a text can turn a
    harmless tail (``password reset``) into something that looks like a value (``password res``)."""
    for _ in range(6):
        again = redact(excerpt)
        if again == excerpt:
            return excerpt
        excerpt = truncate(again, limit)
    # Not reached in practice; never hand back something that still redacts differently.
    return truncate(REDACTED, limit) if redact(excerpt) != excerpt else excerpt


def stored_text(text: str, limit: int = 260) -> str:
    """The text a memory is stored with: redacted and cut to ``limit`` code points, stable under
    both (so normalising a stored memory again changes nothing)."""
    return _stable_cut(truncate(redact(cut_at_whitespace(text, limit + _CUT_MARGIN)), limit), limit)


#: Texts up to this length have their previews remembered (:func:`_preview_memo`).
_PREVIEW_MEMO_CHARS: Final = 2048


def preview(text: str, limit: int = 120) -> str:
    """A redacted, whitespace-collapsed excerpt of at most ``limit`` code points.

    The excerpt is itself a fixed point of :func:`redact`: cutting a text can turn a harmless tail
    (``password reset``) into something that looks like a value (``password res``), so the cut is
    redacted again until it is stable.
    """
    if len(text) <= _PREVIEW_MEMO_CHARS:
        return _preview_memo(text, limit)
    return _preview(text, limit)


# A memo over plain strings: a pure function of its arguments, so it may serve every caller of the
# process (the core keeps no other state between calls, docs/decisions.md#d14).
@lru_cache(maxsize=16384)
def _preview_memo(text: str, limit: int) -> str:
    """:func:`_preview`, remembered for short texts: every render previews each block entry's text
    again for its evidence (docs/performance.md, "Simulation"). A pure function of its arguments."""
    return _preview(text, limit)


def _preview(text: str, limit: int) -> str:
    limit = max(0, limit)
    text = cut_at_whitespace(text, limit + _CUT_MARGIN)
    return _stable_cut(truncate(collapse_whitespace(redact(text)), limit), limit)
