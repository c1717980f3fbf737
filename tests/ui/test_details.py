"""The smaller things that make the app read right: empty results say so, messages expire and
stay clear of toasts, real paths, honest marks, times instead of ids, key hints, one palette
style, quick recall tabs, a screenshot that always lands somewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from tests.ui.conftest import Toasts, settle, type_text, wait_until
from workbench.engine.context.session_list import SessionInfo
from workbench.ui.messages import ChangeApplied, ChangeOutcome, DocumentLoaded
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.screens.prompt import TextPromptModal
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.status_line import StatusLine

SIZE = (120, 36)


async def test_an_empty_filter_result_says_so(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await type_text(pilot, "zebra")
        tree = app.screen.query_one(MemoryTree)
        labels = [str(node.label) for node in tree.root.children[0].children]
        assert labels == ["No memory matches “zebra” · Esc clears the filter"]
        pane = app.screen.query_one(MemoryPane)
        assert not pane.has_content and pane.empty_title == "No memory matches the filter"
        assert app.screen.highlighted_entry() is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert pane.has_content and pane.document.entry.path == tree.selected_path


async def test_status_messages_expire_and_toasts_keep_clear_of_the_status_line(
    memory_project, app_factory, monkeypatch
):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one(StatusLine)
        app.screen.post_message(ChangeApplied(ChangeOutcome("saved user_role.md")))
        await pilot.pause()
        assert status.last_action == "saved user_role.md"
        toasts = list(app.screen.query("Toast"))
        assert toasts
        for toast in toasts:
            assert not toast.region.overlaps(status.region)
        # A message goes after a while (shortened here; the line keeps it 15 s).
        monkeypatch.setattr(StatusLine, "MESSAGE_SECONDS", 0.2, raising=False)
        shown: list[str] = []
        status.watch(status, "last_action", lambda value: shown.append(value), init=False)
        app.screen.post_message(ChangeApplied(ChangeOutcome("deleted project_freeze.md")))
        # Recorded as it changes: on a loaded machine a poll can miss the 0.2 s it is shown.
        await wait_until(pilot, lambda: shown[-2:] == ["deleted project_freeze.md", ""])


async def test_a_read_that_lands_after_the_filter_hid_everything_stays_out(
    memory_project, app_factory
):
    """Typing outruns the viewer's read: the read of the memory under the old cursor finishes
    once the filter already hides every memory, and must not fill the viewer."""
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        document = app.engine.memories.read("user_role.md")
        await pilot.press("slash")
        await type_text(pilot, "zebra")
        app.screen.post_message(DocumentLoaded(document))
        await settle(app, pilot)
        pane = app.screen.query_one(MemoryPane)
        assert not pane.has_content and pane.empty_title == "No memory matches the filter"
        # Cleared, the filter brings the cursor back, and its memory is drawn again.
        await pilot.press("escape")
        await settle(app, pilot)
        tree = app.screen.query_one(MemoryTree)
        assert pane.has_content and pane.document.entry.path == tree.selected_path


async def test_status_line_shows_the_real_memory_folder(memory_project, app_factory):
    app = app_factory(memory_project, show_full_paths=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        shown = app.screen.query_one(StatusLine).memory_dir
        assert shown == app.engine.locations.memory_dir
        assert Path(shown) == memory_project.memory_dir and "<project>" not in shown


async def test_a_dangling_index_line_is_not_marked_as_fine(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        options = app.screen.query_one(IndexPane).query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        dangling = next(p for p in prompts if "runbook_old.md" in p)
        assert "▲" in dangling and "✓" not in dangling and "missing file" in dangling
        assert all("✓" in p for p in prompts if p is not dangling)


def test_durations_read_naturally():
    from workbench.ui.formatting import duration_words

    assert [duration_words(m) for m in (0.4, 1, 45, 119, 120, 980, 2879, 4943)] == [
        "under a minute",
        "1 minute",
        "45 minutes",
        "119 minutes",
        "2 hours",
        "16 hours",
        "47 hours",
        "3 days",
    ]


def session_info() -> SessionInfo:
    return SessionInfo(
        session_id="1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6",
        path="/t/1e3a91c0.jsonl",
        size_bytes=2048,
        mtime="2026-11-29T08:40:00.000Z",
        messages=62,
        first_timestamp="2026-11-29T07:00:00.000Z",
        last_timestamp="2026-11-29T08:33:10.000Z",
        title="Port the tax engine",
        model="claude-sonnet-4-6",
        context_tokens=153_946,
        compactions=0,
        has_session_memory=True,
    )


def test_session_pickers_show_a_time_not_an_id_prefix():
    from workbench.ui.panes.compaction_view import session_prompt as compaction_prompt
    from workbench.ui.panes.gauge_view import session_label
    from workbench.ui.panes.session_view import session_prompt

    info = session_info()
    shown = [str(session_prompt(info)), session_label(info), str(compaction_prompt(info))]
    for text in shown:
        assert "1e3a91c0" not in text, text
        assert "08:33" in text, text


async def test_review_detail_names_no_run_id(tmp_path: Path):
    from tests.conftest import fixed_length_dir
    from tests.ui.conftest import TEST_SETTINGS, fixed_now
    from tests.ui.test_snapshots import stage_proposals
    from workbench.engine import Engine
    from workbench.engine.samples import install_sample
    from workbench.ui.app import make_app

    now = fixed_now()
    base = fixed_length_dir(tmp_path, project="sample/legacy-billing")
    sample = install_sample("warnings", base / "sample", now=now)
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    stage_proposals(engine)
    app = make_app(engine, TEST_SETTINGS, now=now)
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("8")
        await settle(app, pilot)
        pane = app.screen.pane("review")
        text = "\n".join(str(static.render()) for static in pane.query(Static))
        assert "proposed by extract" in text
        assert "3f9a2c1b" not in text


async def test_rename_dialog_says_what_enter_and_escape_do(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, TextPromptModal)
        keys = str(app.screen.query_one(".dialog-keys", Static).render())
        assert keys == "enter Rename   esc Cancel"


async def test_every_palette_entry_is_category_colon_action(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "App: Change theme" in titles and "App: Save a screenshot (SVG)" in titles
        for title in titles:
            category, _, action = title.partition(": ")
            assert category and action and category[0].isupper(), title
        assert len(titles) == len(set(titles))


async def test_recall_tabs_are_one_key_away_and_an_empty_query_does_not_run(
    memory_project, app_factory
):
    from textual.widgets import TabbedContent

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        pane = app.screen.pane("recall")
        tabs = pane.query_one("#recall-tabs", TabbedContent)
        assert tabs.active == "recall-tab-results"
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert tabs.active == "recall-tab-injected"
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(app, pilot)
        assert tabs.active == "recall-tab-results"
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert tabs.active == "recall-tab-manifest"
        await pilot.press("f5")
        await settle(app, pilot)
        assert pane.result is None and not [w for w in app.workers if w.group == "recall"]
        banner = str(pane.query_one(".recall-banner", Static).render())
        assert banner.startswith("Nothing to recall for: the query is empty.")


async def test_screenshot_lands_somewhere_without_a_downloads_folder(
    memory_project, app_factory, tmp_path: Path
):
    assert not (Path.home() / "Downloads").exists()
    toasts = Toasts()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        command = next(
            c
            for c in app.get_system_commands(app.screen)
            if c.title == "App: Save a screenshot (SVG)"
        )
        command.callback()
        await wait_until(pilot, lambda: any(t.title == "Screenshot" for t in toasts))
    from workbench.paths import workbench_home

    saved = list((workbench_home() / "screenshots").glob("*.svg"))
    assert len(saved) == 1 and saved[0].read_text(encoding="utf-8").startswith("<svg")
    assert [t.message for t in toasts if t.title == "Screenshot"] == [f"Saved to {saved[0]}"]


@pytest.fixture(autouse=True)
def _no_downloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # platformdirs reads the XDG user dirs file; the test home has none, so ~/Downloads it is.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
