"""Properties of evidence records (docs/decisions.md#evidence-log-records,
docs/decisions.md#evidence-log-append-and-prune): records round-trip, never carry secrets or raw ids, stay
within their bounds; prune keeps its bounds and the newest events; grouping by memory id keeps every event
that names the memory."""

from __future__ import annotations

import math
import re
import string
from typing import Any

import msgspec
from hypothesis import given, strategies as st

from domain.codec import encode_line
from domain.diagnostics import group_by_memory_id
from domain.enums import EventType, Outcome, Phase, RelationRole
from domain.evidence_records import (
    build_record,
    event_time_ms,
    parse_event_line,
    prune_indices,
)
from domain.ids import event_id
from domain.limits import EvidenceLogLimits
from domain.model import EvidenceEvent, EvidenceInput, MemoryRef, Relation
from domain.timeutil import iso_from_ms
from property_tests.secret_strategies import filler, secrets
from property_tests.shapes import steady_dictionaries, steady_lists

NOW = 1_777_636_800_000
DAY = 86_400_000
EVENT_ID = re.compile(r"^evt_\d+_[a-z0-9]{8}\Z")
HASH = re.compile(r"^[0-9a-f]{16}\Z")
CODE = re.compile(r"^[A-Za-z0-9_.:-]{1,120}\Z")
KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,80}\Z")

# ---- strategies -------------------------------------------------------------------------------------

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
detail_values = st.one_of(
    st.text(max_size=300),
    numbers,
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=50), max_size=30).map(tuple),
    st.lists(numbers, max_size=30).map(tuple),
    st.lists(st.one_of(st.text(max_size=5), st.integers(), st.booleans()), max_size=5).map(tuple),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
refs = st.builds(
    MemoryRef,
    memory_id=st.none() | st.text(max_size=200),
    memory_key_hash=st.none() | st.text(max_size=40),
    identity_key_hash=st.none() | st.text(max_size=40),
    type=st.none() | st.sampled_from(("decision", "project", "feedback", "reference", "")),
    source=st.none() | st.sampled_from(("explicit", "compaction", "manual")),
    status=st.none() | st.sampled_from(("active", "superseded")),
)
relations = st.builds(Relation, role=st.sampled_from(list(RelationRole)), memory=refs | st.none())
inputs = st.builds(
    EvidenceInput,
    type=st.sampled_from(list(EventType)),
    phase=st.sampled_from(list(Phase)),
    outcome=st.sampled_from(list(Outcome)),
    reason_codes=steady_lists(st.text(max_size=150), max_size=40).map(tuple),
    session_id=st.none() | st.text(max_size=40),
    message_id=st.none() | st.text(max_size=40),
    memory=st.none() | refs,
    relations=steady_lists(relations, max_size=30).map(tuple),
    details=steady_dictionaries(st.text(max_size=100), detail_values, max_size=60),
    text_preview=st.none() | st.text(max_size=300),
)


def build(inp: EvidenceInput, seq: int = 0) -> EvidenceEvent:
    return build_record(
        inp,
        event_id=event_id(NOW, seq, str(inp.type)),
        created_at=iso_from_ms(NOW),
        workspace_key="0123456789abcdef",
        workspace_root_hash="fedcba9876543210",
    )


# ---- records ----------------------------------------------------------------------------------------


@given(inputs)
def test_every_record_round_trips(inp: EvidenceInput) -> None:
    record = build(inp)
    assert EVENT_ID.match(record.event_id)
    assert parse_event_line(encode_line(record)) == record
    assert parse_event_line(encode_line(record).decode()) == record


def _hash_fields(record: EvidenceEvent) -> list[str | None]:
    refs_: list[MemoryRef | None] = [record.memory, *(r.memory for r in record.relations)]
    fields = [record.session_hash, record.message_hash]
    for ref in refs_:
        if ref is not None:
            fields += [ref.memory_key_hash, ref.identity_key_hash]
    return fields


def _all_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _all_strings(item)]
    return []


