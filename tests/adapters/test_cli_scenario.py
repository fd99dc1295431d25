"""The multi-session scenario of the lifecycle issue, driven entirely through the command line:
two sessions with explicit memories, one compaction with three candidates (one duplicate, one
rejected by the gate, one new), one session ending without compaction, a 20-day break and a return.
``list --json``, ``context`` and ``health --json`` are asserted at every step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters import paths
from domain.limits import DAY_MS
from domain.timeutil import parse_iso_ms
from tests.support.cli import T0, Cli

MIN = 60_000
HEADER = "Workspace memory (cross-session, verify if stale):"
PNPM = "always use pnpm, never npm, in this repository"
BRITISH = "write all user-facing text in British English spelling."
MSGSPEC = "Use msgspec structs for every persisted value because decoding is fast"
SUMMARY = f"""## Goal
Finish the storage layer.

## Progress
Wave 1 is done.

Memory candidates:
- [project] Always use pnpm, never npm, in this repository
- [project] Wave 1 completed and all tests passed
- [decision] {MSGSPEC}
"""


def health(cli: Cli) -> dict[str, Any]:
    data: dict[str, Any] = cli.ok("health", "--json").json()
    return data


def summary(cli: Cli) -> dict[str, int]:
    return dict(health(cli)["summary"])


def events(cli: Cli) -> list[dict[str, Any]]:
    log = paths.workspace_paths(cli.home, str(cli.workspace)).evidence
    return [json.loads(line) for line in log.read_text().splitlines()]


def event_types(cli: Cli) -> list[str]:
    return [e["type"] for e in events(cli)]


def texts(rows: list[dict[str, Any]]) -> list[str]:
    return [r["text"] for r in rows]


def test_two_sessions_compaction_break_and_return(cli: Cli, tmp_path: Path) -> None:
    layout = paths.workspace_paths(cli.home, str(cli.workspace))

    # --- 09:00 session A opens on an empty workspace ---------------------------------------
    assert cli.ok("context", "--session", "A").out == ""
    assert cli.memories() == []
    assert summary(cli)["storedActive"] == 0

    # --- A asks for an explicit memory: pending, owned by A, visible only in A's hot state -----
    run = cli.ok("message", "--session", "A", "Remember this: always use pnpm, never npm, in this repository")
    assert run.out == f"pending [project] {PNPM}\n"
    assert cli.memories() == []
    assert cli.ok("context", "--session", "A").out == (
        f"Hot session state (current session):\npending_memories:\n- [project] {PNPM}\n"
    )
    s = summary(cli)
    assert (s["storedActive"], s["pending"]) == (0, 1)
    journal = json.loads(layout.journal.read_text())
    assert [e["pendingOwnerSessionID"] for e in journal["entries"]] == ["A"]

    # --- 09:05 session B opens and asks for its own memory --------------------------------------
    cli.at_ms(T0 + 5 * MIN)
    assert cli.ok("context", "--session", "B").out == ""
    run = cli.ok(
        "message", "--session", "B", "From now on, write all user-facing text in British English spelling."
    )
    assert run.out == f"pending [feedback] {BRITISH}\n"
    # B's block and hot state never show A's pending memory
    assert cli.ok("context", "--session", "B").out == (
        f"Hot session state (current session):\npending_memories:\n- [feedback] {BRITISH}\n"
    )
    assert summary(cli)["pending"] == 2

    # --- 09:30 A compacts: a duplicate of its pending memory, a progress note, a new decision ---
    cli.at_ms(T0 + 30 * MIN)
    run = cli.ok("compacted", "--session", "A", "-", stdin=SUMMARY)
    assert run.out.splitlines() == [
        "accept [project] Always use pnpm, never npm, in this repository",
        "reject progress_snapshot: Wave 1 completed and all tests passed",
        f"accept [decision] {MSGSPEC}",
        f"promoted [project] {PNPM}",
        f"promoted [decision] {MSGSPEC}",
    ]
    rows = cli.memories()
    assert sorted(texts(rows)) == sorted([PNPM, MSGSPEC])  # the duplicate did not make a second entry
    assert {r["source"] for r in rows} == {"explicit", "compaction"}
    assert all(r["rendered"] for r in rows)
    # a new cache epoch: A's block now holds both memories, its pending list is empty
    assert cli.ok("context", "--session", "A").out == (
        f"{HEADER}\nproject:\n- [R1] {PNPM}\ndecision:\n- [R2] {MSGSPEC}\n"
    )
    s = summary(cli)
    assert (s["storedActive"], s["rendered"], s["pending"], s["rejectedLast7Days"]) == (2, 2, 1, 1)
    # B's memory is still pending and owned by B; B's frozen (empty) block is unchanged in its epoch
    journal = json.loads(layout.journal.read_text())
    assert [(e["text"], e["pendingOwnerSessionID"]) for e in journal["entries"]] == [(BRITISH, "B")]
    assert cli.ok("context", "--session", "B").out == (
        f"Hot session state (current session):\npending_memories:\n- [feedback] {BRITISH}\n"
    )
    # the gate's rejection is in the global rejection log, scoped to this workspace
    [record] = [json.loads(x) for x in paths.rejection_log(cli.home).read_text().splitlines()]
    assert record["reasons"][0] == "progress_snapshot"
    assert record["workspaceKey"] == layout.directory.name
    types = event_types(cli)
    for expected in (
        "explicit_memory_detected",
        "pending_memory_appended",
        "extraction_candidate_accepted",
        "extraction_candidate_rejected",
        "promotion_promoted",
        "pending_memory_cleared",
        "render_selected",
    ):
        assert expected in types
    decision_id = next(r["id"] for r in rows if r["text"] == MSGSPEC)
    decision_strength_at_promotion = next(r["strength"] for r in rows if r["id"] == decision_id)

    # --- 10:00 B ends without compaction: what it still owns is promoted (docs/decisions.md#d7) -
    cli.at_ms(T0 + 60 * MIN)
    run = cli.ok("end-session", "--session", "B")
    assert run.out == f"promoted [feedback] {BRITISH}\n"
    assert sorted(texts(cli.memories())) == sorted([PNPM, MSGSPEC, BRITISH])
    assert json.loads(layout.journal.read_text())["entries"] == []
    # B's file went with it (and its last good generation, docs/decisions.md#last-good-generation)
    a_file = paths.session_file_name("A")
    assert sorted(p.name for p in layout.sessions.iterdir()) == [a_file, a_file + ".prev"]
    s = summary(cli)
    assert (s["storedActive"], s["rendered"], s["pending"]) == (3, 3, 0)

    # --- a 20-day break: read-only commands see the decay but write nothing ----------------------
    cli.at_ms(T0 + 20 * DAY_MS + 60 * MIN)
    before = {p: p.read_bytes() for p in cli.home.rglob("*") if p.is_file()}
    rows = cli.memories()
    health(cli)
    assert {p: p.read_bytes() for p in cli.home.rglob("*") if p.is_file()} == before
    # the dormant days past the 14-day grace count at 0.25 (docs/decisions.md#d3)
    last_activity = parse_iso_ms(json.loads(layout.store.read_text())["lastActivityAt"])
    assert last_activity is not None and T0 <= last_activity <= T0 + 60 * MIN
    created = T0 + 30 * MIN
    now = cli.now_ms
    dormant = now - (last_activity + 14 * DAY_MS)
    effective_days = ((now - created) - 0.75 * dormant) / DAY_MS
    decision = next(r for r in rows if r["id"] == decision_id)
    expected = decision_strength_at_promotion * 2 ** (-effective_days / 45)
    assert abs(decision["strength"] - expected) < 1e-5
    assert decision["strength"] > decision_strength_at_promotion * 2 ** (-((now - created) / DAY_MS) / 45)

    # --- A returns: a fresh epoch with all three memories, the dormant span is recorded ------------
    out = cli.ok("context", "--session", "A").out
    # each entry tagged with its short id: PNPM and MSGSPEC keep theirs, BRITISH is the third
    assert out == (
        f"{HEADER}\nfeedback:\n- [R3] {BRITISH}\nproject:\n- [R1] {PNPM}\ndecision:\n- [R2] {MSGSPEC}\n"
    )
    assert "workspace_dormancy_recorded" in event_types(cli)
    store = json.loads(layout.store.read_text())
    [span] = store["dormantSpans"]
    assert span == {"start": last_activity + 14 * DAY_MS, "end": now}
    assert parse_iso_ms(store["lastActivityAt"]) == now
    after = cli.memories()
    assert [r["id"] for r in after] == [r["id"] for r in rows]
    assert abs(next(r for r in after if r["id"] == decision_id)["strength"] - expected) < 1e-5
    data = health(cli)
    assert (data["summary"]["storedActive"], data["summary"]["rendered"], data["summary"]["pending"]) == (
        3,
        3,
        0,
    )
    assert {m["status"] for m in data["memories"]} == {"rendered"}
    assert any(e["type"] == "workspace_dormancy_recorded" for e in data["recentEvents"])
    # the same epoch returns the same block byte for byte, whatever else happened since
    cli.at_ms(now + 10 * MIN)
    cli.ok("remember", "Keep commit messages in the imperative mood", "--type", "feedback")
    assert cli.ok("context", "--session", "A").out == out
