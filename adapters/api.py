"""The Python API: one typed method per operation, each one transaction (docs/hosts.md, "Python hosts").

Every door into workmem — the CLI, ``workmem serve``, the MCP server, a Python host — calls this class,
so a rule written once holds everywhere (the safety gate for a ``remember``, sub-agent sessions causing
no writes, ...). Each mutating method runs lock → read → pure step → write → evidence through
:func:`adapters.commands._run.run_operation`; read-only methods never write.

Results are frozen ``msgspec.Struct`` values. Failures:

* :class:`StorageError` (from :mod:`adapters.filestore`) — the storage could not be used: lock timeout,
  permission, read-only or full disk, a stale write. Nothing on disk is lost; retrying is safe.
* :class:`InvalidInput` — an argument the API cannot act on (an unknown memory type, an empty
  session id). Nothing is read or written.
* A memory the safety gate refuses, or an unknown memory id for ``forget``/``supersede``/``restore``,
  is not an exception: the result's ``outcome`` says ``rejected`` (with ``reasons``) or ``unknown``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from adapters.filestore import DEFAULT_LOCK_TIMEOUT_S, StorageError, StorageUnavailable
from domain.model import EventType, EvidenceInput, Importance, MemoryType

if TYPE_CHECKING:
    from adapters.filestore import SnapshotCache, Workspace
    from domain.model import MemoryEntry, SessionState, WorkspaceStore
    from domain.operations import OpResult, Snapshot

__all__ = [
    "CompactionPrompt",
    "Decision",
    "Edit",
    "Explanation",
    "Injection",
    "InvalidInput",
    "Memory",
    "Observed",
    "Remembered",
    "StorageError",
    "WorkingMemory",
]


class InvalidInput(ValueError):
    """An argument the API cannot act on; the message is one line. Nothing was read or written."""


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


class Injection(msgspec.Struct, frozen=True, rename="camel"):
    """What a host puts into the prompt: ``text`` is the frozen workspace ``block``, then the
    ``hot_state``, separated by a blank line (a host that keeps system entries apart may inject the
    two separately). All empty for a sub-agent session."""

    text: str
    block: str = ""
    hot_state: str = ""


def _injection(state: SessionState | None, root: str) -> Injection:
    from domain.operations import context_text
    from domain.session import render_hot_state

    if state is None or state.parent_session_id is not None:
        return Injection("")
    hot = render_hot_state(state, root)
    return Injection(context_text(state, root), block=state.frozen_block or "", hot_state=hot)


class CompactionPrompt(msgspec.Struct, frozen=True):
    """The prompt a host sends when it compacts (asks for a ``Memory candidates:`` section)."""

    text: str


class Explanation(msgspec.Struct, frozen=True):
    """Why each memory is (or is not) in the block, as ``workmem explain`` prints it."""

    text: str


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one memory in an operation: ``action`` is ``pending``, ``accept``,
    ``promoted``, ``absorbed``, ``superseded``, ``retry``, ``exhausted`` (kept) or ``ignored``,
    ``reject``, ``rejected`` (refused, with ``reasons``). ``text`` is a redacted preview."""

    action: str
    text: str
    type: str | None = None
    reasons: tuple[str, ...] = ()
    rejected: bool = False

    def line(self) -> str:
        """The one-line form the CLI prints."""
        if self.rejected:
            return f"{self.action} {','.join(self.reasons) or 'rejected'}: {self.text}".rstrip()
        return f"{self.action} [{self.type or '?'}] {self.text}".rstrip()


class Observed(msgspec.Struct, frozen=True):
    """The result of observing a message, a tool result, a compaction or a session end."""

    decisions: tuple[Decision, ...] = ()


class Remembered(msgspec.Struct, frozen=True, kw_only=True):
    """``outcome``: ``promoted`` (new), ``absorbed`` (reinforced an existing memory), ``superseded``
    or ``rejected`` (by the safety gate; ``reasons`` says why, ``id`` is ``None``)."""

    outcome: str
    id: str | None
    type: str
    reasons: tuple[str, ...] = ()


