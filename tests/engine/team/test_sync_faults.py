"""Fault injection with httpx.MockTransport: retries stay in bounds and no local data is lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient, is_permanent_failure
from workbench.engine.team.sync.models import SyncError
from workbench.engine.team.sync.protocol import entry_hash
from workbench.engine.team.sync.state import SyncStateStore

GOOD_BODY = {
    "organizationId": "org",
    "repo": "acme/widgets",
    "version": 3,
    "lastModified": "2025-01-01T00:00:00.000Z",
    "checksum": "sha256:" + "cd" * 32,
    "content": {"entries": {"remote.md": "from the server\n"}},
}


class FakeServer:
    """A scripted server: a list of responders consumed one per request (the last repeats)."""

    def __init__(self, *script: Callable[[httpx.Request], httpx.Response]) -> None:
        self.script = list(script)
        self.requests: list[httpx.Request] = []
        self.probed_first = False

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if not self.requests and not self.probed_first and request.url.params.get("view"):
            # A client that never synced learns the server's hashes before its first push:
            # answered as an empty server, outside the script, so each script starts with
            # the request it is about.
            self.probed_first = True
            return httpx.Response(404)
        self.requests.append(request)
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        return step(request)

    def count(self, method: str, view: str | None = None) -> int:
        return sum(
            1 for r in self.requests if r.method == method and r.url.params.get("view") == view
        )


def status(code: int, body: object = None, **headers: str) -> Callable:
    def respond(request: httpx.Request) -> httpx.Response:
        if body is None:
            return httpx.Response(code, headers=headers)
        if isinstance(body, (bytes, str)):
            return httpx.Response(code, content=body, headers=headers)
        return httpx.Response(code, json=body, headers=headers)

    return respond


def raises(exc_type: type[Exception], message: str = "boom") -> Callable:
    def respond(request: httpx.Request) -> httpx.Response:
        raise exc_type(message, request=request)

    return respond


@pytest.fixture
def machine(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    engine = Engine.open(project, memory_dir=str(tmp_path / "memory"))
    team = Path(engine.locations.team_dir)
    team.mkdir(parents=True)
    (team / "local.md").write_text("my precious notes\n")
    (team / "other.md").write_text("more notes\n")
    return engine, team, tmp_path


def snapshot(team: Path) -> dict[str, bytes]:
    return {str(p.relative_to(team)): p.read_bytes() for p in team.rglob("*") if p.is_file()}


def make_client(machine, fake: FakeServer, sleeps: list[float]) -> TeamSyncClient:
    engine, _, root = machine

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return TeamSyncClient(
        server="http://faulty.invalid",
        repo="acme/widgets",
        token="t",
        team_dir=engine.locations.team_dir,
        history=engine.history,
        state_store=SyncStateStore(root / "state"),
        transport=httpx.MockTransport(fake),
        sleep=fake_sleep,
    )


# --- GET retries ----------------------------------------------------------------------------


async def test_5xx_then_success_retries_with_backoff_and_jitter(machine):
    fake = FakeServer(status(503), status(500), status(502), status(200, GOOD_BODY))
    sleeps: list[float] = []
    async with make_client(machine, fake, sleeps) as client:
        result = await client.pull()
    assert result.status == "ok" and result.written == ("remote.md",)
    assert fake.count("GET") == 4
    assert len(sleeps) == 3
    for delay, base in zip(sleeps, (0.5, 1.0, 2.0), strict=True):
        assert base <= delay <= base * 1.25


@pytest.mark.parametrize(
    ("responder", "kind", "http_status"),
    [
        (status(500), "http", 500),
        (status(429), "http", 429),
        (status(400), "http", 400),
        (raises(httpx.ReadTimeout), "timeout", None),
        (raises(httpx.ConnectTimeout), "timeout", None),
        (raises(httpx.ConnectError, "connection refused"), "network", None),
        (raises(httpx.RemoteProtocolError, "server disconnected"), "http", None),
        (raises(httpx.ReadError, "connection reset"), "http", None),
    ],
)
async def test_get_failures_give_up_after_three_retries(machine, responder, kind, http_status):
    _, team, _ = machine
    before = snapshot(team)
    fake = FakeServer(responder)
    sleeps: list[float] = []
    async with make_client(machine, fake, sleeps) as client:
        client.state.last_known_checksum = "sha256:" + "11" * 32
        result = await client.pull()
        assert client.state.last_known_checksum == "sha256:" + "11" * 32
    assert result.status == "error"
    assert result.error is not None
    assert (result.error.kind, result.error.http_status) == (kind, http_status)
    assert fake.count("GET") == 4, "MAX_RETRIES=3 means four attempts"
    assert len(sleeps) == 3 and max(sleeps) <= 2.5
    assert snapshot(team) == before


@pytest.mark.parametrize("code", [401, 403])
async def test_auth_errors_are_not_retried(machine, code):
    fake = FakeServer(status(code))
    sleeps: list[float] = []
    async with make_client(machine, fake, sleeps) as client:
        result = await client.pull()
    assert result.error is not None and result.error.kind == "auth"
    assert fake.count("GET") == 1 and sleeps == []


@pytest.mark.parametrize(
    "body",
    [
        b"<html>gateway error</html>",
        b"",
        b"[1, 2, 3]",
        json.dumps({**GOOD_BODY, "checksum": 5}).encode(),
        json.dumps({**GOOD_BODY, "version": "3"}).encode(),
        json.dumps({**GOOD_BODY, "content": {"entries": {"a.md": 1}}}).encode(),
        json.dumps({**GOOD_BODY, "content": {"entries": ["a.md"]}}).encode(),
        json.dumps({**GOOD_BODY, "content": None}).encode(),
        json.dumps(
            {**GOOD_BODY, "content": {"entries": {}, "entryChecksums": {"a": None}}}
        ).encode(),
    ],
)
async def test_malformed_bodies_are_parse_errors_without_retry_or_writes(machine, body):
    _, team, _ = machine
    before = snapshot(team)
    fake = FakeServer(status(200, body))
    sleeps: list[float] = []
    async with make_client(machine, fake, sleeps) as client:
        result = await client.pull()
    assert result.status == "error" and result.error is not None
    assert result.error.kind == "parse"
    assert fake.count("GET") == 1 and sleeps == []
    assert snapshot(team) == before


async def test_missing_entry_checksums_leave_server_checksums_empty(machine):
    fake = FakeServer(status(200, GOOD_BODY))
    async with make_client(machine, fake, []) as client:
        client.state.server_checksums = {"x.md": entry_hash("x")}
        await client.pull()
        assert client.state.server_checksums == {}
        assert client.state.last_known_checksum == GOOD_BODY["checksum"]


async def test_etag_header_is_used_when_the_body_has_no_checksum_on_put(machine):
    fake = FakeServer(status(200, b"not json", ETag='"sha256:feed"'))
    async with make_client(machine, fake, []) as client:
        result = await client.push()
        assert result.status == "ok"
        assert client.state.last_known_checksum == "sha256:feed"
    put = fake.requests[0]
    assert put.headers["content-type"] == "application/json"
    assert "if-match" not in put.headers


async def test_if_none_match_and_if_match_carry_the_quoted_checksum(machine):
    fake = FakeServer(status(304), status(200, {"checksum": "sha256:next"}))
    async with make_client(machine, fake, []) as client:
        client.state.last_known_checksum = 'sha256:"abc"'
        assert (await client.pull()).status == "not_modified"
        await client.push()
    get, put = fake.requests
    assert get.headers["if-none-match"] == '"sha256:abc"'
    assert put.headers["if-match"] == '"sha256:abc"'
    assert get.headers["authorization"] == "Bearer t"


# --- PUT failures ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("responder", "kind", "http_status", "suppressed"),
    [
        (status(500), "unknown", 500, None),
        (status(503), "unknown", 503, None),
        (status(409), "unknown", 409, None),
        (status(429), "unknown", 429, None),
        (status(400), "unknown", 400, "http_400"),
        (status(401), "auth", 401, "http_401"),
        (status(403), "auth", 403, "http_403"),
        (status(404), "unknown", 404, "http_404"),
        (status(413, b"<html>Request Entity Too Large</html>"), "unknown", 413, "http_413"),
        (raises(httpx.ReadTimeout), "timeout", None, None),
        (raises(httpx.ConnectError), "network", None, None),
        (raises(httpx.RemoteProtocolError, "server disconnected"), "unknown", None, None),
    ],
)
async def test_put_failures_are_not_retried_and_lose_nothing(
    machine, responder, kind, http_status, suppressed
):
    _, team, _ = machine
    before = snapshot(team)
    fake = FakeServer(responder)
    async with make_client(machine, fake, []) as client:
        result = await client.push()
        assert client.state.server_checksums == {}, "a failed batch is not recorded as sent"
        assert client.state.server_max_entries is None
    assert result.status == "error" and result.error is not None
    assert (result.error.kind, result.error.http_status) == (kind, http_status)
    assert result.suppressed_reason == suppressed
    assert fake.count("PUT") == 1
    assert snapshot(team) == before


async def test_a_412_storm_stops_after_two_retries(machine):
    hashes = {"checksum": "sha256:server", "version": 9, "entryChecksums": {}}

    def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            return httpx.Response(412)
        return httpx.Response(200, json=hashes)

    fake = FakeServer(respond)
    async with make_client(machine, fake, []) as client:
        result = await client.push()
        conflicts = client.state.conflicts
    assert result.status == "conflict" and result.conflict_retries == 2
    assert result.suppressed_reason is None
    assert fake.count("PUT") == 3 and fake.count("GET", "hashes") == 2
    assert [c["attempt"] for c in conflicts] == [1, 2, 3]
    assert conflicts[-1]["resolved"] is False


@pytest.mark.parametrize(
    "probe",
    [status(500), status(200, {"checksum": "sha256:x", "version": 1}), raises(httpx.ReadTimeout)],
)
async def test_a_failed_hashes_probe_fails_the_push(machine, probe):
    def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            return httpx.Response(412)
        return probe(request)

    fake = FakeServer(respond)
    async with make_client(machine, fake, []) as client:
        result = await client.push()
    assert result.status == "error"
    assert fake.count("PUT") == 1 and fake.count("GET", "hashes") == 1


async def test_hashes_probe_404_means_an_empty_server(machine):
    def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            return httpx.Response(412) if "if-match" in request.headers else httpx.Response(200)
        return httpx.Response(404)

    fake = FakeServer(respond)
    async with make_client(machine, fake, []) as client:
        client.state.last_known_checksum = "sha256:gone"
        result = await client.push()
        assert client.state.last_known_checksum is None
    assert result.status == "ok" and result.conflict_retries == 1 and result.uploaded == 2


async def test_structured_413_is_learned_and_bounds_the_next_read(machine):
    details = {
        "error_code": "team_memory_too_many_entries",
        "max_entries": 1,
        "received_entries": 2,
    }
    fake = FakeServer(status(413, {"error": {"details": details}}))
    async with make_client(machine, fake, []) as client:
        result = await client.push()
        assert result.max_entries == 1 and client.state.server_max_entries == 1
        local = client.read_local()
    assert list(local.entries) == ["local.md"] and local.over_limit == ("other.md",)


@pytest.mark.parametrize(
    "details",
    [
        {"error_code": "other", "max_entries": 5, "received_entries": 6},
        {"error_code": "team_memory_too_many_entries", "max_entries": 0, "received_entries": 6},
        {"error_code": "team_memory_too_many_entries", "max_entries": "5", "received_entries": 6},
        {"error_code": "team_memory_too_many_entries", "max_entries": 5},
    ],
)
async def test_other_413_shapes_teach_nothing(machine, details):
    fake = FakeServer(status(413, {"error": {"details": details}}))
    async with make_client(machine, fake, []) as client:
        result = await client.push()
        assert client.state.server_max_entries is None
    assert result.max_entries is None


def test_permanent_failure_rule():
    assert is_permanent_failure(SyncError("no_token", None, ""))
    assert is_permanent_failure(SyncError("no_repo", None, ""))
    for code in (400, 401, 403, 404, 413, 422):
        assert is_permanent_failure(SyncError("http", code, ""))
    for code in (409, 429, 500, 503, None):
        assert not is_permanent_failure(SyncError("http", code, ""))
    assert not is_permanent_failure(None)
