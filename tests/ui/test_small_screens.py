"""Small terminals: the sidebar narrows (or collapses with f2), every pane's tab stays visible
and reachable, and the tree keeps room for names."""

from __future__ import annotations

import pytest

from tests.ui.conftest import settle
from workbench.ui.actions import PANES
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.pane_tabs import PaneTabs


def tab_line(tabs: PaneTabs) -> str:
    return tabs.render_line(0).text


# At 80 columns the ten short titles no longer fit beside the sidebar: the strip scrolls
# (each tab visible once it is in front), as at 60 columns below.
@pytest.mark.parametrize(("size", "all_fit"), [((100, 30), True), ((80, 24), False)])
async def test_every_tab_is_visible_and_reachable(memory_project, app_factory, size, all_fit):
    app = app_factory(memory_project)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        sidebar = screen.query_one("#sidebar")
        assert sidebar.outer_size.width < 48
        # The panes keep at least half the width.
        assert screen.query_one("#panes").outer_size.width >= size[0] // 2 + 8
        tabs = screen.query_one(PaneTabs)
        line = tab_line(tabs)
        for title in tabs.titles if all_fit else ():
            assert title in line, (title, line)
        assert "Team" in line and ("Review" in line or not all_fit)
        for number, (pane_id, _tab, _title) in enumerate(PANES, start=1):
            await pilot.press(str(number % 10))
            await settle(app, pilot)
            assert screen.active_pane == pane_id
            assert tabs.visible_span(f"pane-{pane_id}") is not None
        # The tree still shows names, not just badges and ages.
        tree = screen.query_one(MemoryTree)
        row = tree.render_line(1).text
        assert "notes_unindex" in row or "notes_un" in row, row


async def test_tab_strip_scrolls_to_the_active_tab_when_nothing_fits(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        tabs = screen.query_one(PaneTabs)
        await pilot.press("8")
        await settle(app, pilot)
        assert tabs.visible_span("pane-review") is not None
        assert tab_line(tabs).startswith("‹")  # tabs off the left edge are marked
        await pilot.press("1")
        await settle(app, pilot)
        assert tabs.visible_span("pane-memory") is not None
        assert tab_line(tabs).rstrip().endswith("›")


async def test_f2_collapses_the_sidebar_and_escape_brings_the_tree_back(
    memory_project, app_factory
):
    app = app_factory(memory_project)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("f2")
        await settle(app, pilot)
        assert not screen.query_one("#sidebar").display
        assert screen.query_one("#panes").outer_size.width == 80
        assert app.focused is not None and app.focused is not screen.memory_tree
        await pilot.press("escape")
        await settle(app, pilot)
        assert screen.query_one("#sidebar").display and app.focused is screen.memory_tree


# Wide, the recall options sit on one row; in a narrower pane the surfaced memories move to a
# second row so both boxes keep room and their labels, down to 80 columns (where the blank row
# under them goes instead, so the results keep their height). The empty boxes show examples
# that say so, never what could pass for a setting.
@pytest.mark.parametrize(
    ("size", "rows", "gap"),
    [((130, 36), 1, 1), ((126, 36), 2, 1), ((100, 30), 2, 1), ((80, 24), 2, 0)],
)
async def test_recall_options_fit_the_pane(memory_project, app_factory, size, rows, gap):
    from textual.widgets import Input

    from workbench.ui.panes.recall_widgets import RecallOptions

    app = app_factory(memory_project)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press(str(next(n for n, p in enumerate(PANES, 1) if p[0] == "recall") % 10))
        await settle(app, pilot)
        options = app.screen.query_one(RecallOptions)
        assert options.size.height == rows
        labels = [label for label in options.query(".-option-label") if label.size.width]
        assert [str(label.render()) for label in labels] == ["tools", "surfaced"]
        boxes = [options.query_one(f"#recall-{name}", Input) for name in ("tools", "surfaced")]
        assert {box.region.y for box in boxes} == set(
            range(options.region.y, options.region.y + rows)
        )
        assert all(box.size.width >= len(box.placeholder) for box in boxes)  # whole examples
        assert [box.placeholder for box in boxes] == ["e.g. Bash, Read", "e.g. a.md, b.md"]
        assert options.styles.margin.bottom == gap
