"""The session memory pane: Pilot flows on a real engine over the sample projects, and SVG
snapshots fed the engine's result objects for the `warnings` and `healthy` samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import OptionList, Static, TabbedContent, TabPane

from tests.ui.conftest import settle
from tests.ui.harness import EngineHarness, PaneHarness
from workbench.engine import Engine
from workbench.engine.context.session_memory import DEFAULT_TEMPLATE
from workbench.engine.context.views import SessionNotes
from workbench.ui.panes.session import PANE_ACTIONS, SessionPane
from workbench.ui.widgets.session_notes import SectionBars, TriggerTimeline

SIZE = (110, 44)
NOW_MS = 1_800_000_000_000
WARNINGS_NEWEST = "1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6"
WARNINGS_NO_NOTES = "a26c8b94-0e3f-4d71-95b8-c4e2f17d6a30"


def plain(widget: Static) -> str:
    """The text a Static shows."""
    return str(widget.render())


def pane_of(app: App[None]) -> SessionPane:
    return app.query_one(SessionPane)


# --- flows on the real engine ---------------------------------------------------------------


async def test_lists_sessions_and_reads_the_newest_notes(sample_engine):
    engine = sample_engine("warnings")
    expected = engine.context.session_memory(session=WARNINGS_NEWEST, trigger=WARNINGS_NEWEST)
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert [s.session_id for s in pane.sessions] == [
            s.session_id for s in engine.context.sessions()
        ]
        assert pane.sessions[0].session_id == WARNINGS_NEWEST
        assert pane.query_one(OptionList).highlighted == 0
        assert pane.has_content
        notes = pane.notes
        assert notes is not None and notes.session.session_id == WARNINGS_NEWEST
        report = notes.report
        assert report.total_tokens == expected.total_tokens == 12_383
        assert report.over_total
        assert [s.header for s in report.sections if s.over_limit] == [
            "# Files and Functions",
            "# Worklog",
        ]
        # The pane's trigger is the service's trigger, point for point.
        assert report.trigger is not None and expected.trigger is not None
        assert [p.uuid for p in report.trigger.points] == [p.uuid for p in expected.trigger.points]
        assert len(report.trigger.points) == 8
        bars = pane.query_one(SectionBars)
        assert bars.report is report and bars.display
        text = str(bars.render())
        assert "over by 383" in text and "over by 2,337" in text and "over by 5,705" in text
        assert pane.query_one(TriggerTimeline).display
        header = plain(pane.query_one(".session-header", Static))
        assert "written" in header and "default template" in header
        assert "<session 1e3a91c0>/session-memory/summary.md" in header
        table = plain(pane.query_one(".session-trigger-table", Static))
        assert "turn ended without tools" in table


async def test_the_cursor_reads_the_highlighted_session(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        pane.query_one(OptionList).focus()
        await pilot.press("down", "down")
        await settle(app, pilot)
        assert pane.notes is not None
        assert pane.notes.session.session_id == WARNINGS_NO_NOTES
        assert not pane.notes.report.exists
        assert pane.query_one(".session-missing", Static).display
        assert not pane.query_one(SectionBars).display
        assert "no notes yet" in plain(pane.query_one(".session-header", Static))
        trigger = pane.notes.report.trigger
        assert trigger is not None and len(trigger.points) == 1
        await pilot.press("up")
        await settle(app, pilot)
        assert pane.notes.session.session_id.startswith("5f7d3e21")
        assert pane.notes.report.exists and not pane.notes.report.over_total


async def test_refresh_reads_the_notes_again_from_disk(sample_engine):
    engine = sample_engine("healthy")
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.notes is not None and not pane.notes.report.is_empty
        summary = Path(pane.notes.report.path)
        summary.write_text(DEFAULT_TEMPLATE, encoding="utf-8")
        await pilot.press("f5")
        await settle(app, pilot)
        assert pane.notes.report.is_empty
        assert all(s.is_template_only for s in pane.notes.report.sections)
        header = plain(pane.query_one(".session-header", Static))
        assert "still the empty template" in header


async def test_toggle_shows_the_notes_text(sample_engine):
    engine = sample_engine("healthy")
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        text = pane.query_one(".session-text", Static)
        assert not text.display
        pane.query_one(OptionList).focus()
        await pilot.press("o")
        await pilot.pause()
        assert pane.show_text and text.display
        assert not pane.query_one(SectionBars).display
        assert "# Session Title" in plain(text)
        await pilot.press("o")
        await pilot.pause()
        assert not pane.show_text and not text.display


async def test_a_custom_template_is_named(install_sample):
    sample = install_sample("healthy")
    config = sample.config_home / "session-memory" / "config"
    config.mkdir(parents=True)
    (config / "template.md").write_text("# Only section\n_what_\n", encoding="utf-8")
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.notes is not None
        assert pane.notes.report.template_source == "custom"
        assert "custom template" in plain(pane.query_one(".session-header", Static))


async def test_a_project_without_sessions_says_so(install_sample):
    sample = install_sample("healthy")
    for transcript in sample.transcripts_dir.glob("*.jsonl"):
        transcript.unlink()
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    app = EngineHarness(engine, lambda: SessionPane(id="session-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.sessions == ()
        assert not pane.has_content
        assert pane.empty_title == "No sessions yet"


async def test_loading_waits_until_the_pane_is_shown(sample_engine):
    engine = sample_engine("healthy")

    class Tabs(Widget):
        def compose(self) -> ComposeResult:
            with TabbedContent(initial="first"):
                with TabPane("First", id="first"):
                    yield Static("first tab")
                with TabPane("Session", id="second"):
                    yield SessionPane(id="session-pane")

    app = EngineHarness(engine, Tabs, now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.sessions == () and pane.notes is None
        app.query_one(TabbedContent).active = "second"
        await settle(app, pilot)
        assert len(pane.sessions) == 2 and pane.notes is not None


def test_actions_are_declared_once_with_ids_and_titles():
    ids = [spec.id for spec in PANE_ACTIONS]
    assert ids == ["refresh-sessions", "toggle-notes-text"]
    for spec in PANE_ACTIONS:
        assert spec.title.startswith("Session: ")
        assert hasattr(SessionPane, f"action_{spec.action}")
    assert {b.id for b in SessionPane.BINDINGS} == set(ids)  # type: ignore[union-attr]


# --- snapshots ------------------------------------------------------------------------------


@pytest.fixture
def notes_for(install_sample):
    """Engine results for a sample's sessions: the list and one session's notes."""

    def read(sample_name: str, session_prefix: str | None = None) -> tuple[tuple, SessionNotes]:
        sample = install_sample(sample_name)
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
        sessions = tuple(engine.context.sessions())
        session = next(
            s for s in sessions if session_prefix is None or s.session_id.startswith(session_prefix)
        )
        return sessions, engine.context.session_notes(session)

    return read


def fed(sessions: tuple, notes: SessionNotes, theme: str = "workbench-dark") -> PaneHarness:
    def setup(pane) -> None:  # type: ignore[no-untyped-def]
        pane.show_sessions(sessions, select=notes.session.session_id)
        pane.show_notes(notes)

    return PaneHarness(lambda: SessionPane(autoload=False, id="session-pane"), setup, theme=theme)


class TestSessionPaneSnapshots:
    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_warnings_over_the_limits(self, snap_compare, notes_for, theme: str):
        sessions, notes = notes_for("warnings")
        assert snap_compare(fed(sessions, notes, theme), terminal_size=(100, 46))

    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_healthy(self, snap_compare, notes_for, theme: str):
        sessions, notes = notes_for("healthy")
        assert snap_compare(fed(sessions, notes, theme), terminal_size=(100, 46))

    def test_session_without_notes(self, snap_compare, notes_for):
        sessions, notes = notes_for("warnings", "a26c")
        assert snap_compare(fed(sessions, notes), terminal_size=(100, 30))

    def test_wide_layout(self, snap_compare, notes_for):
        sessions, notes = notes_for("warnings", "5f7d")
        assert snap_compare(fed(sessions, notes), terminal_size=(140, 40))
