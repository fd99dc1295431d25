# ruff: noqa: E501  (a table of sessions: one memory per entry reads better than wrapped strings)
"""The labelled replay set of reinforcement from use (docs/decisions.md#d19), generated
deterministically: sessions of Claude Code, Codex and OpenCode shaped like the payloads recorded from
the real hosts (``tests/fixtures``), each memory of the session labelled *used* or not the way a
person reading the session would.

How a label is decided: a memory is *used* when the agent does what it says — runs the command it
names, writes the setting or the code it prescribes, or says in its reply that it follows it (by
id). Everything else is *not used*, on purpose including the hard cases a detector confuses: the
agent edits or inspects the very file a memory names for another reason (``COINCIDENCES``), runs
reading commands on it, or does unrelated work; and every memory the block showed without any
trace afterwards (injection only).

``python -m tests.support.use_replay`` prints the precision report; ``tests/adapters/test_use_replay.py``
asserts it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple

FIXTURES: Final = Path(__file__).resolve().parent.parent / "fixtures"
SESSIONS: Final = 60
SEED: Final = 22
ROOT: Final = "/home/dev/proj"


class Action(NamedTuple):
    """One tool call: ``tool`` is ``bash``, ``edit``, ``write`` or ``read``; ``arg`` the command or
    the path; ``text`` the new text of an edit or a write."""

    tool: str
    arg: str
    text: str = ""


class Memory(NamedTuple):
    key: str
    text: str
    #: what an agent that follows the memory does (empty: nothing observable in tool calls)
    uses: tuple[Action, ...]
    #: something an agent does for another reason that still names the memory's rare terms
    coincidence: Action | None = None


def _bash(command: str) -> Action:
    return Action("bash", command)


MEMORIES: Final = (
    Memory("deploy", "Deploy to staging with scripts/deploy.sh --env staging before any production release",
           (_bash("scripts/deploy.sh --env staging"),),
           Action("edit", f"{ROOT}/scripts/deploy.sh", "# print the usage message when no argument is given")),
    Memory("checks", "Run the full checks with make check-all before pushing",
           (_bash("make check-all"), _bash("make check-all && git push")),
           Action("edit", f"{ROOT}/Makefile", "check-all: lint test typecheck")),
    Memory("importer", "The importer in src/importer.py must stay synchronous: the CLI calls it without an event loop",
           (Action("edit", f"{ROOT}/src/importer.py",
                   "# keep synchronous: the CLI has no event loop\ndef import_rows(rows):\n    return [parse(r) for r in rows]"),),
           _bash("git log --oneline -- src/importer.py")),
    Memory("pnpm", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml",
           (_bash("pnpm install --frozen-lockfile"),), _bash("cat pnpm-lock.yaml")),
    Memory("baseurl", "The API base URL for local development is http://localhost:8080/api/v2",
           (Action("edit", f"{ROOT}/src/client.ts", "const BASE = 'http://localhost:8080/api/v2'"),)),
    Memory("alembic", "Database migrations live in db/migrations and are applied with alembic upgrade head",
           (_bash("alembic upgrade head"),), _bash("ls db/migrations")),
    Memory("flags", "Feature flags are read from config/flags.yaml; never hard-code them",
           (Action("edit", f"{ROOT}/config/flags.yaml", "new_checkout: true"),)),
    Memory("logging", "Log with the structlog logger from app/logging.py, never with print()",
           (Action("edit", f"{ROOT}/app/orders.py",
                   "from app.logging import logger\nlogger.info('order created', order_id=order.id)"),)),
    Memory("commits", "Prefer small focused commits with descriptive messages", ()),
    Memory("compose", "Integration tests need the stack: docker compose up -d db redis",
           (_bash("docker compose up -d db redis && pytest tests/integration"),)),
    Memory("owner", "The payments service owner is @maria; ask her before changing src/payments/", ()),
    Memory("proto", "Generated protobuf code in gen/proto is rebuilt with make proto; never edit it by hand",
           (_bash("make proto && git add gen/proto"),), Action("read", f"{ROOT}/gen/proto/orders_pb2.py")),
    Memory("changelog", "Release notes go in CHANGELOG.md under the Unreleased heading",
           (Action("edit", f"{ROOT}/CHANGELOG.md", "## Unreleased\n- Orders: totals include the shipping fee"),),
           _bash("git diff CHANGELOG.md")),
    Memory("python", "Python 3.11 is the minimum version; no syntax that needs 3.12",
           (Action("edit", f"{ROOT}/pyproject.toml", 'requires-python = ">=3.11"'),)),
    Memory("timeout", "HTTP client timeouts come from settings.HTTP_TIMEOUT_S (default 10 seconds)",
           (Action("edit", f"{ROOT}/src/http.py", "client = Client(timeout=settings.HTTP_TIMEOUT_S)"),)),
    Memory("grafana", "The staging dashboard is https://grafana.internal/d/deploys",
           (_bash("curl -s https://grafana.internal/d/deploys | head"),)),
    Memory("ruff", "Use ruff format, not black, for Python formatting", (_bash("ruff format ."),)),
    Memory("vault", "Secrets come from the vault path kv/app/prod; never commit .env files",
           (_bash("vault kv get -field=db_url kv/app/prod"),)),
    Memory("nightly", "The nightly job is scheduled in .github/workflows/nightly.yml at 02:00 UTC",
           (Action("edit", f"{ROOT}/.github/workflows/nightly.yml", "    - cron: '0 2 * * *'"),),
           _bash("cat .github/workflows/nightly.yml")),
    Memory("bench", "Benchmarks run with python -m bench.run --runs 5 and report medians",
           (_bash("python -m bench.run --runs 5"),)),
    Memory("button", "Frontend components use the Button from ui/components/Button.tsx",
           (Action("edit", f"{ROOT}/src/pages/Checkout.tsx",
                   "import { Button } from 'ui/components/Button'\n<Button onClick={pay}>Pay</Button>"),)),
    Memory("i18n", "User-facing error messages are translated in i18n/messages.json",
           (Action("edit", f"{ROOT}/i18n/messages.json", '"order.failed": "The order could not be placed"'),)),
    Memory("prod", "Never run migrations against production from a laptop; use the deploy pipeline", ()),
    Memory("cachekey", "Cache keys are prefixed with v3: since the schema change",
           (Action("edit", f"{ROOT}/src/cache.py", "key = f'v3:{user_id}'"),)),
)  # fmt: skip

#: Work that names no memory (the bulk of every session).
UNRELATED: Final = (
    _bash("git status"), _bash("pytest -q tests/test_orders.py"), _bash("python -m pytest -x"),
    Action("edit", f"{ROOT}/src/orders.py", "def total(items):\n    return sum(i.price for i in items)"),
    Action("write", f"{ROOT}/notes.md", "todo: look at the flaky test"), Action("read", f"{ROOT}/README.md"),
    Action("read", f"{ROOT}/src/orders.py"), _bash("git diff --stat"), _bash("make build"),
    Action("edit", f"{ROOT}/tests/test_orders.py", "def test_total_is_zero_for_no_items():\n    assert total([]) == 0"),
)  # fmt: skip

DIALECTS: Final = ("claude-code", "codex", "opencode")


class Step(NamedTuple):
    """A host event: ``kind`` is ``tool`` or ``reply``; ``payload`` what the host sends (a hook
    payload, or for OpenCode the ``serve`` request the plugin sends)."""

    kind: str
    payload: dict[str, Any]


class ReplaySession(NamedTuple):
    name: str
    dialect: str
    memories: tuple[Memory, ...]
    steps: tuple[Step, ...]
    #: memory key -> used (a person's label)
    labels: dict[str, bool]
    #: the memories named by an action taken for another reason (the rest of the unused ones left
    #: no trace at all: shown only)
    coincidences: frozenset[str]


def memory_id(key: str) -> str:
    return f"mem_1780000000000_{key}"


def _fixture(host: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / host / f"{name}.json").read_text())
    return data


def _hook_tool(dialect: str, sid: str, action: Action, n: int) -> dict[str, Any]:
    payload = _fixture("claude_code" if dialect == "claude-code" else "codex", "PostToolUse")
    payload.update(session_id=sid, cwd=ROOT, tool_use_id=f"call_{n}")
    if action.tool == "bash":
        payload.update(
            tool_name="Bash", tool_input={"command": action.arg}, tool_response={"stdout": "", "exit_code": 0}
        )
    elif action.tool == "read":
        payload.update(tool_name="Read", tool_input={"file_path": action.arg}, tool_response={"type": "text"})
    elif action.tool == "write":
        payload.update(tool_name="Write", tool_input={"file_path": action.arg, "content": action.text})
    else:
        payload.update(
            tool_name="Edit",
            tool_input={"file_path": action.arg, "old_string": "pass", "new_string": action.text},
            tool_response={"filePath": action.arg},
        )
    return payload


def _opencode_tool(sid: str, action: Action) -> dict[str, Any]:
    """What the plugin sends for ``tool.execute.after`` (adapters/hosts/opencode/mapping.js)."""
    if action.tool == "bash":
        return {"session": sid, "tool": "bash", "args": {"command": action.arg}, "output": "", "exitCode": 0}
    args = {"filePath": action.arg, **({"content": action.text} if action.text else {})}
    return {"session": sid, "tool": action.tool, "args": args}


def _reply(dialect: str, sid: str, text: str) -> dict[str, Any]:
    if dialect == "opencode":
        return {"session": sid, "text": text}
    payload = _fixture("claude_code" if dialect == "claude-code" else "codex", "Stop")
    payload.update(session_id=sid, cwd=ROOT, last_assistant_message=text)
    return payload


def _session(index: int, rng: random.Random) -> ReplaySession:
    dialect = DIALECTS[index % len(DIALECTS)]
    sid = f"replay-{index:03d}"
    held = tuple(rng.sample(MEMORIES, 12))
    usable = [m for m in held if m.uses]
    used = rng.sample(usable, rng.randint(0, 3))
    actions: list[Action] = [rng.choice(UNRELATED) for _ in range(rng.randint(2, 6))]
    replies: list[str] = ["Done: the tests pass."]
    for m in used:
        if rng.random() < 0.15:
            replies.append(f"I followed {memory_id(m.key)} for this change.")
        else:
            actions.extend(rng.sample(m.uses, rng.randint(1, len(m.uses))))
    coincidences = [m for m in held if m.coincidence is not None and rng.random() < 0.12]
    actions.extend(m.coincidence for m in coincidences if m.coincidence is not None)
    rng.shuffle(actions)
    steps: list[Step] = []
    for n, action in enumerate(actions):
        payload = (
            _opencode_tool(sid, action) if dialect == "opencode" else _hook_tool(dialect, sid, action, n)
        )
        steps.append(Step("tool", payload))
    steps.extend(Step("reply", _reply(dialect, sid, text)) for text in replies)
    labels = {m.key: m in used for m in held}
    traced = frozenset(m.key for m in coincidences)
    return ReplaySession(f"{dialect}-{index:03d}", dialect, held, tuple(steps), labels, traced)


def replay_sessions(count: int = SESSIONS, seed: int = SEED) -> Iterator[ReplaySession]:
    rng = random.Random(seed)
    for index in range(count):
        yield _session(index, rng)
