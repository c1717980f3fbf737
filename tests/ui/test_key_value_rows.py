"""KeyValueRows: a long value wraps under the value column, at whatever width the widget has."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content

from workbench.ui.widgets.key_value_rows import KeyValueRows

DESCRIPTION = "Marta works from Lisbon (WET/WEST) and is usually offline after 18:00 local time"
ROWS = [("name", "Time zone"), ("description", DESCRIPTION), ("type", "user")]


class RowsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyValueRows(id="rows")


def drawn(widget: KeyValueRows) -> list[str]:
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


async def test_a_long_value_wraps_under_its_own_column_and_follows_the_width():
    app = RowsApp()
    async with app.run_test(size=(40, 12)) as pilot:
        rows = app.query_one(KeyValueRows)
        rows.set_rows(ROWS, notes=[Content("Frontmatter note")])
        await pilot.pause()
        lines = drawn(rows)
        assert lines[0] == "Frontmatter note"
        assert lines[1] == "name         Time zone"
        assert lines[2].startswith("description  Marta")
        # Every later line of the description starts where its first line's text did.
        continuation = lines[3 : lines.index("type         user")]
        assert continuation and all(line.startswith(" " * 13) for line in continuation)
        assert all(not line[13].isspace() for line in continuation)
        assert " ".join(line.strip() for line in [lines[2][13:], *continuation]) == DESCRIPTION
        assert rows.size.height == len(lines) == 3 + len(continuation) + 1
        assert all(len(line) <= 40 for line in lines)

        await pilot.resize_terminal(120, 12)
        await pilot.pause()
        assert drawn(rows) == [
            "Frontmatter note",
            "name         Time zone",
            f"description  {DESCRIPTION}",
            "type         user",
        ]


async def test_plain_text_and_an_empty_value():
    app = RowsApp()
    async with app.run_test(size=(60, 6)) as pilot:
        rows = app.query_one(KeyValueRows)
        rows.set_rows([("tags", ""), ("type", "project")])
        await pilot.pause()
        assert drawn(rows) == ["tags", "type  project"]
        assert rows.plain == "tags  \ntype  project"
