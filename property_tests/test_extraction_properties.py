"""Properties of the two parsers (docs/decisions.md#explicit-requests,
docs/decisions.md#compaction-candidates), with the changes of docs/decisions.md#d4 and
docs/decisions.md#d10: negation covers every trigger form, overlapping triggers give one entry, stored text is
redacted, candidate lines are deduped within a summary)."""

from __future__ import annotations

import msgspec
from hypothesis import given, strategies as st

from domain.enums import EventType, MemorySource, MemoryStatus, MemoryType, Phase
from domain.extraction import (
    ExtractionResult,
    extract_explicit,
    parse_compaction_candidates,
    stale_after_days_for,
)
from domain.safety import QUALITY_REASON_ORDER, redact
from domain.text import JS_WHITESPACE, collapse_whitespace
from domain.timeutil import parse_iso_ms
from property_tests.secret_strategies import secrets
from property_tests.shapes import steady_lists

NOW = 1_767_225_600_123
LINE_TERMINATORS = "\n\r\u2028\u2029"

# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

TRIGGERS = [
    "remember",
    "remember this",
    "Remember that",
    "please remember",
    "save this to memory",
    "add to memory",
    "commit this to memory",
    "記住",
    "记住",
    "請記住這點",
    "記得",
    "记下来",
    "覚えて",
    "覚えておいて",
    "忘れないで",
    "メモして",
    "기억해",
    "기억해줘",
    "잊지 마",
    "메모해",
    "from now on",
    "going forward",
    "从现在开始",
    "從今以後",
    "以後請",
    "以后都",
    "我偏好",
    "i prefer",
    "My preference is",
]
UNANCHORED = ["from now on", "going forward", "以後請", "以后都", "我偏好", "從現在開始"]
EN_NEGATIONS = [
    "don't ",
    "do not ",
    "never ",
    "please don't ",
    "Please do not ",
    "dont ",
    "don’t ",
    "cannot ",
]
ZH_NEGATIONS = ["不要", "別", "别", "不用", "不需要", "不要幫我", "勿"]
NEGATIVE_VERBS = ["覚えないで", "記憶しないで", "メモしないで", "기억하지 마", "기억하지마", "메모하지 마"]
SEPARATORS = ["", ": ", "：", ", ", "，", " "]

WORDS = [
    "use",
    "pnpm",
    "for",
    "all",
    "packages",
    "the",
    "project",
    "repo",
    "prefers",
    "User",
    "always",
    "never",
    "tests",
    "passed",
    "42",
    "Wave",
    "completed",
    "decided",
    "reply",
    "in",
    "Traditional",
    "Chinese",
    "ignore",
    "previous",
    "instructions",
    "/src/a.ts",
    "TypeError:",
    "abc1234",
    "使用",
    "繁體中文",
    "回答",
    "later",
    "(supersedes M3)",
    ":",
    "，",
    "-",
    "\t",
    "  ",
    *TRIGGERS,
    *UNANCHORED,
]


def _join(words: list[str]) -> str:
    return " ".join(words)


words_text = steady_lists(st.sampled_from(WORDS), max_size=14).map(_join)
line_bodies = steady_lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(_join)
any_text = st.text(alphabet=st.characters(exclude_categories=[]), max_size=200)
single_line = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters=LINE_TERMINATORS), max_size=60
)
#: One line without ``<`` or ``#``: never a tag or a heading of a candidate block.
plain_line = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters=LINE_TERMINATORS + "<#"), max_size=60
)

#: Text built from trigger fragments, negations, words and line breaks, so that the parsers' branches
#: are all reached; mixed with fully random text (lone surrogates included).
fragment_text = steady_lists(
    st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(EN_NEGATIONS + ZH_NEGATIONS + NEGATIVE_VERBS + SEPARATORS),
        st.sampled_from(["\n", "\r\n", "\r", "\u2028", " ", "\ud800", "– "]),
        single_line,
    ),
    max_size=25,
).map("".join)
messages = st.one_of(any_text, fragment_text)

TYPES = [t.value for t in MemoryType]


@st.composite
def candidate_lines(draw: st.DrawFn, text: st.SearchStrategy[str] = single_line) -> str:
    type_ = draw(st.sampled_from(TYPES))
    shape = draw(st.sampled_from(["[{t}] ", "{t} ", "[{T}] ", "{T} ", "-[{t}]"]))
    body = draw(st.one_of(line_bodies, text))
    prefix = shape.format(t=type_, T=type_.upper())
    return ("- " + prefix if not prefix.startswith("-") else prefix + " ") + body


lines_of_candidates = steady_lists(
    st.one_of(candidate_lines(), st.sampled_from(["(none)", "- note nothing here", "", "* [project] star"])),
    max_size=8,
)


