"""A unified diff, wrapped to the widget's width, with line numbers and full-width colouring.

A `Static` could colour the text of an added line but not the rest of the row; this Line API
widget pads every row to the edge so added and removed lines read as bands, as they do in
review tools. Colours come from the component classes below, which use theme variables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

LineKind = Literal["header", "hunk", "added", "removed", "context", "note"]

REDACTED = "[REDACTED]"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_MARKERS: dict[str, str] = {"added": "+", "removed": "−", "context": " "}


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff, without its `+`/`-`/space marker."""

    kind: LineKind
    text: str
    old: int | None = None
    """Line number in the old file (removed and context lines)."""
    new: int | None = None
    """Line number in the new file (added and context lines)."""


def parse_unified_diff(diff: str) -> list[DiffLine]:
    """Split a unified diff into typed lines with old/new line numbers.

    Hunk headers carry line counts, so a removed line whose text starts with `-- ` is never
    mistaken for a `--- a/file` header.
    """
    lines: list[DiffLine] = []
    old = new = old_left = new_left = 0
    for raw in diff.splitlines():
        text = _CONTROL.sub("�", raw.expandtabs(4))
        if old_left <= 0 and new_left <= 0:
            match = _HUNK.match(text)
            if match:
                old, new = int(match.group(1)), int(match.group(3))
                old_left = 1 if match.group(2) is None else int(match.group(2))
                new_left = 1 if match.group(4) is None else int(match.group(4))
                lines.append(DiffLine("hunk", text))
            elif text.startswith("\\"):
                lines.append(DiffLine("note", text[1:].strip()))
            else:
                lines.append(DiffLine("header", text))
            continue
        marker, body = text[:1], text[1:]
        if marker == "+":
            lines.append(DiffLine("added", body, new=new))
            new += 1
            new_left -= 1
        elif marker == "-":
            lines.append(DiffLine("removed", body, old=old))
            old += 1
            old_left -= 1
        elif marker == "\\":
            lines.append(DiffLine("note", text[1:].strip()))
        else:
            lines.append(DiffLine("context", body, old=old, new=new))
            old += 1
            new += 1
            old_left -= 1
            new_left -= 1
    return lines


@dataclass(frozen=True)
class _Row:
    """One screen row: a whole diff line or a wrapped continuation of one."""

    line: DiffLine
    text: str
    first: bool


class DiffView(ScrollView, can_focus=True):
    """Shows one unified diff; `set_diff` replaces it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--added",
        "diff-view--removed",
        "diff-view--hunk",
        "diff-view--header",
        "diff-view--note",
        "diff-view--gutter",
        "diff-view--redacted",
    }

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        background: $surface;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        & > .diff-view--added { background: $diff-added; color: $text-success; }
        & > .diff-view--removed { background: $diff-removed; color: $text-error; }
        & > .diff-view--hunk { color: $text-secondary; background: $boost; }
        & > .diff-view--header { color: $foreground-muted; text-style: bold; }
        & > .diff-view--note { color: $foreground-muted; text-style: italic; }
        & > .diff-view--gutter { color: $foreground-muted; }
        & > .diff-view--redacted { color: $text-warning; text-style: bold reverse; }
        &:focus { background-tint: $foreground 3%; }
    }
    """

    def __init__(
        self,
        diff: str = "",
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[DiffLine] = parse_unified_diff(diff)
        self._rows: list[_Row] = []
        self._wrapped_at = -1

    @property
    def lines(self) -> list[DiffLine]:
        """The parsed diff."""
        return list(self._lines)

    def set_diff(self, diff: str) -> None:
        """Show another diff, scrolled to the top."""
        self._lines = parse_unified_diff(diff)
        self._wrapped_at = -1
        self._rewrap()
        self.scroll_home(animate=False)

    # --- layout ----------------------------------------------------------------------

    def _gutter_width(self) -> int:
        biggest = max((n for line in self._lines for n in (line.old, line.new) if n), default=1)
        return max(3, len(str(biggest)))

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        self._wrapped_at = width
        text_width = max(8, width - (self._gutter_width() * 2 + 4))
        rows: list[_Row] = []
        for line in self._lines:
            full = line.kind in ("header", "hunk", "note")
            chunks = chop_cells(line.text, width if full else text_width) or [""]
            rows.extend(_Row(line, chunk, index == 0) for index, chunk in enumerate(chunks))
        self._rows = rows
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._wrapped_at:
            self._rewrap()

    # --- rendering -------------------------------------------------------------------

    def _line_style(self, kind: LineKind) -> Style:
        base = self.rich_style
        if kind == "context":
            return base
        return base + self.get_component_rich_style(f"diff-view--{kind}")

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if self._wrapped_at != width:
            self._rewrap()
        index = self.scroll_offset.y + y
        base = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        row = self._rows[index]
        style = self._line_style(row.line.kind)
        segments: list[Segment] = []
        if row.line.kind in ("added", "removed", "context"):
            digits = self._gutter_width()
            gutter = self.get_component_rich_style("diff-view--gutter")
            gutter_style = style + Style(color=gutter.color)
            if row.first:
                old = "" if row.line.old is None else str(row.line.old)
                new = "" if row.line.new is None else str(row.line.new)
                numbers = f"{old:>{digits}} {new:>{digits}} "
                marker = _MARKERS[row.line.kind]
            else:
                numbers, marker = " " * (digits * 2 + 2), " "
            segments.append(Segment(numbers, gutter_style))
            segments.append(Segment(f"{marker} ", style + Style(bold=True)))
        segments.extend(self._text_segments(row.text, style))
        used = sum(cell_len(segment.text) for segment in segments)
        if used < width:
            segments.append(Segment(" " * (width - used), style))
        return Strip(segments).crop_extend(0, width, style)

    def _text_segments(self, text: str, style: Style) -> list[Segment]:
        if REDACTED not in text:
            return [Segment(text, style)]
        redacted = style + self.get_component_rich_style("diff-view--redacted")
        segments: list[Segment] = []
        for index, part in enumerate(text.split(REDACTED)):
            if index:
                segments.append(Segment(REDACTED, redacted))
            if part:
                segments.append(Segment(part, style))
        return segments
