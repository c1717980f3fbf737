"""A Static of one-row lines that renders only the rows on screen.

A Static renders (and measures) all of its content whenever it is drawn, so a 1,000-row table
in one costs a few hundred milliseconds on the UI thread the first time it is shown. Here
each row is a `Content` of its own, built wherever the caller likes (a worker), the height is
the number of rows and the width the widest row, and a row is rendered when the compositor
asks for it. What is drawn is what a Static holding the rows joined by newlines draws, as
long as no row wraps (give the widget `text-wrap: nowrap`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.geometry import Size


class RowsStatic(Static):
    """One `Content` per row, rendered row by row (see the module's docstring)."""

    DEFAULT_CSS = """
    RowsStatic { text-wrap: nowrap; }
    """

    def __init__(
        self,
        rows: Sequence[Content] = (),
        *,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: Sequence[Content] = rows
        self._width: int | None = None

    @property
    def rows(self) -> Sequence[Content]:
        """The rows on show."""
        return self._rows

    def set_rows(self, rows: Sequence[Content], width: int | None = None) -> None:
        """Show these rows; `width` is the widest row's cell length if the caller measured it
        (in a worker, say), else it is measured here when the layout asks."""
        self._rows, self._width = rows, width
        self.refresh(layout=True)

    def render(self) -> Content:
        # The whole text, for what needs all of it at once (a selection, `str()` in tests).
        return Content("\n").join(self._rows)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        if self._width is None:
            self._width = max((row.cell_length for row in self._rows), default=0)
        return self._width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def render_line(self, y: int) -> Strip:
        if self.text_selection is not None:
            # A selection spans rows: let the Static render the whole text with it.
            return super().render_line(y)
        width = self.size.width
        if not 0 <= y < len(self._rows):
            return Strip.blank(width, self.visual_style.rich_style)
        strips = Visual.to_strips(self, self._rows[y], width, 1, self.visual_style)
        if not strips:
            return Strip.blank(width, self.visual_style.rich_style)
        # Rendered alone, the row thinks it is line 0: the offsets a mouse selection reads
        # must say which row it is.
        return strips[0].apply_offsets(0, y)