@given(inputs)
def test_records_stay_within_their_bounds(inp: EvidenceInput) -> None:
    record = build(inp)
    assert len(record.reason_codes) <= 25
    assert all(CODE.match(code) for code in record.reason_codes)
    assert len(record.relations) <= 25
    assert len(record.details) <= 50
    for key, value in record.details.items():
        assert KEY.match(key)
        if isinstance(value, list):
            assert len(value) <= 25
            kinds = {type(item) is str for item in value}
            assert len(kinds) <= 1, "mixed arrays are never stored"
            assert all(not isinstance(item, bool) for item in value)
        assert not isinstance(value, dict)
        for number in value if isinstance(value, list) else [value]:
            if isinstance(number, float):
                assert math.isfinite(number)
        for text in _all_strings(value):
            assert len(text) <= EvidenceLogLimits.MAX_DETAIL_STRING_CHARS
    limit = 80 if inp.type == EventType.EXTRACTION_CANDIDATE_REJECTED else 120
    if record.text_preview is not None:
        assert 0 < len(record.text_preview) <= limit
    for value in _hash_fields(record):
        assert value is None or HASH.match(value)
    if record.memory is not None:
        assert record.memory != MemoryRef()
        assert record.memory.memory_id is None or 0 < len(record.memory.memory_id) <= 160


raw_ids = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=6, max_size=30).map(
    lambda s: f"RAW-{s}"
)
raw_keys = st.text(alphabet=string.ascii_lowercase + " ", min_size=6, max_size=40).map(
    lambda s: f"decision:qq {s}"
)
hex16 = st.text(alphabet="0123456789abcdefABCDEF", min_size=16, max_size=16)


@given(
    session_id=st.one_of(raw_ids, hex16),
    message_id=st.one_of(raw_ids, hex16),
    key=st.one_of(raw_keys, hex16),
    identity=raw_keys,
    text=filler(),
)
def test_no_raw_id_or_key_is_ever_stored(
    session_id: str, message_id: str, key: str, identity: str, text: str
) -> None:
    """Raw ids and keys never reach a record, not even 16-hex ones (docs/decisions.md#b9)."""
    ref = MemoryRef(memory_id="mem_1", memory_key_hash=key, identity_key_hash=identity)
    record = build(
        EvidenceInput(
            type=EventType.PENDING_MEMORY_APPENDED,
            phase=Phase.PENDING_JOURNAL,
            outcome=Outcome.ACCEPTED,
            session_id=session_id,
            message_id=message_id,
            memory=ref,
            relations=(Relation(role=RelationRole.PENDING, memory=ref),),
            text_preview=text or None,
        )
    )
    # the record's own workspace fields are fixed test values; a generated 16-hex "raw" value may
    # coincide with them, so look only at the rest of the line
    line = encode_line(record).decode()
    line = line.replace(record.workspace_key, "").replace(record.workspace_root_hash, "")
    for raw in (session_id, message_id, key, identity):
        assert raw not in line
        assert raw.lower() not in line
    assert all(v is None or HASH.match(v) for v in _hash_fields(record))


@given(secret=secrets(), event_type=st.sampled_from(list(EventType)), key=st.text(max_size=10))
def test_no_secret_reaches_a_record(
    secret: tuple[str, tuple[str, ...]], event_type: EventType, key: str
) -> None:
    text, values = secret
    record = build(
        EvidenceInput(
            type=event_type,
            phase=Phase.EXTRACTION,
            outcome=Outcome.REJECTED,
            text_preview=text,
            details={"note": text, key or "k": (text, text), "message": f"failed: {text}"},
        )
    )
    stored_text = [record.text_preview or "", *(s for v in record.details.values() for s in _all_strings(v))]
    for value in values:
        assert all(value not in field for field in stored_text)


@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_parsing_any_line_never_raises(line: str | bytes) -> None:
    result = parse_event_line(line)
    assert result is None or isinstance(result, EvidenceEvent)


# ---- prune ------------------------------------------------------------------------------------------


#: Small limits, so that every cap binds often; the real limits are pinned by the example tests.
SMALL = {"max_age_days": 90, "max_events": 40, "max_bytes": 2_000}


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[EvidenceEvent], list[int]]:
    """Up to 120 events with ages of -2..110 days (some unparsable), in any order, and line sizes."""
    count = draw(st.integers(0, 120))
    age = st.integers(-2 * DAY, 110 * DAY) | st.sampled_from([90 * DAY, 90 * DAY + 1, 0]) | st.none()
    ages = draw(st.lists(age, min_size=count, max_size=count))
    sizes = draw(st.lists(st.integers(1, 120), min_size=len(ages), max_size=len(ages)))
    template = EvidenceEvent(
        version=1,
        event_id="e",
        created_at="",
        workspace_key="k",
        workspace_root_hash="r",
        type="render_selected",
        phase="render",
        outcome="rendered",
    )
    events = [
        msgspec.structs.replace(
            template, event_id=f"e{i}", created_at="bad" if age is None else iso_from_ms(NOW - age)
        )
        for i, age in enumerate(ages)
    ]
    return events, sizes


