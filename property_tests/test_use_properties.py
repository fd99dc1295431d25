"""Reinforcement from use (docs/decisions.md#d19), over any sequence of host events: a memory is
reinforced at most once per session, never unless a block of that session showed it, and a use
moves nothing but the memory's retention clock (never forward of ``now``)."""

from __future__ import annotations

from collections import Counter

from hypothesis import event as note, given, strategies as st
from msgspec.structs import replace

from domain.commands import Command, Compacted, OpenSession, ToolResult, UserMessage, handle
from domain.enums import EventType, MemoryType
from domain.limits import DAY_MS
from domain.matching import occurrences
from domain.operations import Snapshot
from domain.operations.replies import AgentReply
from domain.session import ToolEvent
from tests.support.builders import NOW, journal, memory, session, store

TOKENS = (
    "scripts/deploy.sh", "make check-all", "src/importer.py", "pnpm install", "staging", "production",
    "ruff --fix", "docker compose up", "port 8080", "blue-green", "fixtures", "migrations", "the", "tests",
)  # fmt: skip
IDS = tuple(f"mem_1_m{i}" for i in range(5))

POOL = TOKENS + IDS
KINDS = ("bash", "edit", "write", "read", "grep", "reply", "message", "compacted", "open")


def _text(bits: int) -> str:
    """Up to four pool words picked by the bits of one number (few choices: no overruns)."""
    words = [POOL[(bits >> (5 * k)) % len(POOL)] for k in range(1 + bits % 4)]
    return " ".join(words)


def _command(kind: int, bits: int) -> Command:
    name, text = KINDS[kind], _text(bits)
    if name == "reply":
        return AgentReply(session="s1", text=text)
    if name == "message":
        return UserMessage(session="s1", text=text)
    if name == "compacted":
        return Compacted(session="s1", summary="")
    if name == "open":
        return OpenSession(session="s1")
    args = {"command": text} if name == "bash" else {"filePath": text, "content": text}
    return ToolResult(session="s1", event=ToolEvent(tool=name, args=args))


entries = st.lists(st.integers(min_value=0, max_value=2**20), min_size=1, max_size=len(IDS)).map(
    lambda rows: tuple(
        memory(f"Remember to use {_text(bits)} for this work {i}", id=IDS[i], type=MemoryType.PROJECT)
        for i, bits in enumerate(rows)
    )
)
steps = st.lists(
    st.builds(_command, st.integers(min_value=0, max_value=len(KINDS) - 1), st.integers(0, 2**20)),
    max_size=8,
)


@given(held=entries, hidden=st.booleans(), commands=steps)
def test_use_is_once_per_session_and_only_for_memories_shown(
    held: tuple[object, ...], hidden: bool, commands: list[Command]
) -> None:
    # one memory may join the store after the block froze: it was never shown
    late = memory("Remember to use scripts/deploy.sh and make check-all later", id="mem_1_late")
    snap = Snapshot(store=store(*held), journal=journal(), session=session("s1"))  # type: ignore[arg-type]
    now = NOW + 10 * DAY_MS
    result = handle(snap, OpenSession(session="s1"), now)
    if hidden:
        result = replace(result, store=replace(result.store, entries=(*result.store.entries, late)))
    shown: set[str] = set(result.session.block_ids if result.session else ())
    used: Counter[str] = Counter()
    for command in commands:
        now += 60_000
        before = {e.id: e for e in result.store.entries}
        result = handle(result.next_snapshot(), command, now)
        shown |= set(result.session.block_ids if result.session else ())
        for event in result.events:
            if event.type is EventType.MEMORY_USED and event.memory is not None:
                memory_id = event.memory.memory_id or ""
                used[memory_id] += 1
                assert memory_id in shown
                after = next(e for e in result.store.entries if e.id == memory_id)
                assert replace(after, retention_clock=before[memory_id].retention_clock) == before[memory_id]
                assert after.retention_clock is not None and after.retention_clock <= now
    assert all(count == 1 for count in used.values()), used
    note(f"memories used: {min(len(used), 3)}{'+' if len(used) >= 3 else ''}")


@given(
    st.lists(st.text(alphabet="ab.-1 ", max_size=12), max_size=6),
    st.lists(st.text(alphabet="ab.-1", max_size=4), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=4),
)
def test_occurrences_count_as_str_count_up_to_the_cap(texts: list[str], wanted: list[str], cap: int) -> None:
    """The capped count (docs/decisions.md#d19) is ``str.count`` over the joined texts, stopped at
    ``cap``: non-overlapping, so "aa" occurs once in "aaa"."""
    entries = [memory(t or "x", id=f"m{i}") for i, t in enumerate(texts)]
    corpus = "\n".join(e.text.lower() for e in entries)
    assert occurrences(wanted, entries, cap) == {t: min(corpus.count(t), cap) for t in wanted}
