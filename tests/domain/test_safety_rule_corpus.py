"""The credential rule corpus (docs/decisions.md#credential-rule-corpus): every rule of the generated
data compiles under Python, and every true-positive example of each rule's own upstream tests
(``tests/data/gitleaks_examples.json``, written by ``adapters/gitleaks_import.py``) is found by that rule
and leaves no byte of its secret after :func:`domain.safety.redact`."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any, Final

import pytest

from domain.safety import redact
from domain.safety.gitleaks_rules import GLOBAL_ALLOW_REGEXES, RULES, SKIPPED, SOURCE
from domain.safety.rule_corpus import (
    compiled_corpus,
    has_active_rules,
    rule_ids,
    secret_span,
    secret_spans,
    shannon_entropy,
)

EXAMPLES_PATH: Final = Path(__file__).resolve().parents[1] / "data" / "gitleaks_examples.json"
EXAMPLES: Final[dict[str, Any]] = json.loads(EXAMPLES_PATH.read_text(encoding="utf-8"))
#: Rules whose upstream tests have no true positives this generator can read (upstream marks the two
#: Dropbox token rules "validate TODO"; jwt-base64 builds its examples in a loop).
WITHOUT_EXAMPLES: Final = {"dropbox-long-lived-api-token", "dropbox-short-lived-api-token", "jwt-base64"}


def _rule_secrets(rule_id: str, text: str) -> list[str]:
    """The secrets rule ``rule_id`` alone finds in ``text`` (before entropy and allowlists)."""
    rule = next(r for r in compiled_corpus().rules if r.id == rule_id)
    return [text[slice(*secret_span(m, rule))] for m in rule.pattern.finditer(text)]


@pytest.mark.parametrize("rule", RULES, ids=[r[0] for r in RULES])
def test_every_rule_and_allowlist_compiles_under_python(rule: tuple[Any, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        re.compile(rule[1], re.ASCII)
        for _, regexes, _ in rule[6]:
            for pattern in regexes:
                re.compile(pattern, re.ASCII)
    assert rule[2], "every rule has a keyword, so the prefilter can skip it"
    assert all(k == k.lower() for k in rule[2])


def test_the_corpus_is_the_upstream_rule_set_with_its_source() -> None:
    assert len(RULES) == len(set(rule_ids())) == 217
    assert "gitleaks commit" in SOURCE and EXAMPLES["source"] == SOURCE
    assert set(SKIPPED) == {"freemius-secret-key", "hashicorp-tf-password", "kubernetes-secret-yaml",
                            "nuget-config-password", "pkcs12-file"}  # fmt: skip
    for pattern in GLOBAL_ALLOW_REGEXES:
        re.compile(pattern, re.ASCII)
    assert set(rule_ids()) - set(EXAMPLES["examples"]) == WITHOUT_EXAMPLES


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES["examples"]))
def test_each_rules_own_examples_are_found_by_it_and_redacted(rule_id: str) -> None:
    for example in EXAMPLES["examples"][rule_id]:
        found = _rule_secrets(rule_id, example)
        assert found, (rule_id, example)
        assert secret_spans(example), (rule_id, example)
        out = redact(example)
        assert out != example and "[REDACTED]" in out
        for secret in found:
            if len(secret) >= 8 and shannon_entropy(secret) > 2:
                assert secret not in out, (rule_id, example, out)


@pytest.mark.parametrize(
    "text",
    [
        "We decided to use pnpm for every install, never npm.",
        "the function get_secret_value returns a string",
        "request id 123e4567-e89b-12d3-a456-426614174000 timed out",
        "commit 3f2c9a1b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a fixed the flaky test",
        "api_key = ${API_KEY}",  # a template, allowed globally
        "aws_access_key: AKIAIOSFODNN7EXAMPLE is the documented placeholder",
    ],
)
def test_ordinary_text_and_allowed_values_have_no_corpus_secret(text: str) -> None:
    assert secret_spans(text) == []


def test_a_rule_runs_only_when_one_of_its_keywords_occurs() -> None:
    token = "hf_" + "QmZtRvXkWpLnBcDfGhJyTsAeUiOqPzMxNb"
    assert has_active_rules(f"login with {token} now")
    assert secret_spans(f"login with {token} now") == [(11, 11 + len(token))]
    assert not has_active_rules("nothing to see here")


def test_low_entropy_secrets_and_stopwords_are_not_secrets() -> None:
    assert secret_spans("api_key = aaaaaaaaaaaaaaaaaaaa") == []  # entropy 0
    assert secret_spans('password = "examplepassword123"') == []  # the generic rule's stopword "example"
    assert secret_spans('password = "Zq7xW3vN5mK8pL2r"') != []
    assert shannon_entropy("") == 0 and round(shannon_entropy("ab"), 3) == 1.0


def test_a_token_longer_than_its_pattern_is_replaced_whole() -> None:
    token = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345" + "XYZ"
    assert redact(f"use {token} here") == "use [REDACTED] here"
