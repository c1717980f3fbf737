"""Long work in the app: the panes that run it show progress, stay responsive, and cancel.

The gauge pane replays a real (padded) transcript with the real engine; the replay is slowed
at each of its progress reports so that it is still running when escape is pressed. The team
pane pushes a large team folder to the real team server on loopback, many batches long."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from textual.widgets import Static

from tests.ui.conftest import wait_until
from tests.ui.harness import EngineHarness
from tests.ui.test_gauge_pane import NOW_MS, pane_of
from tests.ui.test_team_pane import (  # noqa: F401 - fixtures
    sample,
    server_entries,
    settle,
    synced_engine,
    team_dir,
    team_server,
    text_of,
)
from workbench.engine import progress
from workbench.engine.errors import OperationCancelled
from workbench.ui.panes.gauge import GaugePane
from workbench.ui.panes.team import TeamSyncPane

SIZE = (110, 48)
WARNINGS_NEWEST = "1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6"


def _pad_transcript(path: Path, lines: int) -> None:
    """Put `lines` lines Claude Code writes but the count skips before the real ones."""
    filler = "\n".join(json.dumps({"type": "progress", "n": n}) for n in range(lines))
    path.write_text(filler + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


async def test_the_gauge_shows_replay_progress_and_escape_cancels_it(sample_engine, monkeypatch):
    engine = sample_engine("warnings")
    transcript = Path(engine.context.gauge(latest=True).transcript or "")
    assert transcript.name == f"{WARNINGS_NEWEST}.jsonl"
    _pad_transcript(transcript, 50_000)
    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)
    real_replay = engine.context.replay
    outcome: list[str] = []

    def slow_replay(path, *, model=None, on_progress=None):  # type: ignore[no-untyped-def]
        def slowed(step):  # type: ignore[no-untyped-def]
            time.sleep(0.2)  # a big file on a slow disk: each checkpoint takes a while
            assert on_progress is not None
            on_progress(step)

        try:
            result = real_replay(path, model=model, on_progress=slowed)
        except OperationCancelled:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return result

    monkeypatch.setattr(engine.context, "replay", slow_replay)
    app = EngineHarness(engine, lambda: GaugePane(follow=False, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        pane = pane_of(app)
        title = pane.query_one(".gauge-plot-title", Static)
        await wait_until(pilot, lambda: "%" in str(title.render()), timeout=30)
        assert "replaying…" in str(title.render()) and "esc cancels" in str(title.render())
        # Responsive meanwhile: the reading is on screen while the replay runs.
        assert pane.report is not None and pane.replay is None
        assert "tokens used" in str(pane.query_one(".gauge-reading", Static).render())
        assert pane.check_action("cancel_replay", ()) is True
        pane.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: outcome == ["cancelled"], timeout=30)
        await wait_until(pilot, lambda: "replay cancelled" in str(title.render()), timeout=30)
        assert pane.replay is None and pane.check_action("cancel_replay", ()) is None
        # f5 runs it again, to the end.
        monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 3600.0)
        await pilot.press("f5")
        await wait_until(pilot, lambda: pane.replay is not None, timeout=30)
        assert outcome == ["cancelled", "finished"] and len(pane.replay.turns) == 28


async def test_the_team_pane_shows_push_progress_and_escape_stops_it(
    sample,  # noqa: F811
    team_server,  # noqa: F811
    monkeypatch,
):
    from workbench.engine.team.sync.client import TeamSyncClient

    real_put = TeamSyncClient._put

    async def slow_put(self, batch):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.2)  # a slow link: the push is still going when escape comes
        return await real_put(self, batch)

    monkeypatch.setattr(TeamSyncClient, "_put", slow_put)
    engine = synced_engine(sample, team_server)
    team = team_dir(engine)
    # About 150 KB each: one entry per 200 KB request, so the push takes many batches.
    for n in range(12):
        (team / f"reference_big_{n:02}.md").write_text(
            f"---\nname: big {n}\ndescription: a large reference\ntype: reference\n---\n\n"
            + ("lorem ipsum dolor sit amet " * 5600),
            encoding="utf-8",
        )
    total = 12 + 5
    app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=(110, 60)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        assert f"{total} to push" in text_of(pane, ".team-header")
        shown: list[str] = []

        def watch_busy(value: str | None) -> None:
            if value:
                shown.append(value)

        pane.watch(pane, "busy", watch_busy, init=False)
        await pilot.press("P")
        await wait_until(pilot, lambda: pane.check_action("cancel_sync", ()) is True, timeout=30)
        await pilot.press("escape")
        await settle(app, pilot)
        notices = text_of(pane, ".team-notices")
        assert "Push cancelled after" in notices and f"of {total} changed entries" in notices
        uploaded = len(server_entries(team_server))
        assert uploaded < total
        assert pane.busy is None and pane.check_action("cancel_sync", ()) is None
        # What went up is recorded: the status asks for the rest only.
        assert len(pane.report.status.pending) == total - uploaded

        await pilot.press("P")
        await settle(app, pilot)
        assert len(server_entries(team_server)) == total
        assert pane.report.status.pending == ()
        assert any(f"/{total} entries" in text and "esc cancels" in text for text in shown)


async def test_the_team_pane_shows_pull_progress_and_escape_stops_it(
    sample,  # noqa: F811
    team_server,  # noqa: F811
    monkeypatch,
):
    from tests.ui.test_team_pane import REPO
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.server.store import TeamStore

    real_write = TeamSyncClient._write_one

    def slow_write(self, *args):  # type: ignore[no-untyped-def]
        time.sleep(0.05)  # a slow disk: the pull is still writing when escape comes
        return real_write(self, *args)

    monkeypatch.setattr(TeamSyncClient, "_write_one", slow_write)
    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)
    total = 400
    body = {f"notes/n{n:03}.md": f"note {n}\n" for n in range(total)}
    store = TeamStore(team_server.db_path)
    try:
        store.upsert("default", REPO, body, if_match=None, max_entries=team_server.max_entries)
    finally:
        store.close()
    engine = synced_engine(sample, team_server)
    notes = team_dir(engine) / "notes"
    app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=(110, 60)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        shown: list[str] = []
        pane.watch(pane, "busy", lambda value: value and shown.append(value), init=False)
        await pilot.press("p")
        await wait_until(
            pilot, lambda: any(f"/{total} entries" in text for text in shown), timeout=30
        )
        # Responsive meanwhile: the pane answers and offers the cancel key.
        assert pane.check_action("cancel_sync", ()) is True
        await pilot.press("escape")
        await settle(app, pilot)
        notices = text_of(pane, ".team-notices")
        assert "Pull cancelled after" in notices and f"of {total} entries" in notices
        written = sorted(notes.iterdir())
        assert 0 < len(written) < total
        assert all(p.read_text() == body[f"notes/{p.name}"] for p in written)  # each whole
        assert pane.busy is None and pane.check_action("cancel_sync", ()) is None
        assert any("esc cancels" in text for text in shown)

        monkeypatch.setattr(TeamSyncClient, "_write_one", real_write)
        await pilot.press("p")  # the next pull fetches the rest
        await settle(app, pilot)
        assert len(list(notes.iterdir())) == total


async def test_the_compaction_pane_shows_progress_and_escape_cancels_it(
    install_sample, monkeypatch
):
    from tests.ui.test_compaction_pane import LONG, NOW, PaneApp
    from workbench.engine import Engine
    from workbench.ui.panes.compaction import CompactionPane

    warnings = install_sample("warnings", now=NOW)
    engine = Engine.open(warnings.project_root, config_home=str(warnings.config_home))
    transcript = next(s.path for s in engine.context.sessions() if s.session_id == LONG)
    _pad_transcript(Path(transcript), 50_000)
    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)
    real_preview = engine.context.compact_preview
    outcome: list[str] = []

    def slow_preview(path, *, on_progress=None, **kw):  # type: ignore[no-untyped-def]
        def slowed(step):  # type: ignore[no-untyped-def]
            time.sleep(0.2)  # a big file on a slow disk: each checkpoint takes a while
            assert on_progress is not None
            on_progress(step)

        try:
            result = real_preview(path, on_progress=slowed, **kw)
        except OperationCancelled:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return result

    monkeypatch.setattr(engine.context, "compact_preview", slow_preview)
    app = PaneApp(engine, lambda: CompactionPane(now_ms=lambda: NOW * 1000, id="compaction-pane"))
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(CompactionPane)
        status = pane.query_one(".compaction-status", Static)
        await wait_until(pilot, lambda: "reading" in str(status.render()), timeout=30)
        await wait_until(pilot, lambda: "%" in str(status.render()), timeout=30)
        assert "esc cancels" in str(status.render())
        # Responsive meanwhile: the session list is there and the cancel key is offered.
        assert pane.busy and pane.sessions and pane.check_action("cancel_preview", ()) is True
        pane.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: outcome == ["cancelled"], timeout=30)
        assert "preview cancelled" in str(status.render()) and not pane.busy
        assert pane.preview is None and pane.check_action("cancel_preview", ()) is None
        # f5 runs it again, to the end.
        monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 3600.0)
        await pilot.press("f5")
        await wait_until(pilot, lambda: pane.preview is not None, timeout=60)
        assert outcome == ["cancelled", "finished"] and pane.preview.chosen == "session_memory"
