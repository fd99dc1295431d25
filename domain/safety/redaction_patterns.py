"""What a credential looks like: the patterns of the redaction passes (docs/decisions.md#d4).

* The **label passes** (:data:`LABEL_PASSES`, then :data:`PLURAL_PASS`), in the reference's order: a
  label, a delimiter and a value slot (:func:`_value`), whose groups :data:`VALUE_GROUPS` name what
  is replaced. :data:`STOP_WORDS` are the words that make a bare-space or ``is`` value prose.
* The **pre-filter** (:data:`MAY_NEED_REDACTION`, :data:`MAY_NEED_REDACTION_ASCII`): a text that
  matches neither cannot be changed by a label pass or a format pass
  (:mod:`domain.safety.format_passes`).

How the passes are applied is :mod:`domain.safety.redaction`. Every pattern is compiled on first use.
"""

from __future__ import annotations

import re
from typing import Final

from domain.jsregex import (
    JS_BOUNDARY_AFTER_WORD,
    JS_BOUNDARY_BEFORE_WORD,
    JS_NOT_SPACE,
    JS_SPACE,
    LINE_TERMINATORS,
    WORD_CHAR,
    ascii_only,
)
from domain.safety.format_passes import FORMAT_TRIGGERS
from domain.text import WS, lazy_compile

__all__ = [
    "EXPLICIT_DELIM_CHARS",
    "LABEL_PASSES",
    "LEADING_WORD",
    "MAY_NEED_REDACTION",
    "MAY_NEED_REDACTION_ASCII",
    "PLURAL_PASS",
    "STOP_WORDS",
    "VALUE_GROUPS",
]

_I: Final = re.IGNORECASE
_S: Final = JS_SPACE
_NOT_S: Final = JS_NOT_SPACE

# ---------------------------------------------------------------------------------------------
# Label passes
# ---------------------------------------------------------------------------------------------

_QUOTE: Final = "[`'\"]"
#: Characters that end an unquoted value: backtick, quotes, commas (ASCII and full-width), JS
#: whitespace and ``[``.
_VALUE_END: Final = f"`'\",，“‘«{WS}\\["
#: A value may hold ``[`` (``password: [hunter2]``) but never starts with the redaction marker, so
#: ``[REDACTED]`` is not redacted again.
_SECRET_VALUE: Final = f"(?!\\[REDACTED\\])(?-i:[^{_VALUE_END[:-2]}])+"
#: Inside quotes a value may contain spaces; it runs to the matching closing quote on the same line.
_QUOTED_BODY: Final = ascii_only(f"[^{LINE_TERMINATORS}\\[]")
#: A closing quote ends the text or is followed by whitespace or punctuation; otherwise the "phrase"
#: would be a stretch between two unrelated quotes, and the value is taken unquoted instead.
_AFTER_CLOSING_QUOTE: Final = f"(?:\\Z|(?=(?-i:[{WS},，.;:!?)\\]}}>`'\"。、）])))"

#: Words that follow a credential label in ordinary prose. After a bare space (``Password sushi``)
#: or ``is`` (``the password is hunter2``) such a word is not taken as the value, so that
#: ``password reset`` or ``the password is required`` stay readable. A delimiter such as ``:`` or
#: ``=`` always redacts, whatever follows. (Checked in Python after the match rather than as a
#: lookahead: a 300-word alternation repeated in every label pattern is slow to compile.)
_STOP_WORD_LINES: Final = (
    # function words
    "a an the and or but nor not no to for of in on at by with without from into onto via as if then ",
    "than that this these those it its which who whom whose what when where while after before until ",
    "so per is are was were be been being has have had will would should must can could may might ",
    "shall does do did also only just never always still again here there all any each every some ",
    "your my our their his her you we they he she i me us them ",
    # words that describe a credential rather than being one
    "reset resets resetting change changes changed changing update updates updated updating rotation ",
    "rotations rotate rotated rotates expiry expires expired expiration policy policies manager ",
    "managers field fields form forms input inputs prompt prompts flow flows hash hashes hashed ",
    "hashing salt salted encrypted encryption storage stored store stores protected protection ",
    "required requirement requirements strength length complexity rule rules recovery reminder ",
    "reminders login logins authentication validation validator check checks checked checking ",
    "verification screen page dialog entry entries management generator generation handling support ",
    "supported feature features based too incorrect invalid wrong missing empty set unset optional ",
    "provided needed sent protected changer code codes number numbers less history attempts attempt ",
    "file files config configuration env environment variable variables value values sign signing ",
    "key keys token tokens secret secrets credential credentials auth bearer header headers scheme ",
    "type types format formats used using use",
    "out safe shared known public private hidden visible available ready done ok fine good bad correct ",
    "right same different unknown new old none null nil unlimited",
)
STOP_WORDS: Final = frozenset(w for line in _STOP_WORD_LINES for w in line.split())
LEADING_WORD: Final = lazy_compile(f"{WORD_CHAR}+")

