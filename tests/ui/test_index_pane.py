"""The MEMORY.md pane on a long index: every line arrives, built off the UI thread."""

from __future__ import annotations

import threading

from textual.widgets import OptionList

from tests.ui.conftest import settle
from tests.ui.harness import PaneHarness
from workbench.engine.memories.models import Headroom, IndexEntry, IndexReport
from workbench.ui.panes import index as index_pane
from workbench.ui.panes.index import LINES_PER_BATCH, IndexPane


def long_report(lines: int, loaded: int) -> IndexReport:
    entries = tuple(
        IndexEntry(
            line=n,
            text=f"- [Note {n}](note_{n}.md) — a hook",
            title=f"Note {n}",
            target=f"note_{n}.md",
            hook="a hook",
            loaded=n <= loaded,
            target_exists=True,
        )
        for n in range(1, lines + 1)
    )
    return IndexReport(
        path="/m/MEMORY.md",
        exists=True,
        line_count=lines,
        length=lines * 40,
        utf8_bytes=lines * 40,
        max_lines=200,
        max_length=25_000,
        line_truncated=True,
        length_truncated=False,
        loaded_content="",
        warning="",
        entries=entries,
        dropped_lines=lines - loaded,
        dangling=(),
        orphans=(),
        headroom=Headroom(lines=200 - lines, length=0),
        loaded_lines=loaded,
        long_lines=(),
    )


async def test_a_long_index_is_built_off_the_ui_thread_and_arrives_whole(monkeypatch):
    built_on: list[threading.Thread] = []
    real = index_pane.line_options

    widths: list[int] = []

    def recording(report, width):  # type: ignore[no-untyped-def]
        built_on.append(threading.current_thread())
        widths.append(width)
        return real(report, width)

    monkeypatch.setattr(index_pane, "line_options", recording)
    lines = LINES_PER_BATCH * 2 + 7  # more than one batch, and a last one that is not full
    report = long_report(lines, loaded=200)

    def setup(pane) -> None:  # type: ignore[no-untyped-def]
        pane.show_report(report)

    app = PaneHarness(IndexPane, setup)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        options = app.query_one(IndexPane).query_one(".index-lines", OptionList)
        assert built_on and all(t is not threading.main_thread() for t in built_on)
        assert options.option_count == lines + 1  # every line and the cut
        assert options.get_option_at_index(200).id == "cut"
        assert options.get_option_at_index(lines).id == f"line-{lines}"
        # Measured at the width the list renders its prompts at, scrollbar and padding off.
        padding = options.get_component_styles("option-list--option").padding
        assert options.show_vertical_scrollbar
        assert widths == [options.scrollable_content_region.width - padding.width]


async def test_handing_a_report_to_the_line_builder_never_prints_it(monkeypatch):
    # Naming a worker by its arguments' repr walks the whole report on the UI thread.
    printed: list[int] = []

    def counting_repr(self) -> str:  # type: ignore[no-untyped-def]
        printed.append(len(self.entries))
        return "IndexReport(...)"

    monkeypatch.setattr(IndexReport, "__repr__", counting_repr)
    report = long_report(LINES_PER_BATCH + 3, loaded=200)

    def setup(pane) -> None:  # type: ignore[no-untyped-def]
        pane.show_report(report)

    app = PaneHarness(IndexPane, setup)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        options = app.query_one(IndexPane).query_one(".index-lines", OptionList)
        assert options.option_count == LINES_PER_BATCH + 4  # the lines arrived
        assert printed == []


async def test_a_newer_report_replaces_the_lines_of_the_older_one():
    first, second = long_report(LINES_PER_BATCH + 50, loaded=200), long_report(30, loaded=30)

    def setup(pane) -> None:  # type: ignore[no-untyped-def]
        pane.show_report(first)
        pane.show_report(second)

    app = PaneHarness(IndexPane, setup)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        options = app.query_one(IndexPane).query_one(".index-lines", OptionList)
        assert options.option_count == 30
        assert [options.get_option_at_index(i).id for i in (0, 29)] == ["line-1", "line-30"]
