"""Hypothesis strategies for realistic workspace stores.

The generated stores look like the ones the reference and workmem actually write, with the awkward
cases mixed in on purpose: every type, source and importance; duplicates by exact key (case and
punctuation variants) and by identity key (the same path or URL in other words); invalid timestamps;
reinforced entries; credentials that redaction must remove; progress snapshots that the quality
migration supersedes; superseded entries; repeated ids; dormant stretches.

Public API (everything takes ``now_ms``, the instant the test runs at):

* :data:`NOW_MS` — a fixed default instant (2026-05-20T12:00:00Z).
* :func:`texts` — memory texts from a realistic pool (paths, URLs, preferences, snapshots, secrets).
* :func:`timestamps` — ISO strings in the past year, occasionally invalid.
* :func:`entries` — one :class:`MemoryEntry` (``status=``, ``types=`` narrow it).
* :func:`entry_lists` — a list of entries with deliberate exact/identity duplicates and repeated ids.
* :func:`stores` — a :class:`WorkspaceStore` (``entries=`` accepts another list strategy).
* :func:`big_stores` — stores above the 500 stored-active limit (slow; use with few examples).
"""

from __future__ import annotations

import random
from typing import Final

from hypothesis import strategies as st
from msgspec.structs import replace

from domain.enums import Importance, MemorySource, MemoryStatus, MemoryType, Volatility
from domain.ids import memory_id
from domain.limits import DAY_MS, HOUR_MS
from domain.model import DormantSpan, MemoryEntry, WorkspaceStore
from domain.timeutil import iso_from_ms
from property_tests.shapes import steady_lists
from tests.support.builders import memory, store

#: 2026-05-20T12:00:00.000Z
NOW_MS: Final = 1_779_278_400_000

SESSIONS: Final = ("ses_alpha", "ses_beta", "ses_gamma")

#: Memory texts by flavour. Several share a path, URL or canonical text on purpose.
PREFERENCES: Final = (
    "User prefers concise answers with code first",
    "Always run the linter before committing",
    "Never force-push to the main branch",
    "The user wants tests written before the implementation",
    "Prefer pnpm over npm for package management",
    "Going forward, answer in British English",
    "使用者偏好簡短的回答",
)
DECISIONS: Final = (
    "Use pnpm instead of npm for package management",
    "Keep the retention model strength-based",
    "Avoid global state in the render module",
    "Use frozen rendered snapshots for cache stability",
    "Choose msgspec for the schema layer",
    "Do not store absolute paths in evidence",
)
FACTS: Final = (
    "Project config lives in `src/config.ts`",
    "Project config lives in `./src/config.ts`",
    "The config loader is src/config.ts and it validates on start",
    "Build settings are in package.json",
    "Docs for the API are at https://Example.com/docs/api/",
    "API reference: https://example.com/docs/api#auth",
    "Storage lives under ~/.local/share/workmem/.",
    "Tests use unit/integration split",
    "We run 24/7 monitoring",
    "Release notes are kept in docs/releases/notes.md",
    "The CLI entry point is adapters/cli.py",
    "This repo uses opencode-agenthub plugin system",
)
SNAPSHOTS: Final = (
    "Wave 2 completed successfully",
    "Test suite: 1237 tests pass, 226 suites",
    "External drive synced 37 files to backup",
    "Backend health improvement plan completed Phase 1-4",
    "Currently refactoring the parser",
    "TypeError: cannot read properties of undefined",
)
SECRETS: Final = (
    "Staging login uses password: hunter2",
    "The deploy token: abc123secret goes in CI",
    "username admin, password sushi",
)
ALL_TEXTS: Final = PREFERENCES + DECISIONS + FACTS + SNAPSHOTS + SECRETS

INVALID_TIMESTAMPS: Final = ("", "garbage", "2026-02-30T00:00:00Z", "1714000000000", "April 28, 2026")


