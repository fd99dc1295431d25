"""Issue: salvage kept too little. Each state file of a 500-memory workspace damaged each way
(:mod:`tests.reliability.recovery_rates`): at least 99% of the memories come back, and the damaged
file itself comes back whole but for what its very last write added (docs/reliability.md, "Recovery
rates")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.damage import DAMAGES
from tests.reliability.recovery_rates import FILE_KINDS, build, measure


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("recovery-template")
    (built / "project").mkdir()
    build(built / "home", built / "project")
    return built


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("file_kind", FILE_KINDS)
def test_single_file_damage_loses_no_more_than_one_percent(
    template: Path, tmp_path: Path, file_kind: str, damage: str
) -> None:
    rate = measure(template, tmp_path, file_kind, damage)
    assert rate.memories_back >= 0.99 * rate.memories, rate
    # the file itself comes back but for what its very last write added (here one record each)
    assert rate.records_back >= rate.records - 1, rate
