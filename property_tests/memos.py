"""Emptying the speed memos of the core, so that a step can be run cold and compared with the same
step run warm (docs/performance.md, "Simulation")."""

from __future__ import annotations

from domain import consolidation, evidence, key_index, keys, ranking


def forget_memos() -> None:
    """Empty every memo that normalisation, ranking and render keep between steps."""
    for memo in (
        consolidation._CLEAN,
        consolidation._SETTLED,
        consolidation._MARKER_INDEXES,
        keys._KEYS,
        keys._HASHES,
        key_index._INDEXES,
        ranking._STATIC,
        ranking._LAST_RANKING,
    ):
        memo.clear()
    evidence.flow._entry_event.cache_clear()
