"""Every supported credential format is redacted with its value (never the label alone), prose that
merely names a credential stays readable, and control characters never pass the gate."""

from __future__ import annotations

import pytest

from domain.enums import MemorySource, MemoryType
from domain.safety import REDACTED, admit, preview, redact, stored_text
from domain.text import strip_controls
from tests.reliability.corpus import SECRETS, SecretCase


@pytest.mark.parametrize("case", SECRETS, ids=[c.format for c in SECRETS])
def test_every_corpus_format_is_redacted(case: SecretCase) -> None:
    assert case.secret in case.text
    out = redact(case.text)
    assert case.secret not in out
    assert REDACTED in out
    assert redact(out) == out
    assert case.secret not in preview(case.text, 60)
    assert case.secret not in stored_text(case.text)


@pytest.mark.parametrize("case", SECRETS, ids=[c.format for c in SECRETS])
def test_every_corpus_format_is_redacted_through_the_memory_gate(case: SecretCase) -> None:
    for source in MemorySource:
        result = admit(MemoryType.REFERENCE, case.text, source=source)
        accepted = result.value_or(None)
        text = accepted if accepted is not None else result.failure().text
        assert case.secret not in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the value goes with the label (it used to be the other way round for quoted labels)
        ('{"client_secret": "c1i3nt"}', '{"client_secret": "[REDACTED]"}'),
        ("{'api_key': 'abc123def'}", "{'api_key': '[REDACTED]'}"),
        ('"password": "hunter2"', '"password": "[REDACTED]"'),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [REDACTED]"),
        ("api_key: X9y8Z7", "api_key: [REDACTED]"),
        # URL user information: the user stays, the password goes
        ("postgres://app:pw1@db:5432/x", "postgres://app:[REDACTED]@db:5432/x"),
        ("redis://:pw2@cache:6379", "redis://:[REDACTED]@cache:6379"),
        # words between the label and "is"
        ("the password for the db is Tr0ub4dor3", "the password for the db is [REDACTED]"),
        ("the password for staging-db is Xy7", "the password for staging-db is [REDACTED]"),
        # plural labels
        ("secrets: Wq8zN2vP5xR7", "secrets: [REDACTED]"),
        ("api keys = k1k2k3k4", "api keys = [REDACTED]"),
        # Azure: the key only, the rest of the connection string stays
        (
            "AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4cXV1eA==;EndpointSuffix=x",
            "AccountName=a;AccountKey=[REDACTED];EndpointSuffix=x",
        ),
    ],
)
def test_label_and_value_redaction(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "tokens: 5",
        "max tokens: 4096",
        "tokens: 1500 per request",
        "secrets: none",
        "secrets are kept in vault",
        "the password for the db is required",
        "the password for the admin user in prod is not set",
        "http://localhost:8080/path",
        "ssh://git@github.com:org/repo.git",
        "see https://user@example.com/x",
        "mailto:a@b.c",
        "ask the team about the SKU list",
        "glpat- tokens are rotated monthly",
        "use npm_config_cache for speed",
    ],
)
def test_prose_about_credentials_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]8;;http://evil\x07link\x1b]8;;\x07", "xlink"),
        ("invoice\u202egnp.exe", "invoicegnp.exe"),
        ("nul\x00l and \x7fdel and \x9bcsi", "null and del and csi"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("v\vf\fx", "v f x"),
        ("lone escape \x1b", "lone escape "),
        ("\u2066isolate\u2069 \u200fmark", "isolate mark"),
    ],
)
def test_control_characters_are_stripped(text: str, expected: str) -> None:
    assert strip_controls(text) == expected
    assert strip_controls(expected) == expected
    assert redact(text) == expected


def test_a_memory_of_control_characters_only_is_empty() -> None:
    result = admit(MemoryType.FEEDBACK, "\x1b[2J\x00", source=MemorySource.EXPLICIT)
    assert result.failure().reasons == ("empty",)
    ok = admit(MemoryType.FEEDBACK, "\x1b[1m always use pnpm \x1b[0m", source=MemorySource.EXPLICIT)
    assert ok.unwrap() == "always use pnpm"
