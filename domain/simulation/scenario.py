"""What a simulation runs: the scenario, as typed values decoded from a TOML table
(docs/simulation.md, "Writing a scenario").

Decoding goes through ``msgspec``: a wrong type, a value out of range or a misspelt field is reported
with its path (``Expected `int`, got `str` - at `$.pattern.weekend_sessions```). Reading the file
is the shell's job; here the scenario is a plain mapping.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final

import msgspec
from returns.result import Failure, Result, Success

from domain.enums import MemoryType, Volatility
from domain.retention import DEFAULT_TUNING, Tuning

Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Rate = Annotated[float, msgspec.Meta(ge=0.0, le=50.0)]
Count = Annotated[int, msgspec.Meta(ge=0, le=100)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]


class _Table(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared configuration: immutable, keyword-only, unknown fields are errors."""


class Break(_Table, frozen=True, kw_only=True):
    """A stretch without any session (holidays, a project on hold)."""

    start: dt.date
    days: Annotated[int, msgspec.Meta(ge=1, le=3650)]


class Pattern(_Table, frozen=True, kw_only=True):
    """When sessions happen. Sessions of one day start at ``first_session_hour`` (UTC), one after
    the other, each ``session_minutes`` long with a ten-minute pause."""

    sessions_per_weekday: Count = 10
    weekend_sessions: Count = 0
    holidays: tuple[dt.date, ...] = ()
    breaks: tuple[Break, ...] = ()
    first_session_hour: Annotated[int, msgspec.Meta(ge=0, le=23)] = 8
    session_minutes: Annotated[int, msgspec.Meta(ge=1, le=600)] = 45


class TypeWeights(_Table, frozen=True, kw_only=True):
    """Relative frequency of each memory type among new candidates."""

    feedback: Annotated[float, msgspec.Meta(ge=0.0)] = 1.0
    project: Annotated[float, msgspec.Meta(ge=0.0)] = 3.0
    decision: Annotated[float, msgspec.Meta(ge=0.0)] = 2.0
    reference: Annotated[float, msgspec.Meta(ge=0.0)] = 2.0

    def weights(self) -> tuple[float, float, float, float]:
        return (self.feedback, self.project, self.decision, self.reference)


class SessionPlan(_Table, frozen=True, kw_only=True):
    """What happens in one session. Means are per session and drawn as Poisson counts; shares are
    probabilities per candidate; ``supersede`` and ``forget`` are probabilities per session."""

    candidates: Rate = 3.0
    types: TypeWeights = msgspec.field(default_factory=TypeWeights)
    repeat_share: Share = 0.4
    noise_share: Share = 0.1
    explicit: Rate = 0.2
    manual: Rate = 0.0
    supersede: Share = 0.02
    forget: Share = 0.005
    messages: Count = 2
    tool_results: Count = 2


class VolatilityMix(_Table, frozen=True, kw_only=True):
    """Relative frequency of each volatility among new memories; all zero: the default of each
    memory's type and text (docs/decisions.md#d18)."""

    stable: Annotated[float, msgspec.Meta(ge=0.0)] = 0.0
    normal: Annotated[float, msgspec.Meta(ge=0.0)] = 0.0
    volatile: Annotated[float, msgspec.Meta(ge=0.0)] = 0.0


class FreshnessPlan(_Table, frozen=True, kw_only=True):
    """Freshness in a run (docs/simulation.md, "Freshness"): the volatility mix of new memories, the
    share that cite a file of the simulated code, the share of cited files changed per week, the
    share that carry a ``valid_until`` ``valid_days`` after they are written, and the share of the
    memories shown at a session start that the session uses (one reinforcement each)."""

    volatility: VolatilityMix = msgspec.field(default_factory=VolatilityMix)
    cited_share: Share = 0.0
    churn: Share = 0.0
    expiring_share: Share = 0.0
    valid_days: Annotated[int, msgspec.Meta(ge=1, le=3650)] = 30
    use_rate: Share = 0.0

    @property
    def enabled(self) -> bool:
        mix = self.volatility
        return bool(mix.stable or mix.normal or mix.volatile or self.cited_share or self.expiring_share)


class Parameters(_Table, frozen=True, kw_only=True):
    """Overrides of the retention and render parameters (``None``: today's default)."""

    half_life_days: Positive | None = None
    reinforcement_factor: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] | None = None
    reinforcement_cap: Count | None = None
    dormant_after_days: Annotated[float, msgspec.Meta(ge=0.0)] | None = None
    dormant_multiplier: Share | None = None
    volatility_factors: dict[Volatility, Positive] | None = None
    type_caps: dict[MemoryType, Count] | None = None
    global_cap: Count | None = None
    char_budget: Annotated[int, msgspec.Meta(ge=0, le=100_000)] | None = None
    max_stored_active: Annotated[int, msgspec.Meta(ge=1, le=100_000)] | None = None
    #: ``high`` importance: its strength factor and how much longer its half-life is (the
    #: reference's are 1.5 and 1, docs/decisions.md#d20)
    high_importance_factor: Positive | None = None
    high_importance_half_life: Positive | None = None

    def tuning(self) -> Tuning:
        """The tuning these overrides give (type caps not named keep their default)."""
        values: dict[str, Any] = {
            name: getattr(self, name)
            for name in self.__struct_fields__
            if getattr(self, name) is not None and name not in ("type_caps", "volatility_factors")
        }
        if self.volatility_factors is not None:
            values["volatility_factors"] = {**DEFAULT_TUNING.volatility_factors, **self.volatility_factors}
        if self.type_caps is not None:
            values["type_caps"] = {**DEFAULT_TUNING.type_caps, **self.type_caps}
        return msgspec.structs.replace(DEFAULT_TUNING, **values)


class Scenario(_Table, frozen=True, kw_only=True):
    name: str
    description: str = ""
    start: dt.date
    days: Annotated[int, msgspec.Meta(ge=1, le=3650)]
    seed: int = 1
    pattern: Pattern = msgspec.field(default_factory=Pattern)
    session: SessionPlan = msgspec.field(default_factory=SessionPlan)
    parameters: Parameters = msgspec.field(default_factory=Parameters)
    freshness: FreshnessPlan = msgspec.field(default_factory=FreshnessPlan)


#: The names ``--set``, ``--compare`` and ``--sweep`` accept without a ``parameters.`` prefix.
PARAMETER_NAMES: Final = tuple(Parameters.__struct_fields__)


def decode_scenario(data: Mapping[str, Any]) -> Result[Scenario, str]:
    """The scenario in ``data``, or a one-line message naming the path of the first problem."""
    try:
        return Success(msgspec.convert(data, Scenario))
    except msgspec.ValidationError as exc:
        return Failure(" ".join(str(exc).split()))


def parameter_path(name: str) -> tuple[str, ...]:
    """Where ``name`` lives in the scenario table: ``half_life_days`` and ``type_caps.project`` are
    parameters; anything else (``days``, ``session.candidates``) is a scenario path."""
    parts = tuple(name.split("."))
    return ("parameters", *parts) if parts[0] in PARAMETER_NAMES else parts


def with_overrides(data: Mapping[str, Any], assignments: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """A copy of ``data`` with each ``(name, value)`` set (nested tables are copied, never shared)."""
    result: dict[str, Any] = _copy(data)
    for name, value in assignments:
        *parents, leaf = parameter_path(name)
        table = result
        for part in parents:
            child = table.get(part)
            if not isinstance(child, dict):
                child = {}
                table[part] = child
            table = child
        table[leaf] = value
    return result


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
