"""What a run shows: weekly rows, the summary, and the comparison of two runs
(docs/simulation.md, "Reading the output"). Pure values; the shell prints them as a table or JSON.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from domain.simulation.engine import CHECKPOINT_DAYS, DayStat, MemoryTrack, SimRun, Tally
from domain.simulation.texts import TYPES

SOURCES: Final = ("explicit", "compaction", "manual")


class WeekRow(Tally, frozen=True, kw_only=True):
    """One week: the state at its last day, and what flowed during it."""

    week: int
    start: str
    end: str


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """The whole run in a few numbers. Medians are ``None`` where no memory qualifies."""

    days: int
    sessions: int
    candidates: int
    rejected: int
    rejected_by_reason: dict[str, int]
    memories_stored: int
    never_rendered: int
    median_days_rendered_by_type: dict[str, float | None]
    median_days_rendered_by_source: dict[str, float | None]
    reinforcement: dict[str, int]
    churn_per_session_mean: float
    churn_per_session_median: float
    churn_per_session_max: int
    final_active: int
    final_rendered: int
    final_block_chars: int
    final_archived: int
    #: freshness (docs/simulation.md, "Freshness"): rendered memories that were stale, over every
    #: day's block; expired memories among the active ones at the end; reinforcements from use; the
    #: mean strength of the last block's memories
    stale_rendered_share: float = 0.0
    final_expired_share: float = 0.0
    use_reinforcements: int = 0
    final_rendered_strength: float = 0.0


def _add(total: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0) + value


def weeks(days: Sequence[DayStat]) -> list[WeekRow]:
    """Days grouped by seven from the first simulated day (the last week may be shorter)."""
    rows: list[WeekRow] = []
    for number, first in enumerate(range(0, len(days), 7), start=1):
        chunk = days[first : first + 7]
        last = chunk[-1]
        rejected: dict[str, int] = {}
        for day in chunk:
            _add(rejected, day.rejected)
        rows.append(
            WeekRow(
                week=number,
                start=chunk[0].date,
                end=last.date,
                sessions=sum(d.sessions for d in chunk),
                active=last.active,
                rendered=last.rendered,
                rendered_by_type=dict(last.rendered_by_type),
                block_chars=last.block_chars,
                archived=last.archived,
                entered=sum(d.entered for d in chunk),
                left=sum(d.left for d in chunk),
                candidates=sum(d.candidates for d in chunk),
                rejected_total=sum(d.rejected_total for d in chunk),
                rejected=dict(sorted(rejected.items())),
            )
        )
    return rows


def _median(values: Iterable[int]) -> float | None:
    found = list(values)
    return float(statistics.median(found)) if found else None


def summarize(run: SimRun) -> Summary:
    rendered = [m for m in run.memories if m.days_rendered > 0]
    rejected: dict[str, int] = {}
    for day in run.days:
        _add(rejected, day.rejected)
    churn = run.session_churn
    days = run.days
    last = days[-1]
    return Summary(
        days=len(run.days),
        sessions=sum(d.sessions for d in run.days),
        candidates=sum(d.candidates for d in run.days),
        rejected=sum(d.rejected_total for d in run.days),
        rejected_by_reason=dict(sorted(rejected.items())),
        memories_stored=len(run.memories),
        never_rendered=sum(1 for m in run.memories if m.days_rendered == 0 and not m.in_session_block),
        median_days_rendered_by_type={
            t.value: _median(m.days_rendered for m in rendered if m.type == t.value) for t in TYPES
        },
        median_days_rendered_by_source={
            s: _median(m.days_rendered for m in rendered if m.source == s) for s in SOURCES
        },
        reinforcement=dict(run.reinforcement),
        churn_per_session_mean=round(statistics.fmean(churn), 3) if churn else 0.0,
        churn_per_session_median=float(statistics.median(churn)) if churn else 0.0,
        churn_per_session_max=max(churn) if churn else 0,
        final_active=last.active,
        final_rendered=last.rendered,
        final_block_chars=last.block_chars,
        final_archived=last.archived,
        stale_rendered_share=_share(
            sum(d.stale_rendered for d in run.days), sum(d.rendered for d in run.days)
        ),
        final_expired_share=_share(last.expired, last.active),
        use_reinforcements=run.use_reinforcements,
        final_rendered_strength=last.rendered_strength,
    )


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


# ---------------------------------------------------------------------------------------------
# Comparing two runs of the same input
# ---------------------------------------------------------------------------------------------


class BlockDifference(msgspec.Struct, frozen=True, kw_only=True):
    """On one checkpoint day: memories in the baseline's block only, and in the variant's only."""

    day: int
    only_baseline: tuple[str, ...]
    only_variant: tuple[str, ...]


class MetricDelta(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    baseline: float | None
    variant: float | None
    delta: float | None


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    blocks: tuple[BlockDifference, ...]
    metrics: tuple[MetricDelta, ...]


def _label(memory: MemoryTrack | None, memory_id: str) -> str:
    return f"[{memory.type}] {memory.text}" if memory is not None else memory_id


def flat_metrics(summary: Summary) -> dict[str, float | None]:
    """The summary's numbers as one flat mapping (``median_days_rendered.project``, ...)."""
    out: dict[str, float | None] = {}
    for name in summary.__struct_fields__:
        value = getattr(summary, name)
        if isinstance(value, dict):
            if name in ("rejected_by_reason", "reinforcement"):
                continue
            for key, item in value.items():
                out[f"{name}.{key}"] = item
        else:
            out[name] = float(value)
    return out


def compare(baseline: SimRun, variant: SimRun) -> Comparison:
    """Block differences on the checkpoint days both runs reached, and every summary metric side by
    side. Memories are named by type and text (ids can differ when dedupe keeps another copy)."""
    base_tracks = {m.id: m for m in baseline.memories}
    var_tracks = {m.id: m for m in variant.memories}
    blocks: list[BlockDifference] = []
    for day in CHECKPOINT_DAYS:
        key = str(day)
        if key not in baseline.checkpoints or key not in variant.checkpoints:
            continue
        base = {_label(base_tracks.get(i), i) for i in baseline.checkpoints[key]}
        other = {_label(var_tracks.get(i), i) for i in variant.checkpoints[key]}
        blocks.append(
            BlockDifference(
                day=day, only_baseline=tuple(sorted(base - other)), only_variant=tuple(sorted(other - base))
            )
        )
    left = flat_metrics(summarize(baseline))
    right = flat_metrics(summarize(variant))
    metrics = []
    for name, value in left.items():
        other_value = right.get(name)
        delta = None if value is None or other_value is None else round(other_value - value, 3)
        metrics.append(MetricDelta(name=name, baseline=value, variant=other_value, delta=delta))
    return Comparison(blocks=tuple(blocks), metrics=tuple(metrics))