#: Explicit delimiters (the reference's ``是 = : ：`` plus the topic particles ``は 는 은``).
_DELIMS: Final = "是=:：は는은"
#: Any of these between a label and its value makes the delimiter explicit (no stop-word check).
EXPLICIT_DELIM_CHARS: Final = frozenset(_DELIMS + "推->→⇒–—")
#: ``=`` is a delimiter unless it starts ``=>`` (then the arrow is, and ``>`` is never a value).
_DELIM: Final = f"(?:(?-i:[{_DELIMS.replace('=', '')}])|=(?!>))"
#: Arrows and a dash between spaces also introduce a value (``password -> x``, ``token – x``).
_ARROW: Final = f"(?:->|=>|(?-i:[→⇒])|{_S}(?-i:[-–—]){_S})"
_ANY_DELIM: Final = f"(?:{_ARROW}|{_DELIM})"
_HARD_DELIM: Final = f"{_S}*{_ANY_DELIM}{_S}*"
#: The sensitive-label passes also accept the reference's odd ``推``.
_HARD_DELIM_SENSITIVE: Final = f"{_S}*(?:{_ARROW}|推|{_DELIM}){_S}*"
#: ``is`` as a delimiter (``password is X``, ``password is: X``); the value must not be a stop word.
_IS_DELIM: Final = f"{_S}+(?:is|was|equals)(?:{_S}*(?-i:[:：=]){_S}*|{_S}+)"
#: A bare run of whitespace (``Password sushi``); the value must not be a stop word.
_BARE_DELIM: Final = f"{_S}+(?!{_ANY_DELIM}|(?-i:[-–—]){_S})"
_SOFT_DELIM: Final = f"(?:{_IS_DELIM}|{_BARE_DELIM})"


def _value(tag: str) -> str:
    """A value slot: a quoted phrase up to its closing quote, or an optionally quoted unquoted run.

    The value itself is captured in group ``qv<tag>`` or ``v<tag>``; everything else (label,
    delimiter, quotes) is kept by the replacement.
    """
    quoted = (
        f"(?P<q{tag}>{_QUOTE})"
        f"(?P<qv{tag}>(?!\\[)(?:\\[REDACTED\\]|(?!(?P=q{tag})){_QUOTED_BODY}){{1,200}})"
        f"(?=(?P=q{tag}){_AFTER_CLOSING_QUOTE})"
    )
    # typographic quotes open and close with different characters: “…”, ‘…’, «…»
    curly = f"(?-i:[“‘«])(?P<cv{tag}>(?-i:[^”’»\\n\\r\\u2028\\u2029\\[]){{1,200}})(?-i:[”’»])"
    return f"(?:{quoted}|{curly}|{_QUOTE}?(?P<v{tag}>{_SECRET_VALUE}))"


_PASSWORD_LABELS: Final = (
    "password|passwd|passphrase|passcode|pwd|密碼|密码|パスワード|비밀번호|contraseña|mot de passe|passwort"
)
_USERNAME_LABELS: Final = "username|user name|用戶名|用户名|ユーザー名|사용자명|usuario|utilisateur|benutzer"
_SENSITIVE_LABELS: Final = (
    f"(?:api|auth|private|secret|access)(?:[_-]|{_S})?key|token|bearer|secret|credential|auth"
)
_PIN_INFIX: Final = f"(?:{_S}+(?:code|number)|{_S}*(?-i:码|碼|번호|番号|コード))?"
_PIN_ANY_CASE: Final = f"{JS_BOUNDARY_BEFORE_WORD}PIN{_PIN_INFIX}{JS_BOUNDARY_AFTER_WORD}"
_PIN_UPPER: Final = f"{JS_BOUNDARY_BEFORE_WORD}(?-i:PIN){_PIN_INFIX}{JS_BOUNDARY_AFTER_WORD}"
#: A lower- or mixed-case ``pin`` before a bare space is usually the verb (``Pin the version``); it
#: only counts when the value is all digits (``pin 1234``).
_DIGITS_VALUE: Final = f"(?={_QUOTE}?[0-9]+(?:(?-i:[{_VALUE_END}])|\\Z))"

