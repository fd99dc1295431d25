"""Properties of the pure workspace-cleanup classification (``domain.cleanup``): the candidate rule
never lets a live, unreadable, recent or locked workspace through, and "definite" always means a
missing root under a temporary directory (docs/decisions.md#b22)."""

from __future__ import annotations

import posixpath
from typing import Any

from hypothesis import given, strategies as st

from domain.cleanup import (
    KNOWN_TEST_ROOT_PREFIXES,
    Classification,
    StoreState,
    WorkspaceFacts,
    classify,
    is_candidate,
    is_inside,
    is_temp_root,
    known_test_prefix,
    quarantine_stamp,
)
from property_tests.shapes import replace_if, steady_lists

NOW = 1_777_636_800_000

#: A path segment: never ``.`` or ``..`` (those become ``.x`` and ``..x``).
segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12).map(
    replace_if(lambda s: s in (".", ".."), lambda s: s + "x")
)
name = st.one_of(segment, st.builds(lambda p, s: p + s, st.sampled_from(KNOWN_TEST_ROOT_PREFIXES), segment))
parents = st.sampled_from(
    ["/tmp", "/private/tmp", "/var/folders/ab/cd/T", "/home/dev", "/srv/x", "/scratch/t"]
)
roots = st.builds(
    lambda p, parts, n: posixpath.join(p, *parts, n), parents, steady_lists(segment, max_size=3), name
)


@st.composite
def facts(draw: st.DrawFn) -> WorkspaceFacts:
    state = draw(st.sampled_from(list(StoreState)))
    store: Any = None
    if state is StoreState.OK:
        root = draw(st.one_of(st.none(), st.just(""), roots))
        workspace: dict[str, Any] = {} if root is None else {"root": root}
        if draw(st.booleans()):
            workspace["key"] = draw(segment)
        store = {"workspace": workspace, "entries": [], "updatedAt": "2026-05-01T00:00:00.000Z"}
    return WorkspaceFacts(
        dir_name=draw(segment),
        workspace_dir="/home/u/.local/share/workmem/workspaces/x",
        readable=draw(st.booleans()),
        lock_present=draw(st.booleans()),
        dir_mtime_ms=draw(st.one_of(st.none(), st.integers(NOW - 10**9, NOW + 10**6).map(float))),
        store_state=state,
        store=store,
        root_exists=draw(st.one_of(st.none(), st.booleans())),
    )


@given(facts(), st.integers(0, 10**8), st.booleans())
def test_candidates_are_never_live_locked_recent_or_unreadable(
    f: WorkspaceFacts, min_age_ms: int, include_orphans: bool
) -> None:
    residue = classify(f, NOW, min_age_ms=min_age_ms, temp_dirs=("/scratch/t",))
    if is_candidate(residue, include_orphans=include_orphans):
        assert residue.classification in (Classification.TEST_TEMP_DEFINITE, Classification.ORPHAN_UNKNOWN)
        assert f.readable and not f.lock_present
        assert f.root_exists is not True
        assert "recent_workspace_dir" not in residue.reasons
        if not include_orphans:
            assert residue.classification is Classification.TEST_TEMP_DEFINITE


@given(facts())
def test_definite_means_missing_root_under_temp(f: WorkspaceFacts) -> None:
    """docs/decisions.md#b22: a test-looking name alone never makes a workspace definite residue."""
    residue = classify(f, NOW, temp_dirs=("/scratch/t",))
    if residue.classification is Classification.TEST_TEMP_DEFINITE:
        assert residue.root is not None
        assert is_temp_root(residue.root, ("/scratch/t",))
        assert "root_missing" in residue.reasons and "root_under_temp" in residue.reasons
    assert residue.workspace_key == f.dir_name  # always the directory name (docs/decisions.md#b23)


@given(facts())
def test_classification_is_deterministic_and_reasons_unique(f: WorkspaceFacts) -> None:
    a = classify(f, NOW)
    assert a == classify(f, NOW)
    assert len(set(a.reasons)) == len(a.reasons)


@given(roots)
def test_prefix_hint_is_the_longest_matching_prefix(root: str) -> None:
    found = known_test_prefix(root)
    base = posixpath.basename(root)
    matching = [p for p in KNOWN_TEST_ROOT_PREFIXES if base.startswith(p)]
    if not matching:
        assert found is None
    else:
        assert found == max(matching, key=len).rstrip("-")


@given(roots, parents)
def test_is_inside_agrees_with_path_prefixes(root: str, parent: str) -> None:
    assert is_inside(root, parent) == (root == parent or root.startswith(parent.rstrip("/") + "/"))


@given(st.integers(0, 253_402_300_799_999))
def test_quarantine_stamp_shape(ms: int) -> None:
    stamp = quarantine_stamp(ms)
    assert len(stamp) == 16 and stamp[8] == "T" and stamp.endswith("Z")
    assert stamp[:8].isdigit() and stamp[9:15].isdigit()
