"""The team server as a service: health, readiness, metrics, request ids, rate limits, and a
database that goes away and comes back. In-process servers, both stores."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from workbench.server import TeamServer

TOKEN = "-".join(["service", "test", "token"])
OTHER = "-".join(["service", "other", "token"])
PATH = "/api/claude_code/team_memory"
REPO = {"repo": "acme/widgets"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_healthz_and_readyz_answer_without_a_token(team_db, store_kind):
    with TeamServer(team_db(), [TOKEN]) as server, httpx.Client(base_url=server.url) as http:
        assert http.get("/healthz").json() == {"status": "ok"}
        ready = http.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "database": store_kind}


def test_metrics_count_requests_put_latency_refusals_and_repo_sizes(team_db):
    with (
        TeamServer(team_db(), [TOKEN], max_entries=3, max_body_bytes=2_000) as server,
        httpx.Client(base_url=server.url, headers=AUTH) as http,
    ):
        first = http.put(PATH, params=REPO, json={"entries": {"a.md": "AAAA", "b.md": "é"}})
        assert first.status_code == 200
        stale = {"If-Match": '"sha256:stale"'}
        assert http.put(PATH, params=REPO, json={"entries": {"c.md": "C"}}, headers=stale)
        too_many = {"entries": {"c.md": "C", "d.md": "D"}}
        assert http.put(PATH, params=REPO, json=too_many).status_code == 413
        assert (
            http.put(PATH, params=REPO, json={"entries": {"x.md": "x" * 3000}}).status_code == 413
        )
        assert http.get(PATH, params=REPO).status_code == 200
        assert http.get(PATH, params={"repo": "acme/none"}).status_code == 404
        assert http.get("/nowhere").status_code == 404
        found = samples(http.get("/metrics").text)

    route = "/api/claude_code/team_memory"
    assert (
        value(found, "workbench_team_requests_total", route=route, method="PUT", status="200") == 1
    )
    assert (
        value(found, "workbench_team_requests_total", route=route, method="PUT", status="412") == 1
    )
    assert (
        value(found, "workbench_team_requests_total", route=route, method="PUT", status="413") == 2
    )
    assert (
        value(found, "workbench_team_requests_total", route=route, method="GET", status="404") == 1
    )
    assert (
        value(found, "workbench_team_requests_total", route="other", method="GET", status="404")
        == 1
    )
    assert value(found, "workbench_team_put_seconds_count") == 4
    assert value(found, "workbench_team_put_conflicts_total") == 1
    assert value(found, "workbench_team_put_too_large_total", kind="entries") == 1
    assert value(found, "workbench_team_put_too_large_total", kind="body") == 1
    assert value(found, "workbench_team_repo_entries", org="default", repo="acme/widgets") == 2
    # "AAAA" and "é" (two bytes in UTF-8)
    assert value(found, "workbench_team_repo_bytes", org="default", repo="acme/widgets") == 6


def test_a_request_id_is_taken_from_the_client_or_made_and_always_returned(tmp_path, caplog):
    with (
        TeamServer(tmp_path / "db.sqlite3", [TOKEN]) as server,
        httpx.Client(base_url=server.url, headers=AUTH) as http,
    ):
        caplog.set_level(logging.INFO, logger="workbench.server")
        given = http.get(PATH, params=REPO, headers={"X-Request-Id": "trace-42.a:b"})
        assert given.headers["x-request-id"] == "trace-42.a:b"
        made = http.get(PATH, params=REPO)
        hostile = http.get(PATH, params=REPO, headers={"X-Request-Id": "bad id\twith spaces"})
        assert len(made.headers["x-request-id"]) == 32
        assert hostile.headers["x-request-id"] not in (
            "bad id\twith spaces",
            made.headers["x-request-id"],
        )
        unauthorized = httpx.get(server.url + PATH, params=REPO)
        assert unauthorized.status_code == 401 and unauthorized.headers["x-request-id"]
    lines = [
        r.fields for r in caplog.records if r.name == "workbench.server" and hasattr(r, "fields")
    ]
    ids = [line["request_id"] for line in lines]
    assert "trace-42.a:b" in ids and made.headers["x-request-id"] in ids
    first = next(line for line in lines if line["request_id"] == "trace-42.a:b")
    assert first["status"] == 404 and first["route"] == PATH and first["org"] == "default"
    assert first["repo"] == "acme/widgets" and first["method"] == "GET"
    assert TOKEN not in repr(caplog.records)


def test_rate_limits_answer_429_with_retry_after_per_token_shared_by_every_server(team_db):
    db = team_db("limits")
    tokens = {TOKEN: "acme", OTHER: "acme"}
    with (
        TeamServer(db, tokens, rate_limit=0.2, rate_burst=3) as one,
        TeamServer(db, tokens, rate_limit=0.2, rate_burst=3) as two,
    ):
        codes = []
        for server in (one, two, one):
            codes.append(httpx.get(server.url + PATH, params=REPO, headers=AUTH).status_code)
        assert codes == [404, 404, 404]
        # The bucket is in the database: the other server sees it empty too.
        for server in (two, one):
            refused = httpx.get(server.url + PATH, params=REPO, headers=AUTH)
            assert refused.status_code == 429
            assert int(refused.headers["retry-after"]) >= 1
            assert refused.json()["error"]["details"]["error_code"] == "rate_limited"
        other = {"Authorization": f"Bearer {OTHER}"}
        assert httpx.get(two.url + PATH, params=REPO, headers=other).status_code == 404
        assert httpx.get(one.url + "/healthz").status_code == 200, "health is never limited"
        assert one.stats.rate_limited + two.stats.rate_limited == 2


async def test_the_sync_client_waits_out_a_429_and_pulls(team_db, tmp_path):
    from workbench.engine import Engine
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.state import SyncStateStore

    project = tmp_path / "project"
    project.mkdir()
    engine = Engine.open(project, memory_dir=str(tmp_path / "memory"))
    # One request at once, then one per 1.43 s: the pull's first GET comes right after the
    # seeding PUT and is refused; the client's retries (0.5, 1 and 2 s apart, the second one
    # 1.5 s after the first GET at the earliest) reach a token.
    with TeamServer(team_db(), [TOKEN], rate_limit=0.7, rate_burst=1) as server:
        seeded = httpx.put(
            server.url + PATH, params=REPO, json={"entries": {"a.md": "A"}}, headers=AUTH
        )
        assert seeded.status_code == 200
        async with TeamSyncClient(
            server=server.url,
            repo="acme/widgets",
            token=TOKEN,
            team_dir=engine.locations.team_dir,
            history=engine.history,
            state_store=SyncStateStore(tmp_path / "state"),
        ) as client:
            result = await client.pull()
        assert result.status == "ok", result
        assert server.stats.rate_limited >= 1
    assert (tmp_path / "memory").rglob("a.md")
    assert any(path.read_text() == "A" for path in (tmp_path / "memory").rglob("a.md"))


def test_a_database_that_restarts_is_reconnected_to_without_restarting_the_server(monkeypatch):
    from pgserver import PgCluster, unavailable_reason

    from workbench.server import store_pg

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"needs a PostgreSQL server: {reason}")
    # A request to a database that is down waits out the pool's timeout before its 503; one
    # second instead of five keeps the same answers (the server runs in this process).
    monkeypatch.setattr(store_pg, "POOL_TIMEOUT_S", 1.0)
    cluster = PgCluster.create()  # its own, since this test stops it
    try:
        with (
            TeamServer(cluster.url(), [TOKEN]) as server,
            httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as http,
        ):
            assert http.put(PATH, params=REPO, json={"entries": {"a.md": "A"}}).status_code == 200
            cluster.stop()
            down = http.get(PATH, params=REPO)
            assert down.status_code == 503 and down.headers["retry-after"] == "1"
            assert down.json()["error"]["details"]["error_code"] == "unavailable"
            assert http.get("/readyz").status_code == 503
            assert http.get("/healthz").status_code == 200, "alive, only not ready"
            cluster.start()
            deadline = time.monotonic() + 60
            while (
                put := http.put(PATH, params=REPO, json={"entries": {"b.md": "B"}})
            ).status_code != 200:
                assert put.status_code == 503 and time.monotonic() < deadline
                time.sleep(0.2)
            assert http.get("/readyz").status_code == 200
            body = http.get(PATH, params=REPO).json()
            assert body["content"]["entries"] == {"a.md": "A", "b.md": "B"}
            assert body["version"] == 2
    finally:
        cluster.remove()