_PIN_PREFIX: Final = (
    f"(?:{_PIN_ANY_CASE}(?:{_HARD_DELIM}|{_IS_DELIM})"
    f"|{_PIN_UPPER}{_BARE_DELIM}"
    f"|{_PIN_ANY_CASE}{_S}+(?!{_DELIM}){_DIGITS_VALUE})"
)
#: A quoted label (``"client_secret": "x"``, ``'api_key': 'x'``) closes its quote before the delimiter.
_LABEL_QUOTE: Final = f"{_QUOTE}?"
#: Words between a password label and ``is`` (``the password for the db is X``): a preposition and
#: at most four short words.
_QUALIFIER: Final = (
    f"(?:{_S}+(?:for|of|on|to|in|at){_S}+(?:{_NOT_S}{{1,40}}{_S}+){{0,3}}?{_NOT_S}{{1,40}}"
    # a clause between commas: ``the password, if you need it, is X``
    f"|{_S}*,(?:{_S}+{_NOT_S}{{1,20}}){{1,6}}?{_S}*,)"
)
#: After a qualifier, a colon also introduces the value (``the token for the metrics API: X``).
_QUALIFIED: Final = f"{_QUALIFIER}(?:{_IS_DELIM}|{_S}*(?-i:[:：]){_S}*)"
_PASSWORD_PREFIX: Final = f"(?:{_PASSWORD_LABELS})(?:{_QUALIFIED}|{_LABEL_QUOTE}{_HARD_DELIM}|{_SOFT_DELIM})"
_USERNAME_PREFIX: Final = f"(?:{_USERNAME_LABELS})(?:{_HARD_DELIM}|{_SOFT_DELIM})"
_BEARER_PREFIX: Final = f"Bearer(?:{_S}+token)?(?:{_HARD_DELIM}|{_SOFT_DELIM})(?!token{_S}*(?-i:[:=：]))"
_SENSITIVE_PREFIX: Final = (
    f"(?:{_SENSITIVE_LABELS})(?:{_LABEL_QUOTE}{_HARD_DELIM_SENSITIVE}|{_QUALIFIED}|{_IS_DELIM})"
)
#: Plural labels (``secrets: X``) with an explicit delimiter. A count is prose (``tokens: 5``), and
#: so is a stop word after the delimiter (``secrets: none``), so this pass always checks the value.
_PLURAL_LABELS: Final = (
    f"(?:(?:api|auth|private|secret|access)(?:[_-]|{_S})?keys|tokens|secrets|credentials|passwords)"
)
_PLURAL_PREFIX: Final = f"{_PLURAL_LABELS}{_LABEL_QUOTE}{_HARD_DELIM}(?![0-9][0-9,._]*(?:[{_VALUE_END}]|\\Z))"

#: The label passes, in the reference's order.
LABEL_PASSES: Final[tuple[re.Pattern[str], ...]] = tuple(
    lazy_compile(p, _I)
    for p in (
        _PIN_PREFIX + _value("1"),
        _USERNAME_PREFIX + _value("1") + f"(?:，|,){_S}*" + _PASSWORD_PREFIX + _value("2"),
        _PASSWORD_PREFIX + _value("1"),
        _BEARER_PREFIX + _value("1"),
        _SENSITIVE_PREFIX + _value("1"),
    )
)
PLURAL_PASS: Final = lazy_compile(_PLURAL_PREFIX + _value("1"), _I)
VALUE_GROUPS: Final = ("qv1", "cv1", "v1", "qv2", "cv2", "v2")

# ---------------------------------------------------------------------------------------------
# The pre-filter
# ---------------------------------------------------------------------------------------------

#: A cheap pre-filter: a text that contains none of these (in any case) cannot be changed by any pass.
_TRIGGERS: Final = "|".join(
    (
        _PASSWORD_LABELS,
        "pin",
        "bearer",
        "key",
        "token",
        "secret",
        "credential",
        "auth",
        "-----begin",
        "eyj",
        "github_pat_",
        "gh[pousr]_",
        "sk-",
        "akia",
        "asia",
        "xox",
        "aiza",
        "gocspx",
        "hv[sbr]\\.",
        "://[^@]{0,600}@",
        FORMAT_TRIGGERS,
    )
)
MAY_NEED_REDACTION: Final = lazy_compile(_TRIGGERS, _I)
#: The same for ASCII text once lower-cased, without the (slower) case-insensitive search, and
#: factored by first letter: one branch is tried per position instead of every trigger (this runs
#: on every stored memory at every session start).
MAY_NEED_REDACTION_ASCII: Final = lazy_compile(
    "a(?:uth|kia|sia|iza)|bearer|credential|eyj|g(?:ithub_pat_|h[pousr]_|ocspx)|hv[sbr]\\.|key"
    "|mot de passe|p(?:ass(?:word|wd|phrase|wort|code)|wd|in)|s(?:ecret|k-)|token|xox|-----begin"
    f"|://[^@]{{0,600}}@|{FORMAT_TRIGGERS}"
)