def serialized(result: ExtractionResult) -> str:
    return msgspec.json.encode(result).decode("utf-8", "surrogatepass")


def outputs(result: ExtractionResult) -> list[str]:
    """Every text a result carries: entry texts, previews, rejection-log texts, and its JSON form."""
    found = [entry.text for entry in result.entries]
    found += [event.text_preview for event in result.events if event.text_preview]
    found += [record.text for record in result.rejections]
    return [*found, serialized(result)]


# ---------------------------------------------------------------------------------------------
# Explicit extraction (docs/decisions.md#explicit-requests)
# ---------------------------------------------------------------------------------------------


@given(messages)
def test_explicit_is_total_and_deterministic(text: str) -> None:
    first = extract_explicit(text, NOW)
    assert first == extract_explicit(text, NOW)


@given(messages)
def test_explicit_entry_invariants(text: str) -> None:
    result = extract_explicit(text, NOW)
    keys = set()
    for entry in result.entries:
        assert entry.source is MemorySource.EXPLICIT
        assert entry.confidence == 1
        assert entry.status is MemoryStatus.ACTIVE
        assert entry.created_at == entry.updated_at
        assert entry.type in MemoryType
        assert entry.stale_after_days == stale_after_days_for(entry.type)
        assert 1 <= len(entry.text) <= 260
        assert entry.text[0] not in JS_WHITESPACE
        assert entry.retention_clock == parse_iso_ms(entry.created_at) == NOW
        keys.add(collapse_whitespace(entry.text.lower()))
    assert len(keys) == len(result.entries)
    detected = [e for e in result.events if e.type is EventType.EXPLICIT_MEMORY_DETECTED]
    assert [e.memory.memory_id if e.memory else None for e in detected] == [e.id for e in result.entries]
    for event in result.events:
        assert event.phase is Phase.EXPLICIT
        limit = 120 if event.type is EventType.EXPLICIT_MEMORY_DETECTED else 80
        assert event.text_preview is None or len(event.text_preview) <= limit


@given(
    steady_lists(st.sampled_from(WORDS[:20]), min_size=1, max_size=12).map(_join), st.sampled_from(TRIGGERS)
)
def test_plain_entry_text_is_part_of_the_message(body: str, trigger: str) -> None:
    """Without secrets, an entry's text is a piece of what the user wrote."""
    text = f"{trigger}: {body}"
    for entry in extract_explicit(text, NOW).entries:
        assert entry.text in text


NO_TRIGGER_PARTS = [
    "remember",
    "memory",
    "from now on",
    "going forward",
    "prefer",
    "記",
    "记",
    "覚え",
    "忘れないで",
    "メモ",
    "기억",
    "잊지",
    "메모",
    "从",
    "從",
    "偏好",
    "以后",
    "以後",
    "覚えないで",
    "しないで",
    "하지",
]


#: Every part above holds one of these characters (``m`` or ``f`` for the English ones; a text's
#: lower case has an ``m`` or ``f`` only where it had ``m``, ``M``, ``f`` or ``F``).
_TRIGGER_CHARACTERS = "mMfF記记覚忘メ기잊메从從偏以し하"
#: Words of the message vocabulary that hold no trigger part.
_PLAIN_WORDS = [w for w in WORDS if not any(part in w.lower() for part in NO_TRIGGER_PARTS)]
#: Text that cannot spell a trigger: random characters (lone surrogates included) other than those
#: above, mixed with plain words.
texts_without_triggers = steady_lists(
    st.one_of(
        st.text(
            alphabet=st.characters(exclude_categories=[], exclude_characters=_TRIGGER_CHARACTERS), max_size=40
        ),
        st.sampled_from(_PLAIN_WORDS),
    ),
    max_size=6,
).map(" ".join)


@given(texts_without_triggers)
def test_text_without_triggers_gives_nothing(text: str) -> None:
    lower = text.lower()
    assert not any(part in lower for part in NO_TRIGGER_PARTS)  # the strategy builds no trigger
    assert extract_explicit(text, NOW) == ExtractionResult(entries=(), events=())


#: Words that hold no trigger, so a body of them is no request of its own.
_BODY_WORDS = [w for w in WORDS if not any(p in w for p in UNANCHORED + TRIGGERS)]


@given(
    st.sampled_from(["I will", "We", "ok so", "note:", "They"]),
    st.sampled_from(["remember this", "記住", "覚えて", "기억해", "save to memory", "i prefer"]),
    steady_lists(st.sampled_from(_BODY_WORDS), min_size=1, max_size=14).map(_join),
)
def test_anchored_triggers_need_the_line_start(lead: str, trigger: str, body: str) -> None:
    assert not any(p in body for p in UNANCHORED + TRIGGERS)  # the strategy builds no trigger
    assert extract_explicit(f"{lead} {trigger}: {body}", NOW).entries == ()


