"""Every file that grows is bounded: sessions that never end are pruned once their pending memories
were adopted, and the global logs rotate."""

from __future__ import annotations

from pathlib import Path

from adapters.jsonl import rotate_if_larger
from domain.limits import DAY_MS
from tests.support.cli import T0, Cli, events, layout


def test_a_session_that_never_ends_is_pruned_after_its_pending_memory_is_adopted(cli: Cli) -> None:
    cli.ok("message", "--session", "forgotten", "remember: always run the linter before pushing")
    sessions = layout(cli).sessions
    [forgotten] = [p.name for p in sessions.iterdir()]
    cli.at_ms(T0 + 2 * DAY_MS)  # adopted (24 h), but the file is kept for a week
    cli.ok("context", "--session", "next")
    assert [m["text"] for m in cli.memories()] == ["always run the linter before pushing"]
    assert len(list(sessions.iterdir())) == 2
    cli.at_ms(T0 + 8 * DAY_MS)
    cli.ok("context", "--session", "third")
    # the never-ended one is gone; "next" (idle 6 days) and "third" stay
    assert len(list(sessions.iterdir())) == 2
    assert not (sessions / forgotten).exists()
    pruned = [e for e in events(cli) if e["type"] == "session_pruned"]
    assert len(pruned) == 1 and pruned[0]["details"]["pendingAdopted"] == 1
    assert [m["text"] for m in cli.memories()] == ["always run the linter before pushing"]


def test_global_logs_rotate_past_their_limit(tmp_path: Path) -> None:
    log = tmp_path / "extraction-rejections.jsonl"
    log.write_bytes(b"x" * 100)
    assert not rotate_if_larger(log, 200)
    log.write_bytes(b"y" * 300)
    assert rotate_if_larger(log, 200)
    assert not log.exists() and (tmp_path / "extraction-rejections.jsonl.1").read_bytes() == b"y" * 300
    assert not rotate_if_larger(log, 200)  # a missing log is fine
