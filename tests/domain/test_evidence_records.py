"""The pure half of the evidence log: record building (docs/decisions.md#evidence-log-records), line
parsing and prune (docs/decisions.md#evidence-log-append-and-prune). The per-memory questions
(docs/decisions.md#evidence-log-per-memory-lifecycle) are answered by the diagnostics
(tests/domain/diagnostics/)."""

from __future__ import annotations

import hashlib
import math

import msgspec

from domain.codec import encode_line
from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.evidence_records import (
    build_record,
    parse_event_line,
    prune,
    prune_indices,
    scrub_paths,
)
from domain.model import EvidenceEvent, EvidenceInput, MemoryRef, Relation
from domain.timeutil import iso_from_ms
from tests.support.builders import event_input as inp

NOW = 1_777_636_800_000  # 2026-05-01T12:00:00Z
DAY = 86_400_000


def h16(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def build(i: EvidenceInput, *, at: int = NOW, eid: str = "evt_1_aaaaaaaa") -> EvidenceEvent:
    return build_record(
        i, event_id=eid, created_at=iso_from_ms(at), workspace_key="k" * 16, workspace_root_hash="r" * 16
    )


def ev(eid: str, at: int, **changes: object) -> EvidenceEvent:
    return msgspec.structs.replace(build(inp(), at=at, eid=eid), **changes)


# ---- build_record -----------------------------------------------------------------------------


def test_record_schema_and_key_order() -> None:
    rec = build(inp(session_id="session-1", message_id="message-1"))
    line = encode_line(rec).decode()
    keys = list(msgspec.json.decode(line))
    assert keys[:9] == [
        "version",
        "eventId",
        "createdAt",
        "workspaceKey",
        "workspaceRootHash",
        "type",
        "phase",
        "outcome",
        "reasonCodes",
    ]
    assert rec.session_hash == h16("session-1")
    assert rec.message_hash == h16("message-1")
    assert rec.type == "promotion_promoted"


def test_reason_codes_are_cleaned_cut_and_capped() -> None:
    codes = ("ok.code:1-x", "bad code/é", "", "x" * 200, *[f"c{i}" for i in range(40)])
    rec = build(inp(reason_codes=codes))
    assert rec.reason_codes[0] == "ok.code:1-x"
    assert rec.reason_codes[1] == "bad_code__"
    assert rec.reason_codes[2] == "x" * 120
    assert len(rec.reason_codes) == 25


def test_sixteen_hex_ids_are_hashed_too_b9() -> None:
    """docs/decisions.md#b9: the reference stored values that already looked like 16-hex hashes verbatim."""
    raw = "ABCDEF0123456789"
    rec = build(
        inp(
            session_id=raw,
            message_id=raw.lower(),
            memory=MemoryRef(memory_id="m", memory_key_hash=raw, identity_key_hash=raw),
        )
    )
    assert rec.session_hash == h16(raw)
    assert rec.message_hash == h16(raw.lower())
    assert rec.memory is not None
    assert rec.memory.memory_key_hash == h16(raw)
    assert raw not in encode_line(rec).decode()
    assert raw.lower() not in encode_line(rec).decode()


def test_raw_keys_are_hashed_in_memory_and_relations() -> None:
    ref = MemoryRef(
        memory_id="m" * 200, memory_key_hash="decision:use pnpm", identity_key_hash="decision:pnpm"
    )
    rec = build(
        inp(memory=ref, relations=tuple(Relation(role=RelationRole.PENDING, memory=ref) for _ in range(30)))
    )
    assert rec.memory is not None
    assert rec.memory.memory_id == "m" * 160
    assert rec.memory.memory_key_hash == h16("decision:use pnpm")
    assert rec.memory.identity_key_hash == h16("decision:pnpm")
    assert len(rec.relations) == 25
    assert rec.relations[0].memory == rec.memory
    assert "use pnpm" not in encode_line(rec).decode()


def test_empty_memory_ref_is_dropped() -> None:
    rec = build(inp(memory=MemoryRef(memory_id=""), relations=(Relation(role=RelationRole.OMITTED),)))
    assert rec.memory is None
    assert rec.relations == (Relation(role=RelationRole.OMITTED, memory=None),)


def test_details_follow_the_type_rules() -> None:
    details: dict[str, object] = {
        "note": "  a\n\n b  ",
        "long": "y" * 500,
        "n": 3,
        "f": 1.5,
        "nan": math.nan,
        "inf": math.inf,
        "flag": True,
        "none": None,
        "strs": tuple(f"s{i}" for i in range(30)),
        "nums": (1, 2.5),
        "empty": (),
        "mixed": ("a", 1),
        "bools": (True, False),
        "nested": {"a": 1},
        "bad key/é": "v",
        "": "dropped",
    }
    rec = build(inp(details=details))
    assert rec.details["note"] == "a b"
    assert rec.details["long"] == "y" * 240
    assert rec.details["n"] == 3 and rec.details["f"] == 1.5
    assert "nan" not in rec.details and "inf" not in rec.details
    assert rec.details["flag"] is True and rec.details["none"] is None
    assert rec.details["strs"] == [f"s{i}" for i in range(25)]
    assert rec.details["nums"] == [1, 2.5]
    assert rec.details["empty"] == []
    assert "mixed" not in rec.details and "bools" not in rec.details and "nested" not in rec.details
    assert rec.details["bad_key__"] == "v"
    assert "" not in rec.details


def test_only_the_first_fifty_detail_entries_are_considered() -> None:
    details = {f"k{i}": i for i in range(60)}
    rec = build(inp(details=details))
    assert list(rec.details) == [f"k{i}" for i in range(50)]


def test_detail_strings_lose_absolute_paths_b18() -> None:
    """docs/decisions.md#b18: hook_failed messages carried absolute paths (``Invalid JSON in /home/...``)."""
    message = "Invalid JSON in /home/alice/.local/share/workmem/workspaces/ab/workspace-memory.json: EISDIR"
    rec = build(
        inp(
            type=EventType.HOOK_FAILED, phase=Phase.HOOK, outcome=Outcome.FAILED, details={"message": message}
        )
    )
    assert rec.details["message"] == "Invalid JSON in <path>: EISDIR"
    assert "alice" not in encode_line(rec).decode()


def test_path_scrub_keeps_ordinary_slashes() -> None:
    assert scrub_paths("use and/or 24/7 with unit/integration") == "use and/or 24/7 with unit/integration"
    assert scrub_paths("cannot write '/tmp/x/y.json' (EROFS)") == "cannot write '<path>' (EROFS)"
    assert scrub_paths("at ~/project/file.ts and C:\\Users\\bob\\x") == "at <path> and <path>"


def test_text_preview_is_redacted_collapsed_and_capped() -> None:
    secret = (
        "password: sushi\nAdmin PIN 是 456123\nBearer abc.def.ghi\n"
        "This candidate is rejected and should be short"
    )
    rejected = build(
        inp(
            type=EventType.EXTRACTION_CANDIDATE_REJECTED,
            phase=Phase.EXTRACTION,
            outcome=Outcome.REJECTED,
            text_preview=secret,
        )
    )
    assert rejected.text_preview is not None
    assert "[REDACTED]" in rejected.text_preview
    assert len(rejected.text_preview) <= 80
    for leaked in ("sushi", "456123", "abc.def.ghi"):
        assert leaked not in rejected.text_preview
    other = build(inp(text_preview="word " * 100))
    assert other.text_preview is not None and len(other.text_preview) == 120
    assert build(inp(text_preview="")).text_preview is None
    assert build(inp(text_preview=None)).text_preview is None


# ---- parse_event_line ---------------------------------------------------------------------------


def test_parse_round_trip() -> None:
    rec = build(inp(session_id="s", details={"a": "b", "n": [1, 2]}))
    assert parse_event_line(encode_line(rec)) == rec


def test_missing_reason_codes_default_to_empty_b32() -> None:
    """docs/decisions.md#b32: a line without reasonCodes made the reference's summary throw."""
    line = '{"version":1,"eventId":"e1","createdAt":"2026-05-01T00:00:00.000Z","type":"render_selected"}'
    event = parse_event_line(line)
    assert event is not None
    assert event.reason_codes == ()
    assert event.phase == "" and event.workspace_key == ""


def test_validity_rule() -> None:
    ok = '{"version":1,"eventId":"e","createdAt":"x","type":"t"}'
    assert parse_event_line(ok) is not None
    assert parse_event_line('{"version":1.0,"eventId":"e","createdAt":"x","type":"t"}') is not None
    for bad in (
        "{not valid json",
        "[]",
        '{"version":2,"eventId":"e","createdAt":"x","type":"t"}',
        '{"version":true,"eventId":"e","createdAt":"x","type":"t"}',
        '{"version":1,"eventId":"","createdAt":"x","type":"t"}',
        '{"version":1,"eventId":"e","type":"t"}',
        '{"version":1,"eventId":"e","createdAt":"x"}',
    ):
        assert parse_event_line(bad) is None, bad


def test_malformed_optional_parts_are_dropped_not_fatal() -> None:
    line = (
        '{"version":1,"eventId":"e","createdAt":"x","type":"t","memory":5,'
        '"relations":[{"role":"nonsense"},{"role":"pending","memory":{"memoryId":"m"}}],"details":[1]}'
    )
    event = parse_event_line(line)
    assert event is not None
    assert event.memory is None
    assert event.relations == (Relation(role=RelationRole.PENDING, memory=MemoryRef(memory_id="m")),)
    assert event.details == {}


# ---- prune ----------------------------------------------------------------------------------------


def test_prune_drops_old_and_unparsable_and_sorts_stably() -> None:
    events = [
        ev("new", NOW),
        ev("old", NOW - 91 * DAY),
        ev("bad-date", NOW, created_at="not a date"),
        ev("mid-a", NOW - DAY),
        ev("mid-b", NOW - DAY),
        ev("edge", NOW - 90 * DAY),
    ]
    kept = [e.event_id for e in prune(events, NOW)]
    assert kept == ["edge", "mid-a", "mid-b", "new"]


def test_prune_keeps_the_newest_5000() -> None:
    events = [ev(f"e{i}", NOW - (6000 - i) * 1000) for i in range(6000)]
    kept = prune(events, NOW)
    assert len(kept) == 5000
    assert kept[0].event_id == "e1000" and kept[-1].event_id == "e5999"


def test_prune_byte_cap_drops_the_oldest() -> None:
    events = [ev(f"e{i}", NOW - (100 - i) * 1000) for i in range(100)]
    sizes = [30_000] * 100  # 3 MB in total
    kept = prune_indices(events, NOW, sizes=sizes)
    assert len(kept) == 2 * 1024 * 1024 // 30_000
    assert kept[-1] == 99 and kept == tuple(range(100 - len(kept), 100))


# ---- schema ---------------------------------------------------------------------------------------


def test_relation_roles_are_the_twelve_of_the_schema() -> None:
    assert [r.value for r in RelationRole] == [
        "candidate",
        "pending",
        "promoted",
        "retained",
        "absorbed",
        "superseded",
        "superseded_by",
        "reinforced",
        "reinforced_by",
        "rendered",
        "omitted",
        "removed",
    ]
