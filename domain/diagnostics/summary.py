"""The few lines ``workmem health`` leads with: is anything wrong, and what to do about it
(docs/decisions.md#diagnostics). Everything else of the report follows below them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from domain.diagnostics.health import HealthReport


class OldStoreCount(msgspec.Struct, frozen=True, kw_only=True):
    """A store of this repository kept under an old sub-directory (``directory``: relative to the
    repository), with its memory and pending counts."""

    directory: str
    memories: int
    pending: int


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One thing to look at: what is wrong and what the user can do."""

    what: str
    todo: str


def findings(report: HealthReport, old_stores: Sequence[OldStoreCount] = ()) -> tuple[Finding, ...]:
    """What is wrong in ``report``, most pressing first (empty: nothing)."""
    found: list[Finding] = []
    if report.store_missing and report.quarantined_files:
        found.append(
            Finding(what="the store could not be read", todo="`workmem recover` lists what was kept")
        )
    elif report.quarantined_files:
        count = len(report.quarantined_files)
        found.append(
            Finding(
                what=f"{count} damaged file(s) were set aside",
                todo="`workmem recover` lists them and brings their memories back",
            )
        )
    for old in old_stores:
        pending = f", {old.pending} pending" if old.pending else ""
        found.append(
            Finding(
                what=f"memories kept for the sub-directory {old.directory} ({old.memories} memories{pending})"
                " are not in this repository's store",
                todo="`workmem workspaces merge` brings them in (the old store is kept)",
            )
        )
    stuck = report.pending_total - report.pending_retryable
    if stuck > 0:
        found.append(
            Finding(
                what=f"{stuck} pending memories could not be stored (the store was full)",
                todo="`workmem explain ID` for each; forget a memory you no longer need",
            )
        )
    if report.hook_failures:
        found.append(
            Finding(
                what=f"{report.hook_failures} host hook call(s) failed",
                todo="docs/hosts.md says what a failed hook call records",
            )
        )
    if report.failing_quality:
        found.append(
            Finding(
                what=f"{len(report.failing_quality)} stored memories look like progress notes or snapshots",
                todo="`workmem forget ID` the ones that are not lasting",
            )
        )
    return tuple(found)


def summary_lines(report: HealthReport, old_stores: Sequence[OldStoreCount] = ()) -> list[str]:
    """The summary: a verdict, the counts a user asks about first, then each finding with its remedy."""
    found = findings(report, old_stores)
    verdict = "nothing is wrong." if not found else f"{len(found)} thing(s) to look at."
    not_shown = report.stored_active - report.rendered_in_block
    counts = f"{report.stored_active} memories stored, {report.rendered_in_block} shown in the block"
    if not_shown > 0:
        counts += f" ({not_shown} not shown: `workmem explain ID` says why)"
    if report.pending_total:
        counts += f"; {report.pending_total} pending (stored when its session compacts or ends)"
    out = [f"Summary: {verdict}", f"  {counts}."]
    out.extend(f"  - {f.what}: {f.todo}" for f in found)
    return out


def summary_json(report: HealthReport, old_stores: Sequence[OldStoreCount] = ()) -> dict[str, Any]:
    """``health --json``'s ``verdict``: ``ok`` or ``attention``, the findings, the old stores."""
    found = findings(report, old_stores)
    return {
        "status": "attention" if found else "ok",
        "findings": [{"what": f.what, "todo": f.todo} for f in found],
        "oldStores": [msgspec.to_builtins(old) for old in old_stores],
    }
