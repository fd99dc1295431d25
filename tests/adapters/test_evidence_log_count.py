"""Counting an evidence log's lines to decide on a prune (adapters/evidence_log.py): a log this
process counted before is counted from where it was, reading only what was appended since; a log
replaced or rewritten is counted again in full."""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from adapters import evidence_log
from adapters.evidence_log import needs_prune
from domain.limits import EvidenceLogLimits
from domain.timeutil import iso_from_ms

NOW = 1_777_636_800_000
#: the line count above which a log is pruned (the limit and its margin)
OVER = EvidenceLogLimits.MAX_EVENTS_PER_WORKSPACE + evidence_log.PRUNE_SLACK_EVENTS


def _line(n: int) -> bytes:
    record = {
        "version": 1,
        "eventId": f"evt_{NOW}_{n:08d}",
        "createdAt": iso_from_ms(NOW - 1000),
        "workspaceKey": "k" * 16,
        "workspaceRootHash": "r" * 16,
        "type": "promotion_promoted",
        "phase": "promotion",
        "outcome": "promoted",
        "reasonCodes": ["new_workspace_entry"],
    }
    return json.dumps(record).encode() + b"\n"


def _append(path: Path, first: int, count: int) -> None:
    with open(path, "ab") as handle:
        handle.write(b"".join(_line(n) for n in range(first, first + count)))


class _Reads:
    """Bytes read through ``open`` in the evidence log module."""

    def __init__(self) -> None:
        self.total = 0


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Reads]:
    seen = _Reads()

    class Counting:
        def __init__(self, handle: IO[bytes]) -> None:
            self._handle = handle

        def read(self, size: int = -1) -> bytes:
            data = self._handle.read(size)
            seen.total += len(data)
            return data

        def readline(self, size: int = -1) -> bytes:
            data = self._handle.readline(size)
            seen.total += len(data)
            return data

        def seek(self, offset: int) -> int:
            return self._handle.seek(offset)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self._handle.close()

    def counting_open(*args: Any, **kwargs: Any) -> Counting:
        return Counting(builtins.open(*args, **kwargs))

    monkeypatch.setattr(evidence_log, "open", counting_open, raising=False)
    yield seen


def test_a_grown_log_is_counted_from_where_it_was_counted(tmp_path: Path, reads: _Reads) -> None:
    log = tmp_path / "events.jsonl"
    _append(log, 0, OVER - 50)
    assert not needs_prune(log, NOW)
    whole = reads.total
    assert whole >= log.stat().st_size  # the first look reads the whole log
    before = log.stat().st_size
    _append(log, OVER - 50, 40)  # another process appends: still within the limit
    reads.total = 0
    assert not needs_prune(log, NOW)
    appended = log.stat().st_size - before
    assert reads.total < appended + 2 * len(_line(0)) + 200  # only the new lines, the head, a tail
    _append(log, OVER - 10, 11)  # now over it
    assert needs_prune(log, NOW)


def test_a_replaced_log_is_counted_again(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    _append(log, 0, OVER - 50)
    assert not needs_prune(log, NOW)
    bigger = tmp_path / "new.jsonl"
    _append(bigger, 0, OVER + 1)
    os.replace(bigger, log)  # as a prune or a repair replaces it: another file
    assert needs_prune(log, NOW)


def test_a_log_rewritten_in_place_is_counted_again(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    _append(log, 0, OVER - 50)
    assert not needs_prune(log, NOW)
    inode = log.stat().st_ino
    with open(log, "r+b") as handle:  # the same file, other lines from the start, more of them
        handle.write(b"".join(_line(n) for n in range(1_000_000, 1_000_000 + OVER + 1)))
    assert log.stat().st_ino == inode
    assert needs_prune(log, NOW)
