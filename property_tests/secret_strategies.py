"""Hypothesis strategies for credentials embedded in ordinary text.

Reuse them for "no secret reaches disk / the prompt / a preview" properties:

* :func:`secrets` — ``(text, secret_values)``: one to three credentials (well-known token formats and
  labelled values) embedded in random filler; every string in ``secret_values`` must be absent from
  anything derived from ``text`` after redaction.
* :func:`token_secrets` / :func:`labelled_secrets` — one credential, as ``(snippet, secret_value)``.
* :func:`filler` — ordinary text that contains no credential label or token prefix, so it must pass
  through redaction unchanged.
* :data:`PASSWORD_LABELS`, :data:`SENSITIVE_LABELS`, :data:`DELIMITERS`, :func:`label_values` — the
  label × delimiter × value grid of the redaction rule (docs/decisions.md#redaction).
"""

from __future__ import annotations

import re
import string
from typing import Final

from hypothesis import strategies as st

from property_tests.shapes import steady_lists

PASSWORD_LABELS: Final = (
    "password",
    "Password",
    "PASSWORD",
    "passwd",
    "pwd",
    "密碼",
    "密码",
    "パスワード",
    "비밀번호",
    "contraseña",
    "CONTRASEÑA",
    "mot de passe",
    "passwort",
)
SENSITIVE_LABELS: Final = (
    "api_key",
    "api-key",
    "apikey",
    "API_KEY",
    "token",
    "MY_TOKEN",
    "access_token",
    "secret",
    "client_secret",
    "credential",
    "auth",
    "auth_key",
    "auth-key",
    "private_key",
    "private-key",
    "privatekey",
    "OAuth",
)
#: The delimiters of the rule, ``is`` among them (docs/decisions.md#redaction).
DELIMITERS: Final = (":", ": ", "=", " = ", "：", "是", " 是 ", " is ")
#: Bearer takes a bare space too, and the delimiters above (``Bearer = V`` too, docs/decisions.md#redaction).
BEARER_DELIMITERS: Final = (" ", *DELIMITERS)
PREFIXES: Final = ("", "note ", "Use ", "x, ")
SUFFIXES: Final = ("", " ok", ", more", "，更多")

_B62: Final = string.ascii_letters + string.digits
_B64URL: Final = _B62 + "-_"
_UPPER_ALNUM: Final = string.ascii_uppercase + string.digits

#: Anything that could start a credential: no filler holds one of these.
LABELISH: Final = re.compile(
    r"pass|pwd|pin|bearer|key|token|secret|credential|auth|user|密|パスワード|비밀번호|contrase"
    r"|eyj|sk[-_]|rk_|gh[pousr]_|github|akia|asia|xox|-----|ユーザー|用戶|用户|사용자|benutzer|usuario",
    re.IGNORECASE,
)


def label_values() -> st.SearchStrategy[str]:
    """``Q[A-Za-z0-9._/+-]{6,25}Z``: values that are unmistakably secrets."""
    return st.text(alphabet=string.ascii_letters + string.digits + "._/+-", min_size=6, max_size=25).map(
        lambda body: f"Q{body}Z"
    )


#: Letters that cannot spell any credential label or token prefix: every label has a vowel or ``w``
#: (``pwd``), and every token prefix a vowel, ``_`` or ``-``.
_SAFE_LETTERS: Final = "".join(c for c in string.ascii_letters if c.lower() not in "aeiouyw")


def filler() -> st.SearchStrategy[str]:
    """A few ordinary words (ASCII consonants and digits, accented letters, CJK) separated by spaces
    or punctuation. Built from letters that cannot spell a label (:data:`_SAFE_LETTERS`), so no
    example is thrown away; :data:`LABELISH` stays the check that this holds."""
    word = st.text(
        alphabet=st.sampled_from(_SAFE_LETTERS + string.digits + "éñüßçøå中文記憶系統日本語한국어"),
        min_size=1,
        max_size=10,
    )
    sep = st.sampled_from((" ", " ", "\n", ", ", ". ", "; ", " - ", "\t", "\u3000"))
    words = steady_lists(st.tuples(word, sep), max_size=6)
    return words.map(lambda parts: "".join(w + s for w, s in parts).strip())


def _with_digit(body: str, digit: str, where: int) -> str:
    where %= len(body) + 1
    return body[:where] + digit + body[where:]


