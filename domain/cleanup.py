"""Which per-workspace directories are leftovers of tests and temporary runs (pure classification).

The shell (``adapters/cleanup.py``) looks at the file system once per workspace directory and hands
the facts over as a :class:`WorkspaceFacts` value; everything that decides what those facts *mean*
lives here, so it can be tested without touching a disk.

Four classes, as in the reference cleanup tool:

``test_temp_definite``     the store's root no longer exists and lived under a temporary directory;
``orphan_unknown``         the root no longer exists and nothing proves it was temporary;
``live_or_existing``       the root still exists (never cleaned, even when it is a temp directory);
``invalid_or_unreadable``  the directory or its store cannot be read, or the store names no root.

Two fixes against the reference:

* a test-looking directory name (``wm-…``, ``memory-plugin-test-…``) is only a *hint*: without a root
  under a temporary directory it never makes a workspace "definite" (a user project called
  ``wm-notes`` that was moved is an unknown orphan, not test residue), and the hint names the most
  specific matching prefix rather than the first one in the list (``wm-`` no longer shadows
  ``wm-quality-``);
* a directory without a store file is reported as ``missing_store``, not ``invalid_json``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Final

import msgspec

from domain.timeutil import iso_from_ms


class Classification(StrEnum):
    TEST_TEMP_DEFINITE = "test_temp_definite"
    ORPHAN_UNKNOWN = "orphan_unknown"
    LIVE_OR_EXISTING = "live_or_existing"
    INVALID_OR_UNREADABLE = "invalid_or_unreadable"


class StoreState(StrEnum):
    OK = "ok"
    MISSING = "missing"
    INVALID = "invalid"


class CleanupReason(StrEnum):
    """The reasons :func:`classify` gives for a classification, besides ``test_prefix_<prefix>``
    (the test-root prefix a root matched)."""

    WORKSPACE_DIR_UNREADABLE = "workspace_dir_unreadable"
    LOCK_PRESENT = "lock_present"
    RECENT_WORKSPACE_DIR = "recent_workspace_dir"
    MISSING_STORE = "missing_store"
    INVALID_JSON = "invalid_json"
    MISSING_WORKSPACE_ROOT = "missing_workspace_root"
    ROOT_EXISTS = "root_exists"
    ROOT_MISSING = "root_missing"
    ROOT_UNDER_TEMP = "root_under_temp"


#: A workspace directory touched more recently than this is left alone (the reference default).
DEFAULT_MIN_AGE_MS: Final = 10 * 60 * 1000

#: Directory-name prefixes of roots created by test suites (the reference list plus workmem's own).
KNOWN_TEST_ROOT_PREFIXES: Final[tuple[str, ...]] = (
    "memory-plugin-test-",
    "memory-plugin-prompt-",
    "wm-",
    "wm-quality-",
    "wm-accounting-",
    "wm-redact-",
    "wm-normalized-",
    "wm-ordering-",
    "wm-extraction-",
    "workmem-test-",
    "workmem-tour-",
)

#: Fixed temporary roots of POSIX systems (macOS maps /tmp to /private/tmp).
FIXED_TEMP_DIRS: Final[tuple[str, ...]] = ("/tmp", "/private/tmp")
_MACOS_TEMP: Final = re.compile(r"^/(?:private/)?var/folders/[^/]+/[^/]+/T(?:/|\Z)")


class WorkspaceFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the shell saw in one ``workspaces/<name>/`` directory.

    ``store`` is the parsed ``workspace-memory.json`` document when ``store_state`` is ``ok``;
    ``root_exists`` is whether the root the store names exists (``None`` when it was not checked)."""

    dir_name: str
    workspace_dir: str
    readable: bool = True
    lock_present: bool = False
    dir_mtime_ms: float | None = None
    store_state: StoreState = StoreState.MISSING
    store: Any = None
    root_exists: bool | None = None


