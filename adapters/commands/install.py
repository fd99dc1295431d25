"""``workmem install HOST`` / ``workmem uninstall HOST``: register workmem with a host, or remove
exactly that registration. ``--dry-run`` prints the unified diff of every file and writes nothing.
After an install, the steps left to the user for that host are printed. See docs/hosts.md
("Installing")."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from adapters import install as host_settings
from adapters.commands import EXIT_OK, CommandError, context, memory, write, write_json
from adapters.commands.sync import report_lines
from adapters.config_files import remove_file, replace_file, unified_diff
from adapters.git_sync import ensure_repository, install as install_driver, sync_user_store
from adapters.user_scope import user_root

_CHECK = (
    'try it: in a session, say "remember: <something lasting>"; `workmem list` shows it at once, marked'
    " pending until the session ends or compacts (`workmem health` counts it as pending)"
)


def next_steps(host: str, *, user: bool, mcp: bool, root: Path) -> list[str]:
    """What the user still has to do after ``workmem install HOST`` (docs/hosts.md, "Installing")."""
    where = "every project" if user else str(root)
    if host == "claude-code":
        steps = [
            f"restart Claude Code in {where}: it reads hooks when a session starts (/hooks lists them)",
            _CHECK,
        ]
        if mcp:
            steps.append("/mcp lists the workmem server (your own scope: there is nothing to approve)")
        if not user:
            steps.append(
                ".claude/settings.local.json is yours, not the team's: keep it out of git"
                " (`git check-ignore .claude/settings.local.json` prints it when git ignores it)"
            )
    elif host == "codex":
        steps = []
        if not user:
            steps.append(
                f"trust the project when Codex asks: Codex reads {root / '.codex'} only in a trusted project"
            )
        steps += [
            "start Codex and trust workmem's hooks when it says hooks need review (or with /hooks):"
            " until then Codex does not run them, and says nothing (`codex exec` runs untrusted hooks"
            " only with --dangerously-bypass-hook-trust)",
            _CHECK + " (every `codex exec` ends its session)",
        ]
        if mcp:
            steps.append("/mcp lists the workmem server")
    else:
        steps = [
            f"restart OpenCode in {where}: it loads plugins when it starts; the plugin runs"
            " `workmem serve` from PATH",
            _CHECK + " (an OpenCode session ends when it is deleted)",
        ]
        if not user:
            steps.append(
                "opencode.json names the plugin directory of this machine (file://...): OpenCode has no"
                " per-user file for one project, so keep that entry out of a shared opencode.json, or"
                " install with --user instead"
            )
    return steps


def _run(args: argparse.Namespace, *, remove: bool) -> int:

    root = Path(os.path.abspath(getattr(args, "workspace", None) or os.getcwd()))
    if not args.user and not root.is_dir():
        raise CommandError(f"workspace {root} is not a directory")
    where = host_settings.Where(user=bool(args.user), root=root, env=os.environ, home=Path.home())
    exe = host_settings.find_executable()
    result = host_settings.plan(args.host, where, exe, mcp=bool(args.mcp), remove=remove)
    for warning in result.warnings:
        sys.stderr.write(f"workmem: warning: {' '.join(warning.split())}\n")
    if args.dry_run:
        diffs = [unified_diff(c.path, c.old, c.new) for c in result.changes if c.changed]
        if args.json:
            write_json({"host": args.host, "dryRun": True, "diff": "".join(diffs)})
        else:
            write("".join(diffs) if diffs else "no changes")
        return EXIT_OK
    done: list[dict[str, str]] = []
    for change in result.changes:
        if change.old is None and change.new is None:
            continue
        if not change.changed:
            verb = "unchanged"
        elif change.new is None:
            remove_file(change.path, change.old)
            verb = "removed"
        else:
            replace_file(change.path, change.old, change.new)
            verb = "created" if change.old is None else "updated"
        done.append({"path": str(change.path), "action": verb})
        if not args.json:
            write(f"{verb} {change.path}")
    if remove:
        for directory in result.prune:
            with contextlib.suppress(OSError):
                directory.rmdir()  # only when empty
    steps = [] if remove else next_steps(args.host, user=bool(args.user), mcp=bool(args.mcp), root=root)
    if args.json:
        write_json({"host": args.host, "dryRun": False, "files": done, "nextSteps": steps})
    elif steps:
        write(f"next steps for {args.host}:\n" + "".join(f"  {i}. {s}\n" for i, s in enumerate(steps, 1)))
    return EXIT_OK


def _git(args: argparse.Namespace, *, remove: bool) -> int:
    """``install git``: the merge driver of the shared projection, in this repository (or, with
    ``--user``, in the user's own store), and a first sync (docs/sync.md)."""

    if args.mcp:
        raise CommandError("--mcp does not apply to git")
    ctx = context(args)
    root = user_root(ctx.home) if args.user else Path(ctx.root)
    exe = "workmem" if remove else host_settings.find_executable()
    if args.user and not remove and not args.dry_run:
        ensure_repository(root)
    lines = list(install_driver(root, exe, remove=remove, dry_run=args.dry_run))
    if not remove and not args.dry_run:
        report = sync_user_store(ctx.home, ctx.now_ms) if args.user else memory(ctx).sync()
        lines += report_lines(report)
    if args.json:
        write_json({"host": "git", "dryRun": bool(args.dry_run), "lines": lines})
    else:
        write("\n".join(lines))
    return EXIT_OK


def install(args: argparse.Namespace) -> int:
    return _git(args, remove=False) if args.host == "git" else _run(args, remove=False)


def uninstall(args: argparse.Namespace) -> int:
    return _git(args, remove=True) if args.host == "git" else _run(args, remove=True)
