"""Nothing unredacted reaches ``.workmem/`` (docs/decisions.md#d17, docs/reliability.md): git
history is forever.

* Every secret of the corpus planted through every CLI input path of a workspace that shares its
  memories — the export runs after each write — then a ``sync``: no secret byte in any file under
  ``.workmem/``, under the data home, or in any output.
* A secret typed by hand into a memory file — as its text, in an edit, as a rationale or under a
  key workmem does not know — is turned down on import and reported with the file and its line; it
  reaches no other file and no output, and the file is left for its author to fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability.corpus import SECRETS, diagnostics, feed
from tests.support.cli import Cli


def _leaks(cli: Cli, shown: str, *, skip: set[Path] = frozenset()) -> list[tuple[str, str]]:  # type: ignore[assignment]
    files = [p for p in (cli.workspace / ".workmem").rglob("*") if p.is_file() and p not in skip]
    files += [p for p in cli.home.rglob("*") if p.is_file()]
    contents = [("output", shown.encode()), *((str(p), p.read_bytes()) for p in files)]
    return [
        (case.format, where)
        for case in SECRETS
        for where, content in contents
        if case.secret.encode() in content
    ]


def test_no_secret_planted_through_any_door_reaches_the_projection(cli: Cli) -> None:
    cli.ok("sync")
    runs = feed(cli)
    for n, case in enumerate(SECRETS):
        runs.append(cli("remember", "--type", "decision", "--scope", "team", f"decision {n}: {case.text}"))
        runs.append(cli("remember", "--type", "project", f"the project {n} setup uses {case.text}"))
    runs += diagnostics(cli)
    runs.append(cli("sync"))
    exported = list((cli.workspace / ".workmem" / "memories").rglob("*.md"))
    assert len(exported) > len(SECRETS)  # the paths were really exercised
    assert "[REDACTED]" in "".join(p.read_text() for p in exported)
    assert _leaks(cli, "\n".join(r.out + r.err for r in runs)) == []


def test_a_secret_typed_into_a_file_is_turned_down_and_reported(cli: Cli) -> None:
    cli.ok("remember", "--type", "decision", "Use exponential backoff with jitter for HTTP retries")
    cli.ok("sync")
    (existing,) = (cli.workspace / ".workmem" / "memories" / "decision").glob("*.md")
    original = existing.read_text()
    folder = cli.workspace / ".workmem" / "memories" / "decision"
    planted: set[Path] = set()
    for n, case in enumerate(SECRETS):
        quoted = json.dumps(case.text, ensure_ascii=False)
        forms = (
            f"---\ntype: decision\n---\nThe deploy uses {case.text}\n",
            f"---\ntype: decision\nrationale: {quoted}\n---\nDeploy number {n} is blue-green\n",
            f"---\ntype: decision\nnote: {quoted}\n---\nDeploy number {n} runs on Fridays\n",
        )
        for k, text in enumerate(forms):
            path = folder / f"hand-{n}-{k}.md"
            path.write_text(text)
            planted.add(path)
    existing.write_text(original.replace("HTTP retries", f"HTTP retries; {SECRETS[0].text}"))
    planted.add(existing)
    run = cli("sync")
    health = cli("health")
    assert run.code == 3
    rejected = [line for line in run.out.splitlines() if line.startswith("rejected ")]
    assert len(rejected) == len(planted), run.out  # every one reported ...
    assert all(" credential: " in line for line in rejected)
    assert (
        f"rejected .workmem/memories/decision/{existing.name}:10 credential" in run.out
    )  # ... with its line
    assert all(p.exists() for p in planted)  # ... and left where its author put it
    assert [m["text"] for m in cli.memories("--all")] == [
        "Use exponential backoff with jitter for HTTP retries"
    ]
    assert _leaks(cli, run.out + run.err + health.out + health.err, skip=planted) == []
