"""Two clones of one repository share their memories through git (docs/decisions.md#d17, #d17a), with
the real ``git`` and the ``workmem`` command (driven in-process; git runs the merge driver itself):

* each clone adds 100 memories, both commit, one merges the other: 0 conflicts, and after ``sync``
  both stores hold all 200;
* edits of different fields of the same files merge on their own (the driver; git's line merge
  alone conflicts on them);
* the same text edited differently in both clones conflicts, and ``sync`` quarantines every such
  file and imports none of them.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from adapters.cli import main
from domain.timeutil import iso_from_ms

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

T0: Final = 1_777_626_000_000
TYPES: Final = ("decision", "project", "reference")


class Clone:
    """One clone of the repository with its own data home (its own machine), driven in-process."""

    def __init__(
        self, root: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ):
        self.root, self.home, self.monkeypatch, self.capsys = root, home, monkeypatch, capsys
        self.now = T0

    def __call__(self, *args: str) -> tuple[int, str]:
        self.now += 1000
        self.monkeypatch.setenv("WORKMEM_HOME", str(self.home))
        self.monkeypatch.setenv("WORKMEM_NOW", iso_from_ms(self.now))
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
        self.capsys.readouterr()
        code = main(["--workspace", str(self.root), *args])
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err, captured.err
        return code, captured.out

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=check)

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "--quiet", "-m", message)

    def memories(self) -> dict[str, dict[str, str]]:
        code, out = self("list", "--json", "--all")
        assert code == 0
        return {m["id"]: m for m in json.loads(out)["memories"]}

    def file(self, memory_id: str) -> Path:
        (found,) = (self.root / ".workmem" / "memories").rglob(f"{memory_id}.md")
        return found


@pytest.fixture
def clones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Clone, Clone]:
    (tmp_path / "gitconfig").write_text("[init]\n\tdefaultBranch = main\n[pull]\n\trebase = false\n")
    for key, value in {
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.com",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.com",
        "WORKMEM_HOOK_SERVER": "0",
    }.items():
        monkeypatch.setenv(key, value)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(origin)], check=True)
    for name in ("a", "b"):
        subprocess.run(
            ["git", "clone", "--quiet", str(origin), str(tmp_path / name)], check=True, capture_output=True
        )
    a = Clone(tmp_path / "a", tmp_path / "home-a", monkeypatch, capsys)
    b = Clone(tmp_path / "b", tmp_path / "home-b", monkeypatch, capsys)
    assert a("install", "git")[0] == 0
    a.commit("share memory")
    a.git("push", "--quiet", "origin", "HEAD:main")
    b.git("pull", "--quiet", "origin", "main")
    assert b("install", "git")[0] == 0
    return a, b


def _add(clone: Clone, label: str, count: int) -> list[str]:
    ids = []
    for n in range(count):
        code, out = clone(
            "remember",
            "--json",
            "--type",
            TYPES[n % 3],
            f"{label} fact number {n}: the {label} team knows it",
        )
        assert code == 0
        ids.append(json.loads(out)["id"])
    return ids


def _redated(text: str) -> str:
    """A person corrects when a memory was created (the ``created`` line, right after ``status``)."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("created: "))
    lines[at] = "created: 2026-04-30T08:00:00.000Z"
    return "\n".join(lines)


def _merge(into: Clone, other: Clone) -> subprocess.CompletedProcess[str]:
    other.git("push", "--quiet", "origin", "HEAD:main")
    return into.git("pull", "--no-edit", "origin", "main", check=False)


def _shared(a: Clone, b: Clone, count: int) -> list[str]:
    """``count`` memories added in ``a``, committed, merged into ``b`` and imported there."""
    ids = _add(a, "shared", count)
    a.commit("memories")
    assert _merge(b, a).returncode == 0
    assert b("sync")[0] == 0
    return ids


def _conflicted(clone: Clone) -> list[str]:
    return clone.git("diff", "--name-only", "--diff-filter=U").stdout.split()


def test_two_clones_each_add_100_and_both_end_with_200(clones: tuple[Clone, Clone]) -> None:
    a, b = clones
    from_a, from_b = _add(a, "alpha", 100), _add(b, "beta", 100)
    a.commit("alpha memories")
    b.commit("beta memories")
    merged = _merge(b, a)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert _conflicted(b) == []
    b.git("push", "--quiet", "origin", "HEAD:main")
    a.git("pull", "--quiet", "origin", "main")
    for clone in (a, b):
        assert clone("sync")[0] == 0
        held = clone.memories()
        assert set(from_a + from_b) <= set(held) and len(held) == 200
        assert clone.git("status", "--porcelain").stdout == ""  # the sync rewrote no file


def test_disjoint_frontmatter_edits_merge_on_their_own(clones: tuple[Clone, Clone]) -> None:
    a, b = clones
    ids = _shared(a, b, 10)
    for memory_id in ids:
        assert a("forget", memory_id)[0] == 0  # status: forgotten (and a tombstone line)
        path = b.file(memory_id)
        path.write_text(_redated(path.read_text()))  # the line next to ``status``
    assert b("sync")[0] == 0
    a.commit("forget")
    b.commit("provenance")
    merged = _merge(b, a)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert _conflicted(b) == []
    assert b("sync")[0] == 0
    held = b.memories()
    assert all(held[i]["status"] == "superseded" for i in ids)
    assert all("status: forgotten\ncreated: 2026-04-30" in b.file(i).read_text() for i in ids)


def test_without_the_driver_those_edits_conflict(clones: tuple[Clone, Clone]) -> None:
    """What the driver is for: git's line merge alone conflicts on edits of adjacent fields."""
    a, b = clones
    (memory_id,) = _shared(a, b, 1)
    b("uninstall", "git")
    b.commit("no driver")
    a("forget", memory_id)
    path = b.file(memory_id)
    path.write_text(_redated(path.read_text()))
    a.commit("forget")
    b.commit("provenance")
    assert _merge(b, a).returncode != 0 and _conflicted(b) == [f".workmem/memories/decision/{memory_id}.md"]


def test_conflicting_text_edits_are_all_quarantined_and_none_imported(clones: tuple[Clone, Clone]) -> None:
    a, b = clones
    ids = _shared(a, b, 10)
    for memory_id in ids:
        for clone, word in ((a, "alpha"), (b, "beta")):
            path = clone.file(memory_id)
            path.write_text(path.read_text().replace("team knows it", f"team knows it ({word} edit)"))
            assert clone("sync")[0] == 0
    before = {i: m["text"] for i, m in b.memories().items()}
    a.commit("alpha edits")
    b.commit("beta edits")
    merged = _merge(b, a)
    assert merged.returncode != 0
    assert sorted(_conflicted(b)) == sorted(str(b.file(i).relative_to(b.root)) for i in ids)
    b.commit("merge with conflicts left in")  # what a hurried `git add -A; git commit` does
    code, out = b("sync")
    assert code == 3
    assert sum(line.startswith("quarantined ") for line in out.splitlines()) == len(ids)  # 100%
    assert {i: m["text"] for i, m in b.memories().items()} == before  # imported: 0%
    assert all("<<<<<<< ours" in b.file(i).read_text() for i in ids)  # left as they are
