"""Salvage (docs/decisions.md#d11): damage inside one memory never costs another memory, and a clean
document is read exactly as the strict decoder reads it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from hypothesis import given, strategies as st

from domain.codec import decode_store, encode_line, encode_pretty
from domain.model import MemoryEntry, WorkspaceStore
from domain.salvage import SalvageMode, salvage_document
from property_tests.store_strategies import stores

DAMAGE = (b"\xff", b"\xed\xa0\xbd", b"\\ud83d", b"\xc3", b"\\udc00")


@given(stores())
def test_a_clean_store_is_read_strictly(store: WorkspaceStore) -> None:
    data = encode_pretty(store)
    salvaged = salvage_document(data, WorkspaceStore, store)
    assert salvaged is not None and salvaged.mode == SalvageMode.STRICT
    assert salvaged.value == decode_store(data).unwrap()


@given(stores(), st.data())
def test_damage_in_one_entry_keeps_every_entry(store: WorkspaceStore, data: st.DataObject) -> None:
    raw = encode_pretty(store)
    marks = [i for i in range(len(raw)) if raw.startswith(b'"id": "', i)]
    if not marks:
        return
    at = data.draw(st.sampled_from(marks)) + len(b'"id": "')
    damage = data.draw(st.sampled_from(DAMAGE))
    salvaged = salvage_document(raw[:at] + damage + raw[at:], WorkspaceStore, store)
    assert salvaged is not None and salvaged.mode == SalvageMode.LENIENT
    assert salvaged.replaced_characters >= 1
    before = decode_store(raw).unwrap()
    assert len(salvaged.value.entries) == len(before.entries)
    changed = [a for a, b in zip(salvaged.value.entries, before.entries, strict=True) if a != b]
    assert len(changed) == 1 and changed[0].id.startswith("\ufffd")


# ---- damage anywhere: resynchronising on the next entry (docs/decisions.md#last-good-generation) ----

#: the indentation before an entry's ``{`` (a line break and four spaces), which the scan needs intact
_LEAD = 5


def _spans(raw: bytes) -> list[tuple[int, int]]:
    """The byte span of every entry of the clean, indented document ``raw``, in order."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    pos = text.index('\n  "entries": [') + len('\n  "entries": [')
    spans: list[tuple[int, int]] = []
    while True:
        while text[pos] in " \n,":
            pos += 1
        if text[pos] == "]":
            return spans
        _, end = decoder.raw_decode(text, pos)
        spans.append((len(text[:pos].encode("utf-8")), len(text[:end].encode("utf-8"))))
        pos = end


class Damage(NamedTuple):
    """Bytes ``start`` to ``stop`` of the document replaced by ``junk`` (``stop == start``: inserted;
    ``stop`` at the end and no junk: truncated). The junk holds a NUL byte, which JSON text cannot hold
    anywhere, so no value that decodes can reach into it."""

    start: int
    stop: int
    junk: bytes

    def apply(self, raw: bytes) -> bytes:
        return raw[: self.start] + self.junk + raw[self.stop :]

    def touches(self, span: tuple[int, int]) -> bool:
        lead, end = span[0] - _LEAD, span[1]
        if self.start == self.stop:
            return lead < self.start < end
        return self.start < end and self.stop > lead


@st.composite
def damages(draw: st.DrawFn, size: int) -> Damage:
    start = draw(st.integers(0, size - 1))
    kind = draw(st.sampled_from(("truncate", "overwrite", "insert")))
    if kind == "truncate":
        return Damage(start, size, b"")
    junk = bytearray(draw(st.binary(max_size=60)))
    junk.insert(draw(st.integers(0, len(junk))), 0)
    stop = start if kind == "insert" else min(size, start + draw(st.integers(1, 200)))
    return Damage(start, stop, bytes(junk))


def _encoded(entries: Iterable[MemoryEntry]) -> Counter[bytes]:
    return Counter(encode_line(e) for e in entries)


class Case(NamedTuple):
    """A store as written (``raw``), as read back (``clean``), one damage, and its empty store."""

    raw: bytes
    clean: WorkspaceStore
    damage: Damage

    @property
    def damaged(self) -> bytes:
        return self.damage.apply(self.raw)

    @property
    def empty(self) -> WorkspaceStore:
        return WorkspaceStore(workspace=self.clean.workspace, updated_at=self.clean.updated_at)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    raw = encode_pretty(draw(stores()))
    return Case(raw, decode_store(raw).unwrap(), draw(damages(len(raw))))


@given(cases())
def test_every_entry_the_damage_did_not_touch_comes_back_and_nothing_else(case: Case) -> None:
    salvaged = salvage_document(case.damaged, WorkspaceStore, case.empty)
    got = _encoded(salvaged.value.entries) if salvaged is not None else Counter[bytes]()
    spans = _spans(case.raw)
    untouched = [
        e for e, span in zip(case.clean.entries, spans, strict=True) if not case.damage.touches(span)
    ]
    # complete: every entry outside the damage is read back as it was
    assert not _encoded(untouched) - got
    # sound: nothing that was not an entry of the original
    assert not got - _encoded(case.clean.entries)


@given(cases())
def test_with_its_last_good_generation_a_damaged_store_comes_back_whole(case: Case) -> None:
    salvaged = salvage_document(case.damaged, WorkspaceStore, case.empty, case.clean)
    assert salvaged is not None
    assert _encoded(salvaged.value.entries) == _encoded(case.clean.entries)
    assert salvaged.readable_entries + salvaged.previous_entries >= len(case.clean.entries)