def _variant(text: str, how: int) -> str:
    """A spelling of ``text`` with the same exact key (case, punctuation, spacing)."""
    if how == 0:
        return text.upper()
    if how == 1:
        return text.lower() + "."
    if how == 2:
        return "  " + text.replace(" ", "  ") + "!"
    return text


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A realistic memory text: from the pool, a variant of one, or free text."""
    choice = draw(st.integers(0, 9))
    if choice <= 6:
        base = draw(st.sampled_from(ALL_TEXTS))
        return _variant(base, draw(st.integers(0, 4)))
    if choice == 7:
        path = draw(st.sampled_from(("src/a.ts", "./src/a.ts", "lib/util/x.py", "/etc/hosts", "docs/a.md")))
        return draw(
            st.sampled_from(("See {p} for details", "The {p} file matters", "Edit `{p}` carefully"))
        ).format(p=path)
    if choice == 8:
        return draw(st.text(st.characters(codec="utf-8"), min_size=1, max_size=40))
    return "x" * draw(st.integers(250, 300)) + " long note"


@st.composite
def timestamps(draw: st.DrawFn, now_ms: int = NOW_MS, *, invalid: bool = True) -> str:
    """An ISO instant within the past 400 days (rarely in the future), or — when ``invalid`` —
    occasionally something that is not a valid timestamp."""
    if invalid and draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from(INVALID_TIMESTAMPS))
    offset = draw(st.integers(-2 * DAY_MS, 400 * DAY_MS))
    return iso_from_ms(now_ms - offset)


@st.composite
def entries(
    draw: st.DrawFn,
    now_ms: int = NOW_MS,
    *,
    status: MemoryStatus | None = None,
    types: tuple[MemoryType, ...] = tuple(MemoryType),
    text: st.SearchStrategy[str] | None = None,
) -> MemoryEntry:
    """One stored memory entry with realistic, occasionally broken, fields."""
    type_ = draw(st.sampled_from(types))
    source = draw(st.sampled_from(tuple(MemorySource)))
    body = draw(text if text is not None else texts())
    created = draw(timestamps(now_ms))
    updated = draw(st.one_of(st.just(created), timestamps(now_ms)))
    created_ms = now_ms - draw(st.integers(0, 400 * DAY_MS))
    count = draw(st.one_of(st.none(), st.integers(0, 6)))
    reinforced = count is not None and count > 0
    last_reinforced = (
        draw(st.one_of(st.just(0), st.integers(now_ms - 200 * DAY_MS, now_ms - HOUR_MS)))
        if reinforced
        else None
    )
    return memory(
        id=memory_id(created_ms, draw(st.integers(0, 10**9))),
        type=type_,
        text=body,
        source=source,
        confidence={"explicit": 1.0, "compaction": 0.75}.get(source.value, draw(st.sampled_from((0.6, 0.9)))),
        status=status
        if status is not None
        else draw(st.sampled_from((MemoryStatus.ACTIVE,) * 5 + (MemoryStatus.SUPERSEDED,))),
        created_at=created,
        updated_at=updated,
        rationale=draw(
            st.sampled_from((None, None, None, "", "Because the team agreed", "key: s3cr3tvalue"))
        ),
        retention_clock=draw(
            st.one_of(
                st.none(), st.integers(now_ms - 400 * DAY_MS, now_ms), st.just(-1), st.just(float("nan"))
            )
        ),
        reinforcement_count=count,
        last_reinforced_at=last_reinforced,
        last_reinforced_session_id=draw(st.sampled_from((None, *SESSIONS))) if reinforced else None,
        user_importance=draw(st.sampled_from((None, None, None, *Importance))),
        pending_owner_session_id=draw(st.sampled_from((None, None, *SESSIONS))),
        last_rendered_at=draw(st.one_of(st.none(), st.integers(now_ms - 90 * DAY_MS, now_ms))),
        tags=draw(st.sampled_from((None, ("ops",)))),
        # freshness (docs/decisions.md#d18): mostly absent, as in stores written before it
        volatility=draw(st.sampled_from((None, None, None, *Volatility))),
        verified=draw(st.one_of(st.none(), st.none(), st.integers(now_ms - 400 * DAY_MS, now_ms))),
        valid_until=draw(st.sampled_from((None, None, None, None, now_ms - DAY_MS, now_ms + DAY_MS))),
        stale_reason=draw(st.sampled_from((None, None, None, "code changed since verified: src/a.py"))),
    )


@st.composite
def entry_lists(
    draw: st.DrawFn,
    now_ms: int = NOW_MS,
    *,
    min_size: int = 0,
    max_size: int = 24,
    status: MemoryStatus | None = None,
    duplicate_ids: bool = True,
) -> list[MemoryEntry]:
    """Entries with deliberate duplicates: exact-key variants of earlier texts, the same text under
    another type or source, and (when ``duplicate_ids``) now and then a repeated id."""
    # ``max_size`` entries and eight twins are drawn whatever is used, so every example costs the
    # same (property_tests/shapes.py); a twin's type is fixed by its original, which costs no choice.
    base = draw(steady_lists(entries(now_ms, status=status), min_size=min_size, max_size=max_size))
    wanted = draw(st.integers(0, 8))
    extra = min(wanted, max_size - len(base)) if base else 0
    out = list(base)
    for slot in range(8):
        index, how, same_id, at = (draw(st.integers(0, bound)) for bound in (max_size, 3, 9, max_size + 8))
        original = base[index % len(base)] if base else None
        type_ = original.type if original else MemoryType.DECISION
        twin = draw(entries(now_ms, status=status, types=(type_,)))
        if original is None or slot >= extra:
            continue
        twin = replace(twin, text=_variant(original.text, how))
        if duplicate_ids and same_id == 0:
            twin = replace(twin, id=original.id)
        out.insert(at % (len(out) + 1), twin)
    return out


@st.composite
def stores(
    draw: st.DrawFn,
    now_ms: int = NOW_MS,
    *,
    entries: st.SearchStrategy[list[MemoryEntry]] | None = None,
    migrations: st.SearchStrategy[tuple[str, ...]] | None = None,
) -> WorkspaceStore:
    """A workspace store: entries, some migration history, possibly a dormant stretch (the last
    activity more than 14 days ago) and recorded dormant spans."""
    body = draw(entries if entries is not None else entry_lists(now_ms))
    history = draw(
        migrations
        if migrations is not None
        else st.sampled_from(
            (
                (),
                ("2026-04-26-p0-cleanup",),
                (
                    "2026-04-28-quality-cleanup",
                    "2026-04-26-p0-cleanup",
                    "2026-05-01-retention-clock-backfill",
                ),
            )
        )
    )
    idle_days = draw(st.sampled_from((None, 0, 3, 20, 120)))
    last_activity = iso_from_ms(now_ms - idle_days * DAY_MS) if idle_days is not None else None
    start = now_ms - draw(st.integers(60, 300)) * DAY_MS
    span = DormantSpan(start=start, end=start + draw(st.integers(1, 50)) * DAY_MS)
    spans: tuple[DormantSpan, ...] = (span,) if draw(st.booleans()) else ()
    return store(
        *body,
        root="/home/user/project",
        at=now_ms - DAY_MS,
        migrations=history,
        last_activity_at=last_activity,
        dormant_spans=spans,
    )


@st.composite
def big_stores(draw: st.DrawFn, now_ms: int = NOW_MS, *, active: int = 505) -> WorkspaceStore:
    """A store with ``active`` distinct active entries (all exact and identity keys differ), most of
    them long unrendered, so the archive rule (docs/decisions.md#d2) has work
    to do."""
    rnd = random.Random(draw(st.integers(0, 2**32)))  # one draw: fast for hundreds of entries
    ages = [rnd.randint(0, 400) for _ in range(active)]
    rendered = [rnd.random() < 0.3 for _ in range(active)]
    body = (
        memory(
            f"Distinct preference number {index} about topic {index * 7}",
            id=memory_id(now_ms - age * DAY_MS, index),
            type=MemoryType.FEEDBACK if index % 2 else MemoryType.DECISION,
            at=now_ms - age * DAY_MS,
            retention_clock=now_ms - age * DAY_MS,
            last_rendered_at=now_ms - DAY_MS if seen else None,
        )
        for index, (age, seen) in enumerate(zip(ages, rendered, strict=True))
    )
    return store(
        *body,
        root="/home/user/project",
        at=now_ms - DAY_MS,
        migrations=(
            "2026-04-28-quality-cleanup",
            "2026-04-26-p0-cleanup",
            "2026-05-01-retention-clock-backfill",
        ),
        last_activity_at=iso_from_ms(now_ms - DAY_MS),
    )