class Edit(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``forget``, ``supersede`` or ``restore``. ``outcome``: ``forgotten``,
    ``superseded`` (``id`` is the new memory), ``restored``, ``unchanged``, ``rejected`` (the new
    text of a supersede was refused, see ``reasons``) or ``unknown`` (no memory with ``target``)."""

    outcome: str
    target: str
    id: str | None = None
    reasons: tuple[str, ...] = ()


class Memory(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One stored memory as ``workmem list --json`` shows it."""

    id: str
    type: str
    text: str
    source: str
    status: str
    strength: float
    rendered: bool
    reinforcement_count: int
    created_at: str
    updated_at: str
    user_importance: str | None = None
    rationale: str | None = None
    superseded_by: str | None = None


# ---------------------------------------------------------------------------------------------------
# Event → decision
# ---------------------------------------------------------------------------------------------------

_KEPT: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_DETECTED: "pending",
    EventType.EXTRACTION_CANDIDATE_ACCEPTED: "accept",
    EventType.PROMOTION_PROMOTED: "promoted",
    EventType.PROMOTION_ABSORBED_EXACT: "absorbed",
    EventType.PROMOTION_ABSORBED_IDENTITY: "absorbed",
    EventType.PROMOTION_SUPERSEDED: "superseded",
    EventType.MEMORY_SUPERSEDED: "superseded",
    EventType.PROMOTION_RETRY_SCHEDULED: "retry",
    EventType.PROMOTION_RETRY_EXHAUSTED: "exhausted",
}
_REFUSED: Final[dict[str, str]] = {
    EventType.EXPLICIT_MEMORY_IGNORED: "ignored",
    EventType.EXTRACTION_CANDIDATE_REJECTED: "reject",
    EventType.PROMOTION_REJECTED_CAPACITY: "rejected",
}


def _single_line(text: str) -> str:
    from adapters.commands import one_line

    return one_line(text)


def decisions(events: Iterable[EvidenceInput]) -> tuple[Decision, ...]:
    """A short, redacted account of what happened to each memory (one per relevant event)."""
    found: list[Decision] = []
    for ev in events:
        preview = _single_line(ev.text_preview or "")
        kind = ev.memory.type if ev.memory is not None and ev.memory.type else None
        if ev.type in _KEPT and ev.outcome != "rejected":
            found.append(Decision(action=_KEPT[ev.type], text=preview, type=kind))
        elif ev.type in _REFUSED or (ev.type in _KEPT and ev.outcome == "rejected"):
            found.append(
                Decision(
                    action=_REFUSED.get(ev.type, "rejected"),
                    text=preview,
                    type=kind,
                    reasons=tuple(ev.reason_codes),
                    rejected=True,
                )
            )
    return tuple(found)


def _memory_type(value: MemoryType | str | None, text: str) -> MemoryType:
    if isinstance(value, MemoryType):
        return value
    if value is None:
        from domain.extraction import classify_explicit_memory

        return classify_explicit_memory(text)
    try:
        return MemoryType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in MemoryType)
        raise InvalidInput(f"unknown memory type {str(value)[:40]!r} (one of: {allowed})") from None


def _importance(value: Importance | str | None) -> Importance | None:
    if value is None or isinstance(value, Importance):
        return value
    try:
        return Importance(value)
    except ValueError:
        allowed = ", ".join(i.value for i in Importance)
        raise InvalidInput(f"unknown importance {str(value)[:40]!r} (one of: {allowed})") from None


