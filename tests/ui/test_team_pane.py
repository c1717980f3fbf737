"""Pilot tests of the team sync panel against the real team server on loopback.

Each test installs a shipped sample project, points the engine at a `TeamServer` (or the demo's
seeded server) through the same variables the CLI reads, mounts the pane in a small app that
has `.engine` and `now_ms()`, and asserts the pane's state, what it renders, the files on disk
and what the server holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from secretgen import make_token
from textual.widgets import Static

from tests.ui.conftest import settle, wait_until
from tests.ui.harness import EngineHarness
from workbench.engine import Engine
from workbench.server import TeamServer
from workbench.server.demo import TEAMMATE_NOTE_KEY, demo_team
from workbench.server.store import TeamStore
from workbench.ui.panes.team import PANE_ACTIONS, TeamSyncPane

TOKEN = "-".join(["ui", "team", "token"])
REPO = "acme-demo/checkout-service"
SIZE = (110, 60)
SAMPLE_TEAM_FILES = {
    "MEMORY.md",
    "feedback_no_pii_in_logs.md",
    "feedback_payments_review.md",
    "project_api_v2.md",
    "reference_oncall.md",
}


def text_of(pane: TeamSyncPane, selector: str) -> str:
    """The plain text a Static in the pane renders."""
    return str(pane.query_one(selector, Static).render())


def pane_text(pane: TeamSyncPane) -> str:
    return "\n".join(str(static.render()) for static in pane.query(Static))


def server_entries(server: TeamServer, org: str = "default", repo: str = REPO) -> dict[str, str]:
    store = TeamStore(server.db_path)
    try:
        snapshot = store.snapshot(org, repo)
    finally:
        store.close()
    return dict(snapshot.entries or {}) if snapshot else {}


@pytest.fixture
def team_server(tmp_path: Path) -> Iterator[TeamServer]:
    with TeamServer(tmp_path / "team.sqlite3", [TOKEN]) as server:
        yield server


@pytest.fixture
def sample(install_sample):  # type: ignore[no-untyped-def]
    return install_sample("healthy")


def open_engine(sample, **env: str) -> Engine:  # type: ignore[no-untyped-def]
    return Engine.open(
        sample.project_root, config_home=str(sample.config_home), env=dict(os.environ, **env)
    )


def synced_engine(sample, server: TeamServer) -> Engine:  # type: ignore[no-untyped-def]
    return open_engine(sample, TEAM_MEMORY_SYNC_URL=server.url, WORKBENCH_TEAM_TOKEN=TOKEN)


def team_dir(engine: Engine) -> Path:
    return Path(engine.locations.team_dir)


# --- availability ------------------------------------------------------------------------


async def test_without_server_or_token_the_pane_says_what_to_set(sample):
    app = EngineHarness(open_engine(sample), lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        report = pane.report
        assert report is not None and not report.available
        assert [p.problem for p in report.problems] == ["No team server", "No team token"]
        notices = text_of(pane, ".team-notices")
        assert "Sync is unavailable" in notices
        assert "TEAM_MEMORY_SYNC_URL" in notices and "WORKBENCH_TEAM_TOKEN" in notices
        # The offline status still shows the local files, all waiting for a first push.
        assert report.status.repo == REPO
        assert set(report.status.pending) == SAMPLE_TEAM_FILES
        assert {k.state for k in report.status.keys} == {"local_only"}
        for action in ("push_team", "pull_team", "toggle_watch"):
            assert pane.check_action(action, ()) is None
        await pilot.press("P")
        await settle(app, pilot)
        assert pane.busy is None and pane.report.status.history == ()


async def test_a_project_without_a_github_remote_is_explained(sample, team_server):
    (sample.project_root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    engine = synced_engine(sample, team_server)
    app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        assert [p.problem for p in pane.report.problems] == ["No github.com remote"]
        assert "git remote add origin" in text_of(pane, ".team-notices")
        assert "no repo" in text_of(pane, ".team-header")


# --- overwrites of a teammate's change ---------------------------------------------------


async def test_an_overwritten_teammate_change_is_named_and_theirs_can_be_restored(sample, tmp_path):
    team = team_dir(open_engine(sample))
    with demo_team(tmp_path / "demo", team, REPO) as demo:
        engine = open_engine(sample, **demo.env())
        app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            pane = app.query_one(TeamSyncPane)
            await pilot.press("p")
            await settle(app, pilot)
            assert not pane.query_one(".team-overwrites").display
            assert pane.check_action("restore_overwritten", ()) is None

            # A teammate changes the file we change too: local wins, and it is said.
            demo.teammate_edit("project_api_v2.md", "The teammate's plan: ship in May.\n")
            (team / "project_api_v2.md").write_text("Our plan: ship in March.\n")
            await pilot.press("P")
            await settle(app, pilot)
            [overwrite] = pane.report.status.overwrites
            assert overwrite.key == "project_api_v2.md"
            assert pane.report.restorable == (overwrite.history_id,)
            section = text_of(pane, ".team-overwrites")
            assert pane.query_one(".team-overwrites").display
            assert "project_api_v2.md  a push replaced a teammate's newer version" in section
            assert "o restores it" in section

            await pilot.press("o")
            await settle(app, pilot)
            assert (team / "project_api_v2.md").read_text() == "The teammate's plan: ship in May.\n"
            assert app.applied[-1].summary == "restored the teammate's version of project_api_v2.md"
            assert pane.report.restorable == ()
            assert "their version was restored" in text_of(pane, ".team-overwrites")
            assert pane.check_action("restore_overwritten", ()) is None


# --- push, pull, conflicts ---------------------------------------------------------------


async def test_push_uploads_the_team_folder_and_the_status_turns_in_sync(sample, team_server):
    engine = synced_engine(sample, team_server)
    app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        assert pane.report.available and len(pane.report.status.pending) == 5
        assert "5 to push" in text_of(pane, ".team-header")

        await pilot.press("P")
        await settle(app, pilot)

        assert set(server_entries(team_server)) == SAMPLE_TEAM_FILES
        status = pane.report.status
        assert status.pending == () and {k.state for k in status.keys} == {"in_sync"}
        assert status.history[0]["operation"] == "push" and status.history[0]["status"] == "ok"
        notice = text_of(pane, ".team-notices")
        assert (
            "Pushed 5 entries (" in notice
            and "and 2 more) to acme-demo/checkout-service." in notice
        )
        assert "5 uploaded" in text_of(pane, ".team-history")
        assert pane.busy is None


async def test_pull_writes_through_history_so_it_can_be_undone(sample, tmp_path):
    engine = open_engine(sample)
    team = team_dir(engine)
    with demo_team(tmp_path / "demo", team, REPO) as demo:
        engine = open_engine(sample, **demo.env())
        app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            pane = app.query_one(TeamSyncPane)
            assert not (team / TEAMMATE_NOTE_KEY).exists()

            await pilot.press("p")
            await settle(app, pilot)

            assert (team / TEAMMATE_NOTE_KEY).read_text().startswith("---\nname: Handover")
            assert TEAMMATE_NOTE_KEY in (team / "MEMORY.md").read_text()
            assert app.applied and app.applied[-1].summary.startswith("pulled 2 team files from")
            status = pane.report.status
            assert status.history[0]["operation"] == "pull"
            assert status.pending == () and {k.state for k in status.keys} == {"in_sync"}

    undone = engine.history.undo()
    assert {Path(e.path).name for e in undone} == {TEAMMATE_NOTE_KEY, "MEMORY.md"}
    assert not (team / TEAMMATE_NOTE_KEY).exists()
    assert TEAMMATE_NOTE_KEY not in (team / "MEMORY.md").read_text()


async def test_a_412_conflict_is_resolved_and_shows_in_the_history(sample, tmp_path):
    team = team_dir(open_engine(sample))
    with demo_team(tmp_path / "demo", team, REPO) as demo:
        engine = open_engine(sample, **demo.env())
        app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            pane = app.query_one(TeamSyncPane)
            await pilot.press("p")
            await settle(app, pilot)

            # A teammate pushes while we edit: our If-Match is stale, the server answers 412.
            demo.teammate_edit("project_teammate_followup.md", "Pushed while you were editing.\n")
            (team / "project_api_v2.md").write_text("The v2 API ships in March.\n")
            await pilot.press("f5")
            await settle(app, pilot)
            [row] = [k for k in pane.report.status.keys if k.key == "project_api_v2.md"]
            assert row.state == "local_changed"

            await pilot.press("P")
            await settle(app, pilot)

            status = pane.report.status
            [conflict] = status.conflicts
            assert conflict["attempt"] == 1 and conflict["resolved"] is True
            assert conflict["pending_keys"] == ["project_api_v2.md"]
            assert status.history[0]["conflict_retries"] == 1
            conflicts = text_of(pane, ".team-conflicts")
            assert "Conflicts (HTTP 412)  1 conflict" in conflicts
            assert "attempt 1 · 1 file pending: project_api_v2.md" in conflicts
            assert "resolved" in conflicts
            assert "1 conflict retry" in text_of(pane, ".team-history")
            assert "after 1 conflict retry" in text_of(pane, ".team-notices")
        held = server_entries(demo.server, "demo")
        assert held["project_api_v2.md"] == "The v2 API ships in March.\n"
        assert "project_teammate_followup.md" in held


async def test_a_413_teaches_the_limit_suppresses_pushes_and_force_push_lifts_it(sample, tmp_path):
    with TeamServer(tmp_path / "small.sqlite3", [TOKEN], max_entries=3) as server:
        engine = synced_engine(sample, server)
        app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            pane = app.query_one(TeamSyncPane)
            assert pane.check_action("force_push_team", ()) is None

            await pilot.press("P")
            await settle(app, pilot)

            status = pane.report.status
            assert status.max_entries == 3 and status.suppressed_reason == "http_413"
            assert status.history[0]["status"] == "error"
            assert pane.report.over_limit == ("project_api_v2.md", "reference_oncall.md")
            notices = text_of(pane, ".team-notices")
            assert "Pushes are suppressed (http_413)" in notices
            assert "forced push (F)" in notices
            assert "server limit 3 entries" in text_of(pane, ".team-header")
            assert "past the server's limit of 3 entries" in text_of(pane, ".team-held")
            assert server_entries(server) == {}

            await pilot.press("P")  # still suppressed: nothing is sent
            await settle(app, pilot)
            assert pane.report.status.history[0]["status"] == "suppressed"

            assert pane.check_action("force_push_team", ()) is True
            await pilot.press("F")
            await settle(app, pilot)
            status = pane.report.status
            assert status.suppressed_reason is None and status.history[0]["status"] == "ok"
            assert set(server_entries(server)) == {
                "MEMORY.md",
                "feedback_no_pii_in_logs.md",
                "feedback_payments_review.md",
            }


# --- secrets -----------------------------------------------------------------------------


async def test_a_file_with_a_secret_is_held_back_with_a_redaction_preview(sample, team_server):
    token = make_token("github-pat", seed="team-pane")
    engine = synced_engine(sample, team_server)
    team = team_dir(engine)
    (team / "reference_release_bot.md").write_text(
        "---\nname: Release bot\ntype: reference\n---\n\n"
        f"The release bot authenticates with {token} on CI.\nRotate it every quarter.\n"
    )
    app = EngineHarness(engine, lambda: TeamSyncPane(id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        report = pane.report
        [skipped] = report.status.skipped_secrets
        assert (skipped.path, skipped.rule_id) == ("reference_release_bot.md", "github-pat")
        [preview] = report.previews
        assert preview.redactions == 1 and "[REDACTED] on CI." in preview.redacted
        [finding] = preview.findings
        assert (finding.line, finding.rule_id) == (6, "github-pat")
        secrets = text_of(pane, ".team-secrets")
        assert "line 6, col 36  github-pat  GitHub PAT" in secrets
        assert "[REDACTED] on CI." in secrets
        assert "github-pat  GitHub PAT: holds a secret, never pushed" in text_of(pane, ".team-held")

        await pilot.press("P")
        await settle(app, pilot)
        assert "reference_release_bot.md" not in server_entries(team_server)
        [row] = [k for k in pane.report.status.keys if k.key == "reference_release_bot.md"]
        assert row.state == "secret_blocked"
        # The secret's text is nowhere in what the pane holds or renders.
        assert token not in repr(pane.report) and token not in pane_text(pane)
        assert token not in app.export_screenshot()


# --- watch -------------------------------------------------------------------------------


async def test_watch_pulls_then_pushes_each_change_until_toggled_off(sample, team_server):
    engine = synced_engine(sample, team_server)
    team = team_dir(engine)
    app = EngineHarness(engine, lambda: TeamSyncPane(watch_debounce=0.1, id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        await pilot.press("w")
        await wait_until(pilot, lambda: pane.watching and pane.busy is None)
        assert "● watching" in text_of(pane, ".team-header")
        assert pane.check_action("push_team", ()) is None  # the watcher owns pushing now
        assert "Watching the team folder" in text_of(pane, ".team-notices")

        (team / "project_watched.md").write_text("Written while the watcher runs.\n")
        await wait_until(pilot, lambda: "project_watched.md" in server_entries(team_server))
        await settle(app, pilot, skip=("sync",))
        assert pane.report.status.history[0]["operation"] == "push"

        await pilot.press("w")
        await settle(app, pilot)
        assert not pane.watching and pane.busy is None
        assert "○ not watching" in text_of(pane, ".team-header")
        assert not [w for w in app.workers if w.group == "sync" and not w.is_finished]
        assert pane.report.status.pending == ()


async def test_watch_stops_when_the_pane_is_unmounted(sample, team_server):
    engine = synced_engine(sample, team_server)
    app = EngineHarness(engine, lambda: TeamSyncPane(watch_debounce=0.1, id="team-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        await pilot.press("w")
        await wait_until(pilot, lambda: pane.watching and pane.busy is None)
        [watch] = [w for w in app.workers if w.group == "sync"]
        await pane.remove()
        await wait_until(pilot, lambda: watch.is_finished)


def test_actions_are_declared_once_with_unique_ids_and_keys():
    ids = [spec.id for spec in PANE_ACTIONS]
    keys = [spec.keys for spec in PANE_ACTIONS]
    assert len(set(ids)) == len(ids) and len(set(keys)) == len(keys)
    assert all(spec.title.startswith("Sync: ") for spec in PANE_ACTIONS)
    bound = {binding.id for binding in TeamSyncPane.BINDINGS}  # type: ignore[union-attr]
    assert bound == set(ids)
    assert all(hasattr(TeamSyncPane, f"action_{spec.action}") for spec in PANE_ACTIONS)


async def test_team_pane_follows_team_files_changed_on_disk(tmp_path: Path):
    # In the whole app, as the tree does: no f5 needed once a team file is written outside.
    from tests.ui.conftest import build_project
    from tests.ui.test_snapshots import TEST_SETTINGS
    from workbench.ui.app import make_app

    project = build_project(tmp_path)
    engine = project.engine()
    app = make_app(engine, TEST_SETTINGS.replace(watch_files=True), now=project.now)
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        pane = app.screen.pane("team")
        assert isinstance(pane, TeamSyncPane) and pane.report is not None
        before = pane.report.status.local_entries
        (project.memory_dir / "team" / "reference_runbooks.md").write_text(
            "---\nname: Runbooks\ndescription: Where the runbooks live\ntype: reference\n---\n"
            "In the wiki.\n",
            encoding="utf-8",
        )

        def counted() -> bool:
            report = pane.report
            return report is not None and report.status.local_entries == before + 1

        await wait_until(pilot, counted, timeout=20.0)
        assert "reference_runbooks.md" in text_of(pane, ".team-keys")


async def test_disabled_sync_keys_say_why(tmp_path: Path):
    from tests.ui.conftest import Toasts, build_project
    from tests.ui.test_snapshots import TEST_SETTINGS
    from workbench.ui.app import make_app

    project = build_project(tmp_path)  # no github.com remote, no server: sync cannot run
    app = make_app(project.engine(), TEST_SETTINGS, now=project.now)
    toasts = Toasts()
    async with app.run_test(size=(130, 40), notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        for key in ("P", "p", "F"):
            toasts.clear()
            await pilot.press(key)
            await pilot.pause()
            assert [t.message for t in toasts] == [
                "No github.com remote. Team memory belongs to a GitHub repo: add a github.com "
                "remote to the project (git remote add origin git@github.com:OWNER/NAME.git)."
            ], key


def test_a_push_summary_names_files_and_never_claims_a_held_file_went():
    from workbench.engine.team.sync.models import PushResult, SkippedSecret
    from workbench.ui.panes.team_view import push_summary

    held = (SkippedSecret("ci.md", "github-pat", "GitHub Personal Access Token"),)
    nothing = push_summary(PushResult("ok", skipped_secrets=held), "acme/widgets")
    assert "already has every file it can push" in nothing.text
    assert "1 file held back" in nothing.text and nothing.severity == "warning"
    pushed = push_summary(
        PushResult("ok", uploaded=1, uploaded_keys=("deploys.md",)), "acme/widgets"
    )
    assert pushed.text == "Pushed 1 entry (deploys.md) to acme/widgets."
