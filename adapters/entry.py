"""The ``workmem`` console script.

A host hook call (``workmem [--home DIR] [--workspace DIR] hook HOST``) whose event touches the
workspace is first handed to the hook server (adapters/hook_server.py), with nothing else imported;
when no server answers, the call runs like any other command (:mod:`adapters.cli`), and then starts a
server for the next event. Everything else goes straight to :mod:`adapters.cli`.
"""

from __future__ import annotations

import io
import sys

from adapters.exit_codes import EXIT_OK


def main() -> int:
    argv = sys.argv[1:]
    call = None
    if "hook" in argv:
        # start-up time: a hook call loads only what its event needs (docs/performance.md)
        from adapters import hook_client

        if hook_client.enabled() and hook_client.parse_hook_call(argv) is not None:
            try:
                raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
            except (OSError, ValueError, AttributeError):
                raw = b""
            try:
                call = hook_client.prepare(argv, raw)
                answer = call.ask() if call is not None else None
            except Exception:  # whatever the payload: the event is handled (and recorded) below
                call, answer = None, None
            if answer is not None:
                hook_client.write_output(*answer)
                return EXIT_OK
            # no server: this process handles the event, reading the payload it already read
            sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace")
    # start-up time: a hook call loads only what its event needs (docs/performance.md)
    from adapters.cli import main as cli_main

    code = cli_main()
    if call is not None:
        # start-up time: a hook call loads only what its event needs (docs/performance.md)
        from adapters import hook_client

        hook_client.start(call.home, call.fingerprint)
    return code


if __name__ == "__main__":
    sys.exit(main())
