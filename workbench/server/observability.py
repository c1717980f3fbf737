"""What an operator watches: Prometheus metrics, JSON request logs, request ids.

Metrics: each app has its own registry, so several servers in one process (tests, the demo)
never collide. With several worker processes, prometheus_client's multiprocess mode must be on
(`PROMETHEUS_MULTIPROC_DIR` set before the worker imports it; `team-server --workers` and the
container do that): every worker then writes its samples to files in that folder and `/metrics`,
whichever worker answers, adds up all of them. Only counters, histograms and "most recent"
gauges are used, so a worker that dies leaves correct totals without any clean-up.

The request log is one JSON object per line on stderr with the request id, which a client may
send as `X-Request-Id` (kept when it is short and plain) and which every response carries back.
Tokens, bodies and database passwords never appear in it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

LOGGER_NAME = "workbench.server"
REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
_METHODS = frozenset(("GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PATCH"))
_MAX_SHOWN_METHOD = 32
"""Longer methods are logged as `other`: a cut could keep part of a secret past its rule."""
PUT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]  # fmt: skip


def multiprocess_on() -> bool:
    """Whether prometheus_client stores samples in files shared by worker processes."""
    from prometheus_client import values

    return values.ValueClass.__name__ == "MmapedValue"


class Metrics:
    """The server's metrics, in a registry of its own (or the multiprocess files)."""

    def __init__(self) -> None:
        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if folder:
            os.makedirs(folder, exist_ok=True)  # samples are written there from the first one
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.multiprocess = multiprocess_on()
        registry = None if self.multiprocess else CollectorRegistry(auto_describe=True)
        self.registry = registry
        self.requests = Counter(
            "workbench_team_requests",
            "HTTP requests answered, by route, method and status",
            ["route", "method", "status"],
            registry=registry,
        )
        self.put_seconds = Histogram(
            "workbench_team_put_seconds",
            "Time to answer a team-memory PUT, body read included",
            buckets=PUT_BUCKETS,
            registry=registry,
        )
        self.conflicts = Counter(
            "workbench_team_put_conflicts",
            "PUTs refused with 412 because If-Match no longer matched",
            registry=registry,
        )
        self.too_large = Counter(
            "workbench_team_put_too_large",
            "PUTs refused with 413: too many entries for the repo, or too big a body",
            ["kind"],
            registry=registry,
        )
        self.rate_limited = Counter(
            "workbench_team_rate_limited",
            "Requests refused with 429 by the per-token rate limit",
            registry=registry,
        )
        self.repo_entries = Gauge(
            "workbench_team_repo_entries",
            "Entries stored for a repo, as last seen by any worker",
            ["org", "repo"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        self.repo_bytes = Gauge(
            "workbench_team_repo_bytes",
            "UTF-8 bytes of the entries stored for a repo, as last seen by any worker",
            ["org", "repo"],
            registry=registry,
            multiprocess_mode="mostrecent",
        )
        for kind in ("entries", "body"):
            self.too_large.labels(kind)

    def repo_size(self, org: str, repo: str, entries: int, total_bytes: int) -> None:
        self.repo_entries.labels(org, repo).set(entries)
        self.repo_bytes.labels(org, repo).set(total_bytes)

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

        if self.multiprocess:
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
        else:
            assert self.registry is not None
            registry = self.registry
        return generate_latest(registry), CONTENT_TYPE_LATEST


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, pid and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC)
        data: dict[str, Any] = {
            "ts": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "pid": record.process,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            data.update(fields)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`time level message key=value …`, for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None) or {}
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        stamp = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        line = f"{stamp} {record.levelname.lower()} {record.getMessage()} {extra}".rstrip()
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def formatter_for(log_format: str) -> logging.Formatter:
    return JsonFormatter() if log_format == "json" else TextFormatter()


def configure_logging(log_format: str) -> None:
    """Send the server's log (and uvicorn's) to stderr in `log_format`; `off` silences it."""
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        if getattr(handler, "_workbench", False):
            logger.removeHandler(handler)
    if log_format == "off":
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
        return
    handler = logging.StreamHandler(sys.stderr)
    handler._workbench = True  # type: ignore[attr-defined]
    handler.setFormatter(formatter_for(log_format))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def uvicorn_log_config(log_format: str) -> dict[str, Any]:
    """uvicorn's own messages in the same format, on stderr (stdout carries data only)."""
    factory = (
        "workbench.server.observability.JsonFormatter"
        if log_format == "json"
        else "workbench.server.observability.TextFormatter"
    )
    level = "CRITICAL" if log_format == "off" else "INFO"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"server": {"()": factory}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "server",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's X-Request-Id when it is plain, short and no credential, else a new one.

    An id holding a secret is replaced rather than redacted, so the id logged is still the
    one the response carries back.
    """
    for name, value in headers:
        if name == b"x-request-id":
            text = value.decode("latin-1").strip()
            if _REQUEST_ID.match(text) and shown(text) == text:
                return text
            break
    return uuid.uuid4().hex


@lru_cache(maxsize=4096)
def shown(text: str) -> str:
    """Client-supplied text (a repo, a method, a request id) as the request log and `/metrics`
    may show it: Claude Code's secret rules applied, each secret `[REDACTED]`.

    The server is measured in requests per second, so this stays cheap: the texts are short
    (the callers bound them), the prefilter's keyword gate settles most in about two
    microseconds without running a rule, and the same few repos and methods come back on
    every request, which the cache answers with one look-up. The `re` prefilter is asked by
    name so that logging never moves the process to compiling hyperscan's database.
    """
    from workbench.engine.team.secrets.redaction import redact_secrets

    return redact_secrets(text, backend="re")


class RequestObserver:
    """ASGI middleware: request id in and out, one log line and the metrics per request."""

    def __init__(self, app: ASGIApp, metrics: Metrics | None, routes: frozenset[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes
        self.log = logging.getLogger(LOGGER_NAME)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_from(scope.get("headers", []))
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        status = 500
        raw_id = request_id.encode("latin-1")

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", raw_id)]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._record(scope, state, status, time.perf_counter() - started, request_id)

    def _record(
        self, scope: Scope, state: dict[str, Any], status: int, seconds: float, request_id: str
    ) -> None:
        path = scope.get("path", "")
        route = path if path in self.routes else "other"
        method = scope.get("method", "")
        if method not in _METHODS:  # any token is a method to h11: the client wrote it
            method = shown(method) if len(method) <= _MAX_SHOWN_METHOD else "other"
        metrics = self.metrics
        if metrics is not None:
            metrics.requests.labels(route, method, str(status)).inc()
            if method == "PUT" and route == "/api/claude_code/team_memory":
                metrics.put_seconds.observe(seconds)
            if status == 412:
                metrics.conflicts.inc()
            elif status == 413:
                metrics.too_large.labels(state.get("too_large", "body")).inc()
            elif status == 429:
                metrics.rate_limited.inc()
        fields: dict[str, Any] = {
            "request_id": request_id,
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
        }
        for name in ("org", "repo", "entries"):
            if name in state:
                fields[name] = state[name]
        quiet = route in ("/healthz", "/readyz", "/metrics") and status < 500
        level = logging.DEBUG if quiet else logging.INFO
        if status >= 500:
            level = logging.WARNING
        if self.log.isEnabledFor(level):
            self.log.log(level, "request", extra={"fields": fields})
