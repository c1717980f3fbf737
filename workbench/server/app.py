"""The team-memory HTTP protocol (spec 03 §6) as a Starlette app, and the service around it.

`GET /api/claude_code/team_memory?repo=owner%2Fname[&view=hashes]` and `PUT` on the same path.
Bearer tokens map to organizations and every (organization, repo) pair is a separate store, so
one team can never read or overwrite another's memory. Storage calls run in the thread pool:
both stores block, and the event loop must keep accepting requests meanwhile.

Around the protocol: `/healthz` (the process answers), `/readyz` (the database answers),
`/metrics` (Prometheus), a request id and a JSON log line per request, and per-token rate
limits answered with 429 and Retry-After. The limits are token buckets kept in the database
(a side file for SQLite), so every worker, on one host or many, draws on the same bucket; a
limit divided between workers would hold a kept-alive client, whose connection stays on one
worker, to a fraction of its rate.

`create_app()` with no arguments is the factory for `uvicorn --factory` and gunicorn: it reads
`ServerConfig.from_env()`, opens the store and applies migrations before serving.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import math
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workbench.server.config import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_RATE_BURST,
    ServerConfig,
)
from workbench.server.keys import key_rejection, repo_is_valid
from workbench.server.observability import LOGGER_NAME, Metrics, RequestObserver, shown
from workbench.server.store import StoreUnavailable, parse_etag_list

if TYPE_CHECKING:
    from workbench.server.store import Store

ENDPOINT = "/api/claude_code/team_memory"
ROUTES = frozenset({ENDPOINT, "/healthz", "/readyz", "/metrics"})
__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_ENTRIES", "ServerStats", "create_app"]
log = logging.getLogger(LOGGER_NAME)


@dataclass
class ServerStats:
    """Request counters, so tests and benchmarks can see what reached the server."""

    gets: int = 0
    hash_probes: int = 0
    puts: int = 0
    put_entries: int = 0
    preconditions_failed: int = 0
    too_many_entries: int = 0
    unauthorized: int = 0
    rate_limited: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, name: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + by)

    def reset(self) -> None:
        """Zero every counter."""
        with self._lock:
            for name in ("gets", "hash_probes", "puts", "put_entries"):
                setattr(self, name, 0)
            for name in (
                "preconditions_failed",
                "too_many_entries",
                "unauthorized",
                "rate_limited",
            ):
                setattr(self, name, 0)


def error_response(
    status: int, message: str, error_code: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A JSON error body shaped like the structured 413 so clients parse one form."""
    body = {"error": {"message": message, "details": {"error_code": error_code}}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


@dataclass(frozen=True)
class RateLimit:
    """Per-token token bucket: `rate` requests per second sustained, `burst` at once."""

    rate: float
    burst: int = DEFAULT_RATE_BURST

    @property
    def enabled(self) -> bool:
        return self.rate > 0


def create_app(
    store: Store | None = None,
    tokens: Mapping[str, str] | None = None,
    *,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    stats: ServerStats | None = None,
    rate_limit: RateLimit | None = None,
    metrics: Metrics | None = None,
    metrics_token: str | None = None,
) -> Starlette:
    """The ASGI app serving `store` to holders of `tokens` (token → organization id).

    Called with no store, it is the app factory: settings from the environment, the store
    opened and migrated, logging set up, the store closed at shutdown.
    """
    if store is None:
        return _app_from_environment()
    counters = stats if stats is not None else ServerStats()
    meter = metrics if metrics is not None else Metrics()
    limit = rate_limit if rate_limit is not None and rate_limit.enabled else None
    token_items = [
        (token.encode("utf-8"), org, hashlib.sha256(token.encode("utf-8")).hexdigest()[:32])
        for token, org in (tokens or {}).items()
    ]
    metrics_secret = metrics_token.encode("utf-8") if metrics_token else None

    def caller_for(request: Request) -> tuple[str, str] | None:
        """(organization, rate-limit bucket) for the request's bearer token, if it is known."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = token.strip().encode("utf-8")
        found = None
        for known, org, bucket in token_items:
            # Compare against every token so timing does not reveal which one matched.
            if hmac.compare_digest(presented, known):
                found = (org, bucket)
        return found

    async def team_memory(request: Request) -> Response:
        caller = caller_for(request)
        if caller is None:
            counters.bump("unauthorized")
            return error_response(
                401,
                "a valid bearer token is required",
                "unauthorized",
                {"WWW-Authenticate": 'Bearer realm="team-memory"'},
            )
        org, bucket = caller
        request.state.org = org
        if limit is not None:
            try:
                wait = await run_in_threadpool(store.take_token, bucket, limit.rate, limit.burst)
            except StoreUnavailable as exc:
                return _unavailable(exc)
            if wait > 0:
                counters.bump("rate_limited")
                return error_response(
                    429,
                    "too many requests for this token; slow down",
                    "rate_limited",
                    {"Retry-After": str(max(1, math.ceil(wait)))},
                )
        repo = request.query_params.get("repo", "")
        if not repo_is_valid(repo):
            return error_response(400, "repo must be given as owner/name", "invalid_repo")
        # The repo is the client's text: what the log and /metrics show is redacted.
        request.state.repo = shown(repo)
        if request.method in ("GET", "HEAD"):
            return await _get(request, org, repo)
        return await _put(request, org, repo)

    async def _get(request: Request, org: str, repo: str) -> Response:
        hashes_only = request.query_params.get("view") == "hashes"
        counters.bump("hash_probes" if hashes_only else "gets")
        try:
            snapshot = await run_in_threadpool(
                store.snapshot, org, repo, with_bodies=not hashes_only
            )
        except StoreUnavailable as exc:
            return _unavailable(exc)
        if snapshot is None:
            return error_response(404, "no team memory stored for this repo", "not_found")
        meter.repo_size(
            org, request.state.repo, len(snapshot.entry_checksums), snapshot.total_bytes
        )
        etag = f'"{snapshot.checksum}"'
        if not hashes_only:
            wanted = request.headers.get("if-none-match")
            if wanted is not None:
                tags = parse_etag_list(wanted)
                if "*" in tags or snapshot.checksum in tags:
                    return Response(status_code=304, headers={"ETag": etag})
        return JSONResponse(snapshot.to_json(), headers={"ETag": etag})

    async def _put(request: Request, org: str, repo: str) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body_bytes:
            return _too_large(request, max_body_bytes)
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > max_body_bytes:
                return _too_large(request, max_body_bytes)
        try:
            payload = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return error_response(400, "the body is not valid JSON", "invalid_body")
        entries = payload.get("entries") if isinstance(payload, dict) else None
        if not isinstance(entries, dict):
            return error_response(400, 'the body must be {"entries": {...}}', "invalid_body")
        for key, value in entries.items():
            why = key_rejection(key)
            if why is not None:
                return error_response(400, f"entry key refused: {why}", "invalid_entry_key")
            if not isinstance(value, str):
                return error_response(400, "entry values must be strings", "invalid_body")
            if not _is_utf8(value):
                return error_response(
                    400, "entry values must be valid Unicode (no lone surrogates)", "invalid_body"
                )
        counters.bump("puts")
        counters.bump("put_entries", len(entries))
        request.state.entries = len(entries)
        try:
            outcome = await run_in_threadpool(
                store.upsert,
                org,
                repo,
                entries,
                if_match=request.headers.get("if-match"),
                max_entries=max_entries,
            )
        except StoreUnavailable as exc:
            return _unavailable(exc)
        if outcome.status == "precondition_failed":
            counters.bump("preconditions_failed")
            return error_response(
                412, "the team memory changed since your last read", "precondition_failed"
            )
        if outcome.status == "too_many_entries":
            counters.bump("too_many_entries")
            request.state.too_large = "entries"
            # received_entries is the count the repo would hold after this PUT: that is the
            # number that went over the limit.
            details = {
                "error_code": "team_memory_too_many_entries",
                "max_entries": max_entries,
                "received_entries": outcome.total_entries,
            }
            message = f"this repo may hold at most {max_entries} team memory entries"
            return JSONResponse(
                {"error": {"message": message, "details": details}}, status_code=413
            )
        meter.repo_size(org, request.state.repo, outcome.total_entries, outcome.total_bytes)
        body_out = {
            "organizationId": org,
            "repo": repo,
            "version": outcome.version,
            "lastModified": outcome.last_modified,
            "checksum": outcome.checksum,
            "entryCount": outcome.total_entries,
            "updatedKeys": list(outcome.changed_keys),
        }
        headers = {"ETag": f'"{outcome.checksum}"'} if outcome.checksum else {}
        return JSONResponse(body_out, headers=headers)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        try:
            await run_in_threadpool(store.ping)
        except StoreUnavailable as exc:
            log.warning("not ready", extra={"fields": {"reason": str(exc)}})
            body = {"status": "unavailable", "database": store.kind}
            return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})
        return JSONResponse({"status": "ready", "database": store.kind})

    async def metrics_page(request: Request) -> Response:
        if metrics_secret is not None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            presented = token.strip().encode("utf-8")
            if scheme.lower() != "bearer" or not hmac.compare_digest(presented, metrics_secret):
                return error_response(
                    401, "the metrics token is required", "unauthorized",
                    {"WWW-Authenticate": 'Bearer realm="metrics"'},
                )  # fmt: skip
        data, content_type = await run_in_threadpool(meter.render)
        return Response(data, media_type=content_type)

    app = Starlette(
        routes=[
            Route(ENDPOINT, team_memory, methods=["GET", "PUT"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_page, methods=["GET"]),
        ],
        middleware=[Middleware(RequestObserver, metrics=meter, routes=ROUTES)],
    )
    app.state.stats = counters
    app.state.metrics = meter
    app.state.store = store
    return app


def app_for_config(config: ServerConfig, store: Store, **extra: object) -> Starlette:
    """The app for `config`, over an open `store`."""
    return create_app(
        store,
        config.tokens,
        max_entries=config.max_entries,
        max_body_bytes=config.max_body_bytes,
        rate_limit=RateLimit(config.rate_limit, config.rate_burst),
        metrics_token=config.metrics_token,
        **extra,  # type: ignore[arg-type]
    )


def _app_from_environment() -> Starlette:
    from workbench.server.database import open_store
    from workbench.server.observability import configure_logging

    config = ServerConfig.from_env()
    if not logging.getLogger(LOGGER_NAME).handlers:
        configure_logging(config.log_format)
    for warning in config.warnings:
        log.warning(warning)
    store = open_store(config.db, pool_size=config.pool_size)
    try:
        report = store.migrate(apply=config.migrate)
    except BaseException:
        store.close()
        raise
    if report.applied:
        log.info("migrated", extra={"fields": report.to_json()})
    app = app_for_config(config, store)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            store.close()

    app.router.lifespan_context = lifespan
    return app


def _is_utf8(text: str) -> bool:
    # JSON's \ud800 escapes decode to lone surrogates, which no UTF-8 store can hold.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_large(request: Request, limit: int) -> Response:
    request.state.too_large = "body"
    # Deliberately not the structured form: clients must only learn max_entries from that one.
    return Response(
        f"request body larger than {limit} bytes\n", status_code=413, media_type="text/plain"
    )


def _unavailable(exc: StoreUnavailable) -> Response:
    log.warning("database unavailable", extra={"fields": {"reason": str(exc)}})
    return error_response(
        503, "the database cannot answer now; try again", "unavailable", {"Retry-After": "1"}
    )
