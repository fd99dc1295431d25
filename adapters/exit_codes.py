"""The exit codes of every workmem process: the ``workmem`` command, its hook calls, the hook server,
``workmem serve`` and ``workmem mcp`` (docs/decisions.md#d12). ``workmem --help`` prints
:data:`HELP`."""

from __future__ import annotations

# start-up time: the thin hook client imports this module, and ``typing`` costs it milliseconds
# (docs/performance.md); type checkers read the name TYPE_CHECKING as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

EXIT_OK: Final = 0
EXIT_UNEXPECTED: Final = 1
#: ``workmem merge-file`` (the git merge driver): a conflict remains in the file, written with markers
#: (git reads any other status than 0 as a conflict)
EXIT_CONFLICT: Final = 1
EXIT_USAGE: Final = 2
EXIT_REJECTED: Final = 3
EXIT_STORAGE: Final = 4
#: ended by Ctrl-C (128 + SIGINT, as a shell reports it); not listed in the help
EXIT_INTERRUPTED: Final = 130

_MEANINGS: Final = (
    (EXIT_OK, "success"),
    (EXIT_UNEXPECTED, "unexpected failure (merge-file: a conflict remains, written with markers)"),
    (EXIT_USAGE, "usage error (bad option, unreadable FILE, invalid JSON in --args, invalid WORKMEM_NOW)"),
    (
        EXIT_REJECTED,
        "input rejected (the safety gate, an unknown memory id at any command, or a file sync did"
        " not import)",
    ),
    (EXIT_STORAGE, "storage unavailable (lock timeout, permission, read-only or full disk)"),
)

HELP: Final = "exit codes:\n" + "\n".join(f"  {code}  {meaning}" for code, meaning in _MEANINGS)
