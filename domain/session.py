"""Hot session state: what the agent is doing right now, in one session.

The hot state tracks the files the agent touches, the errors its commands report, the decisions taken in
the session and the explicit memories still waiting for promotion. It is rebuilt into a short prompt
block (at most 700 characters) on every turn.

Every function here is a pure step: it takes a :class:`~domain.model.SessionState` (and ``now_ms`` when
time matters) and returns a new state. Tool events reach the core as plain :class:`ToolEvent` values;
turning a host payload into one is the adapters' job (docs/decisions.md#d12).

Where workmem deliberately differs from the reference (docs/compatibility.md, "Hot session state";
docs/decisions.md#d4):

* every error summary, error command, decision text/rationale and pending memory text is redacted before
  it is stored or rendered;
* ``maybe_fixed`` errors keep their ``lastSeen`` (marking is not activity), are listed after the open
  errors and are rendered with a ``(maybe fixed)`` marker;
* recent decisions keep the newest 8 everywhere;
* :func:`extract_first_path` keeps ``.tsx``/``.jsx``/``.json`` extensions whole;
* :func:`classify_command` looks at the command word (and its subcommand or script name), not at any
  substring of the command line.

``turn`` is never changed here: it stays 0, as in the reference
(docs/decisions.md#hot-session-state).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from domain.bounds import cut_at_whitespace, tool_output_window
from domain.ids import decision_id, sha1
from domain.keys import first_per_key
from domain.model import (
    ActiveFile,
    DecisionSource,
    ErrorCategory,
    ErrorStatus,
    FileAction,
    HotStateLimits,
    MemoryEntry,
    OpenError,
    SessionDecision,
    SessionState,
)
from domain.safety import redact
from domain.text import (
    WS,
    collapse_whitespace,
    lazy_compile,
    memory_key,
    replace_surrogates,
    replace_surrogates_in,
    single_line,
    truncate,
)
from domain.timeutil import iso_from_ms

HEADER: Final = "Hot session state (current session):"
MAYBE_FIXED_MARK: Final = "(maybe fixed)"
MAX_ERROR_SUMMARY_CHARS: Final = 280
MAX_ERROR_LINES: Final = 5
MAX_GREP_PATHS: Final = 10

#: How much a kind of touch says about a file's importance; an action never moves to a lighter one.
ACTION_WEIGHT: Final[dict[FileAction, int]] = {
    FileAction.EDIT: 50,
    FileAction.WRITE: 45,
    FileAction.GREP: 30,
    FileAction.READ: 20,
}
_FILE_TOOLS: Final[dict[str, FileAction]] = {
    "read": FileAction.READ,
    "edit": FileAction.EDIT,
    "write": FileAction.WRITE,
}


class ToolEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One finished tool call, as the adapter hands it to the core."""

    tool: str
    args: dict[str, Any] = {}
    output: str = ""
    exit_code: int | None = None
    metadata: dict[str, Any] = {}


# ---------------------------------------------------------------------------------------------
# Construction and normalisation
# ---------------------------------------------------------------------------------------------


def empty_session(session_id: str, now_ms: int, parent_session_id: str | None = None) -> SessionState:
    """A session with nothing in it yet."""
    return SessionState(
        session_id=session_id,
        updated_at=iso_from_ms(now_ms),
        parent_session_id=parent_session_id,
    )


def normalize_session(state: SessionState, now_ms: int) -> SessionState:
    """Bring a state within its limits: stamp ``updatedAt``, keep the 20 best-ranked files, the 5 errors
    that sort first, the newest 8 decisions (docs/decisions.md#hot-session-state-recent-decisions) and the
    newest 12 distinct pending memories, and redact every stored text (docs/decisions.md#d4)."""
    return replace(
        state,
        updated_at=iso_from_ms(now_ms),
        active_files=_rank_files(state.active_files)[: HotStateLimits.MAX_ACTIVE_FILES_STORED],
        open_errors=_order_errors(_redact_error(e) for e in state.open_errors)[
            : HotStateLimits.MAX_OPEN_ERRORS_STORED
        ],
        recent_decisions=_newest_decisions(_redact_decision(d) for d in state.recent_decisions),
        pending_memories=_pending_window(_redact_memory(m) for m in state.pending_memories),
    )