def _session_id(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("a session id must be a non-empty string")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    return value


def _storage_from_os_error(exc: OSError) -> StorageUnavailable:
    reason = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    return StorageUnavailable(" ".join(f"{reason}{where}".split()))


def memory_rows(store: WorkspaceStore, now_ms: int, *, include_all: bool) -> tuple[Memory, ...]:
    """The store as ``list`` shows it: active memories strongest first, then (with ``include_all``)
    the others. ``store`` should already be normalised (in memory)."""
    from domain.model import MemoryStatus
    from domain.render import render_workspace_block
    from domain.retention import dormancy_at, sort_by_retention, strength

    dormancy = dormancy_at(store, now_ms)
    rendered = {e.id for e in render_workspace_block(store, now_ms).rendered}
    active = [e for e in store.entries if e.status is MemoryStatus.ACTIVE]
    ordered: list[MemoryEntry] = sort_by_retention(active, now_ms, dormancy)
    if include_all:
        ordered += [e for e in store.entries if e.status is not MemoryStatus.ACTIVE]
    return tuple(
        Memory(
            id=entry.id,
            type=entry.type.value,
            text=entry.text,
            source=entry.source.value,
            status=entry.status.value,
            strength=strength(entry, now_ms, dormancy),  # full precision: rounding is for people
            rendered=entry.id in rendered,
            reinforcement_count=entry.reinforcement_count or 0,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            user_importance=entry.user_importance.value if entry.user_importance is not None else None,
            rationale=entry.rationale or None,
            superseded_by=entry.superseded_by or None,
        )
        for entry in ordered
    )


# ---------------------------------------------------------------------------------------------------
# The class
# ---------------------------------------------------------------------------------------------------


class WorkingMemory:
    """Working memory of one workspace.

    ``workspace`` is the project root (made absolute). ``home`` is the data directory (default:
    ``WORKMEM_HOME``, else the platform's user data directory). ``clock`` returns epoch milliseconds
    (default: the real clock, or ``WORKMEM_NOW`` when set). ``lock_timeout_s`` bounds the wait for the
    workspace lock. ``cache`` (an :class:`adapters.filestore.SnapshotCache`) lets a long-running
    caller reuse decoded files between calls while their bytes on disk are unchanged. The object
    holds nothing the files do not hold, so any number of them, in any number of processes, may share
    a workspace.
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
        from adapters.paths import data_home

        self.root = os.path.abspath(os.fspath(workspace))
        self.home: Path = data_home(override=os.fspath(home) if home is not None else None)
        self._clock = clock
        self.lock_timeout_s = lock_timeout_s
        self._cache = cache

    # ---- plumbing ---------------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The clock this object uses (``WORKMEM_NOW`` is read on every call when no clock was given)."""
        if self._clock is not None:
            return self._clock()
        from adapters.clock import now_ms

        return now_ms()

    def workspace(self) -> Workspace:
        from adapters.filestore import Workspace

        return Workspace(self.home, self.root, lock_timeout_s=self.lock_timeout_s, cache=self._cache)

    def run(
        self,
        session: str | None,
        step: Callable[[Snapshot], OpResult],
        *,
        now_ms: int | None = None,
        with_others: bool = True,
    ) -> OpResult:
        """Run a caller-supplied pure step on a consistent snapshot of the workspace, in one
        transaction, and persist what it changed. This is how a host adapter composes operations
        (for example a compaction followed by a new epoch); ``now_ms`` should be the time the step
        itself uses (default: :meth:`now_ms`). ``session`` names the session file the step may
        change; ``with_others`` also loads the other sessions (needed to adopt idle owners).
        Raises :class:`StorageError`."""
        now = self.now_ms() if now_ms is None else now_ms
        return self._run_at(now, session, step, with_others=with_others)

    # ---- the five core operations -----------------------------------------------------------------

    def open_session(self, session: str, *, parent: str | None = None) -> Injection:
        """Open (or refresh) the session's cache epoch and return what to inject. Within a fresh
        epoch this returns the same text, byte for byte, and writes nothing."""
        from domain import operations

        if parent is not None:
            return Injection("")
        sid = _session_id(session)
        now = self.now_ms()
        result = self._run_at(now, sid, lambda snap: operations.open_session(snap, sid, now))
        found = _injection(result.session, self.root)
        return found if found.text == result.output else Injection(result.output)

    def user_message(
        self, session: str, text: str, *, message_id: str | None = None, parent: str | None = None
    ) -> Observed:
        """Observe a user message: explicit "remember …" requests become pending memories. The same
        ``message_id`` twice is a no-op (default: derived from the time and the text)."""
        from domain import operations
        from domain.ids import hash16

        if parent is not None:
            return Observed()
        sid = _session_id(session)
        text = _text(text, "the message text")
        now = self.now_ms()
        mid = message_id or f"msg_{hash16(f'{now}:{text}')}"
        result = self._run_at(
            now,
            sid,
            lambda snap: operations.observe_user_message(snap, sid, mid, text, now),
            with_others=False,
        )
        return Observed(decisions(result.events))

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
        from domain import operations
        from domain.session import ToolEvent

        if not isinstance(tool, str) or not tool:
            raise InvalidInput("a tool name must be a non-empty string")
        event = ToolEvent(tool=tool, args=dict(args or {}), output=output, exit_code=exit_code)
        if parent is not None:
            return Observed()
        sid = _session_id(session)
        now = self.now_ms()
        result = self._run_at(
            now,
            sid,
            lambda snap: operations.observe_tool_result(snap, sid, event, now),
            with_others=False,
        )
        return Observed(decisions(result.events))

    def compacted(self, session: str, summary: str, *, parent: str | None = None) -> Observed:
        """Observe the host's compaction summary: its ``Memory candidates:`` go through the gate,
        pending memories are promoted, and the next ``open_session`` starts a new epoch."""
        from domain import operations

        if parent is not None:
            return Observed()
        sid = _session_id(session)
        summary = _text(summary, "the summary")
        now = self.now_ms()
        result = self._run_at(now, sid, lambda snap: operations.observe_compaction(snap, sid, summary, now))
        return Observed(decisions(result.events))

    def end_session(self, session: str, *, parent: str | None = None) -> Observed:
        """End a session: promote what it still owns and drop its state."""
        from domain import operations

        if parent is not None:
            return Observed()
        sid = _session_id(session)
        now = self.now_ms()
        result = self._run_at(
            now, sid, lambda snap: operations.end_session(snap, sid, now), with_others=False
        )
        return Observed(decisions(result.events))

    # ---- read-only views of a session -------------------------------------------------------------

    def context(self, session: str) -> Injection:
        """The text the session injects right now (frozen block + hot state), without opening a new
        epoch; empty for a session that was never opened. Read-only."""
        return _injection(self._read_session(_session_id(session)), self.root)

    def compaction_prompt(self, session: str) -> CompactionPrompt:
        """The compaction prompt for this session (its numbered block and hot state). Read-only."""
        from domain import operations

        state = self._read_session(_session_id(session))
        return CompactionPrompt(operations.compaction_prompt(state, self.root))

    # ---- the user's own commands ------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        type: MemoryType | str | None = None,
        importance: Importance | str | None = None,
        rationale: str | None = None,
    ) -> Remembered:
        """Store a manual memory, through the same safety gate as every other memory. ``type``
        defaults to the one classified from the text."""
        from domain import operations
        from domain.bounds import MEMORY_INPUT_CHARS, cut_at_whitespace

        # a memory is stored with 260 characters: a huge text is not classified and gated whole
        text = cut_at_whitespace(_text(text, "the memory text"), MEMORY_INPUT_CHARS)
        kind = _memory_type(type, text)
        level = _importance(importance)
        now = self.now_ms()
        result = self._run_at(
            now,
            None,
            lambda snap: operations.remember(snap, text, kind, now, importance=level, rationale=rationale),
            with_others=False,
        )
        rejected = result.outcome == "rejected"
        return Remembered(
            outcome=result.outcome,
            id=None if rejected else result.memory_id,
            type=kind.value,
            reasons=result.reasons,
        )

    def forget(self, memory_id: str) -> Edit:
        """Stop using a memory (kept, marked forgotten; :meth:`restore` undoes it)."""
        from domain import operations

        target = str(memory_id)
        now = self.now_ms()
        result = self._run_at(now, None, lambda snap: operations.forget(snap, target, now), with_others=False)
        return self._edit(result, target)

    def supersede(self, memory_id: str, text: str, *, type: MemoryType | str | None = None) -> Edit:
        """Replace a memory by a new text (the old one is kept, marked superseded). The new text
        passes the safety gate; if it is refused nothing changes."""
        from domain import operations

        target = str(memory_id)
        text = _text(text, "the memory text")
        kind = _memory_type(type, text) if type is not None else None
        now = self.now_ms()
        result = self._run_at(
            now,
            None,
            lambda snap: operations.supersede(snap, target, text, now, type_=kind),
            with_others=False,
        )
        return self._edit(result, target)

    def restore(self, memory_id: str) -> Edit:
        """Undo ``forget`` or ``supersede``, or bring back an archived memory."""
        from domain import operations

        target = str(memory_id)
        now = self.now_ms()
        result = self._run_at(
            now, None, lambda snap: operations.restore(snap, target, now), with_others=False
        )
        return self._edit(result, target)

    def explain(self, memory_id: str | None = None) -> Explanation:
        """Why each memory (or only ``memory_id``) is or is not in the block. Read-only."""
        from adapters.commands.diagnostics import load_input, read_rejections
        from adapters.paths import workspace_key, workspace_paths_for_key
        from domain.diagnostics import format_explain

        now = self.now_ms()
        key = workspace_key(self.root)
        try:
            records, _, _ = read_rejections(self.home)
            scoped = tuple(r for r in records if not r.workspace_key or r.workspace_key == key)
            src = load_input(workspace_paths_for_key(self.home, key), self.root, key, scoped)
        except OSError as exc:
            raise _storage_from_os_error(exc) from None
        return Explanation(format_explain(src, now, memory_id))

    def normalized_store(self) -> tuple[WorkspaceStore, int]:
        """The store as workmem sees it now, normalised in memory, and the time used. Read-only."""
        from domain.consolidation import normalize_store

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
                from adapters.evidence_log import warn

                warn(loaded.damage)
            store = loaded.value
            archive = ws.read_archive() if store.archived else {}
        except OSError as exc:
            raise _storage_from_os_error(exc) from None
        return normalize_store(store, now, archive=archive).store, now

    def block(self) -> Injection:
        """The workspace block a new session would start with now, rendered from the stored memories.
        Read-only: nothing is written and no epoch starts."""
        from domain.render import render_workspace_block

        store, now = self.normalized_store()
        text = render_workspace_block(store, now).text
        return Injection(text, block=text)

    def list(self, *, include_all: bool = False) -> tuple[Memory, ...]:
        """Active memories, strongest first; with ``include_all`` also superseded and forgotten ones.
        Read-only."""
        store, now = self.normalized_store()
        return memory_rows(store, now, include_all=include_all)

    # ---- helpers ----------------------------------------------------------------------------------

    def _run_at(
        self,
        now: int,
        session: str | None,
        step: Callable[[Snapshot], OpResult],
        *,
        with_others: bool = True,
    ) -> OpResult:
        from adapters.commands._run import run_operation

        try:
            return run_operation(self.workspace(), now, session, step, with_others=with_others)
        except OSError as exc:
            raise _storage_from_os_error(exc) from None

    def _read_session(self, session: str) -> SessionState | None:
        try:
            return self.workspace().read_session(session).value
        except OSError as exc:
            raise _storage_from_os_error(exc) from None

    @staticmethod
    def _edit(result: OpResult, target: str) -> Edit:
        outcome = result.outcome if result.outcome else "unknown"
        return Edit(outcome=outcome, target=target, id=result.memory_id or target, reasons=result.reasons)
