"""Keeping the stored memories consistent: dedupe with accounting, the one-time migrations, the
retention-clock backfill and the archive (docs/decisions.md#normalisation-and-migrations,
docs/decisions.md#dedupe, docs/decisions.md#d2).

:func:`normalize_store` is the one step every write of a workspace store goes through. In order:

1. redaction of every entry's text and rationale (``memory_redacted``);
2. the one-time migrations, quality cleanup before P0 cleanup (``memory_superseded`` plus an audit
   record per superseded entry);
3. the retention-clock backfill (createdAt, else updatedAt, else now);
4. truncation of active texts to 260 code points;
5. revival of archived memories that an active entry duplicates (``memory_revived``);
6. dedupe (``memory_absorbed``, ``memory_reinforced``);
7. the archive rule: only when more than 500 entries are active do the weakest long-unrendered ones
   move to the archive (``memory_archived``). Type caps and the 28-entry cap are *render* limits and
   never remove anything from storage (docs/decisions.md#d2).

Nothing leaves the active set without an event naming it, and the step is idempotent: normalising a
normalised store changes nothing and emits nothing.


The package: :mod:`~domain.consolidation.normalize` (the full pass),
:mod:`~domain.consolidation.delta` (the pass from a settled store), :mod:`~domain.consolidation.cleaning`,
:mod:`~domain.consolidation.migrations`, :mod:`~domain.consolidation.dedupe`,
:mod:`~domain.consolidation.archive`, :mod:`~domain.consolidation.settled` and the result values in
:mod:`~domain.consolidation.results`. Every name it offered as one module is still importable from here.
"""

from domain.consolidation.cleaning import backfill_retention_clock, redact_stored
from domain.consolidation.dedupe import choose_better, dedupe
from domain.consolidation.normalize import normalize_store
from domain.consolidation.results import (
    ABSORBED_EXACT,
    ABSORBED_IDENTITY,
    P0_CLEANUP_MIGRATION_ID,
    QUALITY_CLEANUP_MIGRATION_ID,
    RETENTION_CLOCK_BACKFILL_MIGRATION_ID,
    Absorption,
    AbsorptionReason,
    DedupeResult,
    NormalizeResult,
)
from domain.consolidation.settled import is_settled

__all__ = [
    "ABSORBED_EXACT",
    "ABSORBED_IDENTITY",
    "P0_CLEANUP_MIGRATION_ID",
    "QUALITY_CLEANUP_MIGRATION_ID",
    "RETENTION_CLOCK_BACKFILL_MIGRATION_ID",
    "Absorption",
    "AbsorptionReason",
    "DedupeResult",
    "NormalizeResult",
    "backfill_retention_clock",
    "choose_better",
    "dedupe",
    "is_settled",
    "normalize_store",
    "redact_stored",
]
