"""The ten panes inside the real app, on an installed sample project: built after the first
scan, loaded when first shown, the focus moved into each one so its keys work, and the status
line saying which engine path produced what is on screen."""

from __future__ import annotations

import time

import pytest
from textual.widgets import Input, OptionList, Static

from tests.ui.conftest import TEST_SETTINGS, Toasts, settle, type_text
from tests.ui.harness import PaneHarness
from workbench.engine import Engine
from workbench.ui.actions import PANES
from workbench.ui.app import make_app
from workbench.ui.panes.base import EmptyState, Pane
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.review import ReviewPane
from workbench.ui.screens.main import MainScreen, PaneSlot
from workbench.ui.widgets.pane_tabs import PaneTabs
from workbench.ui.widgets.status_line import StatusLine

SIZE = (130, 40)
NUMBERS = {pane: str(number % 10) for number, (pane, _tab, _title) in enumerate(PANES, start=1)}

# What has the focus once a pane is brought forward, and what the status line says then
# (the warnings sample: sessions with usage records, no team server, no API key, empty queue).
FOCUS_AND_LABEL = {
    "memory": (".memory-scroll", "engine: local files"),
    "index": (".index-lines", "engine: local files"),
    "session": (".session-list", "engine: local transcripts"),
    "gauge": (".gauge-body", "gauge: measured + estimate since"),
    "compaction": (".compaction-scroll", "compaction: dry run, session-memory path"),
    "recall": ("#recall-results", "recall: not run yet, auto would use offline (no API key)"),
    "team": (".team-scroll", "sync: offline (no team server)"),
    "review": (".pane-empty", "review: local queue"),
    "instructions": (".instr-files", "instructions: 4 files, 6,455 tokens"),
    "context": (".ctx-body", "context: 28 calls reconciled with usage"),
}


@pytest.fixture
def sample_app(install_sample):
    """The app as the demo opens it, on the `warnings` sample, with a fixed clock."""

    def build(name: str = "warnings", **settings: object):  # type: ignore[no-untyped-def]
        now = float(int(time.time()))
        sample = install_sample(name, now=now)
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
        engine.memories.now_ms = now * 1000
        return make_app(engine, TEST_SETTINGS.replace(**settings), now=now)

    return build


def status_engine(app) -> str:  # type: ignore[no-untyped-def]
    return app.screen.query_one(StatusLine).engine_path


