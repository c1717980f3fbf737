"""The team-memory HTTP protocol (spec 03 §6) as a Starlette app.

`GET /api/claude_code/team_memory?repo=owner%2Fname[&view=hashes]` and `PUT` on the same path.
Bearer tokens map to organizations and every (organization, repo) pair is a separate store, so
one team can never read or overwrite another's memory. Storage calls run in the thread pool:
SQLite blocks, and the event loop must keep accepting requests meanwhile.
"""

from __future__ import annotations

import hmac
import json
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workbench.server.keys import key_rejection, repo_is_valid
from workbench.server.store import TeamStore, parse_etag_list

ENDPOINT = "/api/claude_code/team_memory"
DEFAULT_MAX_ENTRIES = 2_000
# The client batches PUTs under 200,000 bytes but sends a single entry of up to 250,000 bytes
# (more once JSON-escaped) alone, so the default leaves room for that.
DEFAULT_MAX_BODY_BYTES = 2_000_000


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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, name: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + by)

    def reset(self) -> None:
        """Zero every counter."""
        with self._lock:
            for name in ("gets", "hash_probes", "puts", "put_entries"):
                setattr(self, name, 0)
            for name in ("preconditions_failed", "too_many_entries", "unauthorized"):
                setattr(self, name, 0)


def error_response(
    status: int, message: str, error_code: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A JSON error body shaped like the structured 413 so clients parse one form."""
    body = {"error": {"message": message, "details": {"error_code": error_code}}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


def create_app(
    store: TeamStore,
    tokens: Mapping[str, str],
    *,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    stats: ServerStats | None = None,
) -> Starlette:
    """The ASGI app serving `store` to holders of `tokens` (token → organization id)."""
    counters = stats if stats is not None else ServerStats()
    token_items = [(token.encode("utf-8"), org) for token, org in tokens.items()]

    def organization_for(request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = token.strip().encode("utf-8")
        found = None
        for known, org in token_items:
            # Compare against every token so timing does not reveal which one matched.
            if hmac.compare_digest(presented, known):
                found = org
        return found

    async def team_memory(request: Request) -> Response:
        org = organization_for(request)
        if org is None:
            counters.bump("unauthorized")
            return error_response(
                401,
                "a valid bearer token is required",
                "unauthorized",
                {"WWW-Authenticate": 'Bearer realm="team-memory"'},
            )
        repo = request.query_params.get("repo", "")
        if not repo_is_valid(repo):
            return error_response(400, "repo must be given as owner/name", "invalid_repo")
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
        except sqlite3.OperationalError:
            return _busy()
        if snapshot is None:
            return error_response(404, "no team memory stored for this repo", "not_found")
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
            return _too_large(max_body_bytes)
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > max_body_bytes:
                return _too_large(max_body_bytes)
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
        try:
            outcome = await run_in_threadpool(
                store.upsert,
                org,
                repo,
                entries,
                if_match=request.headers.get("if-match"),
                max_entries=max_entries,
            )
        except sqlite3.OperationalError:
            return _busy()
        if outcome.status == "precondition_failed":
            counters.bump("preconditions_failed")
            return error_response(
                412, "the team memory changed since your last read", "precondition_failed"
            )
        if outcome.status == "too_many_entries":
            counters.bump("too_many_entries")
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

    app = Starlette(routes=[Route(ENDPOINT, team_memory, methods=["GET", "PUT"])])
    app.state.stats = counters
    return app


def _is_utf8(text: str) -> bool:
    # JSON's \ud800 escapes decode to lone surrogates, which no UTF-8 store can hold.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_large(limit: int) -> Response:
    # Deliberately not the structured form: clients must only learn max_entries from that one.
    return Response(
        f"request body larger than {limit} bytes\n", status_code=413, media_type="text/plain"
    )


def _busy() -> Response:
    return error_response(503, "the database is busy; try again", "busy", {"Retry-After": "1"})