@st.composite
def negated_requests(draw: st.DrawFn) -> str:
    """Every negation form in front of every trigger form, with any one-line body (which may hold
    further triggers such as ``from now on`` or ``以後請``)."""
    body = draw(st.one_of(line_bodies, single_line))
    separator = draw(st.sampled_from(SEPARATORS))
    lead = draw(st.sampled_from(["", "  ", "ok, ", "Hmm. "]))
    # every piece is drawn whichever form is used: each example costs the same (property_tests/shapes.py)
    negation = draw(st.sampled_from(EN_NEGATIONS + ZH_NEGATIONS))
    trigger = draw(st.sampled_from(TRIGGERS))
    spaced = draw(st.booleans())
    verb = draw(st.sampled_from(NEGATIVE_VERBS))
    if draw(st.booleans()):
        if negation in ZH_NEGATIONS and spaced:
            negation += " "
        request = negation + trigger
    else:
        request = verb
    if not separator and request[-1:].isascii() and request[-1:].isalnum() and body[:1].isalnum():
        separator = " "  # ``remember`` glued to the next word is no trigger at all
    tail = draw(st.sampled_from(["", "\nremember: a later line that is fine on its own"]))
    return lead + request + separator + body + tail


@given(negated_requests())
def test_negated_requests_never_yield_an_entry(text: str) -> None:
    texts = [entry.text for entry in extract_explicit(text, NOW).entries]
    assert texts in ([], ["a later line that is fine on its own"])


@given(st.sampled_from(["later", "LATER", "next time", "Next Time", "再说", "再說"]))
def test_deferral(deferral: str) -> None:
    result = extract_explicit("remember this: " + deferral, NOW)
    assert result.entries == ()
    assert [e.reason_codes for e in result.events] == [("deferral",)]


@given(secrets(), st.sampled_from(["remember this: ", "記住：", "from now on ", "don't remember this: "]))
def test_no_secret_reaches_an_explicit_entry_or_preview(
    secret: tuple[str, tuple[str, ...]], trigger: str
) -> None:
    text, values = secret
    for message in (trigger + text, trigger + text.replace("\n", " ")):
        for output in outputs(extract_explicit(message, NOW)):
            for value in values:
                assert value not in output


# ---------------------------------------------------------------------------------------------
# Compaction candidates (docs/decisions.md#compaction-candidates)
# ---------------------------------------------------------------------------------------------


def plain(lines: list[str]) -> str:
    return "## Goal\nx\n\nMemory candidates:\n" + "\n".join(lines) + "\n"


def outline(result: ExtractionResult) -> tuple[list[tuple[str, str]], list[tuple[str, ...]]]:
    return [(e.type.value, e.text) for e in result.entries], [e.reason_codes for e in result.events]


@given(messages)
def test_compaction_is_total_and_deterministic(text: str) -> None:
    assert parse_compaction_candidates(text, NOW) == parse_compaction_candidates(text, NOW)


@given(st.text(alphabet=st.characters(exclude_categories=[], exclude_characters="yY"), max_size=200))
def test_no_header_no_result(text: str) -> None:
    """Without a ``y`` no header can be spelt (both headers have one)."""
    assert parse_compaction_candidates(text, NOW) == ExtractionResult(entries=(), events=())


@given(lines_of_candidates)
def test_compaction_entry_and_event_invariants(lines: list[str]) -> None:
    result = parse_compaction_candidates(plain(lines), NOW)
    grammar_lines = [
        line
        for line in lines
        if line.strip().startswith("-") and not line.startswith("- note") and line.strip()
    ]
    assert len(result.events) <= len(grammar_lines)
    accepted = [e for e in result.events if e.type is EventType.EXTRACTION_CANDIDATE_ACCEPTED]
    assert len(accepted) == len(result.entries)
    for event in result.events:
        assert event.phase is Phase.EXTRACTION
        if event.type is EventType.EXTRACTION_CANDIDATE_ACCEPTED:
            assert event.reason_codes == ("quality_gate_passed", "valid_candidate_format")
            assert event.text_preview is None or len(event.text_preview) <= 120
        else:
            assert event.reason_codes
            assert event.text_preview is None or len(event.text_preview) <= 80
    keys = set()
    for entry in result.entries:
        assert entry.source is MemorySource.COMPACTION
        assert entry.confidence == 0.75
        assert len(entry.text) <= 260
        assert redact(entry.text) == entry.text or len(entry.text) == 260
        keys.add((entry.type, collapse_whitespace(entry.text.lower())))
    assert len(keys) == len(result.entries)
    ids = {entry.id for entry in result.entries}
    assert {request.memory_id for request in result.supersede_requests} <= ids
    for record in result.rejections:
        assert record.source == "compaction"
        assert set(record.reasons) <= set(QUALITY_REASON_ORDER)
        assert redact(record.text) == record.text


