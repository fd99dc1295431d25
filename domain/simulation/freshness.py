"""Freshness in a simulated life (docs/simulation.md, "Freshness"; docs/decisions.md#d18).

The simulated project has code: one file per module and kind (``src/billing/models.py``, ...), each at
a version that moves when the file changes. Every week a share of the files changes (``churn``),
drawn from the week's own stream. What a door would say when a memory is written is given to the new
memories of the store before each session, by a hash of their text (no draw depends on the store):
a volatility from the mix, a citation of lines 1-10 of one file (hashed as the file's version now),
an expiry ``valid_days`` after it was written. At each session start the cited spans are observed at
their current version and a :class:`domain.reverify.Reverify` runs before the session opens, as the
service does. Of the memories shown at a session start, a share is used: each is reinforced once
through :func:`domain.retention.reinforce`, the path every reinforcement takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from msgspec.structs import replace

from domain.enums import Volatility
from domain.ids import hash16
from domain.limits import DAY_MS
from domain.model import Citation, MemoryEntry
from domain.retention import reinforce
from domain.reverify import Observed, Reverify
from domain.simulation import texts
from domain.simulation.rng import chance, stream
from domain.simulation.scenario import FreshnessPlan, Scenario
from domain.simulation.workspace import Workspace
from domain.timeutil import parse_iso_ms

#: The files of the simulated code.
FILE_PATHS: Final = tuple(f"src/{module}/{file}.py" for module in texts.MODULES for file in texts.FILES)
#: The lines a simulated citation names.
SPAN: Final = (1, 10)
_VOLATILITIES: Final = (Volatility.STABLE, Volatility.NORMAL, Volatility.VOLATILE)


def _unit(text: str, salt: str) -> float:
    """A number in ``[0, 1)`` fixed by ``text`` and ``salt``."""
    return int(hash16(f"{salt}\x1f{text}"), 16) / float(16**16)


def span_at(path: str, versions: dict[str, int]) -> str:
    """The hash of the cited span of ``path`` at its current version."""
    return f"{path}@{versions.get(path, 0)}"


def churn(ws: Workspace, plan: FreshnessPlan, seed: int, week: int) -> None:
    """The files that change in ``week``: each with probability ``plan.churn``."""
    if not plan.churn:
        return
    rng = stream(seed, "churn", week)
    for path in FILE_PATHS:
        changed, rng = chance(rng, plan.churn)
        if changed:
            ws.versions[path] = ws.versions.get(path, 0) + 1


def stamped(entry: MemoryEntry, plan: FreshnessPlan, versions: dict[str, int]) -> MemoryEntry:
    """``entry`` with what a door would have said of it (module docstring)."""
    changes: dict[str, object] = {}
    mix = plan.volatility
    weights = (mix.stable, mix.normal, mix.volatile)
    total = sum(weights)
    if total > 0:
        point = _unit(entry.text, "volatility") * total
        for volatility, weight in zip(_VOLATILITIES, weights, strict=True):
            if point < weight:
                changes["volatility"] = volatility
                break
            point -= weight
    if plan.cited_share and _unit(entry.text, "cite") < plan.cited_share:
        path = FILE_PATHS[int(_unit(entry.text, "file") * len(FILE_PATHS))]
        cite = Citation(path=path, start_line=SPAN[0], end_line=SPAN[1], span_hash=span_at(path, versions))
        changes["cites"] = (cite,)
    written = parse_iso_ms(entry.created_at)
    if plan.expiring_share and written is not None and _unit(entry.text, "until") < plan.expiring_share:
        changes["valid_until"] = written + plan.valid_days * DAY_MS
    return replace(entry, **changes) if changes else entry


def before_open(ws: Workspace, scenario: Scenario, at_ms: int) -> None:
    """Before a session opens: new memories get their freshness, and the cited code is re-verified."""
    plan = scenario.freshness
    if not plan.enabled:
        return
    entries = ws.store.entries
    fresh = [stamped(e, plan, ws.versions) if e.id not in ws.stamped else e for e in entries]
    ws.stamped.update(e.id for e in entries)
    if any(a is not b for a, b in zip(fresh, entries, strict=True)):
        ws.store = replace(ws.store, entries=tuple(fresh))
    cited = sorted({c.path for e in ws.store.entries for c in e.cites or ()})
    if cited:
        observed = tuple(
            Observed(path=p, start_line=SPAN[0], end_line=SPAN[1], span_hash=span_at(p, ws.versions))
            for p in cited
        )
        ws.execute(Reverify(observed=observed), at_ms)


def after_open(ws: Workspace, scenario: Scenario, session_id: str, shown: Sequence[str], at_ms: int) -> None:
    """The memories of the block this session uses: each reinforced once (the guards of
    :func:`domain.retention.can_reinforce` apply)."""
    rate = scenario.freshness.use_rate
    if not rate or not shown:
        return
    rng = stream(scenario.seed, "use", session_id)
    used: set[str] = set()
    for memory_id in shown:
        picked, rng = chance(rng, rate)
        if picked:
            used.add(memory_id)
    entries = list(ws.store.entries)
    for index, entry in enumerate(entries):
        if entry.id in used:
            entries[index] = reinforce(entry, session_id, at_ms, ws.tuning)
            ws.use_reinforcements += entries[index] is not entry
    ws.store = replace(ws.store, entries=tuple(entries))
