"""The ids a message and a compaction summary are recorded under, so that the same one observed twice
is observed once (:mod:`domain.commands`)."""

from __future__ import annotations

from typing import Final

from domain.ids import hash16

__all__ = ["message_key", "summary_key"]


def message_key(message_id: str | None, text: str, now_ms: int) -> str:
    """The id a message is recorded under: the host's id for it, else one made of its time and text
    (the same text at another time is another message)."""
    return message_id if message_id is not None else "msg_" + hash16(f"{now_ms}:{text}")


#: A summary longer than this is identified by its length and its first and last
#: :data:`_SUMMARY_KEY_WINDOW` characters (hashing 50 MB costs a quarter of a second; two different
#: summaries of one length that agree at both ends are not a thing a host sends).
_SUMMARY_KEY_WINDOW: Final = 1 << 20


def summary_key(summary: str) -> str | None:
    """The id a compaction summary is recorded under; ``None`` for an empty summary (never skipped:
    it leaves a ``compaction_summary_missing`` event each time)."""
    if not summary.strip():
        return None
    window = _SUMMARY_KEY_WINDOW
    if len(summary) <= 2 * window:
        return "cmp_" + hash16(summary)
    return "cmp_" + hash16(f"{len(summary)}\x1f{summary[:window]}\x1f{summary[-window:]}")
