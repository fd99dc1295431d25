"""Git around the projection (docs/decisions.md#d17, docs/sync.md), with the ``git`` the user has.

* ``workmem install git`` writes two lines into the repository's ``.gitattributes`` —
  ``.workmem/memories/**/*.md merge=workmem`` and ``.workmem/tombstones.jsonl merge=union`` — and
  registers the driver ``workmem`` in the repository's own ``.git/config`` (the command line there
  names this machine's workmem, so it is never committed); ``uninstall git`` removes exactly those.
  A clone without the driver still merges the files with git's own line merge.
* The user's own store (``<data home>/user``) can be a git repository: :func:`sync_user_store`
  exports, commits, pulls with rebase, imports what came, and pushes. A failed pull or push is
  reported and tried again at the next sync; a commit is made before any pull, so a local write is
  never lost (a pull that cannot rebase is aborted and leaves the local commits as they were).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from adapters.commands import CommandError
from adapters.config_files import read_text, remove_file, replace_file, unified_diff
from adapters.filestore import Workspace
from adapters.jsonl import ensure_private_dir
from adapters.settings_edits import find_executable
from adapters.sync import sync_workspace
from adapters.user_scope import user_root, user_workspace
from domain.timeutil import iso_from_ms

if TYPE_CHECKING:
    from adapters.sync import SyncReport

ATTRIBUTES: Final = (".workmem/memories/**/*.md merge=workmem", ".workmem/tombstones.jsonl merge=union")
DRIVER: Final = "workmem"
DRIVER_NAME: Final = "workmem: field-wise merge of memory files"
GIT_TIMEOUT_S: Final = 120.0
#: Used for the user store's commits when git knows no identity there.
FALLBACK_IDENTITY: Final = ("-c", "user.name=workmem", "-c", "user.email=workmem@localhost")


class GitError(CommandError):
    """A git command that failed; the message is its last line of output."""


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("git")
    if exe is None:
        raise CommandError("git is not installed (or not on PATH)")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            [exe, "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {type(exc).__name__}") from None
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {_last_line(done)}")
    return done


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines() if line.strip()]
    return lines[-1][:200] if lines else f"exit {done.returncode}"


def is_repository(root: Path) -> bool:
    return os.path.lexists(root / ".git")


# ---------------------------------------------------------------------------------------------------
# install git / uninstall git
# ---------------------------------------------------------------------------------------------------


def attributes_text(old: str | None, *, remove: bool) -> str | None:
    """``.gitattributes`` with workmem's lines added (after the others) or removed (exactly those
    lines); ``None`` when nothing would be left of a file workmem's lines were all of."""
    lines = (old or "").splitlines()
    if remove:
        kept = [line for line in lines if line.strip() not in ATTRIBUTES]
        if kept == lines:
            return old
        return "\n".join(kept) + "\n" if any(line.strip() for line in kept) else None
    missing = [a for a in ATTRIBUTES if a not in {line.strip() for line in lines}]
    if not missing:
        return old
    return "\n".join([*lines, *missing]) + "\n"


def driver_command(executable: str) -> str:
    quoted = executable if all(c.isalnum() or c in "/._-+" for c in executable) else f"'{executable}'"
    return f"{quoted} merge-file %O %A %B %P"


def install(root: Path, executable: str, *, remove: bool, dry_run: bool) -> list[str]:
    """Register (or remove) the merge driver in the repository at ``root``; the lines to print."""
    if not is_repository(root):
        raise CommandError(f"{root} is not a git repository (the workspace root holds no .git)")

    target = root / ".gitattributes"
    old = read_text(target)
    new = attributes_text(old, remove=remove)
    config = [
        f"git config merge.{DRIVER}.name {DRIVER_NAME!r}",
        f"git config merge.{DRIVER}.driver {driver_command(executable)!r}",
    ]
    if remove:
        config = [f"git config --remove-section merge.{DRIVER}"]
    if dry_run:
        diff = unified_diff(target, old, new) if new != old else ""
        return [diff.rstrip("\n")] * bool(diff) + [f"would run: {c}" for c in config]
    out: list[str] = []
    if new != old:
        if new is None:
            remove_file(target, old)
            out.append(f"removed {target}")
        else:
            replace_file(target, old, new)
            out.append(f"{'created' if old is None else 'updated'} {target}")
    else:
        out.append(f"unchanged {target}")
    if remove:
        done = _git(root, "config", "--local", "--remove-section", f"merge.{DRIVER}", check=False)
        out.append(
            "removed the merge driver from .git/config"
            if done.returncode == 0
            else "no merge driver to remove"
        )
    else:
        _git(root, "config", "--local", f"merge.{DRIVER}.name", DRIVER_NAME)
        _git(root, "config", "--local", f"merge.{DRIVER}.driver", driver_command(executable))
        out.append("registered the merge driver in .git/config")
    return out


