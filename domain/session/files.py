"""Active files: the ranked list of the files a session touched, and the path helpers the hot state
shares (relative, displayed and matching paths) (docs/decisions.md#hot-session-state)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from msgspec.structs import replace

from domain.bounds import cut_at_whitespace
from domain.enums import FileAction
from domain.limits import HotStateLimits
from domain.model import ActiveFile, SessionState
from domain.safety import redact
from domain.text import truncate
from domain.timeutil import iso_from_ms

#: How much a kind of touch says about a file's importance; an action never moves to a lighter one.
ACTION_WEIGHT: Final[dict[FileAction, int]] = {
    FileAction.EDIT: 50,
    FileAction.WRITE: 45,
    FileAction.GREP: 30,
    FileAction.READ: 20,
}


def _file_score(item: ActiveFile) -> int:
    return ACTION_WEIGHT[item.action] + 3 * item.count


def rank_files(files: Iterable[ActiveFile]) -> tuple[ActiveFile, ...]:
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
        active_files=rank_files(files)[: HotStateLimits.MAX_ACTIVE_FILES_STORED],
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


def display_path(workspace_root: str, path: str) -> str:
    """A path inside the workspace relative to its root (``.`` for the root); others unchanged."""
    if not workspace_root or not path.startswith(workspace_root):
        return path
    rel = relative_path(workspace_root, path)
    if rel is None:
        return path
    return rel or "."
