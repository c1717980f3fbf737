"""RowsStatic: draws what a Static of the same rows draws, and renders only the rows on show."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tests.ui.conftest import settle
from workbench.ui.widgets.rows_static import RowsStatic

ROWS = [
    Content.assemble((f"row {i:04d} ", "bold"), ("·" * (i % 50), "$text-primary"), " end")
    for i in range(1000)
]
CSS = "Static { text-wrap: nowrap; text-overflow: ellipsis; width: 40; }"


class Both(App[None]):
    CSS = CSS

    def compose(self) -> ComposeResult:
        yield Static(Content("\n").join(ROWS[:30]), id="static")
        yield RowsStatic(ROWS[:30], id="rows")


class Long(App[None]):
    CSS = CSS + " VerticalScroll { height: 10; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield RowsStatic(ROWS, id="rows")


async def test_draws_what_a_static_of_the_joined_rows_draws():
    app = Both()
    async with app.run_test(size=(90, 70)) as pilot:
        await settle(app, pilot)
        static, rows = app.query_one("#static", Static), app.query_one("#rows", RowsStatic)
        assert static.size == rows.size == (40, 30)
        region = static.region.reset_offset
        # Cut at the width with an ellipsis, row for row and style for style.
        assert [list(s) for s in rows.render_lines(region)] == [
            list(s) for s in static.render_lines(region)
        ]
        assert "…" in rows.render_lines(region)[29].text


async def test_renders_only_the_rows_on_show(monkeypatch):
    rendered: list[int] = []
    real = RowsStatic.render_line

    def counting(self, y):  # type: ignore[no-untyped-def]
        rendered.append(y)
        return real(self, y)

    monkeypatch.setattr(RowsStatic, "render_line", counting)
    app = Long()
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(app, pilot)
        rows = app.query_one(RowsStatic)
        assert rows.size.height == len(ROWS)  # laid out whole, as a Static would be
        assert rendered and max(rendered) < 20  # yet only the rows in the scroll's window drawn
