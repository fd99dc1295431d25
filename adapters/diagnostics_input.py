"""What a workspace diagnosis reads, straight from its files and read-only: the rejection log and one
workspace's store, journal, evidence log and quarantined files (docs/decisions.md#diagnostics). The
``health``/``explain`` commands and :meth:`adapters.api.WorkingMemory.health` both load through it."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import msgspec

from adapters import jsonl, paths
from adapters.evidence_log import read_events
from domain.codec import decode_journal, decode_store
from domain.diagnostics import DiagInput


class RejectionLine(msgspec.Struct, frozen=True, kw_only=True):
    """One record of ``extraction-rejections.jsonl`` as the diagnostics read it (lenient)."""

    timestamp: str
    type: str
    text: str
    reasons: tuple[str, ...]
    source: str
    workspace_key: str | None = None
    workspace_root_hash: str | None = None
    origin: str | None = None
    from_trigger: bool | None = None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_rejections(home: Path) -> tuple[tuple[RejectionLine, ...], int, Path]:
    """(records with a text and a reasons list, invalid line count, log path). A missing log is empty."""
    log = paths.rejection_log(home)
    try:
        data = jsonl.read_bytes(log)
    except OSError:
        data = None
    records: list[RejectionLine] = []
    invalid = 0
    for line in jsonl.split_lines(data or b""):
        try:
            raw = json.loads(line)
        except ValueError:
            invalid += 1
            continue
        if not isinstance(raw, dict):
            invalid += 1
            continue
        text, reasons = raw.get("text"), raw.get("reasons")
        if not isinstance(text, str) or not text or not isinstance(reasons, list):
            continue
        trigger = raw.get("fromTrigger")
        records.append(
            RejectionLine(
                timestamp=_str(raw.get("timestamp")) or "",
                type=_str(raw.get("type")) or "project",
                text=text,
                reasons=tuple(str(r) for r in reasons),
                source=_str(raw.get("source")) or "",
                workspace_key=_str(raw.get("workspaceKey")),
                workspace_root_hash=_str(raw.get("workspaceRootHash")),
                origin=_str(raw.get("origin")),
                from_trigger=trigger if isinstance(trigger, bool) else None,
            )
        )
    return tuple(records), invalid, log


def _quarantined(layout: paths.WorkspacePaths) -> tuple[str, ...]:
    found: list[Path] = []
    for directory in (layout.directory, layout.sessions, layout.evidence_dir):
        with contextlib.suppress(OSError):
            found.extend(p for p in directory.iterdir() if ".corrupt-" in p.name)
    return tuple(str(p) for p in sorted(found))


def load_input(
    layout: paths.WorkspacePaths,
    root: str,
    key: str,
    rejections: tuple[RejectionLine, ...] = (),
) -> DiagInput:
    """Everything one workspace diagnosis reads, straight from its files (read-only)."""
    data = jsonl.read_bytes(layout.store)
    store = decode_store(data).value_or(None) if data is not None else None
    data = jsonl.read_bytes(layout.journal)
    journal = decode_journal(data).value_or(None) if data is not None else None
    events, _ = read_events(layout.evidence)
    return DiagInput(
        root=root,
        key=key,
        store=store,
        journal=journal,
        events=events,
        rejections=rejections,
        memory_path=str(layout.store),
        pending_path=str(layout.journal),
        quarantined_files=_quarantined(layout),
        root_hash=paths.workspace_root_hash(root),
    )