@given(logs())
def test_prune_bounds_order_and_newest_kept(log: tuple[list[EvidenceEvent], list[int]]) -> None:
    events, sizes = log
    kept = prune_indices(events, NOW, sizes=sizes, **SMALL)
    cutoff = NOW - 90 * DAY
    assert len(kept) <= SMALL["max_events"]
    assert sum(sizes[i] for i in kept) <= SMALL["max_bytes"]
    assert len(set(kept)) == len(kept)
    times = [event_time_ms(events[i]) for i in kept]
    assert all(t >= cutoff for t in times)
    assert list(zip(times, kept, strict=True)) == sorted(zip(times, kept, strict=True))  # by time, stable
    # the kept events are exactly the newest eligible ones (a suffix of the time-sorted eligible list)
    eligible = sorted((event_time_ms(e), i) for i, e in enumerate(events) if event_time_ms(e) >= cutoff)
    assert [i for _, i in eligible[len(eligible) - len(kept) :]] == list(kept)
    if len(kept) < len(eligible):  # something eligible was dropped: a cap forced it
        dropped_next = eligible[len(eligible) - len(kept) - 1][1]
        over_count = len(kept) == SMALL["max_events"]
        over_bytes = sum(sizes[i] for i in kept) + sizes[dropped_next] > SMALL["max_bytes"]
        assert over_count or over_bytes


def test_prune_defaults_are_the_documented_limits() -> None:
    events = [
        msgspec.structs.replace(
            EvidenceEvent(
                version=1,
                event_id="e",
                created_at=iso_from_ms(NOW),
                workspace_key="k",
                workspace_root_hash="r",
                type="t",
                phase="p",
                outcome="o",
            ),
            event_id=f"e{i}",
        )
        for i in range(5001)
    ]
    assert len(prune_indices(events, NOW, sizes=[1] * 5001)) == 5000
    assert len(prune_indices(events, NOW, sizes=[1024] * 5001)) == 2048
    old = [msgspec.structs.replace(events[0], created_at=iso_from_ms(NOW - 90 * DAY - 1))]
    assert prune_indices(old, NOW) == ()


# ---- grouping by memory id (the one per-memory engine, domain.diagnostics) -------------------------

small_ids = st.sampled_from(("m1", "m2", "m3"))
query_refs = st.builds(MemoryRef, memory_id=small_ids | st.none(), memory_key_hash=small_ids | st.none())
query_inputs = st.builds(
    EvidenceInput,
    type=st.sampled_from(
        [EventType.PROMOTION_PROMOTED, EventType.RENDER_OMITTED, EventType.MEMORY_REINFORCED]
    ),
    phase=st.sampled_from([Phase.PROMOTION, Phase.RENDER]),
    outcome=st.sampled_from([Outcome.PROMOTED, Outcome.OMITTED, Outcome.REINFORCED]),
    session_id=st.sampled_from(("s1", "s2")) | st.none(),
    memory=query_refs | st.none(),
    relations=steady_lists(
        st.builds(Relation, role=st.just(RelationRole.REINFORCED), memory=query_refs), max_size=2
    ).map(tuple),
)


@given(steady_lists(query_inputs, max_size=25), small_ids)
def test_a_memory_groups_every_event_naming_it_once_in_file_order(
    items: list[EvidenceInput], memory_id: str
) -> None:
    events = [build(inp, seq) for seq, inp in enumerate(items)]

    def names(e: EvidenceEvent) -> set[str | None]:
        found = {e.memory.memory_id if e.memory else None}
        return found | {r.memory.memory_id for r in e.relations if r.memory}

    expected = tuple(e for e in events if memory_id in names(e))
    assert group_by_memory_id(events).get(memory_id, ()) == expected
