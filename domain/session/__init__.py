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

The package: :mod:`~domain.session.state`, :mod:`~domain.session.tools`,
:mod:`~domain.session.files`, :mod:`~domain.session.commands`, :mod:`~domain.session.errors`,
:mod:`~domain.session.notes` and :mod:`~domain.session.hot_state`. Every name it offered as one
module is still importable from here.
"""

from domain.session.commands import classify_command
from domain.session.errors import (
    MAX_ERROR_LINES,
    MAX_ERROR_SUMMARY_CHARS,
    clear_errors_for_successful_command,
    error_fingerprint,
    extract_errors_from_bash,
    extract_first_path,
    mark_errors_maybe_fixed_for_file,
    upsert_open_error,
)
from domain.session.files import ACTION_WEIGHT, display_path, paths_match, relative_path, touch_active_file
from domain.session.hot_state import HEADER, MAYBE_FIXED_MARK, render_hot_state
from domain.session.notes import add_pending_memories, add_recent_decision, remove_pending_memories
from domain.session.state import ToolEvent, empty_session, normalize_session
from domain.session.tools import MAX_GREP_PATHS, grep_paths, observe_tool, resolve_exit_code

__all__ = [
    "ACTION_WEIGHT",
    "HEADER",
    "MAX_ERROR_LINES",
    "MAX_ERROR_SUMMARY_CHARS",
    "MAX_GREP_PATHS",
    "MAYBE_FIXED_MARK",
    "ToolEvent",
    "add_pending_memories",
    "add_recent_decision",
    "classify_command",
    "clear_errors_for_successful_command",
    "display_path",
    "empty_session",
    "error_fingerprint",
    "extract_errors_from_bash",
    "extract_first_path",
    "grep_paths",
    "mark_errors_maybe_fixed_for_file",
    "normalize_session",
    "observe_tool",
    "paths_match",
    "relative_path",
    "remove_pending_memories",
    "render_hot_state",
    "resolve_exit_code",
    "touch_active_file",
    "upsert_open_error",
]
