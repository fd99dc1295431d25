"""Safe near-duplicate folding (docs/decisions.md#d22, domain/consolidation/near_duplicates.py)."""

from __future__ import annotations

import pytest

from domain.commands import Remember, Restore
from domain.consolidation.near_duplicates import NEAR_DUPLICATE, fold_near_duplicates, folds_into
from domain.model import EventType, MemoryStatus, MemoryType, Scope
from domain.pending import empty_journal
from domain.render import render_workspace_block
from domain.retention import retention_start_ms
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


def test_only_pairs_with_a_new_entry_fold_and_the_weaker_is_kept_superseded() -> None:
    weak, strong = memory(FRIDAYS, id="w"), memory(BLUE_GREEN, id="s", at=NOW - 1000)
    untouched, none = fold_near_duplicates((weak, strong), (), NOW)
    assert none == () and untouched == (weak, strong)
    folded, events = fold_near_duplicates((weak, strong), {"w"}, NOW)
    assert folded[0].status is MemoryStatus.SUPERSEDED and folded[0].superseded_by == "s"
    assert folded[1].status is MemoryStatus.ACTIVE
    assert (
        retention_start_ms(folded[1], NOW) == retention_start_ms(weak, NOW) > retention_start_ms(strong, NOW)
    )
    (event,) = events
    assert event.type is EventType.MEMORY_SUPERSEDED and event.reason_codes == (NEAR_DUPLICATE,)


def test_a_chain_folds_into_the_strongest() -> None:
    a = memory("deploy on Fridays", id="a")
    b = memory("deploy with care on Fridays", id="b")
    c = memory("deploy with care and blue-green on Fridays", id="c")
    folded, events = fold_near_duplicates((a, b, c), {"a", "b", "c"}, NOW)
    assert [e.superseded_by for e in folded] == ["c", "c", None] and len(events) == 2


class _Workspace(InMemoryWorkspace):
    def emit(self, events: object) -> None:
        pass


def test_remembering_both_renders_one_and_restore_brings_the_other_back_for_good() -> None:
    ws = _Workspace(store(), empty_journal(ROOT, KEY, NOW))
    ws.execute(Remember(text=BLUE_GREEN, type=MemoryType.FEEDBACK), NOW)
    result = ws.execute(Remember(text=FRIDAYS, type=MemoryType.FEEDBACK), NOW + 1000)
    assert result is not None
    assert [e.reason_codes for e in result.events if e.type is EventType.MEMORY_SUPERSEDED] == [
        (NEAR_DUPLICATE,)
    ]
    block = render_workspace_block(ws.store, NOW + 2000).text
    assert BLUE_GREEN in block and FRIDAYS not in block
    (weaker,) = [e for e in ws.store.entries if e.text == FRIDAYS]
    ws.execute(Restore(memory_id=weaker.id), NOW + 3000)
    ws.execute(Remember(text="Run the smoke tests after each deploy", type=MemoryType.FEEDBACK), NOW + 4000)
    active = {e.text for e in ws.store.entries if e.status is MemoryStatus.ACTIVE}
    assert {FRIDAYS, BLUE_GREEN} <= active