@st.composite
def token_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """One well-known token format: ``(token, secret part)``."""
    kind = draw(st.sampled_from(("sk", "sk-proj", "ghp", "github_pat", "akia", "xox", "jwt", "pem")))
    digit = draw(st.sampled_from(string.digits))
    where = draw(st.integers(0, 64))
    if kind == "sk":
        body = _with_digit(draw(st.text(alphabet=_B62, min_size=20, max_size=48)), digit, where)
        return "sk-" + body, body
    if kind == "sk-proj":  # any characters: a project key need not hold a digit
        body = draw(st.text(alphabet=_B62, min_size=20, max_size=48))
        return "sk-proj-" + body, body
    if kind == "ghp":
        flavour = draw(st.sampled_from("pousr"))
        body = draw(st.text(alphabet=_B62, min_size=36, max_size=40))
        return f"gh{flavour}_{body}", body
    if kind == "github_pat":
        body = draw(st.text(alphabet=_B62 + "_", min_size=22, max_size=82))
        return f"github_pat_{body}", body
    if kind == "akia":
        body = draw(st.text(alphabet=_UPPER_ALNUM, min_size=16, max_size=16))
        return f"AKIA{body}", body
    if kind == "xox":  # [0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}
        flavour = draw(st.sampled_from("bp"))
        team, user = (draw(st.text(alphabet=string.digits, min_size=10, max_size=13)) for _ in range(2))
        body = f"{team}-{user}-{draw(st.text(alphabet=_B62, min_size=24, max_size=24))}"
        return f"xox{flavour}-{body}", body
    if kind == "jwt":
        header = draw(st.text(alphabet=_B64URL, min_size=10, max_size=40))
        payload = draw(st.text(alphabet=_B64URL, min_size=10, max_size=80))
        signature = draw(st.text(alphabet=_B64URL, min_size=10, max_size=60))
        return f"eyJ{header}.eyJ{payload}.{signature}", f"{payload}.{signature}"
    algorithm = draw(st.sampled_from(("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ")))
    lines = draw(
        steady_lists(st.text(alphabet=_B62 + "+/", min_size=16, max_size=64), min_size=1, max_size=4)
    )
    body = "\n".join(lines)
    block = f"-----BEGIN {algorithm}PRIVATE KEY-----\n{body}\n-----END {algorithm}PRIVATE KEY-----"
    return block, lines[0]


@st.composite
def labelled_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A label, a delimiter and a value: ``(snippet, value)``."""
    value = draw(label_values())
    kind = draw(st.sampled_from(("password", "sensitive", "pin", "bearer")))
    if kind == "password":
        label = draw(st.sampled_from(PASSWORD_LABELS))
        delimiter = draw(st.sampled_from((*DELIMITERS, " ")))
    elif kind == "sensitive":
        label = draw(st.sampled_from(SENSITIVE_LABELS))
        delimiter = draw(st.sampled_from(DELIMITERS))
    elif kind == "pin":
        label = "PIN"
        delimiter = draw(st.sampled_from((*DELIMITERS, " ")))
    else:
        label = draw(st.sampled_from(("Bearer", "bearer")))
        delimiter = draw(st.sampled_from(BEARER_DELIMITERS))
    quote = draw(st.sampled_from(("", "", "'", '"', "`")))
    closing = quote if draw(st.booleans()) else ""
    return f"{label}{delimiter}{quote}{value}{closing}", value


@st.composite
def secrets(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    """Random filler with one to three credentials embedded: ``(text, secret values)``."""
    # a token costs a few choices more than a labelled value, and their number varies by at most
    # two: the costlier option first (property_tests/shapes.py)
    items = draw(steady_lists(st.one_of(token_secrets(), labelled_secrets()), min_size=1, max_size=3))
    fillers = [draw(filler()) for _ in range(4)]
    parts: list[str] = []
    for snippet, filled in zip((snippet for snippet, _ in items), fillers, strict=False):
        parts.append(filled)
        parts.append(snippet)
    parts.append(fillers[len(items)])
    separators = [draw(st.sampled_from((" ", "\n", " (", ", ", "; ", "\n\n"))) for _ in range(7)]
    text = ""
    for part, separator in zip(parts, separators, strict=False):
        if not part:
            continue
        text = f"{text}{separator}{part}" if text else part
    return text, tuple(secret for _, secret in items)
