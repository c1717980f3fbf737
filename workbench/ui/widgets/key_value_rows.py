"""Key/value rows whose long values wrap under the value column.

A `Static` holding `key  value` lines wraps a long value back to the left edge, under the
keys, where it reads as a key of its own. Here the keys share one column and each value is
wrapped to the width left beside it, its later lines indented to where it began.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.geometry import Size

GAP = 2
"""Cells between the key column and the values."""
MIN_VALUE_WIDTH = 12
"""Narrower than this beside the keys, a value wraps at this width (and is cropped): a value
folded a few cells at a time reads worse than one cut at the edge."""


class KeyValueRows(Widget):
    """Lines above (notes), then `key  value` rows (see the module's docstring)."""

    DEFAULT_CSS = """
    KeyValueRows { height: auto; text-wrap: nowrap; }
    """

    def __init__(
        self,
        *,
        key_style: str = "$text-secondary",
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._key_style = key_style
        self._notes: tuple[Content, ...] = ()
        self._rows: tuple[tuple[str, Content], ...] = ()
        self._laid_out: tuple[int, list[Content]] | None = None

    def set_rows(
        self, rows: Sequence[tuple[str, Content | str]], notes: Sequence[Content] = ()
    ) -> None:
        """Show these rows, after `notes` (whole lines, wrapped as a Static wraps them)."""
        self._notes = tuple(notes)
        self._rows = tuple(
            (key, Content(value) if isinstance(value, str) else value) for key, value in rows
        )
        self._laid_out = None
        self.refresh(layout=True)

    @property
    def plain(self) -> str:
        """The rows as plain text, one `key  value` line a row (for tests and copying)."""
        width = self._key_width()
        lines = [note.plain for note in self._notes]
        lines += [f"{key.ljust(width)}{' ' * GAP}{value.plain}" for key, value in self._rows]
        return "\n".join(lines)

    def _key_width(self) -> int:
        return max((Content(key).cell_length for key, _ in self._rows), default=0)

    def _lines(self, width: int) -> list[Content]:
        if self._laid_out is not None and self._laid_out[0] == width:
            return self._laid_out[1]
        lines: list[Content] = []
        for note in self._notes:
            lines.extend(note.wrap(max(width, 1)))
        key_width = self._key_width()
        indent = key_width + GAP
        value_width = max(width - indent, MIN_VALUE_WIDTH)
        for key, value in self._rows:
            wrapped = value.wrap(value_width) if value else [Content("")]
            head = Content.styled(key.ljust(key_width) + " " * GAP, self._key_style)
            lines.append(head + wrapped[0])
            lines.extend(Content(" " * indent) + line for line in wrapped[1:])
        self._laid_out = (width, lines)
        return lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.content_region.width))
