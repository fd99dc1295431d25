"""The secrets corpus driven through every CLI input path: not one secret byte in any file under the
data home, in any rendered context or prompt, or in any diagnostic output.

(The hook and server doors add their own drivers to ``DOORS``-style tests as they land; the CLI
paths here are the ones every host reaches.)"""

from __future__ import annotations

import json

from tests.reliability.corpus import SECRETS, failed_tool
from tests.support.cli import Cli, Run


def _feed(cli: Cli) -> list[Run]:
    """Every secret through every CLI input path; returns every run."""
    runs: list[Run] = []
    summary_lines = []
    for n, case in enumerate(SECRETS):
        text = case.text
        runs.append(cli("remember", f"always remember that {text}"))
        runs.append(cli("message", "--session", "s1", f"remember: {text}"))
        runs.append(cli("message", "--session", "s1", f"from now on note {text}"))
        runs.append(cli("check", f"remember this: {text}"))
        args = json.dumps({"command": f"deploy --note '{text}'", "filePath": f"src/{text}.py"})
        runs.append(cli(*failed_tool("bash", args), stdin=f"Error: failed with {text}\nTypeError: {text}\n"))
        runs.append(cli("tool", "--session", "s1", "--tool", "edit", "--args", args))
        summary_lines.append(f"- [reference] the staging setup uses {text}")
        summary_lines.append(f"- [decision] we decided {n}: {text}")
    summary = (
        "Summary of work with " + SECRETS[0].text + "\n\nMemory candidates:\n" + "\n".join(summary_lines)
    )
    runs.append(cli("compacted", "--session", "s1", "-", stdin=summary))
    return runs


def _diagnostics(cli: Cli) -> list[Run]:
    runs = [
        cli("context", "--session", "s1"),
        cli("context", "--session", "s2"),
        cli("compaction-prompt", "--session", "s1"),
        cli("list"),
        cli("list", "--json", "--all"),
        cli("health"),
        cli("health", "--json"),
        cli("explain"),
        cli("quality"),
        cli("coverage"),
        cli("disappearances"),
        cli("rejections"),
        cli("rejections", "--json"),
    ]
    memories = json.loads(runs[4].out)["memories"]
    for memory in memories[:5]:
        runs.append(cli("trace", memory["id"]))
        runs.append(cli("explain", memory["id"]))
    if memories:
        runs.append(cli("supersede", memories[0]["id"], f"now we use {SECRETS[1].text}"))
    runs.append(cli("end-session", "--session", "s1"))
    runs.append(cli("list", "--json", "--all"))
    return runs


def test_no_secret_byte_reaches_disk_context_or_diagnostics(cli: Cli) -> None:
    runs = _feed(cli)
    # the files as the sessions left them, before anything ends or is superseded
    files = {f"{p} (before)": p.read_bytes() for p in cli.home.rglob("*") if p.is_file()}
    runs += _diagnostics(cli)
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
