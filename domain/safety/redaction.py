"""Credential redaction: :func:`redact`, and the excerpts built on it (:func:`preview`,
:func:`stored_text`).

Each round (repeated until nothing changes, docs/decisions.md#redaction): the credential *formats*
workmem writes itself are replaced wherever they appear (:mod:`domain.safety.format_passes`); then
the secrets the maintained rule corpus finds (:mod:`domain.safety.rule_corpus`,
docs/decisions.md#credential-rule-corpus); then the reference's *label* passes run in their order
(PIN, username + password pair, password, Bearer, sensitive labels, plurals): a label, a delimiter and
the value after it; the value becomes ``[REDACTED]`` and the label, the delimiter and any quotes are
kept (:mod:`domain.safety.redaction_patterns`); last the prose passes (CJK labels, long random values
after a label, tokens without a label: :mod:`domain.safety.prose_rules`). Each stage runs only on a
text that holds one of its triggers.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from domain.bounds import cut_at_whitespace
from domain.safety.format_passes import TOKEN_PASSES
from domain.safety.prose_rules import (
    CJK_LABEL_PASS,
    CJK_LABEL_TRIGGER,
    ENTROPY_LABEL_PASS,
    OPAQUE_TOKEN,
    is_opaque_token,
    looks_random,
    may_hold_opaque_token,
    may_hold_random_value,
    replace_prefixed_tokens,
    replace_values,
)
from domain.safety.redaction_patterns import (
    EXPLICIT_DELIM_CHARS,
    LABEL_PASSES,
    LEADING_WORD,
    MAY_NEED_REDACTION,
    MAY_NEED_REDACTION_ASCII,
    PLURAL_PASS,
    STOP_WORDS,
    VALUE_GROUPS,
)
from domain.safety.rule_corpus import has_active_rules, secret_spans
from domain.text import JS_WHITESPACE, collapse_whitespace, strip_controls, truncate

__all__ = ["REDACTED", "preview", "redact", "stored_text"]

#: What a redacted value becomes. It starts with ``[``, which no value may start with, so it is never
#: redacted again.
REDACTED: Final = "[REDACTED]"
#: What may follow a stop word that is a whole value (``the password is required.``).
_TRAILING_PUNCTUATION: Final = frozenset(".,;:!?)")
#: A value that ends with one of these, or is followed by one, is the label of the next value.
_LABEL_DELIMITERS: Final = frozenset("=:：＝")


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
        # the whole value is the word (``required.``), not a value that starts with one
        # (``correct-horse-battery-staple``)
        whole = word is not None and _is_punctuation(text[word.end() : end])
        if word is not None and whole and word.group(0).lower() in STOP_WORDS:
            return True
    return False


def _is_punctuation(rest: str) -> bool:
    return all(ch in _TRAILING_PUNCTUATION for ch in rest)


def _names_the_next_value(match: re.Match[str]) -> bool:
    """True when an unquoted value is itself a label with its own delimiter after it (``the deploy
    credential is aws_secret_access_key = X``): the value is X, found when the search goes on."""
    text = match.string
    for tag in ("2", "1"):
        group = f"v{tag}"
        if group in match.re.groupindex and match.start(group) >= 0:
            end = match.end(group)
            if text[end - 1] in _LABEL_DELIMITERS:
                return True
            rest = text[end : end + 8].lstrip(JS_WHITESPACE)
            return rest[:1] in _LABEL_DELIMITERS and not rest.startswith("=>")
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
        if _is_prose(match, always_check_value) or _names_the_next_value(match):
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


#: What ends a value: a rule's secret that stops inside a run of other characters (``Q0123456789/``
#: of ``'Q0123456789/.Z'``) is taken to the end of that run, so no tail of the value is left behind.
_VALUE_END: Final = frozenset(" \t\r\n'\"`,;)]}>")


def _redact_corpus(text: str) -> str:
    """The secrets the rule corpus finds (docs/decisions.md#credential-rule-corpus), replaced, each
    to the end of the value it stands in."""
    spans = secret_spans(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    size = len(text)
    for start, end in spans:
        while end < size and text[end] not in _VALUE_END:
            end += 1
        if end <= last:  # inside a value already replaced
            continue
        if start > last or not out:
            out += (text[last:start], REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


def _may_need_hand_passes(text: str) -> bool:
    """Whether a format or label pass of :mod:`domain.safety.redaction_patterns` could change ``text``."""
    if text.isascii():
        return MAY_NEED_REDACTION_ASCII.search(text.lower()) is not None
    return MAY_NEED_REDACTION.search(text) is not None


def _redact_once(text: str) -> str:
    hand = _may_need_hand_passes(text)
    if hand:
        lowered = text.lower()
        for triggers, token in TOKEN_PASSES:
            if any(t in lowered for t in triggers):
                text = token.sub(_replace_token, text)
    text = _redact_corpus(text)
    if hand:
        for label in LABEL_PASSES:
            text = _label_pass(label, text)
        text = _label_pass(PLURAL_PASS, text, always_check_value=True)
    cjk = not text.isascii() and CJK_LABEL_TRIGGER.search(text) is not None
    if cjk:
        text = replace_values(CJK_LABEL_PASS, text)
    if (hand or cjk) and may_hold_random_value(text):
        text = replace_values(ENTROPY_LABEL_PASS, text, looks_random)
    if may_hold_opaque_token(text):
        text = replace_prefixed_tokens(replace_values(OPAQUE_TOKEN, text, is_opaque_token))
    return text


def redact_unfiltered(text: str) -> str:
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
    if not (
        has_active_rules(text)
        or _may_need_hand_passes(text)
        or may_hold_opaque_token(text)
        or (not text.isascii() and CJK_LABEL_TRIGGER.search(text) is not None)
    ):
        return text
    return redact_unfiltered(text)


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
    both (so normalising a stored memory again changes nothing), and without the whitespace a cut
    can leave at its end (a file of ``.workmem/`` could not give it back, docs/decisions.md#d17)."""
    return _stable_cut(truncate(redact(cut_at_whitespace(text, limit + _CUT_MARGIN)), limit), limit).rstrip()


#: Texts up to this length have their previews remembered (:func:`preview_memo`).
_PREVIEW_MEMO_CHARS: Final = 2048


def preview(text: str, limit: int = 120) -> str:
    """A redacted, whitespace-collapsed excerpt of at most ``limit`` code points.

    The excerpt is itself a fixed point of :func:`redact`: cutting a text can turn a harmless tail
    (``password reset``) into something that looks like a value (``password res``), so the cut is
    redacted again until it is stable.
    """
    if len(text) <= _PREVIEW_MEMO_CHARS:
        return preview_memo(text, limit)
    return _preview(text, limit)


# A memo over plain strings: a pure function of its arguments, so it may serve every caller of the
# process (the core keeps no other state between calls, docs/decisions.md#d14).
@lru_cache(maxsize=16384)
def preview_memo(text: str, limit: int) -> str:
    """:func:`_preview`, remembered for short texts: every render previews each block entry's text
    again for its evidence (docs/performance.md, "Simulation"). A pure function of its arguments."""
    return _preview(text, limit)


def _preview(text: str, limit: int) -> str:
    limit = max(0, limit)
    text = cut_at_whitespace(text, limit + _CUT_MARGIN)
    return _stable_cut(truncate(collapse_whitespace(redact(text)), limit), limit)
