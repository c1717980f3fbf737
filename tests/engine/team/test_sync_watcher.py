"""The watcher's debounce, its no-overlap rule, the shutdown flush, and a real run on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.state import SyncStateStore
from workbench.engine.team.watcher import PushScheduler, TeamWatcher
from workbench.server import TeamServer

TOKEN = "-".join(["watch", "test", "token"])
DEBOUNCE = 0.2


class RecordingPush:
    """A fake push that records start times and can be held open."""

    def __init__(self, duration: float = 0.0, ok: bool = True) -> None:
        self.duration = duration
        self.ok = ok
        self.started: list[float] = []
        self.running = 0
        self.max_running = 0

    async def __call__(self) -> SimpleNamespace:
        self.started.append(asyncio.get_running_loop().time())
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(self.duration)
        finally:
            self.running -= 1
        return SimpleNamespace(ok=self.ok)


async def test_each_event_resets_the_debounce_timer():
    debounce = 0.5  # wide margin over the 0.1 s gaps, so a busy machine cannot split the burst
    push = RecordingPush()
    scheduler = PushScheduler(push, debounce=debounce)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(5):  # a burst of edits 0.1 s apart: shorter than the debounce
        scheduler.notify()
        last_event = loop.time()
        await asyncio.sleep(0.1)
    await asyncio.sleep(debounce * 2)
    assert len(push.started) == 1, "one push for the whole burst"
    assert push.started[0] - last_event >= debounce * 0.9
    assert push.started[0] - start >= 0.4 + debounce * 0.9
    assert not scheduler.pending
    await scheduler.aclose()
    assert len(push.started) == 1, "nothing pending, so no flush"


async def test_a_timer_firing_during_a_push_reschedules_instead_of_overlapping():
    push = RecordingPush(duration=DEBOUNCE * 3)
    scheduler = PushScheduler(push, debounce=DEBOUNCE)
    scheduler.notify()
    await asyncio.sleep(DEBOUNCE * 1.5)  # the first push is now running
    assert scheduler.push_in_flight
    scheduler.notify()  # its timer fires while the push still runs
    await asyncio.sleep(DEBOUNCE * 6)
    assert len(push.started) == 2
    assert push.max_running == 1, "pushes never overlap"
    assert push.started[1] - push.started[0] >= DEBOUNCE * 3 * 0.9
    await scheduler.aclose()


async def test_shutdown_awaits_the_running_push_then_flushes_pending_changes():
    push = RecordingPush(duration=DEBOUNCE)
    scheduler = PushScheduler(push, debounce=DEBOUNCE)
    scheduler.notify()
    await asyncio.sleep(DEBOUNCE * 1.2)
    scheduler.notify()  # a change that the running push does not carry
    await scheduler.aclose()
    assert len(push.started) == 2 and push.max_running == 1
    assert not scheduler.pending


async def test_shutdown_does_not_flush_when_suppressed_and_failures_stay_pending():
    push = RecordingPush(ok=False)
    suppressed = False
    scheduler = PushScheduler(push, debounce=DEBOUNCE, is_suppressed=lambda: suppressed)
    scheduler.notify()
    await asyncio.sleep(DEBOUNCE * 1.5)
    assert len(push.started) == 1 and scheduler.pending, "a failed push leaves work pending"
    suppressed = True
    scheduler.notify()
    await asyncio.sleep(DEBOUNCE * 1.5)
    assert len(push.started) == 1, "no push while suppressed"
    await scheduler.aclose()
    assert len(push.started) == 1, "no final flush while suppressed"


@pytest.fixture
def server(tmp_path: Path):
    with TeamServer(tmp_path / "watch.sqlite3", [TOKEN]) as srv:
        yield srv


def _client(tmp_path: Path, name: str, server: TeamServer, token: str = TOKEN) -> TeamSyncClient:
    project = tmp_path / name / "project"
    project.mkdir(parents=True, exist_ok=True)
    engine = Engine.open(project, memory_dir=str(tmp_path / name / "memory"))
    return TeamSyncClient(
        server=server.url,
        repo="acme/widgets",
        token=token,
        team_dir=engine.locations.team_dir,
        history=engine.history,
        state_store=SyncStateStore(tmp_path / name / "state"),
    )


async def _until(predicate, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


async def test_watcher_pulls_first_then_pushes_edits_and_flushes_on_stop(tmp_path, server):
    seed = _client(tmp_path, "seed", server)
    Path(seed.team_dir).mkdir(parents=True)
    (Path(seed.team_dir) / "from-seed.md").write_text("already on the server\n")
    async with seed:
        await seed.push()

    client = _client(tmp_path, "dev", server)
    team = Path(client.team_dir)
    events: list[tuple[str, str]] = []
    watcher = TeamWatcher(
        client,
        debounce=DEBOUNCE,
        report=lambda op, result: events.append((op, getattr(result, "status", ""))),
    )
    stop = asyncio.Event()
    async with client:
        task = asyncio.create_task(watcher.run(stop))
        await asyncio.wait_for(watcher.watching.wait(), 10)
        assert (team / "from-seed.md").read_text() == "already on the server\n"
        assert events == [("pull", "ok"), ("watching", "")], "the pull's writes push nothing"
        await asyncio.sleep(0.2)  # margin for the watch to settle on a busy machine
        puts_after_pull = server.stats.puts

        (team / "new.md").write_text("written while watching\n")
        await _until(lambda: ("push", "ok") in events)
        assert server.stats.puts == puts_after_pull + 1

        (team / "last.md").write_text("written just before stopping\n")
        await asyncio.sleep(0.1)  # let the event arrive, but stop before the debounce ends
        stop.set()
        await asyncio.wait_for(task, 10)

    async with _client(tmp_path, "check", server) as check:
        pulled = await check.pull()
    assert set(pulled.written) == {"from-seed.md", "new.md", "last.md"}


async def test_watcher_deletion_lifts_an_auth_suppression(tmp_path, server):
    client = _client(tmp_path, "dev", server, token="wrong")
    team = Path(client.team_dir)
    team.mkdir(parents=True)
    (team / "a.md").write_text("a\n")
    (team / "b.md").write_text("b\n")
    events: list[str] = []
    watcher = TeamWatcher(client, debounce=DEBOUNCE, report=lambda op, r: events.append(op))
    stop = asyncio.Event()
    async with client:
        task = asyncio.create_task(watcher.run(stop))
        await asyncio.wait_for(watcher.watching.wait(), 10)
        (team / "a.md").write_text("a, edited\n")
        await _until(lambda: client.state.push_suppressed_reason is not None)
        assert client.state.push_suppressed_reason == "http_401"
        pushes = events.count("push")

        (team / "b.md").write_text("b, edited\n")
        await asyncio.sleep(DEBOUNCE * 3)
        assert events.count("push") == pushes, "suppressed: edits do not push"

        (team / "b.md").unlink()
        await _until(lambda: "unsuppressed" in events)
        await _until(lambda: events.count("push") > pushes)
        stop.set()
        await asyncio.wait_for(task, 10)
