"""The domain model and its JSON codec: files written by opencode-working-memory v1.3-v1.5 decode,
unknown fields survive a decode/encode round trip, new workmem fields are omitted when empty, and bad
input gives a typed failure value instead of an exception (docs/decisions.md#d11)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, strategies as st
from returns.pipeline import is_successful

from domain.codec import (
    INVALID_ENTRIES_KEY,
    DecodeFailure,
    decode,
    decode_journal,
    decode_session,
    decode_store,
    encode_line,
    encode_pretty,
)
from domain.enums import Importance, MemorySource, MemoryStatus, MemoryType
from domain.model import EvidenceEvent, SessionState, WorkspaceRef, WorkspaceStore

REFERENCE_ENTRY: dict[str, Any] = {
    "id": "mem_1777363200000_k3j9x1",
    "type": "decision",
    "text": "Use npm cache for plugin loading, not npm link",
    "rationale": "npm link breaks peer deps",
    "source": "compaction",
    "confidence": 0.75,
    "status": "active",
    "createdAt": "2026-04-28T08:00:00.000Z",
    "updatedAt": "2026-04-28T08:00:00.000Z",
    "staleAfterDays": 45,
    "supersedes": ["mem_old"],
    "tags": ["quality_cleanup"],
    "pendingOwnerSessionID": "ses_abc",
    "pendingMessageID": "msg_1",
    "promotionAttempts": 1,
    "lastPromotionAttemptAt": "2026-04-28T09:00:00.000Z",
    "lastPromotionFailureReason": "rejected_capacity",
    "retentionClock": 1777363200000,
    "reinforcementCount": 2,
    "lastReinforcedAt": 1777449600000,
    "lastReinforcedSessionID": "ses_def",
    "userImportance": "high",
    "safetyCritical": True,
}

REFERENCE_STORE: dict[str, Any] = {
    "version": 1,
    "workspace": {"root": "/home/dev/project", "key": "0123456789abcdef"},
    "limits": {"maxRenderedChars": 3600, "maxEntries": 28},
    "entries": [
        REFERENCE_ENTRY,
        {**REFERENCE_ENTRY, "id": "mem_2", "status": "superseded", "type": "project"},
    ],
    "migrations": [
        "2026-04-28-quality-cleanup",
        "2026-04-26-p0-cleanup",
        "2026-05-01-retention-clock-backfill",
    ],
    "updatedAt": "2026-04-28T10:00:00.000Z",
    "lastActivityAt": "2026-04-28T10:00:00.000Z",
}

REFERENCE_SESSION: dict[str, Any] = {
    "version": 1,
    "sessionID": "ses_abc",
    "turn": 0,
    "updatedAt": "2026-04-28T10:00:00.000Z",
    "activeFiles": [{"path": "/repo/src/a.ts", "action": "edit", "count": 3, "lastSeen": 1777370000000}],
    "openErrors": [
        {
            "id": "err_0123456789ab",
            "category": "typecheck",
            "summary": "src/a.ts(1,1): error TS2345: bad type",
            "command": "npm run typecheck",
            "file": "src/a.ts",
            "fingerprint": "0123456789ab",
            "status": "open",
            "firstSeen": 1777370000000,
            "lastSeen": 1777370000000,
            "seenCount": 1,
        }
    ],
    "recentDecisions": [
        {
            "id": "decision_1777370000000_abc123",
            "text": "Use pnpm",
            "source": "user",
            "createdAt": 1777370000000,
        }
    ],
    "pendingMemories": [REFERENCE_ENTRY],
}


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _roundtrip(raw: dict[str, Any]) -> dict[str, Any]:
    store = decode_store(_json(raw)).unwrap()
    decoded: dict[str, Any] = json.loads(encode_pretty(store))
    return decoded


def test_a_reference_v1_5_store_decodes_with_every_field() -> None:
    store = decode_store(_json(REFERENCE_STORE)).unwrap()
    entry = store.entries[0]
    assert entry.type is MemoryType.DECISION and entry.source is MemorySource.COMPACTION
    assert entry.status is MemoryStatus.ACTIVE and entry.user_importance is Importance.HIGH
    assert entry.pending_owner_session_id == "ses_abc" and entry.last_reinforced_session_id == "ses_def"
    assert entry.retention_clock == 1777363200000 and entry.reinforcement_count == 2
    assert entry.safety_critical is True and entry.supersedes == ("mem_old",)
    assert store.entries[1].status is MemoryStatus.SUPERSEDED
    assert store.last_activity_at == "2026-04-28T10:00:00.000Z"


def test_a_reference_store_round_trips_unchanged() -> None:
    assert _roundtrip(REFERENCE_STORE) == REFERENCE_STORE


def test_unknown_fields_survive_at_every_level() -> None:
    raw = json.loads(json.dumps(REFERENCE_STORE))
    raw["futureTopLevel"] = {"nested": [1, 2, 3]}
    raw["workspace"]["label"] = "mine"
    raw["limits"]["targetRenderedChars"] = 3000
    raw["entries"][0]["embedding"] = [0.1, 0.2]
    raw["entries"][1]["reviewer"] = None
    assert _roundtrip(raw) == raw


def test_a_v1_3_store_without_new_fields_decodes() -> None:
    raw = {k: v for k, v in REFERENCE_STORE.items() if k not in ("lastActivityAt", "migrations")}
    raw["entries"] = [{k: v for k, v in REFERENCE_ENTRY.items() if k in _V13_FIELDS}]
    store = decode_store(_json(raw)).unwrap()
    assert store.last_activity_at is None and store.migrations == ()
    assert store.entries[0].retention_clock is None


_V13_FIELDS = {
    "id",
    "type",
    "text",
    "source",
    "confidence",
    "status",
    "createdAt",
    "updatedAt",
    "staleAfterDays",
}


def test_workmem_fields_are_omitted_when_empty_and_kept_when_set() -> None:
    store = WorkspaceStore(workspace=WorkspaceRef(root="/r", key="k"), updated_at="2026-01-01T00:00:00.000Z")
    encoded = json.loads(encode_line(store))
    assert encoded == {
        "version": 1,
        "workspace": {"root": "/r", "key": "k"},
        "limits": {"maxRenderedChars": 3600, "maxEntries": 28},
        "entries": [],
        "migrations": [],
        "updatedAt": "2026-01-01T00:00:00.000Z",
    }
    with_revision = msgspec.structs.replace(store, revision=3)
    assert json.loads(encode_line(with_revision))["revision"] == 3


def test_session_and_journal_files_round_trip() -> None:
    session = decode_session(_json(REFERENCE_SESSION)).unwrap()
    assert isinstance(session, SessionState) and session.session_id == "ses_abc"
    assert json.loads(encode_pretty(session)) == REFERENCE_SESSION
    journal_raw = {
        "version": 1,
        "workspace": {"root": "/home/dev/project", "key": "0123456789abcdef"},
        "entries": [REFERENCE_ENTRY],
        "updatedAt": "2026-04-28T10:00:00.000Z",
    }
    journal = decode_journal(_json(journal_raw)).unwrap()
    assert json.loads(encode_pretty(journal)) == journal_raw


def test_an_evidence_line_decodes() -> None:
    line = {
        "version": 1,
        "eventId": "evt_1777370000000_abcd1234",
        "createdAt": "2026-04-28T10:00:00.000Z",
        "workspaceKey": "0123456789abcdef",
        "workspaceRootHash": "fedcba9876543210",
        "type": "promotion_promoted",
        "phase": "promotion",
        "outcome": "promoted",
        "reasonCodes": ["new_workspace_entry"],
        "memory": {"memoryId": "mem_1", "type": "decision", "source": "explicit", "status": "active"},
        "relations": [{"role": "promoted", "memory": {"memoryId": "mem_1"}}],
    }
    event = decode(_json(line), EvidenceEvent).unwrap()
    assert event.memory is not None and event.memory.memory_id == "mem_1"
    assert json.loads(encode_line(event)) == line


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"{not json", "invalid_json"),
        (b"", "invalid_json"),
        (b"[]", "invalid_shape"),
        (b'{"version": 1}', "invalid_shape"),
        (b'{"workspace": {"root": "/r", "key": "k"}, "updatedAt": 5}', "invalid_shape"),
        (b'{"workspace": {"root": "/r", "key": "k"}, "updatedAt": "x", "entries": "nope"}', "invalid_shape"),
    ],
)
def test_bad_input_is_a_typed_failure_not_an_exception(data: bytes, kind: str) -> None:
    result = decode_store(data)
    assert not is_successful(result)
    failure = result.failure()
    assert isinstance(failure, DecodeFailure) and failure.kind == kind and failure.message


def test_one_malformed_entry_is_kept_verbatim_not_lost() -> None:
    broken = {"id": "weird", "type": "opinion", "text": 42}
    raw = {**REFERENCE_STORE, "entries": [REFERENCE_ENTRY, broken]}
    store = decode_store(_json(raw)).unwrap()
    assert [e.id for e in store.entries] == [REFERENCE_ENTRY["id"]]
    assert store.extras[INVALID_ENTRIES_KEY] == [broken]
    assert json.loads(encode_line(store))[INVALID_ENTRIES_KEY] == [broken]


def test_structs_are_frozen() -> None:
    store = decode_store(_json(REFERENCE_STORE)).unwrap()
    with pytest.raises(AttributeError):
        store.entries[0].text = "changed"  # type: ignore[misc]


_KNOWN = (
    set(REFERENCE_ENTRY)
    | set(REFERENCE_STORE)
    | {"supersededBy", "lastRenderedAt", "absorbedIds", "__extras__", INVALID_ENTRIES_KEY}
    | {"revision", "dormantSpans", "tombstones", "archived"}
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
extra_fields = st.dictionaries(
    st.text(min_size=1, max_size=12).filter(lambda k: k not in _KNOWN), json_values, max_size=4
)


@given(extra_fields, extra_fields)
def test_arbitrary_unknown_fields_survive_a_round_trip(
    top: dict[str, Any], per_entry: dict[str, Any]
) -> None:
    raw = json.loads(json.dumps(REFERENCE_STORE))
    raw.update({k: v for k, v in top.items() if k not in raw})
    raw["entries"][0].update(per_entry)
    assert _roundtrip(raw) == raw


def test_unknown_fields_of_nested_session_values_survive() -> None:
    raw = json.loads(json.dumps(REFERENCE_SESSION))
    raw["activeFiles"][0]["language"] = "typescript"
    raw["openErrors"][0]["severity"] = 2
    raw["recentDecisions"][0]["author"] = "me"
    session = decode_session(_json(raw)).unwrap()
    assert json.loads(encode_pretty(session)) == raw


def test_one_malformed_pending_memory_does_not_sink_the_session() -> None:
    broken = {"id": "x", "type": "opinion"}
    raw = {**REFERENCE_SESSION, "pendingMemories": [REFERENCE_ENTRY, broken]}
    session = decode_session(_json(raw)).unwrap()
    assert [m.id for m in session.pending_memories] == [REFERENCE_ENTRY["id"]]
    assert session.extras[INVALID_ENTRIES_KEY] == [broken]


def test_store_head_reads_the_top_fields_only_of_a_store_workmem_wrote() -> None:
    from domain.codec import decode_store_head

    written = (
        b'{"workspace": {"root": "/w", "key": "k"}, "updatedAt": "t", "lastActivityAt": "a",'
        b' "entries": [{"not": "an entry"}], "revision": 3}'
    )
    head = decode_store_head(written)
    assert head is not None and head.entries == () and head.last_activity_at == "a"
    assert head.workspace.root == "/w" and head.revision == 3
    assert decode_store_head(b'{"workspace": {"root": "/w", "key": "k"}, "updatedAt": "t"}') is None
    assert decode_store_head(b"{not json") is None
    assert decode_store_head(b"[]") is None
    assert decode_store_head(b"\xff\xfe") is None
