"""Safe near-duplicate folding (docs/decisions.md#d22, domain/consolidation/near_duplicates.py)."""

from __future__ import annotations

import pytest

from domain.commands import Forget, OpenSession, Remember
from domain.consolidation.near_duplicates import NEAR_DUPLICATE, fold_rendered, folds_into
from domain.enums import EventType, MemoryStatus, MemoryType, Scope
from domain.pending import empty_journal
from domain.workspace_port import InMemoryWorkspace
from tests.support.builders import KEY, NOW, ROOT, memory, store

FRIDAYS = "Never deploy on Fridays"
BLUE_GREEN = "we deploy with blue-green, never on Fridays"


@pytest.mark.parametrize(
    ("weaker", "stronger"),
    [
        (FRIDAYS, BLUE_GREEN),
        ("use pnpm for installs", "always use pnpm for installs in CI"),
        ("Don't push to main", "don't push to main on release days"),
        ("別 push main", "別 push main 分支"),
    ],
)
def test_a_weaker_memory_folds_into_the_one_that_says_it_all(weaker: str, stronger: str) -> None:
    assert folds_into(memory(weaker, id="w"), memory(stronger, id="s"))
    assert not folds_into(memory(stronger, id="s"), memory(weaker, id="w"))


@pytest.mark.parametrize(
    ("weaker", "stronger"),
    [
        ("use pnpm", "never use pnpm"),
        ("use pnpm for installs", "do not use pnpm for installs"),
        ("use pnpm for installs", "don't use pnpm for installs"),
        ("use pnpm for installs", "use pnpm for installs but not in CI"),
        ("use pnpm not npm", "use npm not pnpm in every package"),  # same words, other order
        ("deploy on Fridays", "we deploy with blue-green, never on Fridays"),
        ("使用 pnpm 安装", "不要 使用 pnpm 安装 依赖"),
        ("pnpm を 使う 設定", "pnpm を 使わ ない 設定 にする"),
        ("pnpm 사용 설정", "pnpm 사용 안 함 설정 유지"),
        ("pnpm", "use pnpm everywhere"),  # one word says too little to fold
    ],
)
def test_a_negation_or_contrast_that_differs_never_folds(weaker: str, stronger: str) -> None:
    assert not folds_into(memory(weaker, id="w"), memory(stronger, id="s"))


def test_type_and_scope_must_match() -> None:
    assert not folds_into(memory(FRIDAYS, id="w", type=MemoryType.FEEDBACK), memory(BLUE_GREEN, id="s"))
    assert not folds_into(memory(FRIDAYS, id="w", scope=Scope.USER), memory(BLUE_GREEN, id="s"))


def test_a_chain_folds_into_the_strongest() -> None:
    a = memory("deploy on Fridays", id="a")
    b = memory("deploy with care on Fridays", id="b")
    c = memory("deploy with care and blue-green on Fridays", id="c")
    assert {k: v.id for k, v in fold_rendered((a, b, c)).items()} == {"a": "c", "b": "c"}
    assert fold_rendered((c,)) == {}


class _Workspace(InMemoryWorkspace):
    def emit(self, events: object) -> None:
        pass


def test_the_block_shows_a_near_duplicate_once_and_the_store_keeps_both() -> None:
    ws = _Workspace(store(), empty_journal(ROOT, KEY, NOW))
    ws.execute(Remember(text=BLUE_GREEN, type=MemoryType.FEEDBACK), NOW)
    ws.execute(Remember(text=FRIDAYS, type=MemoryType.FEEDBACK), NOW + 1000)
    ws.execute(Remember(text="Run the smoke tests after each deploy", type=MemoryType.FEEDBACK), NOW + 2000)
    result = ws.execute(OpenSession(session="S"), NOW + 3000)
    assert result is not None
    assert BLUE_GREEN in result.output and FRIDAYS not in result.output and "smoke tests" in result.output
    (event,) = [
        e for e in result.events if e.type is EventType.RENDER_OMITTED and NEAR_DUPLICATE in e.reason_codes
    ]
    (weaker,) = [e for e in ws.store.entries if e.text == FRIDAYS]
    (stronger,) = [e for e in ws.store.entries if e.text == BLUE_GREEN]
    assert event.memory is not None and event.memory.memory_id == weaker.id
    assert event.details == {"foldedInto": stronger.id}
    assert all(e.status is MemoryStatus.ACTIVE for e in ws.store.entries)  # nothing merged away
    assert weaker.id not in ws.sessions["S"].block_ids


def test_a_weaker_memory_shows_when_its_partner_is_forgotten() -> None:
    ws = _Workspace(store(), empty_journal(ROOT, KEY, NOW))
    ws.execute(Remember(text=BLUE_GREEN, type=MemoryType.FEEDBACK), NOW)
    ws.execute(Remember(text=FRIDAYS, type=MemoryType.FEEDBACK), NOW + 1000)
    (stronger,) = [e for e in ws.store.entries if e.text == BLUE_GREEN]
    ws.execute(Forget(memory_id=stronger.id), NOW + 2000)
    result = ws.execute(OpenSession(session="S"), NOW + 3000)
    assert result is not None and FRIDAYS in result.output
