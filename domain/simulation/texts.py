"""The words of a simulated project: memory candidates, explicit requests, noise and chatter
(docs/simulation.md, "What the generated texts look like").

Texts are built from templates with slots (modules, files, URLs, commands, choices and reasons)
drawn from the seeded generator, so that the real gate, dedupe and identity keys do real work:
project and reference memories name a path or a URL (restating one in other words is caught by its
identity key), feedback states a standing preference, decisions a rule with its reason, and noise is
what a compaction summary should not keep (progress reports, raw errors, commit subjects, "TODO",
snapshots of edited files, texts too short to mean anything).

A *fact* is one thing the project knows; it can be said in several wordings. The catalogue of facts
grows as the run goes; a repeat picks an earlier fact (a few core facts come back often, the others
mostly while they are recent) and says it again, in the same words or in others.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from domain.enums import MemoryType
from domain.simulation.rng import Rng, below, chance, pick, uniform, weighted

MODULES: Final = (
    "billing", "auth", "search", "ingest", "reports", "notify", "scheduler", "exports",
    "gateway", "profiles", "audit", "payments", "catalog", "invoices", "webhooks", "metrics",
)  # fmt: skip
FILES: Final = ("client", "models", "handlers", "service", "schema", "settings", "views", "tasks", "cache")
NOUNS: Final = ("retry", "validation", "pagination", "serialization", "rate limit", "migration", "lookup")
HOSTS: Final = ("docs.example.com", "wiki.example.org", "api.example.com", "runbooks.example.net")
TOPICS: Final = ("errors", "limits", "auth", "schema", "webhooks", "events", "quotas", "versions")
CHOICES: Final = (
    "Postgres advisory locks", "a Redis stream", "msgspec structs", "UTC timestamps", "idempotency keys",
    "feature flags", "cursor pagination", "exponential backoff", "SQLAlchemy Core", "structured logging",
)  # fmt: skip
CONCERNS: Final = (
    "retries", "locking", "serialization", "pagination", "caching", "time zones", "rate limits",
)  # fmt: skip
REASONS: Final = (
    "it keeps replays safe",
    "the ops team already runs it",
    "it avoids a second datastore",
    "it keeps the API stable for partners",
    "it is cheaper to operate",
    "it makes failures visible in dashboards",
)
PREFERENCES: Final = (
    ("small focused commits", "keep commits small and focused"),
    ("type hints on every public function", "add type hints to every public function"),
    ("British spelling in user-facing text", "use British spelling in user-facing text"),
    ("pytest fixtures over setup methods", "use pytest fixtures rather than setup methods"),
    ("explicit imports over star imports", "never use star imports"),
    ("short answers with the diff first", "show the diff first and keep answers short"),
    ("dataclasses over plain dicts", "model records as dataclasses, not plain dicts"),
    ("f-strings over format calls", "use f-strings rather than format calls"),
)
COMMANDS: Final = ("make test-{m}", "pytest tests/{m} -x", "uv run {m}-worker", "docker compose up {m}")

# Noise: what the gate should reject, one template per expected reason.
NOISE: Final = (
    "Fixed the flaky {m} test in this session",
    "Completed phase {k} of the {m} migration",
    "{k} tests passed after the {m} refactor",
    "TODO revisit {m} {c} handling later",
    "TypeError: cannot read properties of undefined in {m}",
    "fix: handle empty {m} payloads",
    "modified src/{m}/{f}.py",
    "ok {m}",
    "Long day on {m}, nothing else",
    "Talked about {m} {c} for a while",
)
#: The type each noise template is offered as (``bad_feedback`` and ``bad_decision`` need theirs).
NOISE_TYPES: Final = (
    MemoryType.PROJECT, MemoryType.PROJECT, MemoryType.PROJECT, MemoryType.PROJECT, MemoryType.PROJECT,
    MemoryType.DECISION, MemoryType.PROJECT, MemoryType.REFERENCE, MemoryType.FEEDBACK, MemoryType.DECISION,
)  # fmt: skip

CHATTER: Final = (
    "Can you look at src/{m}/{f}.py and tidy up the {c} code?",
    "Why does the {m} job slow down on Mondays?",
    "Let's keep going with the {m} {n} work.",
    "Please run the {m} checks again.",
)

TYPES: Final = (MemoryType.FEEDBACK, MemoryType.PROJECT, MemoryType.DECISION, MemoryType.REFERENCE)
_RECENT_WINDOW: Final = 150
_CORE_SHARE: Final = 0.15
_CORE_PICK: Final = 0.35
_SAME_WORDS: Final = 0.6


class Fact(NamedTuple):
    """One thing the project knows: its type, the slot values drawn when it appeared, and whether
    it is a core fact that keeps coming back."""

    type: MemoryType
    slots: tuple[int, ...]
    core: bool


class Said(NamedTuple):
    type: MemoryType
    text: str
    fact: int  # index in the catalogue, -1 for noise


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def wording(fact: Fact, variant: int) -> str:
    """Fact ``fact`` in wording ``variant`` (0 is the way it was first said)."""
    s = fact.slots
    if fact.type is MemoryType.PROJECT:
        m, f, n = MODULES[s[0]], FILES[s[1]], NOUNS[s[2]]
        return (
            f"The {m} {n} code lives in src/{m}/{f}.py; keep new {n} helpers there",
            f"src/{m}/{f}.py is where {m} does its {n} work",
            f"{_cap(m)} {n} is defined in src/{m}/{f}.py, next to its tests",
        )[variant % 3]
    if fact.type is MemoryType.REFERENCE:
        m, host, topic = MODULES[s[0]], HOSTS[s[1]], TOPICS[s[2]]
        if s[3] == 0:
            command = COMMANDS[s[1] % len(COMMANDS)].format(m=m)
            return (
                f"Rebuild the {m} fixtures with ./scripts/seed_{m}.sh before running {command}",
                f"./scripts/seed_{m}.sh refreshes the {m} fixtures that {command} needs",
            )[variant % 2]
        url = f"https://{host}/{m}/{topic}"
        return (
            f"{_cap(m)} {topic} reference: {url}",
            f"See {url} for how {m} handles {topic}",
            f"The {m} {topic} guide is at {url}",
        )[variant % 3]
    if fact.type is MemoryType.DECISION:
        m, choice, concern, reason = MODULES[s[0]], CHOICES[s[1]], CONCERNS[s[2]], REASONS[s[3]]
        return (
            f"Use {choice} for {m} {concern} because {reason}",
            f"{_cap(m)} {concern} should rely on {choice}; {reason}",
        )[variant % 2]
    noun, rule = PREFERENCES[s[1]]
    m = MODULES[s[0]]
    return (
        f"The user prefers {noun} in {m} work",
        f"Always {rule} when touching {m}",
    )[variant % 2]


def replacement(fact: Fact) -> str:
    """A decision that replaces ``fact`` (another choice for the same concern)."""
    s = fact.slots
    other = CHOICES[(s[1] + 1 + s[3]) % len(CHOICES)]
    return f"Use {other} instead of {CHOICES[s[1]]} for {MODULES[s[0]]} {CONCERNS[s[2]]}"


_SLOT_SIZES: Final[dict[MemoryType, tuple[int, ...]]] = {
    MemoryType.PROJECT: (len(MODULES), len(FILES), len(NOUNS)),
    MemoryType.REFERENCE: (len(MODULES), len(HOSTS), len(TOPICS), 3),
    MemoryType.DECISION: (len(MODULES), len(CHOICES), len(CONCERNS), len(REASONS)),
    MemoryType.FEEDBACK: (len(MODULES), len(PREFERENCES)),
}


def new_fact(rng: Rng, type_: MemoryType) -> tuple[Fact, Rng]:
    slots: list[int] = []
    for size in _SLOT_SIZES[type_]:
        value, rng = below(rng, size)
        slots.append(value)
    core, rng = chance(rng, _CORE_SHARE)
    return Fact(type_, tuple(slots), core), rng


def recall(rng: Rng, catalogue: list[Fact], core: list[int]) -> tuple[int, Rng]:
    """An earlier fact: a core one, or one of the recent ones (the most recent most likely)."""
    use_core, rng = chance(rng, _CORE_PICK)
    if use_core and core:
        return pick(rng, core)
    value, rng = uniform(rng)
    window = min(len(catalogue), _RECENT_WINDOW)
    return len(catalogue) - 1 - min(window - 1, int(window * value * value)), rng


def say(rng: Rng, fact_index: int, catalogue: list[Fact], *, repeat: bool) -> tuple[Said, Rng]:
    """Fact ``fact_index`` in words: the first wording when new; a repeat keeps the same words
    60% of the time and uses another wording otherwise."""
    fact = catalogue[fact_index]
    variant = 0
    if repeat:
        same, rng = chance(rng, _SAME_WORDS)
        if not same:
            variant, rng = below(rng, 3)
            variant += 1
    return Said(fact.type, wording(fact, variant), fact_index), rng


def candidate(
    rng: Rng, catalogue: list[Fact], core: list[int], weights: tuple[float, ...], repeat_share: float
) -> tuple[Said, Rng]:
    """A new or repeated fact; new facts join ``catalogue`` (and ``core``)."""
    repeat, rng = chance(rng, repeat_share)
    if repeat and catalogue:
        index, rng = recall(rng, catalogue, core)
        return say(rng, index, catalogue, repeat=True)
    chosen, rng = weighted(rng, weights)
    fact, rng = new_fact(rng, TYPES[chosen])
    catalogue.append(fact)
    if fact.core:
        core.append(len(catalogue) - 1)
    return say(rng, len(catalogue) - 1, catalogue, repeat=False)


def _fill(template: str, rng: Rng) -> tuple[str, Rng]:
    m, rng = pick(rng, MODULES)
    f, rng = pick(rng, FILES)
    c, rng = pick(rng, CONCERNS)
    n, rng = pick(rng, NOUNS)
    number, rng = below(rng, 40)
    return template.format(m=m, f=f, c=c, n=n, k=number + 2), rng


def noise(rng: Rng) -> tuple[Said, Rng]:
    index, rng = below(rng, len(NOISE))
    text, rng = _fill(NOISE[index], rng)
    return Said(NOISE_TYPES[index], text, -1), rng


def chatter(rng: Rng) -> tuple[str, Rng]:
    template, rng = pick(rng, CHATTER)
    return _fill(template, rng)


def explicit_request(said: Said) -> str:
    """A user message asking to remember ``said``."""
    return f"Remember this: {said.text}"