async def test_each_digit_brings_its_pane_forward_with_the_focus_in_it(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        # Panes are built when first shown (their modules are imported after the first frame).
        assert {slot.id for slot in screen.query(PaneSlot)} == {
            f"slot-{pane_id}"
            for pane_id in (
                "index",
                "session",
                "gauge",
                "compaction",
                "recall",
                "team",
                "review",
                "instructions",
                "context",
            )
        }
        for pane_id, (target, label) in FOCUS_AND_LABEL.items():
            await pilot.press(NUMBERS[pane_id])
            await settle(app, pilot)
            pane = screen.pane(pane_id)
            assert screen.active_pane == pane_id
            assert pane is not None and pane.has_content == (pane_id != "review")
            assert app.focused is pane.query_one(target), pane_id
            assert status_engine(app) == label, pane_id
        # Back on the memory viewer, the label is the local store's again.
        await pilot.press("1")
        await settle(app, pilot)
        assert status_engine(app) == "engine: local files"


async def test_panes_load_only_once_they_are_shown(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        for pane_id in ("session", "gauge", "compaction", "team", "review"):
            pane = await screen.built_pane(pane_id)
            assert isinstance(pane, Pane) and not pane.has_content, pane_id
            assert pane.engine_label == ""
        await pilot.press(NUMBERS["gauge"])
        await settle(app, pilot)
        assert screen.pane("gauge").report is not None  # type: ignore[union-attr]
        assert not screen.pane("team").has_content  # type: ignore[union-attr]


async def test_a_digit_pressed_before_the_panes_are_built_builds_that_pane(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        # At the first frame the panes wait in their slots (their modules not needed yet).
        assert screen.pane("gauge") is None or not screen.query(PaneSlot)
        await pilot.press(NUMBERS["gauge"])
        await settle(app, pilot)
        pane = screen.pane("gauge")
        assert pane is not None and pane.has_content
        assert app.focused is pane.query_one(".gauge-body")


async def test_recall_reports_the_engine_that_ran_and_esc_leaves_the_query_box(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(NUMBERS["recall"], "i")
        await settle(app, pilot)
        screen = app.screen
        pane = screen.pane("recall")
        assert app.focused is pane.query_one("#recall-query", Input)  # type: ignore[union-attr]
        await type_text(pilot, "1 invoice renumbering")
        await pilot.press("enter")
        await settle(app, pilot)
        assert pane.query_one("#recall-query", Input).value == "1 invoice renumbering"  # type: ignore[union-attr]
        assert status_engine(app) == "recall: offline ranker (auto, no API key)"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.focused is pane.query_one("#recall-results", OptionList)  # type: ignore[union-attr]
        await pilot.press("1")  # now a digit switches panes again
        await settle(app, pilot)
        assert screen.active_pane == "memory"
        assert status_engine(app) == "engine: local files"


async def test_following_a_link_from_a_pane_hands_the_focus_to_the_tree(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(NUMBERS["index"])
        await settle(app, pilot)
        screen = app.screen
        options = screen.pane("index").query_one(".index-lines", OptionList)  # type: ignore[union-attr]
        assert app.focused is options
        report = screen.pane("index").report  # type: ignore[union-attr]
        entry = next(e for e in report.entries if e.loaded and e.target_exists)
        options.highlighted = options.get_option_index(f"line-{entry.line}")
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.active_pane == "memory"
        assert app.focused is screen.memory_tree
        assert screen.memory_tree.selected_path is not None


async def test_an_empty_pane_takes_the_focus_so_its_keys_still_work(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(NUMBERS["review"])
        await settle(app, pilot)
        pane = app.screen.pane("review")
        assert isinstance(app.focused, EmptyState) and pane in app.focused.ancestors
        calls: list[str] = []
        pane.action_refresh_proposals = lambda: calls.append("f5")  # type: ignore[method-assign, union-attr]
        await pilot.press("f5")
        assert calls == ["f5"]


async def test_set_empty_while_the_pane_is_still_mounting_updates_the_text():
    def setup(pane) -> None:  # type: ignore[no-untyped-def]
        pane.set_empty("No team MEMORY.md", "This project has no team memory folder.")

    app = PaneHarness(IndexPane, setup)
    async with app.run_test(size=(70, 14)) as pilot:
        await pilot.pause()
        text = str(app.query_one(EmptyState).render())
        assert "No team MEMORY.md" in text and "no team memory folder" in text


async def test_a_pane_fed_an_empty_queue_says_so():
    app = PaneHarness(lambda: ReviewPane(proposals=()))
    async with app.run_test(size=(90, 20)) as pilot:
        await pilot.pause()
        pane = app.query_one(ReviewPane)
        assert pane.has_class("-empty")
        assert "The review queue is empty" in str(pane.query_one(EmptyState, Static).render())


async def test_clicking_a_tab_builds_its_pane(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.pane("compaction") is None
        tabs = screen.query_one(PaneTabs)
        start, end = tabs.span_of("pane-compaction")
        await pilot.click(PaneTabs, offset=((start + end) // 2, 0))
        await settle(app, pilot)
        assert screen.active_pane == "compaction"
        pane = screen.pane("compaction")
        assert pane is not None and pane.has_content


async def test_a_palette_verb_of_an_unbuilt_pane_builds_it_and_asks_it_first(sample_app):
    app = sample_app()
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen) and screen.pane("session") is None
        # No notes are open yet, so the pane refuses the toggle once it is built.
        await screen.run_pane_action("session", "toggle_notes_text")
        await settle(app, pilot)
        pane = screen.pane("session")
        assert pane is not None and screen.active_pane == "session"
        assert any("Not available in the Session" in toast.message for toast in toasts)


async def test_quitting_while_a_pane_is_being_built_is_clean(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        building = app.run_worker(screen.built_pane("team"), group="panes")
        await pilot.press("ctrl+q")
    assert app.return_code in (None, 0)
    # Cancelled with the app, or finished: never a MountError into a tab already gone.
    assert building.error is None or type(building.error).__name__ == "CancelledError"


async def test_the_tab_strip_moves_with_arrow_keys_and_wraps(sample_app):
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        tabs = screen.query_one(PaneTabs)
        screen.set_focus(tabs)
        await pilot.press("right")
        await settle(app, pilot)
        assert screen.active_pane == "index" and tabs.active == "pane-index"
        assert screen.pane("index") is not None  # built once it came forward
        assert screen.query_one("#pane-switcher").current == "pane-index"
        await pilot.press("left", "left")
        await settle(app, pilot)
        last = PANES[-1][0]
        assert screen.active_pane == last  # from the first tab back round to the last
        assert status_engine(app) == screen.engine_label(last)
        # A click on the bar line does nothing; a click on a title brings it forward.
        start, end = tabs.span_of("pane-gauge")
        await pilot.click(PaneTabs, offset=(start + 1, 1))
        await settle(app, pilot)
        assert screen.active_pane == last
        await pilot.click(PaneTabs, offset=(start + 1, 0))
        await settle(app, pilot)
        assert screen.active_pane == "gauge"


async def test_an_accept_in_the_review_pane_says_where_u_undoes_it(tmp_path, monkeypatch):
    # `u` acts only where memories are on show (a stray u in a pane must not undo what is not
    # on screen), so the hint after an accept in the Review pane names the tree, where it works.
    from workbench.engine.agents.tools import StagedFile
    from workbench.engine.samples import install_sample

    sample = install_sample("healthy", tmp_path / "sample")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(sample.config_home))
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    target = sample.memory_dir / "feedback_uv.md"
    text = "---\nname: Use uv\ndescription: uv, not pip\ntype: feedback\n---\n\nUse uv.\n"
    engine.agents.review.propose([StagedFile(str(target), None, text)], source="extract")
    app = make_app(engine, TEST_SETTINGS)
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        await pilot.press(NUMBERS["review"])
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert target.read_text(encoding="utf-8") == text
        [said] = [t.message for t in toasts if "feedback_uv.md" in t.message]
        assert said.endswith("(u in the tree undoes it)")
        await pilot.press("escape")  # back to the tree, as the hint says
        await settle(app, pilot)
        await pilot.press("u")
        await settle(app, pilot)
        assert not target.exists()
