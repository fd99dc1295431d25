"""``workmem tour``: one minute of workmem on a throw-away workspace.

A scripted session runs through the real commands (the same code paths a host uses): a user message
with an explicit "remember" request, two tool calls, a compaction summary with memory candidates, the
end of the session, a new session that receives the rendered block, ``health``, and finally the same
block 90 days later. Time never sleeps: every step runs with ``WORKMEM_NOW`` set, so the tour is
reproducible (fixed ``WORKMEM_NOW`` → byte-identical output apart from the temporary paths).

Without ``--home`` the tour uses a temporary data directory and removes it afterwards; with ``--home``
it writes into that directory (its temporary workspace then shows up in ``workmem cleanup``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from adapters.clock import NOW_ENV, now_ms as clock_now_ms
from adapters.exit_codes import EXIT_OK, EXIT_UNEXPECTED
from adapters.paths import HOME_ENV
from domain.limits import DAY_MS
from domain.timeutil import iso_from_ms

SESSION_ONE: Final = "tour-session-1"
SESSION_TWO: Final = "tour-session-2"
SESSION_THREE: Final = "tour-session-3"

USER_MESSAGE: Final = "Remember this: always run pnpm lint before committing."
SUMMARY: Final = """## Goal
Add retry logic to the HTTP client.

## Progress
Implemented exponential backoff in src/http.ts; the failing test now passes.

Memory candidates:
- [decision] Use exponential backoff with jitter for HTTP retries, capped at 5 attempts.
- [reference] The retry policy is documented in docs/http-retries.md.
- [project] Wave 2 completed and all tests passed.
"""

MINUTE: Final = 60_000


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


class _Tour:
    def __init__(self, home: Path, workspace: Path, start_ms: int) -> None:
        self.home = home
        self.workspace = workspace
        self.start_ms = start_ms
        self.failures = 0

    def say(self, text: str = "") -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def run(self, at_ms: int, *command: str) -> int:
        from adapters.cli import main

        self.say(f"$ workmem {shlex.join(command)}")
        sys.stdout.flush()
        with _environment(**{NOW_ENV: iso_from_ms(at_ms), HOME_ENV: str(self.home)}):
            code = main(["--home", str(self.home), "--workspace", str(self.workspace), *command])
        sys.stdout.flush()
        if code != 0:
            self.failures += 1
            self.say(f"(exit code {code})")
        self.say()
        return code

    def script(self) -> None:
        t0 = self.start_ms
        self.say("workmem tour: a scripted session on a temporary workspace")
        self.say(f"  workspace: {self.workspace}")
        self.say(f"  data home: {self.home}")
        self.say(f"  clock:     {iso_from_ms(t0)} (fixed; every step sets {NOW_ENV})")
        self.say()
        self.say("1. The user asks the agent to remember a rule. It stays pending, owned by the session.")
        self.run(t0, "message", "--session", SESSION_ONE, USER_MESSAGE)
        self.say("2. The agent edits a file and runs the tests; hot session state follows along.")
        self.run(
            t0 + MINUTE,
            "tool",
            "--session",
            SESSION_ONE,
            "--tool",
            "edit",
            "--args",
            '{"filePath": "src/http.ts"}',
        )
        self.run(
            t0 + 2 * MINUTE,
            "tool",
            "--session",
            SESSION_ONE,
            "--tool",
            "bash",
            "--args",
            '{"command": "pnpm test"}',
            "--output",
            "FAIL src/http.test.ts\nError: expected 3 retries, got 1",
            "--exit-code",
            "1",
        )
        self.say("3. What a host injects right now (no durable memories yet, only hot state):")
        self.run(t0 + 3 * MINUTE, "open-session", "--session", SESSION_ONE)
        self.say("4. The host compacts the conversation. Candidates go through the safety and quality gate;")
        self.say("   the progress note is rejected, the rest is promoted together with the pending rule.")
        summary = self.workspace / ".tour-summary.md"
        summary.write_text(SUMMARY, encoding="utf-8")
        self.run(t0 + 10 * MINUTE, "compacted", "--session", SESSION_ONE, str(summary))
        self.run(t0 + 11 * MINUTE, "end-session", "--session", SESSION_ONE)
        self.say("5. The next session starts with the frozen workspace block:")
        self.run(t0 + DAY_MS, "open-session", "--session", SESSION_TWO)
        self.say("6. Health of the workspace memory (read-only, redacted):")
        self.run(t0 + DAY_MS, "health")
        self.say("7. Ninety days later: memories decay, nothing is deleted, old entries ask to be verified.")
        self.run(t0 + 90 * DAY_MS, "open-session", "--session", SESSION_THREE)
        self.run(t0 + 90 * DAY_MS, "list")
        self.say(f'That was the tour. Try `{invoked_as()} check "remember: ..."` on your own text next,')
        self.say("or the short tour in README.md.")


def invoked_as(argv0: str | None = None) -> str:
    """How to run workmem again: ``workmem`` when that name on ``PATH`` is the command that is
    running, else the path it was started by (``.venv/bin/workmem`` right after the set-up)."""
    started = argv0 if argv0 is not None else sys.argv[0]
    if os.path.basename(started) != "workmem":
        return "workmem"  # python -m workmem, or the API
    on_path = shutil.which("workmem")
    if on_path is not None and os.path.realpath(on_path) == os.path.realpath(started):
        return "workmem"
    return started


def run_tour(home: str | None, start_ms: int) -> int:
    """Run the scripted tour; returns 0 when every step succeeded."""
    owned_home = home is None
    home_dir = Path(tempfile.mkdtemp(prefix="workmem-tour-home-")) if home is None else Path(home)
    workspace = Path(tempfile.mkdtemp(prefix="workmem-tour-"))
    tour = _Tour(home_dir, workspace, start_ms)
    try:
        tour.script()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        if owned_home:
            shutil.rmtree(home_dir, ignore_errors=True)
    return EXIT_OK if tour.failures == 0 else EXIT_UNEXPECTED


def tour(args: argparse.Namespace) -> int:
    """The ``tour`` command: the temporary workspace replaces ``--workspace``."""
    return run_tour(args.home, clock_now_ms())
