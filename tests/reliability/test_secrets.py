"""The secrets corpus driven through every CLI input path: not one secret byte in any file under the
data home, in any rendered context or prompt, or in any diagnostic output.

(The hook and server doors add their own drivers to ``DOORS``-style tests as they land; the CLI
paths here are the ones every host reaches.)"""

from __future__ import annotations

from tests.reliability.corpus import SECRETS, diagnostics, feed
from tests.support.cli import Cli


def test_no_secret_byte_reaches_disk_context_or_diagnostics(cli: Cli) -> None:
    runs = feed(cli)
    # the files as the sessions left them, before anything ends or is superseded
    files = {f"{p} (before)": p.read_bytes() for p in cli.home.rglob("*") if p.is_file()}
    runs += diagnostics(cli)
    assert all("Traceback" not in run.err for run in runs)
    assert any("[REDACTED]" in run.out for run in runs)  # the paths were really exercised
    shown = "\n".join(run.out + run.err for run in runs)
    files.update({str(p): p.read_bytes() for p in cli.home.rglob("*") if p.is_file()})
    assert any("sessions" in name for name in files)
    leaks = [
        (case.format, where)
        for case in SECRETS
        for where, content in [("output", shown.encode()), *files.items()]
        if case.secret.encode() in content
    ]
    assert not leaks, leaks
