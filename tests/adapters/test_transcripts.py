"""The transcript reader never blocks and never reads without bound, whatever the path names."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from adapters.hosts import transcripts


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert transcripts.read_tail(str(fifo)) == b""
    assert time.monotonic() - started < 1


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_not_read() -> None:
    assert transcripts.read_tail("/dev/zero") == b""


def test_missing_directory_and_no_path(tmp_path: Path) -> None:
    assert transcripts.read_tail(None) == b""
    assert transcripts.read_tail("") == b""
    assert transcripts.read_tail(str(tmp_path / "missing")) == b""
    assert transcripts.read_tail(str(tmp_path)) == b""


def test_only_the_tail_is_read_and_cut_to_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"n": n, "pad": "x" * 50}) for n in range(1000)]
    path.write_text("\n".join(lines) + "\n")
    tail = transcripts.read_tail(str(path), limit=1000)
    assert len(tail) <= 1000
    parsed = [json.loads(line) for line in tail.splitlines()]
    assert parsed[-1]["n"] == 999 and parsed[0]["n"] > 980


def test_records_skip_bad_lines_and_filter_by_needle(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\nnot json\n[1, 2]\n{"b": "compact"}\n')
    assert list(transcripts.records(str(path))) == [{"a": 1}, {"b": "compact"}]
    assert list(transcripts.records(str(path), b"compact")) == [{"b": "compact"}]


def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text('{"x": 1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert list(transcripts.records(str(link))) == [{"x": 1}]


def test_an_unused_event_imports_no_storage() -> None:
    """Events workmem does not use must stay as cheap as the interpreter allows (docs/performance.md)."""
    import subprocess
    import sys

    code = (
        "import io, sys; sys.argv = ['workmem', 'hook', 'claude-code'];"
        'sys.stdin = io.TextIOWrapper(io.BytesIO(b\'{"session_id": "s", "hook_event_name": "Stop"}\'));'
        "import os; os.environ['WORKMEM_HOOK_SERVER'] = '0';"
        "from adapters.entry import main; main();"
        "heavy = ('msgspec', 'returns', 'filelock', 'argparse');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy"
        " or m in ('adapters.filestore', 'domain.model')))"
    )
    argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
