"""Related software words, so a request and a memory can meet without sharing a word.

Recall's model reads meaning; a lexical ranker only sees words. These small clusters of
everyday engineering vocabulary ("price" and "amount", "deploy" and "release") let the
offline ranker bridge the commonest gaps. Related words count for half of a direct match
and every result says which related word matched, quoted as the memory writes it. A member
of several words ("times out", "on-call") is a phrase: it matches only where its words stand
together after stemming ("timed out" does, "three times" does not).
"""

from __future__ import annotations

CLUSTERS: tuple[tuple[str, ...], ...] = (
    (
        "money",
        "price",
        "prices",
        "pricing",
        "amount",
        "amounts",
        "cents",
        "currency",
        "total",
        "discount",
        "float",
        "decimal",
        "rounding",
        "charge",
    ),
    (
        "package manager",
        "dependencies",
        "dependency",
        "install",
        "npm",
        "pnpm",
        "yarn",
        "pip",
        "poetry",
        "lockfile",
    ),
    ("deploy", "deploys", "deployment", "release", "ship", "shipping", "rollout", "production"),
    ("test", "tests", "testing", "spec", "e2e", "suite", "mock", "mocks", "fixture"),
    ("database", "db", "postgres", "mysql", "sql", "table", "schema", "query", "replica"),
    ("bug", "bugs", "issue", "ticket", "tracker", "linear", "jira"),
    ("log", "logs", "logging", "logged"),
    ("alert", "alerts", "incident", "pagerduty", "oncall", "on-call", "pager", "runbook"),
    ("review", "reviewer", "approval", "approve", "pr", "pull request", "codeowners"),
    ("commit", "commits", "changelog", "message"),
    ("dashboard", "dashboards", "grafana", "metrics", "latency", "graph", "monitoring", "duration"),
    ("deadline", "due", "freeze", "cut-off", "cutoff", "schedule", "date", "launch"),
    ("retry", "retries", "backoff", "idempotency", "timeout", "times out"),
    ("secret", "secrets", "key", "keys", "token", "credentials", "password", "vault"),
    ("timezone", "time zone", "timestamps", "utc", "local time"),
    ("ci", "pipeline", "build", "flaky", "quarantine"),
    ("answer", "answers", "diff", "diffs", "edit", "whole file", "terse", "short"),
    ("tax", "vat", "rate", "rates"),
    ("frontend", "react", "storefront", "next.js", "ui"),
)