# ---------------------------------------------------------------------------------------------------
# The user's own store as a git repository
# ---------------------------------------------------------------------------------------------------


def _remote(root: Path) -> str | None:
    done = _git(root, "remote", check=False)
    names = done.stdout.split()
    return "origin" if "origin" in names else (names[0] if names else None)


def _commit(root: Path, message: str) -> bool:
    """Commit what changed in the repository (``.workmem/`` and ``.gitattributes``); True when
    there was something."""
    _git(root, "add", "-A")
    if _git(root, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    identity: Sequence[str] = ()
    if _git(root, "config", "user.email", check=False).returncode != 0:
        identity = FALLBACK_IDENTITY
    _git(root, *identity, "commit", "--quiet", "--no-verify", "-m", message)
    return True


def ensure_repository(root: Path) -> bool:
    """Make ``root`` (created 0700 when missing) a git repository; True when it was not one."""
    if is_repository(root):
        return False

    ensure_private_dir(root, fix_mode=False)
    _git(root, "init", "--quiet")
    return True


def _prepare(root: Path, remote: str | None, executable: str | None) -> list[str]:
    notes: list[str] = []
    if ensure_repository(root):
        notes.append(f"git: created a repository in {root}")
    if executable is not None:
        install(root, executable, remove=False, dry_run=False)
        _commit(root, "workmem: merge driver")
    if remote:
        if _remote(root) is None:
            _git(root, "remote", "add", "origin", remote)
        else:
            _git(root, "remote", "set-url", "origin", remote)
        notes.append(f"git: the user's store follows {remote}")
    return notes


def sync_user_store(
    home: Path, now_ms: int, *, dry_run: bool = False, remote: str | None = None
) -> SyncReport:
    """Sync the user's own store: its projection, then (when it is a git repository, or ``remote``
    asks for one) commit, pull with rebase, import again, push."""

    root = user_root(home)
    ws = user_workspace(Workspace(home, str(root)))
    if dry_run:
        return sync_workspace(ws, now_ms, dry_run=True)
    if shutil.which("git") is None:
        report = sync_workspace(ws, now_ms)
        return replace(report, git=("git: not installed; the user's store is not shared",))
    try:
        executable: str | None = find_executable()
    except CommandError:
        executable = None
    notes = _prepare(root, remote, executable if not is_repository(root) or remote else None)
    report = sync_workspace(ws, now_ms)
    notes += _exchange(root, now_ms)
    if any(n.startswith("git: pulled") for n in notes):
        again = sync_workspace(ws, now_ms)
        report = replace(report, imported=report.imported + again.imported, flagged=again.flagged)
        if _commit(root, "workmem: sync"):
            notes += _push(root)
    return replace(report, git=tuple(notes))


def _branch(root: Path) -> str:
    done = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return done.stdout.strip() or "main"


def _exchange(root: Path, now_ms: int) -> list[str]:

    notes: list[str] = []
    if _commit(root, f"workmem: sync {iso_from_ms(now_ms)}"):
        notes.append("git: committed the user's memories")
    remote = _remote(root)
    if remote is None:
        return notes
    pulled = _git(root, "pull", "--rebase", "--quiet", remote, _branch(root), check=False)
    if pulled.returncode != 0 and "couldn't find remote ref" not in (pulled.stderr + pulled.stdout):
        _git(root, "rebase", "--abort", check=False)
        notes.append(
            f"git: pull failed ({_last_line(pulled)}); local commits kept, tried again at the next sync"
        )
        return notes
    notes.append("git: pulled")
    return notes + _push(root)


def _push(root: Path) -> list[str]:
    remote = _remote(root)
    if remote is None:
        return []
    pushed = _git(root, "push", "--quiet", remote, f"HEAD:refs/heads/{_branch(root)}", check=False)
    if pushed.returncode != 0:
        return [f"git: push failed ({_last_line(pushed)}); tried again at the next sync"]
    return ["git: pushed"]
