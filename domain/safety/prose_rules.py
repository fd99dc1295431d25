"""Credentials in prose that neither the rule corpus nor the reference's label passes catch
(docs/decisions.md#credentials-in-prose).

* :data:`CJK_LABEL_PASS`: a Chinese, Japanese or Korean credential label (password, passphrase,
  PIN, token, key, secret, …), its delimiter or particle (``是 为 ： = ＝ は が 는 은 가 이``) and an
  ASCII value after it. Only an ASCII run of four or more characters is a value, so prose after the
  label (``APIキーは環境変数に保存します``, ``토큰은 30일마다 교체합니다``) stays.
* :data:`ENTROPY_LABEL_PASS`: a credential label in any of the four languages, up to three words,
  and a long high-entropy value (:func:`looks_random`): ``the HMAC key 7fK2… signs webhooks``.
* :data:`OPAQUE_TOKEN`: a long random-looking token with no label at all (:func:`is_opaque_token`):
  32 or more characters mixing upper case, lower case and digits at 4 bits of entropy per character.
* :data:`PREFIXED_TOKEN`: a vendor-style token, a short prefix and a long random body
  (:func:`replace_prefixed_tokens`).

Each pass replaces the value group ``v`` and keeps everything else. How they are applied is
:mod:`domain.safety.redaction`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from domain.safety.rule_corpus import shannon_entropy
from domain.text import lazy_compile

__all__ = [
    "CJK_LABEL_PASS",
    "CJK_LABEL_TRIGGER",
    "ENTROPY_LABEL_PASS",
    "OPAQUE_TOKEN",
    "is_opaque_token",
    "looks_random",
    "may_hold_opaque_token",
    "may_hold_random_value",
    "replace_prefixed_tokens",
    "replace_values",
]

#: Credential labels of the three CJK languages (and the English words written inside CJK prose).
_CJK_LABELS: Final = (
    # Chinese: password, passphrase, key, secret key, private key, token, PIN
    "密码|密碼|口令|通行码|密钥|密鑰|秘钥|秘鑰|私钥|私鑰|金鑰|令牌|(?:PIN|pin)\\s*(?:码|碼)"
    # Japanese: password, passphrase, PIN, key, private key, token, secret, credentials
    "|パスワード|パスフレーズ|暗証番号|キー|秘密鍵|暗号鍵|鍵|トークン|シークレット|認証情報"
    # Korean: password, passphrase, PIN, token, key, secret
    "|비밀번호|패스워드|암호|패스프레이즈|(?:핀|PIN|pin)\\s*번호|토큰|비밀\\s*키|키|시크릿"
)
#: What joins a CJK label and its value: a delimiter, a copula or a topic/subject particle.
_CJK_DELIM: Final = "(?:\\s*(?:是|为|為|：|:|=|＝|は|が|も|는|은|가|이)\\s*)"
#: English labels inside CJK prose (``这个 token 是 X``), with a CJK delimiter only.
_EN_LABELS: Final = "(?<![A-Za-z])(?i:token|secret|password|passphrase|passcode|key|pin)(?![A-Za-z])"
_CJK_ONLY_DELIM: Final = "(?:\\s*(?:是|为|為|：|＝|は|が|も|는|은|가|이)\\s*)"
#: An ASCII value of four or more characters, without quotes or commas around it.
_ASCII_VALUE: Final = "(?![\"'`“‘「]?\\[REDACTED\\])[\"'`“‘「]?(?P<v>[!#-&(-+\\--_a-~]{4,})"
CJK_LABEL_PASS: Final = lazy_compile(
    f"(?:(?:{_CJK_LABELS}){_CJK_DELIM}|{_EN_LABELS}{_CJK_ONLY_DELIM}){_ASCII_VALUE}"
)
#: A text that holds none of these cannot be changed by :data:`CJK_LABEL_PASS`.
CJK_LABEL_TRIGGER: Final = lazy_compile(
    "密|口令|通行码|钥|鑰|令牌|碼|码|パス|暗証|キー|鍵|トークン|シークレット|認証|비밀|패스|암호|토큰|키|시크릿|번호"
)

_ENTROPY_LABELS: Final = (
    "(?<![A-Za-z])(?i:keys?|secrets?|tokens?|passwords?|passphrase|passcode|credentials?|signature|salt)"
    "(?![A-Za-z])"
    "|密钥|密鑰|秘钥|私钥|令牌|密码|密碼|口令|キー|鍵|トークン|パスワード|키|토큰|암호|비밀번호|시크릿"
)
#: A label, at most three short words, and a value of 16 or more token characters.
ENTROPY_LABEL_PASS: Final = lazy_compile(
    f"(?:{_ENTROPY_LABELS})(?:\\s+[^\\s.,;:!?。、，]{{1,14}}){{0,3}}?\\s*[:=：＝]?\\s*"
    "(?P<v>(?!\\[REDACTED\\])[A-Za-z0-9+/=_~.-]{16,})(?![A-Za-z0-9+/=_~-])"
)

_TOKEN_CHARS: Final = "A-Za-z0-9_+=.~%-"
#: A run of 32 or more token characters (split at ``/`` and ``:``, so a URL's segments count alone).
OPAQUE_TOKEN: Final = lazy_compile(f"(?<![{_TOKEN_CHARS}])(?P<v>[A-Za-z0-9][{_TOKEN_CHARS}]{{31,}})")
#: A vendor-style token: a short prefix, ``_`` or ``-`` (at most twice), and a body of 24 or more
#: letters and digits (``sbp_…``, ``NRAK-…``, ``dckr_pat_…``).
PREFIXED_TOKEN: Final = lazy_compile(
    "(?<![A-Za-z0-9_.-])(?P<p>[A-Za-z][A-Za-z0-9]{1,7})[_-](?:[A-Za-z0-9]{1,8}[_-])?"
    "(?P<v>[A-Za-z0-9]{24,})(?![A-Za-z0-9_-])"
)
#: Prefixes of checksums and ids, not of credentials.
_NOT_CREDENTIAL_PREFIXES: Final = frozenset(
    ("sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "crc32", "blake2b", "hash", "digest",
     "checksum", "commit", "rev", "build", "uuid", "guid", "id", "req", "request", "trace", "span", "etag")
)  # fmt: skip
_LONG_RUN: Final = lazy_compile(f"[{_TOKEN_CHARS}]{{27}}")
#: Public key material, long and random-looking but no secret: PEM blocks other than private keys
#: (public keys, certificates) and OpenSSH public keys.
_PUBLIC_MATERIAL: Final = lazy_compile(
    "-----BEGIN (?:(?!PRIVATE)[A-Z0-9 ])+-----.*?(?:-----END [A-Z0-9 ]+-----|\\Z)"
    "|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp[0-9]+) AAAA[0-9A-Za-z+/=]+",
    re.DOTALL,
)


def _public_spans(text: str) -> list[tuple[int, int]]:
    if "-----BEGIN" not in text and "AAAA" not in text:
        return []
    return [m.span() for m in _PUBLIC_MATERIAL.finditer(text)]


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


_RUN_16: Final = lazy_compile("[A-Za-z0-9+/=_~.-]{16}")


def may_hold_random_value(text: str) -> bool:
    """Whether ``text`` has a run of 16 value characters (the cheap test before
    :data:`ENTROPY_LABEL_PASS`)."""
    return _RUN_16.search(text) is not None


def may_hold_opaque_token(text: str) -> bool:
    """Whether ``text`` has a run of 27 token characters (the cheap test before :data:`OPAQUE_TOKEN`
    and :data:`PREFIXED_TOKEN`)."""
    return _LONG_RUN.search(text) is not None


def replace_prefixed_tokens(text: str) -> str:
    """Vendor-style tokens whose body holds a letter and a digit at 3 bits of entropy per character
    or more, the prefix kept; checksum prefixes (``sha256-…``) are left alone."""
    out: list[str] = []
    last = 0
    public = _public_spans(text)
    for match in PREFIXED_TOKEN.finditer(text):
        if match.group("p").lower() in _NOT_CREDENTIAL_PREFIXES or not looks_random(match.group("v")):
            continue
        if _inside(public, *match.span("v")):
            continue
        start = match.start("v")
        out += (text[last:start], "[REDACTED]")
        last = match.end("v")
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def looks_random(value: str) -> bool:
    """A value after a label that is a credential, not a word: 16 or more characters with a letter
    and a digit, and at least 3 bits of entropy per character."""
    value = value.rstrip(".")
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and shannon_entropy(value) >= 3.0
    )


def is_opaque_token(value: str) -> bool:
    """A token that is a credential even without a label: 32 or more characters with at least two
    upper-case letters, two lower-case letters and a digit, at 4 bits of entropy per character or
    more (random base-62 text of that length has about 4.5; words and identifiers stay below)."""
    value = value.rstrip(".")
    if len(value) < 32:
        return False
    upper = sum(1 for c in value if "A" <= c <= "Z")
    lower = sum(1 for c in value if "a" <= c <= "z")
    return upper >= 2 and lower >= 2 and any(c.isdigit() for c in value) and shannon_entropy(value) >= 4.0


def replace_values(pattern: re.Pattern[str], text: str, when: Callable[[str], bool] | None = None) -> str:
    """``text`` with the ``v`` group of each match of ``pattern`` (a trailing full stop left out)
    replaced by ``[REDACTED]``, where ``when`` holds for the value (always when it is ``None``) and
    the value is not public key material."""
    out: list[str] = []
    last = 0
    public = _public_spans(text) if when is not None else []
    for match in pattern.finditer(text):
        if public and _inside(public, *match.span("v")):
            continue
        value = match.group("v")
        trimmed = value.rstrip(".")
        if when is not None and not when(trimmed):
            continue
        start = match.start("v")
        out += (text[last:start], "[REDACTED]")
        last = start + len(trimmed)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
