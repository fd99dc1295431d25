"""``workmem install HOST`` / ``workmem uninstall HOST``: register workmem with a host, or remove
exactly that registration. ``--dry-run`` prints the unified diff of every file and writes nothing.
See docs/hosts.md ("Installing")."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from adapters.commands import EXIT_OK, CommandError, write


def _run(args: argparse.Namespace, *, remove: bool) -> int:
    from adapters.config_files import replace_file, unified_diff
    from adapters.install import Where, find_executable, plan

    root = Path(os.path.abspath(getattr(args, "workspace", None) or os.getcwd()))
    if not args.user and not root.is_dir():
        raise CommandError(f"workspace {root} is not a directory")
    where = Where(user=bool(args.user), root=root, env=os.environ, home=Path.home())
    exe = find_executable()
    result = plan(args.host, where, exe, mcp=bool(args.mcp), remove=remove)
    for warning in result.warnings:
        sys.stderr.write(f"workmem: warning: {' '.join(warning.split())}\n")
    if args.dry_run:
        diffs = [unified_diff(c.path, c.old, c.new) for c in result.changes if c.changed]
        write("".join(diffs) if diffs else "no changes")
        return EXIT_OK
    for change in result.changes:
        if change.changed and change.new is not None:
            replace_file(change.path, change.old, change.new)
            verb = "created" if change.old is None else "updated"
        else:
            verb = "unchanged"
        write(f"{verb} {change.path}")
    return EXIT_OK


def install(args: argparse.Namespace) -> int:
    return _run(args, remove=False)


def uninstall(args: argparse.Namespace) -> int:
    return _run(args, remove=True)
