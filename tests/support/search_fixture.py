"""Writes ``tests/data/search_fixture.json``: the labelled fixture of search quality (issue 20).

Deterministic (no randomness: choices come from positions), so the file can be regenerated and
diffed: ``python -m tests.support.search_fixture``. 40 components of an imagined product, each with
13 aspects a team writes memories about (where the code lives, how it is deployed, who owns it, ...),
each aspect said in one of several phrasings — 520 memories of the four types. The queries were
written before the ranking was tuned, the way people ask: other word forms, a partial phrase, a path
or a symbol, a question; each names the memory that answers it. The probes ask about topics the
fixture never stores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

OUT: Final = Path(__file__).resolve().parent.parent / "data" / "search_fixture.json"

# name, code directory, main symbol, team, datastore
COMPONENTS: Final = [
    ("importer", "src/importer", "ImportJob.run", "data platform", "Postgres"),
    ("billing service", "services/billing", "InvoiceBuilder.build", "payments", "Postgres"),
    ("auth middleware", "src/auth", "verify_session", "identity", "Redis"),
    ("search API", "services/search", "QueryPlanner.plan", "discovery", "Elasticsearch"),
    ("notification worker", "workers/notify", "send_digest", "engagement", "RabbitMQ"),
    ("checkout flow", "web/checkout", "useCheckoutState", "payments", "Postgres"),
    ("report exporter", "src/reports", "export_csv", "analytics", "S3"),
    ("mobile sync", "mobile/sync", "SyncEngine.pull", "mobile", "SQLite"),
    ("admin console", "web/admin", "AdminRouter", "internal tools", "Postgres"),
    ("rate limiter", "src/ratelimit", "TokenBucket.take", "platform", "Redis"),
    ("image resizer", "services/images", "resize_variant", "media", "S3"),
    ("feature flag client", "libs/flags", "FlagClient.is_enabled", "platform", "LaunchDarkly"),
    ("audit log", "src/audit", "AuditWriter.append", "security", "ClickHouse"),
    ("scheduler", "services/scheduler", "CronPlanner.next_run", "platform", "Postgres"),
    ("onboarding wizard", "web/onboarding", "OnboardingStepper", "growth", "Postgres"),
    ("pricing engine", "services/pricing", "PriceRule.apply", "payments", "Postgres"),
    ("email templates", "templates/email", "render_template", "engagement", "S3"),
    ("webhook dispatcher", "services/webhooks", "deliver_webhook", "integrations", "Kafka"),
    ("inventory service", "services/inventory", "StockLedger.reserve", "fulfilment", "Postgres"),
    ("geocoder", "libs/geo", "geocode_address", "logistics", "Redis"),
    ("chat widget", "web/chat", "ChatBubble", "support", "Firebase"),
    ("metrics pipeline", "pipelines/metrics", "aggregate_hourly", "analytics", "ClickHouse"),
    ("document parser", "src/parser", "parse_pdf", "documents", "S3"),
    ("permissions model", "src/permissions", "can_access", "identity", "Postgres"),
    ("payment gateway adapter", "services/gateway", "StripeAdapter.charge", "payments", "Postgres"),
    ("translation loader", "libs/i18n", "load_catalog", "localisation", "S3"),
    ("session store", "src/sessions", "SessionRepo.save", "identity", "Redis"),
    ("recommendation model", "ml/recommend", "score_candidates", "discovery", "BigQuery"),
    ("fraud detector", "ml/fraud", "risk_score", "trust and safety", "BigQuery"),
    ("shipping label printer", "services/labels", "print_label", "fulfilment", "Postgres"),
    ("calendar integration", "integrations/calendar", "sync_events", "integrations", "Postgres"),
    ("data warehouse loader", "pipelines/warehouse", "load_partition", "data platform", "Snowflake"),
    ("CLI tool", "cli", "main_command", "developer experience", "SQLite"),
    ("design system", "packages/ui", "ThemeProvider", "design", "none"),
    ("GraphQL gateway", "services/graphql", "resolve_viewer", "platform", "Redis"),
    ("backup job", "ops/backup", "snapshot_volumes", "infrastructure", "S3"),
    ("load balancer config", "ops/lb", "upstream_pool", "infrastructure", "none"),
    ("customer portal", "web/portal", "PortalLayout", "support", "Postgres"),
    ("video transcoder", "services/transcode", "transcode_job", "media", "S3"),
    ("tax calculator", "services/tax", "compute_vat", "payments", "Postgres"),
]

RETRIES: Final = [3, 5, 2, 4, 6]
TOOLS: Final = ["pytest", "vitest", "go test", "jest", "cargo test"]
WEEKDAYS: Final = ["Tuesday", "Wednesday", "Thursday", "Monday"]
LOGS: Final = ["structured JSON logs", "logfmt lines", "OpenTelemetry spans"]


def _slug(name: str) -> str:
    return name.replace(" ", "-").lower()


def memories_of(i: int, comp: tuple[str, str, str, str, str]) -> list[tuple[str, str, str]]:
    """(aspect, type, text) for the 13 aspects of one component."""
    name, path, symbol, team, store = comp
    slug = _slug(name)
    alt = i % 3
    day = WEEKDAYS[i % len(WEEKDAYS)]
    retries = RETRIES[i % len(RETRIES)]
    tool = TOOLS[i % len(TOOLS)]
    log = LOGS[i % len(LOGS)]
    reasons = ("we need transactions", "lookups must stay under a millisecond", "the volume keeps growing")
    store_reason = reasons[alt]
    return [
        (
            "location",
            "project",
            (
                f"The {name} code lives in {path}/ and its entry point is {symbol}",
                f"Code for the {name} is under {path}/; start reading at {symbol}",
                f"{symbol} in {path}/ is where the {name} starts",
            )[alt],
        ),
        (
            "deploy",
            "decision",
            (
                f"We deploy the {name} only on {day}s, never on Fridays, because rollbacks need the "
                "whole team",
                f"Deployments of the {name} happen on {day} mornings; Friday deploys were stopped after "
                "an outage",
                f"The {name} is deployed every {day} behind a canary, never on a Friday",
            )[alt],
        ),
        (
            "owner",
            "project",
            (
                f"The {team} team owns the {name}; page them for incidents",
                f"Ownership: the {name} belongs to the {team} team",
                f"Questions about the {name} go to the {team} team, who maintain it",
            )[alt],
        ),
        (
            "datastore",
            "decision",
            f"The {name} keeps its data in {store} because {store_reason}"
            if store != "none"
            else f"The {name} keeps no data of its own; it is configuration only",
        ),
        (
            "tests",
            "feedback",
            (
                f"Run the {name} tests with `{tool} {path}` before pushing",
                f"Always run `{tool} {path}` locally before opening a pull request that touches the {name}",
                f"Before pushing changes to the {name}, run `{tool} {path}`",
            )[alt],
        ),
        (
            "retries",
            "decision",
            f"Calls from the {name} retry {retries} times with exponential backoff and jitter",
        ),
        (
            "logging",
            "feedback",
            (
                f"The {name} must emit {log}; never print to stdout",
                f"Use {log} in the {name}, not print statements",
                f"Logging in the {name}: {log} only",
            )[alt],
        ),
        (
            "dashboard",
            "reference",
            f"Grafana dashboard for the {name}: grafana.internal/d/{slug}",
        ),
        (
            "runbook",
            "reference",
            (
                f"The incident runbook for the {name} is docs/runbooks/{slug}.md",
                f"Runbook for {name} outages: docs/runbooks/{slug}.md",
                f"When the {name} is down, follow docs/runbooks/{slug}.md",
            )[alt],
        ),
        (
            "flag",
            "project",
            f"The new {name} behaviour is behind the feature flag {slug.replace('-', '_')}_v2",
        ),
        (
            "style",
            "feedback",
            (
                f"In the {name}, prefer small pure functions and keep side effects at the edges",
                f"Reviewers of the {name} want type hints on every public function",
                f"Keep {name} modules under 400 lines; split them by responsibility",
            )[alt],
        ),
        (
            "config",
            "reference",
            f"Settings of the {name} are read from config/{slug}.toml and overridden by environment "
            "variables",
        ),
        (
            "migration",
            "project",
            (
                f"Schema migrations of the {name} run with `make migrate-{slug}` before the web servers "
                "start",
                f"Migrating the {name} database: run `make migrate-{slug}` first, then restart the workers",
                f"The {name} migrations are applied by `make migrate-{slug}` in the release pipeline",
            )[alt],
        ),
    ]


def queries_of(i: int, comp: tuple[str, str, str, str, str], ids: dict[str, str]) -> list[dict[str, Any]]:
    """Queries for a few aspects of one component, asked the way people ask."""
    name, path, symbol = comp[:3]
    slug = _slug(name)
    asks: list[tuple[str, str, str]] = [
        ("location", "path", f"{path}"),
        ("deploy", "question", f"when do we deploy the {name}?"),
        ("owner", "question", f"who owns the {name}"),
        ("runbook", "word forms", f"{name} incidents runbooks"),
        ("dashboard", "partial phrase", f"grafana {name}"),
        ("tests", "question", f"how do I run the {name} tests"),
        ("retries", "word forms", f"{name} retrying backoff"),
        ("migration", "symbol", f"make migrate-{slug}"),
        ("config", "question", f"where are the {name} settings configured?"),
        ("location", "symbol", symbol),
        ("flag", "partial phrase", f"{name} feature flag"),
        ("logging", "word forms", f"{name} logged output"),
        ("datastore", "question", f"which database does the {name} use"),
    ]
    picked = [asks[(i + k * 5) % len(asks)] for k in range(3)]
    return [{"query": q, "kind": kind, "answers": [ids[aspect]]} for aspect, kind, q in picked]


PROBES: Final = [
    "kubernetes pod autoscaling thresholds",
    "GDPR consent banner wording",
    "iOS push notification certificates",
    "how do we rotate the SSH bastion keys?",
    "Terraform state locking",
    "what is our holiday leave policy",
    "Android minimum SDK version",
    "blockchain ledger reconciliation",
    "office wifi guest network",
    "quarterly OKR planning template",
    "who approves travel expenses",
    "Kotlin coroutine dispatcher",
    "printer toner supplier",
    "Figma plugin for icons",
    "SOC2 evidence collection",
    "VPN split tunnelling",
    "Helm chart values override",
    "Swift UI accessibility labels",
    "interview loop rubric",
    "parking garage access card",
    "WebAssembly module size",
    "Ruby on Rails upgrade",
    "coffee machine descaling",
    "Unity shader compilation",
    "hackathon judging criteria",
    "laptop refresh cycle",
    "Salesforce lead routing",
    "pagerduty escalation vacation override",
    "Zoom webinar registration",
    "LDAP group sync cron",
    "marketing newsletter unsubscribe rate",
    "quantum annealing experiment",
    "carbon footprint of the office",
]


def build() -> dict[str, Any]:
    memories: list[dict[str, str]] = []
    queries: list[dict[str, Any]] = []
    for i, comp in enumerate(COMPONENTS):
        ids: dict[str, str] = {}
        for aspect, type_, text in memories_of(i, comp):
            memory_id = f"mem_fx_{i:02d}_{aspect}"
            ids[aspect] = memory_id
            memories.append({"id": memory_id, "type": type_, "text": text})
        queries.extend(queries_of(i, comp, ids))
    return {"memories": memories, "queries": queries, "probes": PROBES}


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
