"""Exact and identity keys of memories (store-retention.md §2.1-§2.3, DECISIONS D9).

TEMPORARY: identity_key currently equals exact_key; the full URL/path identity rules are being written.
"""

from __future__ import annotations

from domain.model import MemoryEntry
from domain.text import memory_key


def exact_key(entry: MemoryEntry) -> str:
    """``type:canonical(text)``."""
    return memory_key(entry.type.value, entry.text)


def identity_key(entry: MemoryEntry) -> str:
    return exact_key(entry)
