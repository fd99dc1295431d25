"""The Python API: one typed method per operation, each one transaction (docs/hosts.md, "Python hosts").

Every door into workmem — the CLI, ``workmem serve``, the MCP server, a Python host — calls this class.
Each mutating method builds one command (:mod:`domain.commands`) and hands it to the one service,
:func:`adapters.service.execute` (lock → read → pure step → write → evidence), so a rule written once
holds everywhere; read-only methods never write.

Results are frozen ``msgspec.Struct`` values (defined in :mod:`adapters.api_values` with the checks of
the arguments, and importable from here). Failures:

* :class:`StorageError` (from :mod:`adapters.filestore`) — the storage could not be used: lock timeout,
  permission, read-only or full disk, a stale write. Nothing on disk is lost; retrying is safe.
* :class:`InvalidInput` — an argument the API cannot act on (an unknown memory type, an empty
  session id). Nothing is read or written.
* A memory the safety gate refuses, or an unknown memory id for ``forget``/``supersede``/``restore``,
  is not an exception: the result's ``outcome`` says ``rejected`` (with ``reasons``) or ``unknown``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from adapters.api_reads import ReadMethods
from adapters.api_values import (
    CompactionPrompt,
    Decision,
    Edit,
    Explanation,
    Injection,
    InvalidInput,
    Memory,
    Observed,
    Pinning,
    Remembered,
    checked_session_id,
    checked_text,
    citations_of,
    decisions,
    importance_of,
    injection_of,
    memory_type_of,
    pinning_of,
    remembered_of,
    scope_of_value,
    storage_error_from,
    valid_until_of,
    volatility_of_value,
)
from adapters.clock import now_ms
from adapters.filestore import Workspace
from adapters.locking import DEFAULT_LOCK_TIMEOUT_S
from adapters.paths import NoSuchWorkspace, data_home, workspace_root_of
from adapters.recall_lookup import recalled_text
from adapters.search_door import SearchMethods
from adapters.service import execute
from adapters.storage_io import StorageError
from domain.caches import Caches
from domain.commands import (
    Batch,
    Compacted,
    EndSession,
    Forget,
    MixedSessions,
    OpenSession,
    Remember,
    Restore,
    Supersede,
    ToolResult,
    UserMessage,
    completed,
)
from domain.enums import Importance, MemoryType, Scope, Volatility
from domain.host_instructions import host_context
from domain.operations.pinning import Pin, Unpin
from domain.operations.replies import AgentReply
from domain.search.values import SearchAnswer, ShowAnswer
from domain.session import ToolEvent

if TYPE_CHECKING:
    from adapters.filestore import Workspace
    from adapters.storage_io import SnapshotCache
    from adapters.sync import SyncReport
    from domain.commands import Command, Forget, Restore, Supersede
    from domain.operations import OpResult

__all__ = [
    "CompactionPrompt",
    "Decision",
    "Edit",
    "Explanation",
    "Injection",
    "InvalidInput",
    "Memory",
    "Observed",
    "Pinning",
    "Remembered",
    "SearchAnswer",
    "ShowAnswer",
    "StorageError",
    "WorkingMemory",
]


# ---------------------------------------------------------------------------------------------------
# The class
# ---------------------------------------------------------------------------------------------------


def _observed(result: OpResult | None, *, note: bool = False) -> Observed:
    if result is None:
        return Observed()
    return Observed(
        decisions(result.events),
        note=result.output if note and result.output else UNSET,
        recalled=recalled_text(result) or UNSET,
    )


def _outcome(result: OpResult) -> str:
    """The outcome of a user command as a plain string (``unknown`` when it has none)."""
    return result.outcome.value if result.outcome is not None else "unknown"


class WorkingMemory(SearchMethods, ReadMethods):
    """Working memory of one workspace (``search`` and ``show``: :class:`SearchMethods`; the
    read-only views: :class:`adapters.api_reads.ReadMethods`).

    ``workspace`` is a directory of the project: the workspace is the repository that holds it
    (:func:`adapters.paths.workspace_root_of`); a directory that does not exist is
    :class:`InvalidInput`. ``home`` is the data directory (default:
    ``WORKMEM_HOME``, else the platform's user data directory). ``clock`` returns epoch milliseconds
    (default: the real clock, or ``WORKMEM_NOW`` when set). ``lock_timeout_s`` bounds the wait for the
    workspace lock. ``cache`` (an :class:`adapters.storage_io.SnapshotCache`) lets a long-running
    caller reuse decoded files between calls while their bytes on disk are unchanged. The object
    holds nothing the files do not hold, so any number of them, in any number of processes, may share
    a workspace; what it keeps between calls is the core's speed state of its workspace (a
    :class:`domain.caches.Caches`, docs/decisions.md#d14, read-only as :attr:`caches`), used only
    inside a transaction, which no result depends on.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        home: str | os.PathLike[str] | None = None,
        clock: Callable[[], int] | None = None,
        lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
        cache: SnapshotCache | None = None,
    ) -> None:

        try:
            self.root = workspace_root_of(os.fspath(workspace))
        except NoSuchWorkspace as exc:
            raise InvalidInput(str(exc)) from None
        self.home: Path = data_home(override=os.fspath(home) if home is not None else None)
        self._clock = clock
        self.lock_timeout_s = lock_timeout_s
        self._cache = cache
        self._caches = Caches()

    # ---- plumbing ---------------------------------------------------------------------------------

    @property
    def caches(self) -> Caches:
        """The core's speed state of this workspace (:class:`domain.caches.Caches`): the one object
        every command of this instance is handed, the same for the object's life. For looking at
        (a long-running door keeps one per workspace); a result never depends on it."""
        return self._caches

    def now_ms(self) -> int:
        """The clock this object uses (``WORKMEM_NOW`` is read on every call when no clock was given)."""
        if self._clock is not None:
            return self._clock()

        return now_ms()

    def workspace(self) -> Workspace:

        return Workspace(self.home, self.root, lock_timeout_s=self.lock_timeout_s, cache=self._cache)

    def execute(self, command: Command, *, now_ms: int | None = None) -> OpResult | None:
        """Run one command (:mod:`domain.commands`) in one transaction and keep what it changed: the
        one service every method below calls. ``None`` for a command that reads and writes nothing
        (a sub-agent's event). ``now_ms`` defaults to :meth:`now_ms`. Raises :class:`StorageError`."""

        now = self.now_ms() if now_ms is None else now_ms
        try:
            return execute(self.workspace(), command, now, self._caches)
        except OSError as exc:
            raise storage_error_from(exc) from None

    def run(self, *commands: Command, now_ms: int | None = None) -> OpResult | None:
        """Several commands as one transaction, each reading what the one before left (for example
        a compaction followed by a new epoch): how a host adapter composes operations. Their session
        commands must name one session. Raises :class:`StorageError` and :class:`InvalidInput`."""

        try:
            return self.execute(Batch(steps=commands), now_ms=now_ms)
        except MixedSessions as exc:
            raise InvalidInput(str(exc)) from None

    # ---- the five core operations -----------------------------------------------------------------

    def open_session(self, session: str, *, parent: str | None = None, host: str | None = None) -> Injection:
        """Open (or refresh) the session's cache epoch and return what to inject. Within a fresh
        epoch this returns the same text, byte for byte, and writes nothing. ``host``
        (``claude-code``, ``codex``, ``opencode``): the block leaves out what that host's instruction
        files already say (docs/decisions.md#d22)."""

        command = OpenSession(session=checked_session_id(session), parent=parent, host=host_context(host))
        result = self.execute(command)
        if result is None:
            return Injection("")
        found = injection_of(result.session, self.root)
        return found if found.text == result.output else Injection(result.output)

    def user_message(
        self, session: str, text: str, *, message_id: str | None = None, parent: str | None = None
    ) -> Observed:
        """Observe a user message: explicit "remember …" requests become pending memories. The same
        ``message_id`` twice is a no-op (default: the message is identified by its time and text)."""

        command = UserMessage(
            session=checked_session_id(session),
            text=checked_text(text, "the message text"),
            message_id=message_id,
            parent=parent,
        )
        return _observed(self.execute(command), note=True)

    def tool_result(
        self,
        session: str,
        tool: str,
        *,
        args: dict[str, Any] | None = None,
        output: str = "",
        exit_code: int | None = None,
        parent: str | None = None,
    ) -> Observed:
        """Observe a tool result: active files and open errors of the hot session state."""

        if not isinstance(tool, str) or not tool:
            raise InvalidInput("a tool name must be a non-empty string")
        event = ToolEvent(tool=tool, args=dict(args or {}), output=output, exit_code=exit_code)
        return _observed(
            self.execute(ToolResult(session=checked_session_id(session), event=event, parent=parent))
        )

    def agent_reply(self, session: str, text: str, *, parent: str | None = None) -> Observed:
        """Observe the agent's reply: a memory shown to the session that it cites by id was used, and
        is reinforced once for the session (docs/decisions.md#d19). The text is read, not stored."""

        command = AgentReply(
            session=checked_session_id(session), text=checked_text(text, "the reply"), parent=parent
        )
        return _observed(self.execute(command))

    def compacted(
        self, session: str, summary: str, *, parent: str | None = None, host: str | None = None
    ) -> Observed:
        """Observe the host's compaction summary: its ``Memory candidates:`` go through the gate,
        pending memories are promoted, and the next ``open_session`` starts a new epoch. The same
        summary twice in a session is observed once. ``host``: as for :meth:`open_session`."""

        text = checked_text(summary, "the summary")
        sid = checked_session_id(session)
        return _observed(
            self.execute(Compacted(session=sid, summary=text, parent=parent, host=host_context(host)))
        )

    def end_session(
        self, session: str, *, parent: str | None = None, keep_hot_state: bool = False
    ) -> Observed:
        """End a session: promote what it still owns and drop its state (``keep_hot_state``: keep
        its hot state for a resume under the same id)."""

        command = EndSession(
            session=checked_session_id(session), parent=parent, keep_hot_state=keep_hot_state
        )
        return _observed(self.execute(command))

    # ---- the user's own commands ------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        type: MemoryType | str | None = None,
        importance: Importance | str | None = None,
        rationale: str | None = None,
        scope: Scope | str | None = None,
        pin: bool = False,
        force: bool = False,
        volatility: Volatility | str | None = None,
        valid_until: str | int | None = None,
        cite: Sequence[str] = (),
    ) -> Remembered:
        """Store a manual memory, through the same safety gate as every other memory (its quality
        rules too, unless ``force``; ``pin``: pinned, docs/decisions.md#d20). ``type`` defaults to
        the one classified from the text; ``scope`` (``team``, ``personal``, ``user``) to the
        type's (docs/decisions.md#d17): a ``user`` memory is kept in the user's own store.
        Freshness (docs/decisions.md#d18): ``volatility`` (stable, normal, volatile),
        ``valid_until`` (``YYYY-MM-DD``, or ms), ``cite`` (``PATH[:LINE[-LINE]]`` files of the
        workspace the memory describes)."""

        command = completed(
            Remember(
                text=checked_text(text, "the memory text"),
                type=memory_type_of(type),
                importance=importance_of(importance),
                rationale=rationale,
                scope=scope_of_value(scope),
                pin=bool(pin),
                force=bool(force),
                volatility=volatility_of_value(volatility),
                valid_until=valid_until_of(valid_until),
                cites=citations_of(self.root, cite),
            )
        )
        return remembered_of(self.execute(command), command)

    def pin(self, memory_id: str) -> Pinning:
        """Pin a memory: shown first, never archived, within the pinned budget (docs/decisions.md#d20)."""

        return pinning_of(self.execute(Pin(memory_id=str(memory_id))), str(memory_id))

    def unpin(self, memory_id: str) -> Pinning:
        """Rank a pinned memory as usual again."""

        return pinning_of(self.execute(Unpin(memory_id=str(memory_id))), str(memory_id))

    def forget(self, memory_id: str) -> Edit:
        """Stop using a memory (kept, marked forgotten; :meth:`restore` undoes it)."""

        return self._edit(Forget(memory_id=str(memory_id)))

    def supersede(self, memory_id: str, text: str, *, type: MemoryType | str | None = None) -> Edit:
        """Replace a memory by a new text (the old one is kept, marked superseded). The new text
        passes the safety gate; if it is refused nothing changes."""

        command = Supersede(
            memory_id=str(memory_id), text=checked_text(text, "the memory text"), type=memory_type_of(type)
        )
        return self._edit(command)

    def restore(self, memory_id: str) -> Edit:
        """Undo ``forget`` or ``supersede``, or bring back an archived memory."""

        return self._edit(Restore(memory_id=str(memory_id)))

    def sync(self, *, dry_run: bool = False) -> SyncReport:
        """Share this workspace's memories through its ``.workmem/`` folder (created when missing):
        import what people and other clones changed there, through the gate, and export the store
        (docs/decisions.md#d17). ``dry_run``: report what would move, write nothing. Raises
        :class:`StorageError`."""
        # start-up time: only `sync` loads the projection's import and export (docs/performance.md)
        from adapters.sync import sync_workspace

        try:
            return sync_workspace(self.workspace(), self.now_ms(), dry_run=dry_run)
        except OSError as exc:
            raise storage_error_from(exc) from None

    # ---- helpers ----------------------------------------------------------------------------------

    def _edit(self, command: Forget | Supersede | Restore) -> Edit:
        result = self.execute(command)
        assert result is not None  # a workspace command always runs
        target = command.memory_id
        return Edit(
            outcome=_outcome(result), target=target, id=result.memory_id or target, reasons=result.reasons
        )
