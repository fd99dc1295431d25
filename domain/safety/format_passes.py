"""Credential formats redacted whole wherever they appear, beyond the rule corpus
(docs/decisions.md#credential-rule-corpus).

The corpus (:mod:`domain.safety.rule_corpus`) is the maintained list of formats. These passes stay
because their shapes are looser than the corpus's (the formats the reference plugin's users rely on,
docs/decisions.md#redaction), or because the corpus expects source code and misses the same
credential in prose (docs/decisions.md#credentials-in-prose). A ``keep`` group is kept in front of
the ``[REDACTED]`` that replaces the rest of a match. Every pattern is compiled on first use.
"""

from __future__ import annotations

import re
from typing import Final

from domain.text import WS, lazy_compile

__all__ = ["FORMAT_TRIGGERS", "TOKEN_PASSES"]

_I: Final = re.IGNORECASE
_TOKEN_BEFORE: Final = "(?<![A-Za-z0-9])"
_NOT_MARKER: Final = "(?!\\[REDACTED\\])"
#: Well-known credential formats, redacted whole wherever they appear (no label needed), each with
#: the strings (lower case) one of which a text must hold for the pattern to be tried.
TOKEN_PASSES: Final[tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]] = (
    # PEM private-key blocks, through the END line; an unterminated block runs over its base64 body.
    (
        ("-----begin",),
        lazy_compile(
            "-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
            f"(?:(?:(?!-----BEGIN).)*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=:,{WS}-]*)",
            re.DOTALL,
        ),
    ),
    # JSON Web Tokens: a base64url header of "{", then the payload and the signature.
    (("eyj",), lazy_compile(f"{_TOKEN_BEFORE}eyJ[A-Za-z0-9_-]{{5,}}\\.[A-Za-z0-9_-]{{5,}}\\.[A-Za-z0-9_-]*")),
    # GitHub fine-grained and classic tokens.
    (("github_pat_",), lazy_compile(f"{_TOKEN_BEFORE}github_pat_[A-Za-z0-9_]{{20,}}")),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), lazy_compile(f"{_TOKEN_BEFORE}gh[pousr]_[A-Za-z0-9]{{20,}}")),
    # OpenAI/Anthropic style secret keys: ``sk-proj-...`` / ``sk-ant-...`` / ``sk-svcacct-...``
    # whatever their characters; a bare ``sk-...`` only when long and holding a digit.
    (("sk-",), lazy_compile(f"{_TOKEN_BEFORE}sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{{16,}}")),
    (("sk-",), lazy_compile(f"{_TOKEN_BEFORE}sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{{20,}}")),
    # AWS access key ids.
    (("akia", "asia"), lazy_compile(f"{_TOKEN_BEFORE}(?:AKIA|ASIA)[A-Z0-9]{{16,}}")),
    # Slack tokens.
    (("xox",), lazy_compile(f"{_TOKEN_BEFORE}xox[abprs]-[A-Za-z0-9-]{{10,}}")),
    # Google API keys and OAuth client secrets.
    (("aiza",), lazy_compile(f"{_TOKEN_BEFORE}AIza[A-Za-z0-9_-]{{30,}}")),
    (("gocspx-",), lazy_compile(f"{_TOKEN_BEFORE}GOCSPX-[A-Za-z0-9_-]{{20,}}")),
    # HashiCorp Vault service, batch and recovery tokens.
    (("hvs.", "hvb.", "hvr."), lazy_compile(f"{_TOKEN_BEFORE}hv[sbr]\\.[A-Za-z0-9_-]{{20,}}")),
    # The password of a URL's user information (``scheme://user:password@host``); the user is kept.
    (
        ("://",),
        lazy_compile(
            f"(?P<keep>{_TOKEN_BEFORE}[A-Za-z][A-Za-z0-9+.-]{{0,30}}://[^{WS}:/@?#\\[]{{0,200}}:)"
            f"{_NOT_MARKER}[^{WS}/@?#]{{1,300}}(?=@)"
        ),
    ),
    # ---- in prose, where the corpus expects an assignment in source code ----
    # Webhook URLs whose path is the secret (Discord, Microsoft Teams, Zapier); the host stays.
    (
        ("webhook", "zapier"),
        lazy_compile(
            "(?P<keep>(?:discord(?:app)?\\.com/api/webhooks|[A-Za-z0-9-]+\\.webhook\\.office\\.com/webhookb2"
            f"|outlook\\.office\\.com/webhook|hooks\\.zapier\\.com/hooks/catch)/){_NOT_MARKER}[^{WS}\"'<>`]+",
            _I,
        ),
    ),
    # A URL query parameter that carries a credential (``?sig=…``, ``&access_token=…``).
    (
        ("=",),
        lazy_compile(
            "(?P<keep>[?&;](?:sig|signature|token|access_token|refresh_token|id_token|api_?key|key|secret"
            f"|client_secret|password|passwd|pwd|auth|code)=){_NOT_MARKER}[^&#{WS}\"'<>`]+",
            _I,
        ),
    ),
    # Mailchimp API keys: 32 hex digits and the data centre.
    (("-us",), lazy_compile(f"{_TOKEN_BEFORE}[0-9a-f]{{32}}-us[0-9]{{1,2}}(?![A-Za-z0-9])")),
    # A Twilio account SID and its auth token (``AC…:…``); the SID stays.
    (("ac",), lazy_compile("(?P<keep>AC(?<![A-Za-z0-9]AC)[0-9a-f]{32}:)[0-9a-f]{32}(?![A-Za-z0-9])")),
    # Passwords on a command line: ``mysql … -pSECRET``, ``sshpass -p SECRET``.
    (
        ("mysql", "mariadb"),
        lazy_compile(
            f"(?P<keep>\\b(?:mysql|mysqldump|mysqladmin|mariadb)\\b[^\\n]*?[{WS}]-p){_NOT_MARKER}"
            "(?:'[^'\\n]*'|\"[^\"\\n]*\"|[^\\s'\"]+)"
        ),
    ),
    (
        ("sshpass",),
        lazy_compile(
            f"(?P<keep>\\bsshpass[{WS}]+-p[{WS}]*){_NOT_MARKER}(?:'[^'\\n]*'|\"[^\"\\n]*\"|[^\\s'\"]+)"
        ),
    ),
    # Redis configuration: ``requirepass SECRET``, ``masterauth SECRET``.
    (
        ("requirepass", "masterauth"),
        lazy_compile(f"(?P<keep>\\b(?:requirepass|masterauth)[{WS}]+){_NOT_MARKER}[^\\s'\"]+"),
    ),
    # Environment names ending in PASS / PWD / PW (``DB_PASS=…``), which no label pass knows.
    (
        ("pass", "pwd", "pw"),
        lazy_compile(
            f"(?P<keep>\\b(?:[A-Za-z0-9]+_)+(?:PASS|PWD|PW|pass|pwd|pw)[{WS}]*[=:][{WS}]*[\"']?)"
            f"{_NOT_MARKER}[^\\s'\"]+"
        ),
    ),
    # HTTP authorization headers other than Bearer (``Authorization: Basic …``).
    (
        ("authorization",),
        lazy_compile(
            f"(?P<keep>\\bAuthorization[\"']?[{WS}]*[:=][{WS}]*[\"']?(?:Basic|Token|Digest|Bot)[{WS}]+)"
            f"{_NOT_MARKER}[A-Za-z0-9+/=._~-]+",
            _I,
        ),
    ),
    # The private lines of a PuTTY key file.
    (("private-lines",), lazy_compile(f"(?P<keep>Private-Lines:[{WS}]*[0-9]+[{WS}]*\\n)[A-Za-z0-9+/=\\n]+")),
)

#: What a text must hold (in lower case) for one of the passes added for prose to apply.
FORMAT_TRIGGERS: Final = (
    "webhook|zapier|[?&;][a-z_]{2,13}=|-us[0-9]|ac[0-9a-f]{32}:|mysql|mysqladmin|mariadb|sshpass|requirepass"
    "|masterauth|_(?:pass|pwd|pw)|authorization|private-lines"
)
