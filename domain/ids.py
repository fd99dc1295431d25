"""Deterministic identifiers (docs/decisions.md#d1): the same inputs always give the same id, so a
run can be replayed bit for bit. Ids keep the reference's shapes (``mem_<ms>_<base36>``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol


class Hash(Protocol):
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


def _digest(name: str) -> Callable[[bytes], Hash]:
    """CPython's own implementation of the hash ``name`` (``sha1``, ``sha256``), else ``hashlib``'s.
    Importing ``hashlib`` initialises OpenSSL, which costs every hook process a few milliseconds
    (docs/performance.md); the digests are the same."""
    for module in ("_sha2", f"_{name}"):  # CPython 3.12+, 3.11
        try:
            found: Callable[[bytes], Hash] = getattr(importlib.import_module(module), name)
            return found
        except (ImportError, AttributeError):
            continue
    import hashlib

    fallback: Callable[[bytes], Hash] = getattr(hashlib, name)
    return fallback


sha1: Callable[[bytes], Hash] = _digest("sha1")
sha256: Callable[[bytes], Hash] = _digest("sha256")

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(digest: bytes, width: int) -> str:
    number = int.from_bytes(digest[:12], "big")
    chars: list[str] = []
    for _ in range(width):
        number, rem = divmod(number, 36)
        chars.append(_ALPHABET[rem])
    return "".join(chars)


def stable_suffix(*parts: object, width: int = 6) -> str:
    """``width`` base-36 characters derived from ``parts`` by SHA-256."""
    seed = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return _base36(sha256(seed).digest(), width)


def memory_id(now_ms: int, *parts: object) -> str:
    """``mem_<ms>_<6 base36>``; ``parts`` should make the id unique within one step
    (for example a sequence number and the memory text)."""
    return f"mem_{int(now_ms)}_{stable_suffix(now_ms, *parts)}"


def decision_id(now_ms: int, *parts: object) -> str:
    return f"decision_{int(now_ms)}_{stable_suffix(now_ms, *parts)}"


def event_id(now_ms: int, *parts: object) -> str:
    """``evt_<ms>_<8 chars [a-z0-9]>``."""
    return f"evt_{int(now_ms)}_{stable_suffix(now_ms, *parts, width=8)}"


class Digest(str):
    """A hash workmem made (hex digits only): nothing of the hashed text can be read from it, so an
    evidence detail holding one needs no redaction (docs/decisions.md#d16: a search's event carries
    the query's hash, never the query). Encoded as the plain string."""

    __slots__ = ()


def hash16(value: str) -> str:
    """``sha256(utf8(value)).hex[:16]``."""
    return sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
