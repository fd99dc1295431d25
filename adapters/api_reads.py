"""The read-only methods of :class:`adapters.api.WorkingMemory`: what a session holds for injection,
its compaction prompt, ``explain`` in words, and the store, block and list as they are now. None of
them writes: they read the files and compute (no transaction, no lock held past a read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters import user_scope
from adapters.api_values import (
    CompactionPrompt,
    Explanation,
    Injection,
    Memory,
    checked_session_id,
    injection_of,
    memory_rows,
    storage_error_from,
)
from adapters.evidence_log import warn
from adapters.paths import workspace_key, workspace_paths_for_key
from adapters.search_index import disclosure
from adapters.storage_io import StorageError
from domain import operations
from domain.consolidation import normalize_store
from domain.operations.common import render_block, with_shared
from domain.search.disclosure import tagged_block

if TYPE_CHECKING:
    from pathlib import Path

    from adapters.filestore import Workspace
    from domain.model import SessionState, WorkspaceStore


class ReadMethods:
    """The read-only views of :class:`adapters.api.WorkingMemory` (its module docstring)."""

    root: str
    home: Path

    def now_ms(self) -> int:
        raise NotImplementedError  # WorkingMemory.now_ms

    def workspace(self) -> Workspace:
        raise NotImplementedError  # WorkingMemory.workspace

    # ---- read-only views of a session -------------------------------------------------------------

    def current_injection(self, session: str) -> Injection:
        """The text the session holds for injection right now (frozen block + hot state), without
        opening a new epoch; empty for a session that was never opened. Read-only."""
        return injection_of(self._read_session(checked_session_id(session)), self.root)

    def compaction_prompt(self, session: str) -> CompactionPrompt:
        """The compaction prompt for this session (its numbered block and hot state). Read-only."""

        state = self._read_session(checked_session_id(session))
        return CompactionPrompt(operations.compaction_prompt(state, self.root))

    # ---- read-only views of the workspace ---------------------------------------------------------

    def explain(self, memory_id: str | None = None) -> Explanation:
        """Why each memory (or only ``memory_id``) is or is not in the block, in words (what
        ``workmem explain`` prints). Read-only."""
        # start-up time: only `explain` loads the diagnostics (docs/performance.md)
        from adapters.diagnostics_input import load_input, read_rejections
        from domain.diagnostics.words import explain_all, format_explained

        now = self.now_ms()
        key = workspace_key(self.root)
        try:
            records, _, _ = read_rejections(self.home)
            scoped = tuple(r for r in records if not r.workspace_key or r.workspace_key == key)
            src = load_input(workspace_paths_for_key(self.home, key), self.root, key, scoped)
        except OSError as exc:
            raise storage_error_from(exc) from None
        found = explain_all(src, now, memory_id)
        if not found:
            return Explanation(
                f"Memory {memory_id}: no memory has this id." if memory_id else "No memories stored."
            )
        return Explanation("\n".join(format_explained(item) for item in found))

    def normalized_store(self) -> tuple[WorkspaceStore, int]:
        """The store as workmem sees it now, normalised in memory, and the time used. Read-only."""

        now = self.now_ms()
        ws = self.workspace()
        try:
            loaded = ws.read_store(now)
            if loaded.corrupt:
                # never show an unreadable store as an empty one; the next write moves it aside
                raise StorageError(
                    f"the workspace store {ws.paths.store} cannot be read; it will be moved aside "
                    "(not deleted) by the next command that writes"
                )
            if loaded.damage:
                warn(loaded.damage)
            store = loaded.value
            archive = ws.read_archive() if store.archived else {}
        except OSError as exc:
            raise storage_error_from(exc) from None
        return normalize_store(store, now, archive=archive).store, now

    def block(self) -> Injection:
        """The workspace block a new session would start with now, rendered from the stored memories
        and the user's own (docs/decisions.md#d17), a near-duplicate shown once
        (docs/decisions.md#d22); only the host's instruction files, which this door does not read,
        can leave out more at a real session start. Read-only: nothing is written and no epoch
        starts."""

        store, now = self.normalized_store()
        try:
            shared = user_scope.shared_entries(self.workspace(), now)
        except OSError as exc:
            raise storage_error_from(exc) from None
        rendered = render_block(with_shared(store, shared), now)
        text = tagged_block(rendered, store, now) if disclosure().tags else rendered.text
        return Injection(text, block=text)

    def list(self, *, include_all: bool = False) -> tuple[Memory, ...]:
        """Active memories, strongest first; with ``include_all`` also superseded and forgotten ones;
        then the active memories of the user's own store this workspace does not hold itself
        (scope ``user``, docs/decisions.md#d17). Read-only."""
        store, now = self.normalized_store()
        try:
            shared = user_scope.shared_entries(self.workspace(), now)
        except OSError as exc:
            raise storage_error_from(exc) from None
        return memory_rows(store, now, include_all=include_all, shared=shared)

    # ---- helpers ----------------------------------------------------------------------------------

    def _read_session(self, session: str) -> SessionState | None:
        try:
            return self.workspace().read_session(session).value
        except OSError as exc:
            raise storage_error_from(exc) from None
