"""TEMPORARY stub: the safety gate (redaction, prompt-injection defence, quality gate) is being written."""

from __future__ import annotations

from domain.text import collapse_whitespace


def redact(text: str) -> str:
    return text


def preview(text: str, limit: int = 120) -> str:
    return collapse_whitespace(redact(text))[:limit]