# ---------------------------------------------------------------------------------------------
# Tool events
# ---------------------------------------------------------------------------------------------

_EXIT_CODE_KEYS: Final = ("exitCode", "exit_code", "code", "status")
_NUMERIC_STRING: Final = lazy_compile(r"-?[0-9]+\Z")
_EXIT_CODE_IN_TEXT: Final = lazy_compile(
    rf"(?:exit[{WS}]*code|exitCode|status)[:=][{WS}]*(-?[0-9]+)", re.IGNORECASE
)


def _as_exit_code(value: object) -> int | None:
    """A number, or a string of decimal digits with an optional minus; anything else is no answer."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _NUMERIC_STRING.match(value):
        return int(value)
    return None


def resolve_exit_code(event: ToolEvent) -> int | None:
    """The exit code of a shell command: the first usable value among ``exit_code``,
    ``metadata.exitCode``, ``metadata.exit_code``, ``metadata.code`` and ``metadata.status``, else an
    ``exit code: N`` / ``exitCode=N`` / ``status: N`` mention in the output, else ``None``."""
    for candidate in (event.exit_code, *(event.metadata.get(key) for key in _EXIT_CODE_KEYS)):
        code = _as_exit_code(candidate)
        if code is not None:
            return code
    match = _EXIT_CODE_IN_TEXT.search(event.output)
    return int(match.group(1)) if match else None


_GREP_PATH: Final = lazy_compile(
    r"(?:^|(?<=[\n\r\u2028\u2029]))(/[^\n]+\.(?:ts|tsx|js|jsx|json|md|py|go|rs|toml|yml|yaml)):"
)


def grep_paths(output: str) -> tuple[str, ...]:
    """Absolute source paths at the start of grep output lines (``/x/y.ts:``), distinct, first 10."""
    seen: dict[str, None] = {}
    for match in _GREP_PATH.finditer(output):
        seen.setdefault(match.group(1), None)
    return tuple(seen)[:MAX_GREP_PATHS]


def observe_tool(state: SessionState, event: ToolEvent, workspace_root: str, now_ms: int) -> SessionState:
    """Fold one tool result into the hot state (docs/decisions.md#hot-session-state-tool-events).

    ``read``/``edit``/``write`` touch ``args.filePath``; ``edit``/``write`` also mark errors in that file
    as maybe fixed; ``grep`` touches the absolute paths found in its output. ``bash`` with a known exit
    code clears the errors of the command's category on success and records the errors in its output on
    failure; with no exit code it changes nothing. Other tools are ignored. The result is normalised.
    Lone surrogates anywhere in the event become U+FFFD (bad input never becomes a storage error);
    only a bounded window of the output is scanned (:func:`domain.bounds.tool_output_window`).
    """
    event = ToolEvent(
        tool=replace_surrogates(event.tool),
        args=replace_surrogates_in(event.args),
        output=replace_surrogates(tool_output_window(event.output).text),
        exit_code=event.exit_code,
        metadata=replace_surrogates_in(event.metadata),
    )
    updated = state
    if event.tool in _FILE_TOOLS:
        path = event.args.get("filePath")
        if isinstance(path, str):
            action = _FILE_TOOLS[event.tool]
            updated = touch_active_file(updated, path, action, now_ms)
            if action in (FileAction.EDIT, FileAction.WRITE):
                updated = mark_errors_maybe_fixed_for_file(updated, path, workspace_root, now_ms)
    elif event.tool == "grep":
        for path in grep_paths(event.output):
            updated = touch_active_file(updated, path, FileAction.GREP, now_ms)
    elif event.tool == "bash":
        raw_command = event.args.get("command")
        command = raw_command if isinstance(raw_command, str) else ""
        exit_code = resolve_exit_code(event)
        if exit_code is not None and command:
            if exit_code == 0:
                updated = clear_errors_for_successful_command(updated, command)
            else:
                for error in extract_errors_from_bash(command, event.output, now_ms):
                    updated = upsert_open_error(updated, error, now_ms)
    return normalize_session(updated, now_ms)


# ---------------------------------------------------------------------------------------------
# Active files
# ---------------------------------------------------------------------------------------------


def _file_score(item: ActiveFile) -> int:
    return ACTION_WEIGHT[item.action] + 3 * item.count


def _rank_files(files: Iterable[ActiveFile]) -> tuple[ActiveFile, ...]:
    """Score (action weight + 3 x count) descending, then most recently seen; stable otherwise."""
    return tuple(sorted(files, key=lambda f: (-_file_score(f), -f.last_seen)))


_MAX_PATH_CHARS: Final = 1024


def touch_active_file(state: SessionState, path: str, action: FileAction, now_ms: int) -> SessionState:
    """Count one more touch of ``path``. The recorded action only moves to an equal or heavier one
    (a read after an edit stays an edit). The list is re-ranked and cut to 20. The path passes the
    safety gate like every stored text (a path may hold a token) and is kept to 1,024 characters."""
    path = truncate(redact(cut_at_whitespace(path, _MAX_PATH_CHARS)), _MAX_PATH_CHARS)
    files: list[ActiveFile] = []
    found = False
    for item in state.active_files:
        if not found and item.path == path:
            found = True
            keep = ACTION_WEIGHT[action] < ACTION_WEIGHT[item.action]
            item = replace(
                item,
                count=item.count + 1,
                last_seen=now_ms,
                action=item.action if keep else action,
            )
        files.append(item)
    if not found:
        files.append(ActiveFile(path=path, action=action, count=1, last_seen=now_ms))
    return replace(
        state,
        active_files=_rank_files(files)[: HotStateLimits.MAX_ACTIVE_FILES_STORED],
        updated_at=iso_from_ms(now_ms),
    )


# ---------------------------------------------------------------------------------------------
# Command classification
# ---------------------------------------------------------------------------------------------

_CATEGORY_PRIORITY: Final = (
    ErrorCategory.TYPECHECK,
    ErrorCategory.TEST,
    ErrorCategory.LINT,
    ErrorCategory.BUILD,
)
_NAME_RULES: Final[tuple[tuple[re.Pattern[str], ErrorCategory], ...]] = tuple(
    (re.compile(rf"(?<![A-Za-z0-9_])(?:{words})(?![A-Za-z0-9_])"), category)
    for words, category in (
        ("tsc|typecheck", ErrorCategory.TYPECHECK),
        ("test|vitest|jest|mocha|pytest", ErrorCategory.TEST),
        ("lint|eslint|biome", ErrorCategory.LINT),
        ("build|webpack|tsup", ErrorCategory.BUILD),
    )
)
#: Programs that are themselves a check of one category, whatever their arguments.
_DIRECT_TOOLS: Final[dict[str, ErrorCategory]] = {
    "tsc": ErrorCategory.TYPECHECK,
    "vue-tsc": ErrorCategory.TYPECHECK,
    "vitest": ErrorCategory.TEST,
    "jest": ErrorCategory.TEST,
    "mocha": ErrorCategory.TEST,
    "pytest": ErrorCategory.TEST,
    "eslint": ErrorCategory.LINT,
    "biome": ErrorCategory.LINT,
    "webpack": ErrorCategory.BUILD,
    "tsup": ErrorCategory.BUILD,
}
#: Package managers: ``<pm> test`` and ``<pm> run <script>`` (yarn, pnpm and bun also ``<pm> <script>``).
_PACKAGE_MANAGERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
_BARE_SCRIPT_MANAGERS: Final = frozenset({"pnpm", "yarn", "bun"})
#: Programs whose subcommand (``go test``, ``cargo build``, ``vite build``, ``make test``) names the check.
_SUBCOMMAND_TOOLS: Final = frozenset(
    {"go", "cargo", "deno", "dotnet", "vite", "next", "nx", "turbo", "make", "just", "gradle", "mvn"}
)
#: Prefixes that run the next word as the real command.
_WRAPPERS: Final = frozenset({"sudo", "time", "env", "nice", "command", "exec", "npx", "bunx", "pnpx"})
_RUNNER_SUBCOMMANDS: Final[dict[str, frozenset[str]]] = {
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "npm": frozenset({"exec"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"exec", "dlx"}),
    "bun": frozenset({"x"}),
}
_SEGMENT_SPLIT: Final = lazy_compile(r"&&|\|\||[;|&\n\r]")
_ENV_ASSIGNMENT: Final = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_QUOTES: Final = "\"'`"


def _name_category(name: str) -> ErrorCategory | None:
    """The category a script or target name stands for (``test:unit`` -> test, ``lint-fix`` -> lint)."""
    for pattern, category in _NAME_RULES:
        if pattern.search(name):
            return category
    return None


def _first_operand(tokens: Sequence[str]) -> tuple[str | None, Sequence[str]]:
    """The first token that is not an option, and the tokens after it."""
    for index, token in enumerate(tokens):
        if not token.startswith("-"):
            return token, tokens[index + 1 :]
    return None, ()


def _segment_category(tokens: Sequence[str]) -> ErrorCategory | None:
    """Classify one simple command, given as lower-cased words."""
    index = 0
    while index < len(tokens) and (tokens[index] in _WRAPPERS or _ENV_ASSIGNMENT.match(tokens[index])):
        index += 1
        # options of a wrapper (``env -i``, ``npx --yes``) belong to the wrapper
        while index < len(tokens) and tokens[index].startswith("-"):
            index += 1
    if index >= len(tokens):
        return None
    word = tokens[index].rsplit("/", 1)[-1]
    rest = tokens[index + 1 :]

    if word.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        return _segment_category(rest[1:])
    sub, after = _first_operand(rest)
    if sub is not None and sub in _RUNNER_SUBCOMMANDS.get(word, frozenset()):
        return _segment_category(after)
    if word in _DIRECT_TOOLS:
        return _DIRECT_TOOLS[word]
    if word in _PACKAGE_MANAGERS:
        if sub in ("test", "t", "tst"):
            return ErrorCategory.TEST
        if sub in ("run", "run-script"):
            script, _ = _first_operand(after)
            return _name_category(script) if script is not None else None
        if word in _BARE_SCRIPT_MANAGERS and sub is not None:
            return _name_category(sub)
        return None
    if word in _SUBCOMMAND_TOOLS and sub is not None:
        return _name_category(sub)
    return None


def classify_command(command: str) -> ErrorCategory | None:
    """The kind of check a shell command runs, judged by its command word and subcommand or script:
    typecheck, test, lint or build, else ``None``. In a compound command (``cd x && npm test``) each
    simple command is classified and the first category in the order typecheck, test, lint, build wins,
    as in the reference."""
    found: set[ErrorCategory] = set()
    for segment in _SEGMENT_SPLIT.split(command.lower()):
        tokens = [token.strip(_QUOTES) for token in segment.replace("(", " ").replace(")", " ").split()]
        category = _segment_category([token for token in tokens if token])
        if category is not None:
            found.add(category)
    return next((category for category in _CATEGORY_PRIORITY if category in found), None)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

_STRONG_ERROR: Final = lazy_compile(
    r"TS[0-9]{4}|ERR!|Traceback \(most recent call last\):|panic:", re.IGNORECASE
)
_ERROR_PREFIX: Final = lazy_compile(
    rf"[{WS}]*(?:Error|TypeError|ReferenceError|SyntaxError|Exception):", re.IGNORECASE
)
_LOOSE_ERROR: Final = lazy_compile(
    r"(?<!(?-i:[A-Za-z0-9_]))(?:error|failed|failure|exception)(?!(?-i:[A-Za-z0-9_]))", re.IGNORECASE
)
_FIRST_PATH: Final = lazy_compile(r"[A-Za-z0-9_./-]+\.(?:tsx|ts|jsx|json|js|md|py|go|rs)(?![A-Za-z0-9_])")
_WS_RUN: Final = lazy_compile(f"[{WS}]+")


def _is_error_line(line: str, known_command: bool) -> bool:
    if _STRONG_ERROR.search(line) or _ERROR_PREFIX.match(line):
        return True
    return known_command and _LOOSE_ERROR.search(line) is not None


def extract_first_path(text: str) -> str | None:
    """The first thing in ``text`` that looks like a source file path, extension included whole
    (``src/index.tsx(1,1): …`` -> ``src/index.tsx``)."""
    match = _FIRST_PATH.search(text)
    return match.group(0) if match else None


def error_fingerprint(category: ErrorCategory, summary: str) -> str:
    """``sha1(category:lower(summary) with whitespace runs collapsed)`` as 12 hex digits."""
    material = f"{category.value}:{_WS_RUN.sub(' ', summary.lower())}"
    return sha1(material.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def extract_errors_from_bash(command: str, output: str, now_ms: int) -> tuple[OpenError, ...]:
    """At most one error from a failed command: the first 5 error-looking lines of ``output`` joined by
    spaces, redacted and cut to 280 characters. A line counts when it carries a strong signal (``TS1234``,
    ``ERR!``, a traceback, ``panic:``), starts with an error type, or, for a recognised check command,
    says error/failed/failure/exception.

    The whole output is redacted before lines are picked, so a secret spread over several lines (a PEM
    block) is caught even when only one of its lines looks like an error; the joined lines are redacted
    again before the cut."""
    classified = classify_command(command)
    known = classified is not None
    if not any(_is_error_line(line, known) for line in output.split("\n")):
        return ()
    lines = [line for line in redact(output).split("\n") if _is_error_line(line, known)]
    if not lines:
        return ()
    category = classified or ErrorCategory.RUNTIME
    summary = redact(" ".join(lines[:MAX_ERROR_LINES]))[:MAX_ERROR_SUMMARY_CHARS]
    fingerprint = error_fingerprint(category, summary)
    return (
        OpenError(
            id=f"err_{fingerprint}",
            category=category,
            summary=summary,
            command=redact(command),
            file=extract_first_path(summary),
            fingerprint=fingerprint,
            status=ErrorStatus.OPEN,
            first_seen=now_ms,
            last_seen=now_ms,
            seen_count=1,
        ),
    )


def _redact_error(error: OpenError) -> OpenError:
    command = None if error.command is None else redact(error.command)
    summary = redact(error.summary)
    if summary == error.summary and command == error.command:
        return error
    return replace(error, summary=summary, command=command)


def _error_order(error: OpenError) -> tuple[bool, float]:
    return (error.status != ErrorStatus.OPEN, -error.last_seen)


def _order_errors(errors: Iterable[OpenError]) -> tuple[OpenError, ...]:
    """Open errors before maybe-fixed ones, each group most recently seen first
    (docs/decisions.md#hot-session-state-errors)."""
    return tuple(sorted(errors, key=_error_order))


def upsert_open_error(state: SessionState, error: OpenError, now_ms: int) -> SessionState:
    """Record ``error``. One with the same fingerprint is refreshed in place (new summary, command and
    file when given, seen now, open again, seen once more); a new one goes first. Then the errors are
    ordered and the first 5 kept."""
    error = _redact_error(error)
    errors: list[OpenError] = []
    found = False
    for item in state.open_errors:
        if not found and item.fingerprint == error.fingerprint:
            found = True
            item = replace(
                item,
                summary=error.summary,
                command=error.command if error.command is not None else item.command,
                file=error.file if error.file is not None else item.file,
                last_seen=now_ms,
                status=ErrorStatus.OPEN,
                seen_count=item.seen_count + 1,
            )
        errors.append(item)
    if not found:
        errors.insert(
            0,
            replace(error, last_seen=now_ms, seen_count=max(error.seen_count, 1), status=ErrorStatus.OPEN),
        )
    return replace(
        state,
        open_errors=_order_errors(errors)[: HotStateLimits.MAX_OPEN_ERRORS_STORED],
        updated_at=iso_from_ms(now_ms),
    )


def _normalize_slashes(path: str) -> str:
    path = path.replace("\\", "/")
    return path[2:] if path.startswith("./") else path


def paths_match(error_file: str, touched_file: str) -> bool:
    """The same file, or one path is the other with leading directories."""
    left, right = _normalize_slashes(error_file), _normalize_slashes(touched_file)
    return left == right or right.endswith("/" + left) or left.endswith("/" + right)


def _segments(path: str) -> list[str]:
    """Normalised segments of a POSIX path (``.`` and empty segments dropped, ``..`` resolved)."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == ".." and out and out[-1] != "..":
            out.pop()
        elif part == ".." and path.startswith("/"):
            continue
        else:
            out.append(part)
    return out


def relative_path(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` as POSIX ``path.relative`` gives it (``""`` for the root itself).
    ``None`` when the answer would depend on the current directory (one path absolute and the other
    not, or ``root`` climbing above where ``path`` can follow)."""
    if root.startswith("/") != path.startswith("/"):
        return None
    start, target = _segments(root), _segments(path)
    common = 0
    while common < min(len(start), len(target)) and start[common] == target[common]:
        common += 1
    if ".." in start[common:]:
        return None
    return "/".join([".."] * (len(start) - common) + target[common:])


def mark_errors_maybe_fixed_for_file(
    state: SessionState, file_path: str, workspace_root: str, now_ms: int
) -> SessionState:
    """An edit or write of ``file_path`` may have fixed the open errors reported in it: mark them
    ``maybe_fixed``. Their ``lastSeen`` stays as it was, so they do not jump ahead
    (docs/decisions.md#hot-session-state-errors)."""
    candidates = [file_path]
    if workspace_root and file_path.startswith(workspace_root):
        rel = relative_path(workspace_root, file_path)
        if rel is not None:
            candidates.append(rel)
    changed = False
    errors: list[OpenError] = []
    for error in state.open_errors:
        file = error.file
        if error.status == ErrorStatus.OPEN and file and any(paths_match(file, c) for c in candidates):
            error = replace(error, status=ErrorStatus.MAYBE_FIXED)
            changed = True
        errors.append(error)
    if not changed:
        return state
    return replace(state, open_errors=_order_errors(errors), updated_at=iso_from_ms(now_ms))


def clear_errors_for_successful_command(state: SessionState, command: str) -> SessionState:
    """A check that passed clears every error of its category (open or maybe fixed). Runtime errors
    and unclassified commands clear nothing."""
    category = classify_command(command)
    if category is None:
        return state
    return replace(state, open_errors=tuple(e for e in state.open_errors if e.category != category))


# ---------------------------------------------------------------------------------------------
# Recent decisions
# ---------------------------------------------------------------------------------------------


def _decision_norm(text: str) -> str:
    return collapse_whitespace(text.lower())


def _redact_decision(decision: SessionDecision) -> SessionDecision:
    text = redact(decision.text)
    rationale = None if decision.rationale is None else redact(decision.rationale)
    if text == decision.text and rationale == decision.rationale:
        return decision
    return replace(decision, text=text, rationale=rationale)


def _newest_decisions(decisions: Iterable[SessionDecision]) -> tuple[SessionDecision, ...]:
    return tuple(decisions)[-HotStateLimits.MAX_RECENT_DECISIONS_STORED :]


def add_recent_decision(
    state: SessionState,
    text: str,
    source: DecisionSource,
    now_ms: int,
    rationale: str | None = None,
) -> SessionState:
    """Remember a decision taken in this session. A decision equal up to case and whitespace refreshes
    the existing one (time, source, rationale when given) and keeps its place and wording. The newest
    8 are kept."""
    text = redact(text)
    rationale = None if rationale is None else redact(rationale)
    norm = _decision_norm(text)
    decisions: list[SessionDecision] = []
    found = False
    for item in state.recent_decisions:
        if not found and _decision_norm(item.text) == norm:
            found = True
            item = replace(
                item,
                created_at=now_ms,
                rationale=rationale if rationale is not None else item.rationale,
                source=source,
            )
        decisions.append(item)
    if not found:
        decisions.append(
            SessionDecision(
                id=decision_id(now_ms, len(state.recent_decisions), text),
                text=text,
                rationale=rationale,
                source=source,
                created_at=now_ms,
            )
        )
    return replace(state, recent_decisions=_newest_decisions(decisions), updated_at=iso_from_ms(now_ms))


# ---------------------------------------------------------------------------------------------
# Pending memories
# ---------------------------------------------------------------------------------------------


def _entry_key(entry: MemoryEntry) -> str:
    return memory_key(entry.type.value, entry.text)


def _redact_memory(entry: MemoryEntry) -> MemoryEntry:
    text = redact(entry.text)
    rationale = None if entry.rationale is None else redact(entry.rationale)
    if text == entry.text and rationale == entry.rationale:
        return entry
    return replace(entry, text=text, rationale=rationale)


def _pending_window(entries: Iterable[MemoryEntry]) -> tuple[MemoryEntry, ...]:
    return tuple(first_per_key(entries, _entry_key)[-HotStateLimits.MAX_PENDING_MEMORIES_STORED :])


def add_pending_memories(state: SessionState, entries: Sequence[MemoryEntry]) -> SessionState:
    """Append explicit memories waiting for promotion (redacted). The first of equal memory keys wins;
    the newest 12 distinct ones are kept."""
    return replace(
        state,
        pending_memories=_pending_window((*state.pending_memories, *map(_redact_memory, entries))),
    )


def remove_pending_memories(state: SessionState, keys: Collection[str]) -> SessionState:
    """Drop the pending memories whose ``memory_key(type, text)`` is in ``keys``."""
    kept = tuple(entry for entry in state.pending_memories if _entry_key(entry) not in keys)
    return state if len(kept) == len(state.pending_memories) else replace(state, pending_memories=kept)


# ---------------------------------------------------------------------------------------------
# Render
# ---------------------------------------------------------------------------------------------


def display_path(workspace_root: str, path: str) -> str:
    """A path inside the workspace relative to its root (``.`` for the root); others unchanged."""
    if not workspace_root or not path.startswith(workspace_root):
        return path
    rel = relative_path(workspace_root, path)
    if rel is None:
        return path
    return rel or "."


def _error_line(error: OpenError) -> str:
    mark = f"{MAYBE_FIXED_MARK} " if error.status == ErrorStatus.MAYBE_FIXED else ""
    return f"- [{error.category.value}] {mark}{single_line(redact(error.summary))}"


def render_hot_state(state: SessionState, workspace_root: str) -> str:
    """The hot-state prompt block, or ``""`` when there is nothing to show.

    Up to 8 files (best ranked), 3 errors (open first, then maybe fixed, each newest first), the newest
    8 decisions and the newest 6 distinct pending memories, one ``- `` line each under its section
    header; empty sections are left out; the whole block is cut at 700 characters. Line breaks inside
    an item become spaces (the reference prints them as they are).
    """
    files = _rank_files(state.active_files)[: HotStateLimits.MAX_ACTIVE_FILES_RENDERED]
    errors = _order_errors(state.open_errors)[: HotStateLimits.MAX_OPEN_ERRORS_RENDERED]
    decisions = state.recent_decisions[-HotStateLimits.MAX_RECENT_DECISIONS_STORED :]
    pending = first_per_key(state.pending_memories, _entry_key)[
        -HotStateLimits.MAX_PENDING_MEMORIES_RENDERED :
    ]
    if not (files or errors or decisions or pending):
        return ""

    lines = [HEADER]
    if files:
        lines.append("active_files:")
        lines.extend(
            f"- {single_line(redact(display_path(workspace_root, f.path)))} ({f.action.value}, {f.count}x)"
            for f in files
        )
    if errors:
        lines.append("open_errors:")
        lines.extend(_error_line(e) for e in errors)
    if decisions:
        lines.append("recent_decisions:")
        lines.extend(f"- {single_line(redact(d.text))}" for d in decisions)
    if pending:
        lines.append("pending_memories:")
        lines.extend(f"- [{m.type.value}] {single_line(redact(m.text))}" for m in pending)
    return "\n".join(lines)[: HotStateLimits.MAX_RENDERED_CHARS]
