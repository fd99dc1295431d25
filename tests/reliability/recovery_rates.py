"""How much of a workspace comes back after one of its state files is damaged (docs/reliability.md,
"Recovery rates").

A workspace is built through the real code (the Python API, one transaction per call): 490 memories
remembered in one operation, four open sessions with three pending "remember" requests, an edited
file and a failed command each, then 10 more memories remembered one call each, so that the last
write of every file added something its last good generation lacks (the store: the 500th memory; a
session file: its open error). Then one file — the store, the pending journal or the first
session's file — is damaged one way (:mod:`tests.reliability.damage`), one session start
(``open_session``, which reads every state file) runs, and two things are counted:

* **records**: of the damaged file's records before the damage (the store's and the journal's
  entries, the session's pending memories, active files, open errors and recent decisions), how many
  the file holds again after that session start;
* **memories**: of the workspace's 512 memories (500 stored, 12 pending), how many are stored once
  every session has ended (the pending ones are promoted then).

    python -m tests.reliability.recovery_rates        # prints the markdown table
    python -m tests.reliability.recovery_rates --without-previous   # no last good generation
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final, NamedTuple

from adapters.api import WorkingMemory
from adapters.paths import WorkspacePaths, session_file_name, workspace_paths
from domain.codec import decode_journal, decode_session, decode_store
from domain.commands import Remember
from domain.enums import MemoryStatus, MemoryType
from tests.reliability.damage import DAMAGES, damage

#: 2026-05-01T09:00:00.000Z
T0: Final = 1_777_626_000_000
STORED: Final = 500
#: memories remembered one call each at the end (the store's last generations)
ONE_BY_ONE: Final = 10
SESSIONS: Final = ("s1", "s2", "s3", "s4")
REQUESTS_PER_SESSION: Final = 3
FILE_KINDS: Final = ("store", "journal", "session")


class Rate(NamedTuple):
    file_kind: str
    damage: str
    records: int
    records_back: int
    memories: int
    memories_back: int


def stored_text(i: int) -> str:
    return f"Keep module {i} of the billing service independent of module {i + 7} always"


def pending_text(session: str, k: int) -> str:
    return f"in session {session} always run check number {k} before pushing"


def build(home: Path, root: Path) -> None:
    """The workspace described in the module docstring, under ``home``."""
    clock = [T0]
    memory = WorkingMemory(root, home=home, clock=lambda: clock[0])
    memory.run(*(Remember(text=stored_text(i), type=MemoryType.DECISION) for i in range(STORED - ONE_BY_ONE)))
    for session in SESSIONS:
        clock[0] += 1000
        memory.open_session(session)
        for k in range(REQUESTS_PER_SESSION):
            memory.user_message(session, "remember: " + pending_text(session, k))
        memory.tool_result(session, "edit", args={"filePath": f"src/{session}/app.py"})
        failure = "Error: Cannot find module ./config"
        memory.tool_result(session, "bash", args={"command": "npm test"}, output=failure, exit_code=1)
    for i in range(STORED - ONE_BY_ONE, STORED):
        clock[0] += 1000
        memory.remember(stored_text(i), type="decision")


def expected_memories() -> set[str]:
    stored = {stored_text(i) for i in range(STORED)}
    return stored | {pending_text(s, k) for s in SESSIONS for k in range(REQUESTS_PER_SESSION)}


def target(files: WorkspacePaths, file_kind: str) -> Path:
    if file_kind == "session":
        return files.sessions / session_file_name(SESSIONS[0])
    path: Path = getattr(files, file_kind)
    return path


def records(path: Path, file_kind: str) -> set[str]:
    """The records of a store, journal or session file (empty when it is missing or unreadable)."""
    if not path.is_file() or path.is_symlink():
        return set()
    data = path.read_bytes()
    if file_kind == "session":
        state = decode_session(data).value_or(None)
        if state is None:
            return set()
        return (
            {f"pending:{e.id}" for e in state.pending_memories}
            | {f"file:{f.path}" for f in state.active_files}
            | {f"error:{e.id}" for e in state.open_errors}
            | {f"decision:{d.id}" for d in state.recent_decisions}
        )
    value = (decode_store if file_kind == "store" else decode_journal)(data).value_or(None)
    return set() if value is None else {e.id for e in value.entries}


def measure(
    template: Path, scratch: Path, file_kind: str, damage_kind: str, *, previous: bool = True
) -> Rate:
    """Copy the workspace under ``template`` to ``scratch``, damage one file, start a session, count.
    ``previous=False`` removes the file's last good generation first (what its damaged bytes alone
    give back)."""
    home = scratch / "home"
    shutil.copytree(template / "home", home, symlinks=True)
    root = template / "project"
    files = workspace_paths(home, str(root))
    path = target(files, file_kind)
    if not previous:
        path.with_name(path.name + ".prev").unlink(missing_ok=True)
    before = records(path, file_kind)
    damage(path, damage_kind, scratch / "outside")
    # two minutes on: the sessions are not yet idle long enough for the probe to adopt their
    # requests (docs/decisions.md#d22), so the journal's records are still the journal's to count
    memory = WorkingMemory(root, home=home, clock=lambda: T0 + 120_000)
    memory.open_session("probe")
    back = records(path, file_kind) & before
    for session in (*SESSIONS, "probe"):
        memory.end_session(session)
    stored = decode_store(files.store.read_bytes()).unwrap()
    texts = {e.text for e in stored.entries if e.status == MemoryStatus.ACTIVE}
    expected = expected_memories()
    return Rate(file_kind, damage_kind, len(before), len(back), len(expected), len(texts & expected))


def rates(scratch: Path, *, previous: bool = True) -> Iterator[Rate]:
    """Every file kind damaged every way, each on a fresh copy of one built workspace."""
    template = scratch / "template"
    (template / "project").mkdir(parents=True)
    build(template / "home", template / "project")
    for file_kind in FILE_KINDS:
        for damage_kind in DAMAGES:
            case = scratch / f"{file_kind}-{damage_kind}"
            case.mkdir()
            yield measure(template, case, file_kind, damage_kind, previous=previous)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def main(argv: list[str] | None = None) -> int:
    previous = "--without-previous" not in (sys.argv[1:] if argv is None else argv)
    print("| file | damage | records back | memories back |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="workmem-recovery-") as scratch:
        for r in rates(Path(scratch), previous=previous):
            print(
                f"| {r.file_kind} | {r.damage} | {r.records_back} of {r.records} "
                f"({percent(r.records_back, r.records)}) | {r.memories_back} of {r.memories} "
                f"({percent(r.memories_back, r.memories)}) |"
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
