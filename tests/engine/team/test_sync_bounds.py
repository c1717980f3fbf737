"""Every sync request ends within its deadline and reads at most its size cap.

A loopback fault server plays the slow or bloated server; the real transport (httpx over TCP)
is what is under test. Deadlines here are short and the asserted bounds generous: they show
that a request ends, not how fast.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest
from fakes.team_faults import Fault, FaultServer, forever, repeated

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.state import SyncStateStore
from workbench.engine.team.sync.transport import MAX_PULL_RESPONSE_BYTES, MiB
from workbench.engine.team.watcher import TeamWatcher

REPO = "acme/widgets"
DEADLINE = 1.0
# A pull (retries included) may take PULL_DEADLINE_FACTOR deadlines; allow a loaded machine
# plenty on top. Before the fix these cases never ended (or read everything).
BOUND = 20.0


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    project = tmp_path / "project"
    project.mkdir()
    engine = Engine.open(project, memory_dir=str(tmp_path / "memory"))
    Path(engine.locations.team_dir).mkdir(parents=True)
    return engine


def client_for(engine: Engine, url: str, tmp_path: Path, **options) -> TeamSyncClient:
    async def no_sleep(_seconds: float) -> None:
        return None

    options.setdefault("timeout", DEADLINE)
    return TeamSyncClient(
        server=url,
        repo=REPO,
        token="t",
        team_dir=engine.locations.team_dir,
        history=engine.history,
        state_store=SyncStateStore(tmp_path / "state"),
        sleep=no_sleep,
        **options,
    )


async def bounded(coro, seconds: float = BOUND):
    """Run `coro`, failing the test (not hanging it) if it outlives `seconds`."""
    start = time.monotonic()
    result = await asyncio.wait_for(coro, seconds)
    return result, time.monotonic() - start


def trickle_body(_seen) -> Fault:
    # Headers at once, then one byte of a body that never ends every 0.2 s: every single read
    # succeeds well within httpx's per-read timeout, so only an overall deadline ends it.
    return Fault(200, body=forever(b'{"entries": '), content_length=None, trickle=0.2)


def trickle_everything(_seen) -> Fault:
    return Fault(200, body=b"{}", trickle=0.3)


@pytest.mark.parametrize("responder", [trickle_body, trickle_everything], ids=["body", "head"])
async def test_a_trickling_server_cannot_hold_a_pull_past_its_deadline(engine, tmp_path, responder):
    with FaultServer(responder) as server:
        async with client_for(engine, server.url, tmp_path) as client:
            result, elapsed = await bounded(client.pull())
            history = client.state.history
    assert result.status == "error" and result.error is not None
    assert result.error.kind == "timeout"
    assert "within 1 s" in result.error.message and "\n" not in result.error.message
    assert elapsed < BOUND
    assert history[-1]["operation"] == "pull" and history[-1]["status"] == "error"


async def test_a_trickling_server_cannot_hold_a_push_past_its_deadline(engine, tmp_path):
    (Path(engine.locations.team_dir) / "note.md").write_text("hello\n")
    with FaultServer(trickle_body) as server:
        async with client_for(engine, server.url, tmp_path) as client:
            result, _ = await bounded(client.push())
    assert result.status == "error" and result.error is not None
    assert result.error.kind == "timeout"


async def test_the_watchers_initial_pull_has_the_same_deadline(engine, tmp_path):
    with FaultServer(trickle_body) as server:
        async with client_for(engine, server.url, tmp_path) as client:
            watcher = TeamWatcher(client, debounce=0)
            result, _ = await bounded(watcher.initial_pull())
    assert result.error is not None and result.error.kind == "timeout"


def test_sync_pull_on_the_command_line_ends_at_its_deadline(tmp_path, capsys, monkeypatch):
    project = tmp_path / "cli-project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n'
    )
    memory = tmp_path / "cli-memory"
    (memory / "team").mkdir(parents=True)
    with FaultServer(trickle_body) as server:
        monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", server.url)
        monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", "t")
        monkeypatch.setenv("WORKBENCH_SYNC_TIMEOUT", "1")
        start = time.monotonic()
        code = main(["sync", "pull", "--project", str(project), "--memory-dir", str(memory)])
        elapsed = time.monotonic() - start
    out, err = capsys.readouterr()
    assert code == 1
    assert elapsed < 60  # 4 attempts of 1 s, back-off of 0.5 + 1 + 2 s: well under a minute
    assert err.count("\n") == 1 and "did not finish answering" in err and "Traceback" not in err


def test_a_bad_sync_timeout_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", "t")
    monkeypatch.setenv("WORKBENCH_SYNC_TIMEOUT", "soon")
    code = main(["sync", "pull", "--project", str(tmp_path), "--repo", REPO])
    assert code == 2
    assert "WORKBENCH_SYNC_TIMEOUT" in capsys.readouterr().err


# --- size caps ------------------------------------------------------------------------------


def huge_body(declared: bool):
    total = 300 * MiB

    def respond(_seen) -> Fault:
        body = repeated(b'{"entries": {"a.md": "' + b"x" * (MiB - 22), total)
        return Fault(200, body=body, content_length=total if declared else None)

    return respond


@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "declared-length"])
async def test_a_300_mb_pull_body_is_refused_at_the_cap_without_reading_it_all(
    engine, tmp_path, declared
):
    with FaultServer(huge_body(declared)) as server:
        async with client_for(engine, server.url, tmp_path, timeout=30) as client:
            tracemalloc.start()
            try:
                result, _ = await bounded(client.pull(), 120)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert result.status == "error" and result.error is not None
    assert result.error.kind == "too_large"
    assert "64 MB" in result.error.message and "\n" not in result.error.message
    # What it cost: at most the cap's worth of body (plus a buffer's growth), never 300 MB.
    assert peak < 2 * MAX_PULL_RESPONSE_BYTES + 16 * MiB
    assert not any(Path(engine.locations.team_dir).iterdir())


async def test_a_smaller_cap_applies_to_the_hashes_probe_and_put_answers(engine, tmp_path):
    (Path(engine.locations.team_dir) / "note.md").write_text("hello\n")

    def respond(seen) -> Fault:
        if seen.method == "PUT":
            return Fault(412, body=b"{}")  # sends the client to the hashes probe
        return Fault(200, body=repeated(b"[" * 4096, 2 * MiB), content_length=None)

    with FaultServer(respond) as server:
        async with client_for(engine, server.url, tmp_path, max_response_bytes=MiB) as client:
            result, _ = await bounded(client.push())
    assert result.status == "error" and result.error is not None
    assert result.error.kind == "too_large" and "hashes probe" in result.error.message


async def test_a_huge_error_body_is_not_read_past_its_first_kilobytes(engine, tmp_path):
    def respond(_seen) -> Fault:
        return Fault(503, body=forever(b"<html>busy</html>" * 1000), content_length=None)

    with FaultServer(respond) as server:
        async with client_for(engine, server.url, tmp_path) as client:
            result, _ = await bounded(client.pull())
    assert result.error is not None and result.error.http_status == 503


def test_the_state_never_keeps_a_checksum_that_cannot_be_sent_back(engine, tmp_path):
    body = {
        "organizationId": "o",
        "repo": REPO,
        "version": 1,
        "lastModified": "2025-01-01T00:00:00.000Z",
        "checksum": "sha256:abc\r\nX-Injected: 1",
        "content": {"entries": {"a.md": "a\n"}},
    }

    def respond(_seen) -> Fault:
        return Fault(200, body=json.dumps(body).encode(), headers=[(b"ETag", b'"\xff\xfe"')])

    async def twice():
        async with client_for(engine, server.url, tmp_path) as client:
            first = await client.pull()
            second = await client.pull()
        return first, second

    with FaultServer(respond) as server:
        first, second = asyncio.run(twice())
    assert first.status == "ok" and first.checksum is None
    assert second.status == "ok", "a bad ETag must not make every later request fail"
    assert all("if-none-match" not in seen.headers for seen in server.requests)


def gzip_of_zeros(total: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(MiB)
    return b"".join(packer.compress(zeros) for _ in range(total // MiB)) + packer.flush()


async def test_a_gzip_bomb_inflates_no_further_than_the_cap(engine, tmp_path):
    bomb = gzip_of_zeros(200 * MiB)  # about 200 KB on the wire
    fault = Fault(200, body=bomb, headers=[(b"Content-Encoding", b"gzip")])
    with FaultServer(lambda _seen: fault) as server:
        async with client_for(engine, server.url, tmp_path, max_response_bytes=MiB) as client:
            tracemalloc.start()
            try:
                result, _ = await bounded(client.pull())
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert result.error is not None and result.error.kind == "too_large"
    assert peak < 8 * MiB  # httpx alone inflates each 64 KiB read whole: ~64 MB


@pytest.mark.parametrize(
    ("encoding", "body"), [(b"br", b"\x00" * 10), (b"gzip", b"not gzip at all")]
)
async def test_an_unreadable_encoding_is_one_clear_error(engine, tmp_path, encoding, body):
    fault = Fault(200, body=body, headers=[(b"Content-Encoding", encoding)])
    with FaultServer(lambda _seen: fault) as server:
        async with client_for(engine, server.url, tmp_path) as client:
            result, _ = await bounded(client.pull())
    assert result.error is not None and "unreadable" in result.error.message
    assert "\n" not in result.error.message
