"""The safety gate: credential redaction, prompt-injection defence and the memory quality gate.

Every text that can reach the journal, the store, session state, an evidence preview, a log line or a
rendered prompt goes through :func:`redact`; every candidate memory goes through :func:`gate_memory`
(docs/decisions.md#d4). The three parts:

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Final

import msgspec
from returns.result import Failure, Result, Success

from domain.bounds import MEMORY_INPUT_CHARS, cut_at_whitespace
from domain.text import (
    JS_WHITESPACE,
    WS,
    collapse_whitespace,
    js_trim,
    lazy_compile,
    strip_controls,
    truncate,
)

__all__ = [
    "HARD_QUALITY_REASONS",
    "QUALITY_REASON_ORDER",
    "REDACTED",
    "Accepted",
    "QualityAssessment",
    "Rejected",
    "assess_memory_quality",
    "gate_memory",
    "has_future_rule",
    "is_architecture_like_decision",
    "is_decision_quality_violation",
    "is_feedback_quality_violation",
    "is_hard_quality_reason",
    "is_implementation_status_decision",
    "is_progress_snapshot_violation",
    "is_prompt_injection",
    "preview",
    "redact",
]

# ---------------------------------------------------------------------------------------------
# The JavaScript regex dialect
# ---------------------------------------------------------------------------------------------

# Character classes are wrapped in ``(?-i:...)``: JavaScript does not case-fold ``\w`` or ``\s``
# (Python would let ``\u212a`` KELVIN SIGN into ``[A-Za-z]``), and a case-folded class that holds
# characters above U+00FF is very slow to compile.
_WORD: Final = "A-Za-z0-9_"
#: JavaScript ``\w``: an ASCII word character.
_JS_WORD: Final = f"(?-i:[{_WORD}])"
#: JavaScript ``\b``: a boundary between an ASCII word character and anything else.
_JS_BOUNDARY: Final = f"(?-i:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
#: ``\b`` where the pattern itself supplies the word character on the inside (``\b(?:word|...)``
#: at the start, ``(...)\b`` at the end): only the outside needs checking, which is much faster.
_JS_BOUNDARY_BEFORE_WORD: Final = f"(?-i:(?<![{_WORD}]))"
_JS_BOUNDARY_AFTER_WORD: Final = f"(?-i:(?![{_WORD}]))"
#: JavaScript ``.``: any character except the four line terminators.
_JS_DOT: Final = "(?-i:[^\\n\\r\\u2028\\u2029])"
#: JavaScript ``\s`` and ``\S``.
_S: Final = f"(?-i:[{WS}])"
_NOT_S: Final = f"(?-i:[^{WS}])"


#: Every pattern compiled by :func:`_js`, with its source and flags (the tests check the fast edge
#: boundaries against the general translation).
_JS_PATTERNS: Final[list[tuple[str, int, re.Pattern[str]]]] = []


def _js(source: str, flags: int = 0) -> re.Pattern[str]:
    """Compile a JavaScript regex source (no ``m``/``s`` flags) with JavaScript semantics.

    ``\\b``, ``\\w`` and ``\\d`` become ASCII-only, ``\\s``/``\\S`` use the JavaScript whitespace
    set, ``.`` excludes the JavaScript line terminators and ``$`` means the end of the input. Case
    folding (``re.I``) stays Unicode-aware, so ``CONTRASEÑA`` still matches ``contraseña``. A ``\\b``
    that opens or closes the whole source must sit next to a word character of the pattern.
    """
    pattern = lazy_compile(_translate(source, edge_boundaries=True), flags)
    _JS_PATTERNS.append((source, flags, pattern))
    return pattern


def _translate(source: str, *, edge_boundaries: bool) -> str:
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            nxt = source[i + 1]
            i += 2
            if nxt == "b" and not in_class:
                if edge_boundaries and i == 2:
                    out.append(_JS_BOUNDARY_BEFORE_WORD)
                elif edge_boundaries and i == len(source):
                    out.append(_JS_BOUNDARY_AFTER_WORD)
                else:
                    out.append(_JS_BOUNDARY)
            elif nxt == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif nxt == "w":
                out.append(_WORD if in_class else _JS_WORD)
            elif nxt == "s":
                out.append(WS if in_class else _S)
            elif nxt == "S" and not in_class:
                out.append(_NOT_S)
            else:
                out.append("\\" + nxt)
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            # A leading ``^`` negates the class.
            if i < len(source) and source[i] == "^":
                out.append("^")
                i += 1
            continue
        elif ch == ".":
            out.append(_JS_DOT)
            i += 1
            continue
        elif ch == "$":
            out.append("\\Z")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_I: Final = re.IGNORECASE

# ---------------------------------------------------------------------------------------------
# Redaction
# ---------------------------------------------------------------------------------------------

#: What a redacted value becomes. It starts with ``[``, which no value may start with, so it is never
#: redacted again.
REDACTED: Final = "[REDACTED]"

_QUOTE: Final = "[`'\"]"
#: Characters that end an unquoted value: backtick, quotes, commas (ASCII and full-width), JS
#: whitespace and ``[``.
_VALUE_END: Final = f"`'\",，“‘«{WS}\\["
#: A value may hold ``[`` (``password: [hunter2]``) but never starts with the redaction marker, so
#: ``[REDACTED]`` is not redacted again.
_SECRET_VALUE: Final = f"(?!\\[REDACTED\\])(?-i:[^{_VALUE_END[:-2]}])+"
#: Inside quotes a value may contain spaces; it runs to the matching closing quote on the same line.
_QUOTED_BODY: Final = "(?-i:[^\\n\\r\\u2028\\u2029\\[])"
#: A closing quote ends the text or is followed by whitespace or punctuation; otherwise the "phrase"
#: would be a stretch between two unrelated quotes, and the value is taken unquoted instead.
_AFTER_CLOSING_QUOTE: Final = f"(?:\\Z|(?=(?-i:[{WS},，.;:!?)\\]}}>`'\"。、）])))"

_ASCII_BEFORE: Final = f"(?-i:(?<![{_WORD}]))"
_ASCII_AFTER: Final = f"(?-i:(?![{_WORD}]))"

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
_STOP_WORDS: Final = frozenset(w for line in _STOP_WORD_LINES for w in line.split())
_LEADING_WORD: Final = lazy_compile(f"[{_WORD}]+")

#: Explicit delimiters (the reference's ``是 = : ：`` plus the topic particles ``は 는 은``).
_DELIMS: Final = "是=:：は는은"
#: Any of these between a label and its value makes the delimiter explicit (no stop-word check).
_EXPLICIT_DELIM_CHARS: Final = frozenset(_DELIMS + "推->→⇒–—")
#: ``=`` is a delimiter unless it starts ``=>`` (then the arrow is, and ``>`` is never a value).
_DELIM: Final = f"(?:(?-i:[{_DELIMS.replace('=', '')}])|=(?!>))"
#: Arrows and a dash between spaces also introduce a value (``password -> x``, ``token – x``).
_ARROW: Final = f"(?:->|=>|(?-i:[→⇒])|{_S}(?-i:[-–—]){_S})"
_ANY_DELIM: Final = f"(?:{_ARROW}|{_DELIM})"
_HARD_DELIM: Final = f"{_S}*{_ANY_DELIM}{_S}*"
#: The sensitive-label passes also accept the reference's odd ``推``.
_HARD_DELIM_SENSITIVE: Final = f"{_S}*(?:{_ARROW}|推|{_DELIM}){_S}*"
#: ``is`` as a delimiter (``password is X``, ``password is: X``); the value must not be a stop word.
_IS_DELIM: Final = f"{_S}+is(?:{_S}*(?-i:[:：=]){_S}*|{_S}+)"
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
    "password|passwd|passphrase|pwd|密碼|密码|パスワード|비밀번호|contraseña|mot de passe|passwort"
)
_USERNAME_LABELS: Final = "username|user name|用戶名|用户名|ユーザー名|사용자명|usuario|utilisateur|benutzer"
_SENSITIVE_LABELS: Final = (
    f"(?:api|auth|private|secret|access)(?:[_-]|{_S})?key|token|bearer|secret|credential|auth"
)
_PIN_INFIX: Final = f"(?:{_S}+(?:code|number))?"
_PIN_ANY_CASE: Final = f"{_ASCII_BEFORE}PIN{_PIN_INFIX}{_ASCII_AFTER}"
_PIN_UPPER: Final = f"{_ASCII_BEFORE}(?-i:PIN){_PIN_INFIX}{_ASCII_AFTER}"
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
_QUALIFIER: Final = f"{_S}+(?:for|of|on|to|in|at){_S}+(?:{_NOT_S}{{1,40}}{_S}+){{0,3}}?{_NOT_S}{{1,40}}"
_PASSWORD_PREFIX: Final = (
    f"(?:{_PASSWORD_LABELS})(?:{_QUALIFIER}{_IS_DELIM}|{_LABEL_QUOTE}{_HARD_DELIM}|{_SOFT_DELIM})"
)
_USERNAME_PREFIX: Final = f"(?:{_USERNAME_LABELS})(?:{_HARD_DELIM}|{_SOFT_DELIM})"
_BEARER_PREFIX: Final = f"Bearer(?:{_S}+token)?(?:{_HARD_DELIM}|{_SOFT_DELIM})(?!token{_S}*(?-i:[:=：]))"
_SENSITIVE_PREFIX: Final = (
    f"(?:{_SENSITIVE_LABELS})(?:{_LABEL_QUOTE}{_HARD_DELIM_SENSITIVE}|{_QUALIFIER}{_IS_DELIM}|{_IS_DELIM})"
)
#: Plural labels (``secrets: X``) with an explicit delimiter. A count is prose (``tokens: 5``), and
#: so is a stop word after the delimiter (``secrets: none``), so this pass always checks the value.
_PLURAL_LABELS: Final = (
    f"(?:(?:api|auth|private|secret|access)(?:[_-]|{_S})?keys|tokens|secrets|credentials|passwords)"
)
_PLURAL_PREFIX: Final = f"{_PLURAL_LABELS}{_LABEL_QUOTE}{_HARD_DELIM}(?![0-9][0-9,._]*(?:[{_VALUE_END}]|\\Z))"

#: The label passes, in the reference's order.
_LABEL_PASSES: Final[tuple[re.Pattern[str], ...]] = tuple(
    lazy_compile(p, _I)
    for p in (
        _PIN_PREFIX + _value("1"),
        _USERNAME_PREFIX + _value("1") + f"(?:，|,){_S}*" + _PASSWORD_PREFIX + _value("2"),
        _PASSWORD_PREFIX + _value("1"),
        _BEARER_PREFIX + _value("1"),
        _SENSITIVE_PREFIX + _value("1"),
    )
)
_PLURAL_PASS: Final = lazy_compile(_PLURAL_PREFIX + _value("1"), _I)
_VALUE_GROUPS: Final = ("qv1", "cv1", "v1", "qv2", "cv2", "v2")

_TOKEN_BEFORE: Final = "(?<![A-Za-z0-9])"
#: Well-known credential formats, redacted whole wherever they appear (no label needed).
_TOKEN_PASSES: Final[tuple[re.Pattern[str], ...]] = (
    # PEM private-key blocks, through the END line; an unterminated block runs over its base64 body.
    lazy_compile(
        "-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
        f"(?:(?:(?!-----BEGIN).)*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=:,{WS}-]*)",
        re.DOTALL,
    ),
    # JSON Web Tokens: header.payload.signature, both JSON parts base64url of "{".
    lazy_compile(f"{_TOKEN_BEFORE}eyJ[A-Za-z0-9_-]{{5,}}\\.eyJ[A-Za-z0-9_-]{{5,}}\\.[A-Za-z0-9_-]*"),
    # GitHub fine-grained and classic tokens.
    lazy_compile(f"{_TOKEN_BEFORE}github_pat_[A-Za-z0-9_]{{20,}}"),
    lazy_compile(f"{_TOKEN_BEFORE}gh[pousr]_[A-Za-z0-9]{{20,}}"),
    # OpenAI/Anthropic style secret keys: ``sk-proj-...`` / ``sk-ant-...`` / ``sk-svcacct-...``
    # whatever their characters; a bare ``sk-...`` only when long and holding a digit.
    lazy_compile(f"{_TOKEN_BEFORE}sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{{16,}}"),
    lazy_compile(f"{_TOKEN_BEFORE}sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{{20,}}"),
    # Stripe-style live/test keys.
    lazy_compile(f"{_TOKEN_BEFORE}[rs]k_(?:live|test)_[A-Za-z0-9]{{16,}}"),
    # AWS access key ids.
    lazy_compile(f"{_TOKEN_BEFORE}(?:AKIA|ASIA)[A-Z0-9]{{16,}}"),
    # Slack tokens.
    lazy_compile(f"{_TOKEN_BEFORE}xox[abprs]-[A-Za-z0-9-]{{10,}}"),
    # GitLab tokens (personal, deploy, runner, pipeline trigger, feed, OAuth application secrets).
    lazy_compile(f"{_TOKEN_BEFORE}gl(?:pat|dt|rt|ptt|ft|cbt|oas|soat|agent)-[A-Za-z0-9_-]{{20,}}"),
    # Slack incoming-webhook and workflow URLs: the path after the host is the secret.
    lazy_compile("(?P<keep>hooks\\.slack\\.com/)(?:services|workflows|triggers)/[A-Za-z0-9_/-]{10,}", re.I),
    # Google API keys and OAuth client secrets.
    lazy_compile(f"{_TOKEN_BEFORE}AIza[A-Za-z0-9_-]{{30,}}"),
    lazy_compile(f"{_TOKEN_BEFORE}GOCSPX-[A-Za-z0-9_-]{{20,}}"),
    # npm and PyPI tokens.
    lazy_compile(f"{_TOKEN_BEFORE}npm_[A-Za-z0-9]{{30,}}"),
    lazy_compile(f"{_TOKEN_BEFORE}pypi-[A-Za-z0-9_-]{{40,}}"),
    # SendGrid keys: SG.<id>.<secret>.
    lazy_compile(f"{_TOKEN_BEFORE}SG\\.[A-Za-z0-9_-]{{16,}}\\.[A-Za-z0-9_-]{{16,}}"),
    # Twilio API keys: SK and 32 hex digits.
    lazy_compile(f"{_TOKEN_BEFORE}SK[0-9a-fA-F]{{32}}(?![A-Za-z0-9])"),
    # HashiCorp Vault service, batch and recovery tokens.
    lazy_compile(f"{_TOKEN_BEFORE}hv[sbr]\\.[A-Za-z0-9_-]{{20,}}"),
    # DigitalOcean personal, OAuth and refresh tokens.
    lazy_compile(f"{_TOKEN_BEFORE}do[opr]_v1_[a-fA-F0-9]{{40,}}"),
    # Shopify access, custom-app, private-app tokens and shared secrets.
    lazy_compile(f"{_TOKEN_BEFORE}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32,}}"),
    # Azure storage account keys and shared access keys in connection strings.
    lazy_compile("(?P<keep>(?:AccountKey|SharedAccessKey)=)(?!\\[REDACTED\\])[A-Za-z0-9+/=]{16,}", re.I),
    # The password of a URL's user information (``scheme://user:password@host``); the user is kept.
    lazy_compile(
        f"(?P<keep>{_TOKEN_BEFORE}[A-Za-z][A-Za-z0-9+.-]{{0,30}}://[^{WS}:/@?#\\[]{{0,200}}:)"
        f"(?!\\[REDACTED\\])[^{WS}/@?#]{{1,300}}(?=@)"
    ),
)

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
        "[rs]k[-_]",
        "akia",
        "asia",
        "xox",
        "gl[a-z]{1,5}-",
        "hooks\\.slack",
        "aiza",
        "gocspx",
        "npm_",
        "pypi-",
        "sg\\.",
        "sk[0-9a-f]{32}",
        "hv[sbr]\\.",
        "do[opr]_v1",
        "shp[a-z]{2}_",
        "://[^@]{0,600}@",
    )
)
_MAY_NEED_REDACTION: Final = lazy_compile(_TRIGGERS, _I)
#: The same for ASCII text once lower-cased, without the (slower) case-insensitive search, and
#: factored by first letter: one branch is tried per position instead of every trigger (this runs
#: on every stored memory at every session start).
_MAY_NEED_REDACTION_ASCII: Final = lazy_compile(
    "a(?:uth|kia|sia|iza)|bearer|credential|do[opr]_v1|eyj|g(?:ithub_pat_|h[pousr]_|l[a-z]{1,5}-|ocspx)"
    "|h(?:ooks\\.slack|v[sbr]\\.)|key|mot de passe|npm_|p(?:ass(?:word|wd|phrase|wort)|wd|in|ypi-)|rk[-_]"
    "|s(?:ecret|k[-_]|k[0-9a-f]{32}|g\\.|hp[a-z]{2}_)|token|xox|-----begin|://[^@]{0,600}@"
)


def _redact_values(match: re.Match[str]) -> str:
    whole = match.group(0)
    base = match.start()
    spans = sorted(match.span(g) for g in _VALUE_GROUPS if g in match.re.groupindex and match.start(g) >= 0)
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
        explicit = lead.endswith(("`", "'", '"')) or lead.rstrip(JS_WHITESPACE)[-1:] in _EXPLICIT_DELIM_CHARS
        if explicit and not always_check_value:
            continue
        word = _LEADING_WORD.match(text, start, end)
        if word is not None and word.group(0).lower() in _STOP_WORDS:
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
    for token in _TOKEN_PASSES:
        text = token.sub(_replace_token, text)
    for label in _LABEL_PASSES:
        text = _label_pass(label, text)
    return _label_pass(_PLURAL_PASS, text, always_check_value=True)


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
        if not _MAY_NEED_REDACTION_ASCII.search(text.lower()):
            return text
    elif not _MAY_NEED_REDACTION.search(text):
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


@lru_cache(maxsize=16384)
def _preview_memo(text: str, limit: int) -> str:
    """:func:`_preview`, remembered for short texts: every render previews each block entry's text
    again for its evidence (docs/performance.md, "Simulation"). A pure function of its arguments."""
    return _preview(text, limit)


def _preview(text: str, limit: int) -> str:
    limit = max(0, limit)
    text = cut_at_whitespace(text, limit + _CUT_MARGIN)
    return _stable_cut(truncate(collapse_whitespace(redact(text)), limit), limit)


# ---------------------------------------------------------------------------------------------
# Prompt injection
# ---------------------------------------------------------------------------------------------

#: R1: an instruction-overriding phrase.
_INJECTION_R1: Final = _js(
    r"\b(ignore\s+all|ignore\s+previous|ignore\s+instructions?|overwrite\s+system|overwrite\s+rules"
    r"|forget\s+all|delete\s+root)\b",
    _I,
)
#: R2: an overriding verb and an instruction target anywhere in the text.
_INJECTION_R2A: Final = _js(r"\b(ignore|instruction|overwrite)\b", _I)
_INJECTION_R2B: Final = _js(r"\b(previous|all|rules|behavior|prompt|system)\b", _I)
#: R3: the common "disregard/forget the previous instructions" family.
_INJECTION_R3: Final = _js(
    r"\b(?:disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|system)"
    r"\s+(?:instructions?|prompts?|rules|messages?|context)\b",
    _I,
)


def is_prompt_injection(text: str) -> bool:
    """True when ``text`` reads like an attempt to override the agent's instructions.

    The reference's R1 (with ``instruction`` also matching ``instructions``), R2 (an overriding verb
    and an instruction target anywhere, deliberately broad: ``Ignore lint warnings for all generated
    code`` is rejected, because a memory is replayed into every future system prompt and a rejected
    memory can simply be rephrased), and R3 (``disregard previous instructions``).
    """
    return bool(
        _INJECTION_R1.search(text)
        or (_INJECTION_R2A.search(text) and _INJECTION_R2B.search(text))
        or _INJECTION_R3.search(text)
    )


# ---------------------------------------------------------------------------------------------
# Quality gate
# ---------------------------------------------------------------------------------------------

#: Every reason :func:`assess_memory_quality` can give, in the order it gives them.
QUALITY_REASON_ORDER: Final = (
    "empty",
    "progress_snapshot",
    "raw_error",
    "commit_or_ci_snapshot",
    "path_heavy",
    "temporary_status",
    "active_file_snapshot",
    "code_or_api_signature",
    "bad_feedback",
    "bad_decision",
)
#: Reasons that mark a memory as worthless whatever its type (the migration acts only on these).
HARD_QUALITY_REASONS: Final[frozenset[str]] = frozenset(
    {
        "empty",
        "progress_snapshot",
        "raw_error",
        "commit_or_ci_snapshot",
        "temporary_status",
        "active_file_snapshot",
        "code_or_api_signature",
        "path_heavy",
    }
)


def is_hard_quality_reason(reason: str) -> bool:
    return reason in HARD_QUALITY_REASONS


class QualityAssessment(msgspec.Struct, frozen=True):
    accepted: bool
    reasons: tuple[str, ...]


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


def _quality_checks(type_: str) -> tuple[tuple[str, Callable[[str], bool]], ...]:
    return (
        ("empty", lambda t: len(t) == 0),
        ("progress_snapshot", is_progress_snapshot_violation),
        ("raw_error", lambda t: _any(_RAW_ERROR, t)),
        ("commit_or_ci_snapshot", lambda t: _any(_COMMIT_OR_CI, t)),
        ("path_heavy", lambda t: sum(1 for _ in _PATH.finditer(t)) > 2),
        ("temporary_status", lambda t: _any(_TEMPORARY, t)),
        ("active_file_snapshot", lambda t: _ACTIVE_FILE.search(t) is not None),
        ("code_or_api_signature", lambda t: _any(_CODE_OR_API, t)),
        ("bad_feedback", lambda t: type_ == "feedback" and is_feedback_quality_violation(t)),
        ("bad_decision", lambda t: type_ == "decision" and is_decision_quality_violation(t)),
    )


def assess_memory_quality(type_: str, text: str) -> QualityAssessment:
    """The quality gate (``assessMemoryQuality``): every failed rule's reason, in the fixed order.

    ``text`` is trimmed first; ``type_`` is a memory type value and only decides ``bad_feedback`` and
    ``bad_decision`` (the soft reasons). Total: never raises.
    """
    trimmed = js_trim(text)
    reasons = tuple(reason for reason, failed in _quality_checks(type_) if failed(trimmed))
    return QualityAssessment(accepted=not reasons, reasons=reasons)


# ---------------------------------------------------------------------------------------------
# The gate every write path uses (docs/decisions.md#d4)
# ---------------------------------------------------------------------------------------------


class Accepted(msgspec.Struct, frozen=True):
    text: str
    reasons: tuple[str, ...]


class Rejected(msgspec.Struct, frozen=True):
    text: str
    reasons: tuple[str, ...]
    from_quality_gate: bool


#: The reference's short-reference allowlist without its ``admin pin`` branch
#: (docs/decisions.md#q-c3): a short ``reference`` memory that names scrypt parameters skips the
#: 20-character minimum.
_SHORT_REFERENCE: Final = _js(r"scrypt|n=\d+|r=\d+|p=\d+", _I)
_PARSER_MIN: Final = 12
_PARSER_MIN_TRIGGER: Final = 6
_GATE_MIN: Final = 20
_GATE_MIN_TRIGGER: Final = 6


def _content_length(text: str) -> int:
    """The length of what a memory says beyond its redacted secrets."""
    return len(js_trim(text.replace(REDACTED, "")))


def _too_short(type_: str, text: str, from_trigger: bool) -> bool:
    length = _content_length(text)
    if length < (_PARSER_MIN_TRIGGER if from_trigger else _PARSER_MIN):
        return True
    if type_ == "reference" and _SHORT_REFERENCE.search(text):
        return False
    return length < (_GATE_MIN_TRIGGER if from_trigger else _GATE_MIN)


def gate_memory(
    type_: str, text: str, *, source: str, from_trigger: bool = False
) -> Result[Accepted, Rejected]:
    """Decide whether a memory may be stored, and in what (redacted) form.

    In order: the text is trimmed and redacted; compaction candidates must be long enough
    (``too_short``: 12 and 20 code points, or 6 after a memory trigger; a short scrypt ``reference``
    is allowed) where the length counts what remains once the ``[REDACTED]`` markers are removed;
    an empty explicit or manual text is rejected (``empty``); prompt injection is rejected for every source
    (``prompt_injection``); compaction candidates then pass :func:`assess_memory_quality` on the
    redacted text, the same text the store's quality migration later assesses, and its reasons are
    returned with ``from_quality_gate=True``. Explicit and manual memories bypass only the length and
    quality rules. Never raises.
    """
    # bounded (a memory is stored with 260 characters), then trimmed again: removing control
    # characters can expose whitespace at either end
    redacted = js_trim(redact(js_trim(cut_at_whitespace(text, MEMORY_INPUT_CHARS))))
    compaction = source == "compaction"
    if compaction and _too_short(type_, redacted, from_trigger):
        return Failure(Rejected(text=redacted, reasons=("too_short",), from_quality_gate=False))
    if not redacted:
        return Failure(Rejected(text=redacted, reasons=("empty",), from_quality_gate=False))
    if is_prompt_injection(redacted):
        return Failure(Rejected(text=redacted, reasons=("prompt_injection",), from_quality_gate=False))
    if compaction:
        quality = assess_memory_quality(type_, redacted)
        if not quality.accepted:
            return Failure(Rejected(text=redacted, reasons=quality.reasons, from_quality_gate=True))
    return Success(Accepted(text=redacted, reasons=("quality_gate_passed",)))
