"""``apply_result``, the one write-back of an operation's result (docs/architecture.md, "The workspace
port"): values reach the port only when they differ from the snapshot, a session is deleted only when
it existed, pruned sessions are deleted, and the logs follow in a fixed order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from msgspec.structs import replace

from domain.emitted import Emitted, MigrationAudit
from domain.enums import EventType, MemorySource, Outcome, Phase
from domain.extraction import RejectionRecord
from domain.model import EvidenceInput, MemoryEntry, PendingJournal, SessionState, WorkspaceStore
from domain.operations import OpResult, Snapshot
from domain.timeutil import parse_iso_ms
from domain.workspace_port import apply_result
from tests.support import builders

STAMP: Final = "2026-04-28T08:00:00.000Z"
AT: Final = parse_iso_ms(STAMP) or 0


class Recorder:
    """A :class:`~domain.workspace_port.WorkspacePort` that records every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def put_store(self, store: WorkspaceStore) -> None:
        self.calls.append(("put_store", store))

    def put_journal(self, journal: PendingJournal) -> None:
        self.calls.append(("put_journal", journal))

    def put_session(self, state: SessionState) -> None:
        self.calls.append(("put_session", state.session_id))

    def delete_session(self, session_id: str) -> None:
        self.calls.append(("delete_session", session_id))

    def emit(self, events: Iterable[EvidenceInput]) -> None:
        self.calls.append(("emit", tuple(events)))

    def append_archive(self, entries: Iterable[MemoryEntry]) -> None:
        self.calls.append(("append_archive", tuple(entries)))

    def append_migration_audit(self, records: Iterable[MigrationAudit]) -> None:
        self.calls.append(("append_migration_audit", tuple(records)))

    def append_rejections(self, records: Iterable[RejectionRecord]) -> None:
        self.calls.append(("append_rejections", tuple(records)))


def snapshot(session: SessionState | None = None) -> Snapshot:
    return Snapshot(
        store=builders.store(at=AT),
        journal=builders.journal(at=AT),
        session=session,
    )


def unchanged(snap: Snapshot) -> OpResult:
    return OpResult(store=snap.store, journal=snap.journal, session=snap.session)


def names(port: Recorder) -> list[str]:
    return [name for name, _ in port.calls]


def test_an_unchanged_result_touches_nothing() -> None:
    snap = snapshot(builders.session("s1", at=AT))
    port = Recorder()
    apply_result(port, snap, "s1", unchanged(snap))
    assert port.calls == []


def test_only_changed_values_are_put() -> None:
    snap = snapshot(builders.session("s1", at=AT))
    port = Recorder()
    store = replace(snap.store, migrations=("one",))
    apply_result(port, snap, "s1", replace(unchanged(snap), store=store))
    assert port.calls == [("put_store", store)]
    session = replace(snap.session, turn=1) if snap.session is not None else None
    port = Recorder()
    apply_result(port, snap, "s1", replace(unchanged(snap), session=session))
    assert port.calls == [("put_session", "s1")]


def test_a_session_is_deleted_only_when_it_existed_and_only_for_its_operation() -> None:
    ended = replace(unchanged(snapshot()), session=None, delete_session=True)
    port = Recorder()
    apply_result(port, snapshot(), "s1", ended)
    assert port.calls == []
    snap = snapshot(builders.session("s1", at=AT))
    port = Recorder()
    apply_result(port, snap, "s1", replace(unchanged(snap), session=None, delete_session=True))
    assert port.calls == [("delete_session", "s1")]
    port = Recorder()
    apply_result(port, snap, None, replace(unchanged(snap), session=None, delete_session=True))
    assert port.calls == []


def test_pruned_sessions_and_logs_follow_in_order() -> None:
    snap = snapshot()
    event = EvidenceInput(type=EventType.SESSION_PRUNED, phase=Phase.LIFECYCLE, outcome=Outcome.REMOVED)
    entry = builders.memory("Use pnpm", id="mem_1", source=MemorySource.MANUAL, at=AT)
    audit = MigrationAudit(
        migration_id="m",
        timestamp=STAMP,
        workspace_key=builders.KEY,
        entry_id="mem_1",
        type="decision",
        source="manual",
        text="Use pnpm",
        reasons=(),
        hard_reasons=(),
        before_status="active",
        after_status="active",
    )
    rejection = RejectionRecord(timestamp=STAMP, type="project", text="x", reasons=("too_short",))
    result = replace(
        unchanged(snap),
        pruned_sessions=("old_a", "old_b"),
        emitted=Emitted(events=(event,), archived=(entry,), audit=(audit,), rejections=(rejection,)),
    )
    port = Recorder()
    apply_result(port, snap, None, result)
    assert names(port) == [
        "delete_session",
        "delete_session",
        "emit",
        "append_archive",
        "append_migration_audit",
        "append_rejections",
    ]
    assert port.calls[0][1] == "old_a" and port.calls[5][1] == (rejection,)