class Residue(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The classification of one workspace directory (``WorkspaceCleanupResult``).

    ``workspace_key`` is always the directory name (the quarantine destination is derived from it);
    ``store_key`` is the key written inside the store when it differs from the directory name."""

    workspace_key: str
    workspace_dir: str
    root: str | None = None
    root_exists: bool = False
    classification: Classification
    reasons: tuple[str, ...] = ()
    entry_count: int | None = None
    migrations: tuple[str, ...] | None = None
    updated_at: str | None = None
    store_key: str | None = None


def _normalize(path: str) -> str:
    normalized = posixpath.normpath(path)
    return normalized.rstrip("/") or "/"


def is_inside(path: str, parent: str) -> bool:
    """``path`` equals ``parent`` or lies below it (lexically, after normalisation)."""
    child, base = _normalize(path), _normalize(parent)
    if base == "/":
        return child.startswith("/")
    return child == base or child.startswith(base + "/")


def is_temp_root(root: str, temp_dirs: Iterable[str] = ()) -> bool:
    """The root lies in a temporary directory: one of ``temp_dirs`` (the platform's temp dir as the
    shell found it), ``/tmp``, ``/private/tmp`` or a macOS per-user ``/var/folders/…/T``. Relative
    roots cannot be placed and are never temporary."""
    if not root.startswith("/"):
        return False
    normalized = _normalize(root)
    for parent in (*temp_dirs, *FIXED_TEMP_DIRS):
        if parent.startswith("/") and is_inside(normalized, parent):
            return True
    return _MACOS_TEMP.match(normalized) is not None


def known_test_prefix(root: str) -> str | None:
    """The most specific known test prefix of the root's directory name, without its trailing
    ``-`` (``wm-quality-live`` → ``wm-quality``), or ``None``."""
    name = posixpath.basename(_normalize(root))
    matches = [p for p in KNOWN_TEST_ROOT_PREFIXES if name.startswith(p)]
    if not matches:
        return None
    return max(matches, key=len).rstrip("-")


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def classify(
    facts: WorkspaceFacts,
    now_ms: int,
    *,
    min_age_ms: int = DEFAULT_MIN_AGE_MS,
    temp_dirs: Sequence[str] = (),
) -> Residue:
    """Classify one workspace directory (the reference's ``classifyWorkspaceDir`` steps, with the
    docs/decisions.md#b22 and docs/decisions.md#b23 fixes described in the module docstring)."""
    key = facts.dir_name
    if not facts.readable:
        return Residue(
            workspace_key=key,
            workspace_dir=facts.workspace_dir,
            classification=Classification.INVALID_OR_UNREADABLE,
            reasons=(CleanupReason.WORKSPACE_DIR_UNREADABLE,),
        )
    reasons: list[str] = []
    if facts.lock_present:
        reasons.append(CleanupReason.LOCK_PRESENT)
    if min_age_ms > 0 and facts.dir_mtime_ms is not None and now_ms - facts.dir_mtime_ms < min_age_ms:
        reasons.append(CleanupReason.RECENT_WORKSPACE_DIR)

    def result(classification: Classification, **fields: Any) -> Residue:
        return Residue(
            workspace_key=key,
            workspace_dir=facts.workspace_dir,
            classification=classification,
            reasons=tuple(reasons),
            **fields,
        )

    if facts.store_state is StoreState.MISSING:
        reasons.append(CleanupReason.MISSING_STORE)
        return result(Classification.INVALID_OR_UNREADABLE)
    store = facts.store
    if facts.store_state is StoreState.INVALID or not isinstance(store, dict):
        reasons.append(CleanupReason.INVALID_JSON)
        return result(Classification.INVALID_OR_UNREADABLE)

    workspace = store.get("workspace")
    workspace = workspace if isinstance(workspace, dict) else {}
    root = _string(workspace.get("root"))
    store_key = _string(workspace.get("key"))
    entries = store.get("entries")
    migrations = store.get("migrations")
    fields: dict[str, Any] = {
        "entry_count": len(entries) if isinstance(entries, list) else None,
        "migrations": tuple(m for m in migrations if isinstance(m, str))
        if isinstance(migrations, list)
        else None,
        "updated_at": _string(store.get("updatedAt")),
        "store_key": store_key if store_key is not None and store_key != key else None,
    }
    if not root:
        reasons.append(CleanupReason.MISSING_WORKSPACE_ROOT)
        return result(Classification.INVALID_OR_UNREADABLE, **fields)
    if facts.root_exists:
        reasons.append(CleanupReason.ROOT_EXISTS)
        return result(Classification.LIVE_OR_EXISTING, root=root, root_exists=True, **fields)

    reasons.append(CleanupReason.ROOT_MISSING)
    temp = is_temp_root(root, temp_dirs)
    if temp:
        reasons.append(CleanupReason.ROOT_UNDER_TEMP)
    prefix = known_test_prefix(root)
    if prefix is not None:
        reasons.append(f"test_prefix_{prefix}")
    classification = Classification.TEST_TEMP_DEFINITE if temp else Classification.ORPHAN_UNKNOWN
    return result(classification, root=root, **fields)


def is_candidate(residue: Residue, *, include_orphans: bool = False) -> bool:
    """May this directory be quarantined? Never when recent or locked; definite residue always;
    unknown orphans only when asked. Live and unreadable workspaces never."""
    if CleanupReason.RECENT_WORKSPACE_DIR in residue.reasons or CleanupReason.LOCK_PRESENT in residue.reasons:
        return False
    if residue.classification is Classification.TEST_TEMP_DEFINITE:
        return True
    return include_orphans and residue.classification is Classification.ORPHAN_UNKNOWN


def quarantine_stamp(now_ms: int) -> str:
    """``2026-04-28T12:00:00.000Z`` → ``20260428T120000Z``."""
    iso = iso_from_ms(now_ms)
    return iso[:19].replace("-", "").replace(":", "") + "Z"


def quarantine_name(now_ms: int) -> str:
    return f"workspace-cleanup-{quarantine_stamp(now_ms)}"


class QuarantineRecord(Residue, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One line of the quarantine ``manifest.jsonl``: the classification plus where it went."""

    from_: str = msgspec.field(name="from")
    to: str
    quarantined_at: str


def quarantine_record(residue: Residue, source: str, destination: str, now_ms: int) -> QuarantineRecord:
    fields = msgspec.structs.asdict(residue)
    return QuarantineRecord(**fields, from_=source, to=destination, quarantined_at=iso_from_ms(now_ms))


def format_report(
    mode: str,
    results: Sequence[Residue],
    candidates: Sequence[Residue],
    quarantined: Sequence[QuarantineRecord],
    quarantine_dir: str | None,
    *,
    include_orphans: bool,
) -> str:
    """The tool's text report (the reference's lines, in its order)."""
    lines = [f"Mode: {mode}", f"Scanned: {len(results)}", f"Candidates: {len(candidates)}"]
    if candidates:
        lines += ["", "Candidates:"]
        for c in candidates:
            lines.append(f"- {c.workspace_key} {c.classification.value} root={c.root or '<missing>'}")
            lines.append(f"  reasons={','.join(c.reasons)}")
    if quarantined:
        lines += ["", f"Quarantined: {len(quarantined)}", f"Quarantine dir: {quarantine_dir}"]
    orphans = sum(1 for r in results if r.classification is Classification.ORPHAN_UNKNOWN)
    if orphans and not include_orphans:
        lines += [
            "",
            f"Unknown missing-root workspaces skipped: {orphans}",
            "Use --include-orphans only after manually confirming they are safe to quarantine.",
        ]
    return "\n".join(lines)
