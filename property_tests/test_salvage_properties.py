"""Salvage (docs/decisions.md#d11): damage inside one memory never costs another memory, and a clean
document is read exactly as the strict decoder reads it."""

from __future__ import annotations

from hypothesis import given, strategies as st

from domain.codec import decode_store, encode_pretty
from domain.model import WorkspaceStore
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