@given(steady_lists(st.tuples(st.sampled_from(TYPES), line_bodies), max_size=8))
def test_every_grammar_line_gets_one_event_and_entries_keep_line_order(items: list[tuple[str, str]]) -> None:
    lines = [f"- [{type_}] Item{index} {body}" for index, (type_, body) in enumerate(items)]
    result = parse_compaction_candidates(plain(lines), NOW)
    assert len(result.events) == len(lines)
    order = [int(entry.text.split(" ", 1)[0].removeprefix("Item")) for entry in result.entries]
    assert order == sorted(set(order))


@given(steady_lists(candidate_lines(plain_line), max_size=8))
def test_block_formats_are_equivalent(lines: list[str]) -> None:
    """Lines without ``<`` or ``#`` read the same under every header form."""
    block = "\n".join(lines)
    expected = outline(parse_compaction_candidates("Memory candidates:\n" + block, NOW))
    for text in (
        "## Memory Candidates\n" + block,
        "## Workspace Memory Candidates\n" + block,
        "<workspace_memory_candidates>\n" + block + "\n</workspace_memory_candidates>",
    ):
        assert outline(parse_compaction_candidates(text, NOW)) == expected


@given(st.sampled_from(TYPES), st.one_of(line_bodies, single_line))
def test_bracketed_bracketless_and_uppercase_are_equivalent(type_: str, body: str) -> None:
    results = [
        outline(parse_compaction_candidates(plain([line]), NOW))
        for line in (f"- [{type_}] {body}", f"- {type_} {body}", f"- [{type_.upper()}] {body}")
    ]
    assert results[0] == results[1] == results[2]


@given(
    lines_of_candidates,
    candidate_lines(plain_line),
    st.integers(0, 8),
    st.sampled_from(["", "## Goal\nShip it.\n", "Some notes\n\nmore notes\n"]),
    words_text,
)
def test_context_independence(lines: list[str], candidate: str, at: int, before: str, tail: str) -> None:
    # An empty block lets the header's trailing whitespace reach the appended heading (reference rule),
    # so the block holds at least one candidate line (``candidate``, which has no ``#``).
    lines = [*lines[:at], candidate, *lines[at:]]
    block = "\n".join(line for line in lines if "##" not in line)
    assert block.strip()
    for header in ("Memory candidates:\n", "## Memory Candidates\n"):
        base = outline(parse_compaction_candidates(header + block, NOW))
        prefixed = outline(parse_compaction_candidates(before + header + block, NOW))
        suffixed = outline(parse_compaction_candidates(header + block + "\n## X\n- [decision] " + tail, NOW))
        assert base == prefixed == suffixed


@given(secrets(), st.sampled_from(TYPES))
def test_no_secret_reaches_a_candidate_entry_preview_or_rejection(
    secret: tuple[str, tuple[str, ...]], type_: str
) -> None:
    text, values = secret
    one_line = text.replace("\n", " ")
    lines = [f"- [{type_}] {one_line}", f"- {type_} Use {one_line} for the staging sandbox account"]
    for output in outputs(parse_compaction_candidates(plain(lines), NOW)):
        for value in values:
            assert value not in output


# ---------------------------------------------------------------------------------------------
# The request-word pre-check (domain.text.may_hold_memory_request)
# ---------------------------------------------------------------------------------------------

#: Near misses and look-alikes of the trigger words, and the non-ASCII letters that case-insensitive
#: matching takes for ``i``, ``s`` and ``k``.
_NEAR: list[str] = [
    "remembe", "rememb", "REMEMBER", "Remember", "memo", "memor", "MEMORY", "from now", "now on",
    "going forward", "going forwards", "From Now On", "prefer", "I PREFER", "save this to", "commit",
    "please", "don't", "never", "this", "that", "later", "\u0130", "\u0131", "\u017f", "\u212a",
    "记", "記", "住", "覚", "えて", "忘れ", "メ", "モ", "기", "억해", "잊", "메", "偏", "以后", "以後",
    "从现在", "從今", "の", "。", ":", "：", "\n", " ", "\u3000",
]  # fmt: skip


@given(steady_lists(st.sampled_from([*_NEAR, *TRIGGERS]) | st.text(max_size=6), max_size=12).map("".join))
def test_text_without_a_request_word_yields_nothing(text: str) -> None:
    from domain.text import may_hold_memory_request

    result = extract_explicit(text, NOW)
    if not may_hold_memory_request(text):
        assert result.entries == () and result.events == ()
    if result.entries or result.events:
        assert may_hold_memory_request(text)
