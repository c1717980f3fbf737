"""A one-line proportional bar: coloured parts against a scale, with ticks for thresholds.

Used for token splits (kept / summarised / restored against the auto-compact threshold) and
byte budgets. The bar fills the widget's width, so it reads the same in a narrow pane and a
wide one; every non-zero part gets at least one cell so small parts never vanish.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

TRACK_CHAR = "─"


@dataclass(frozen=True)
class BarPart:
    """One coloured stretch of the bar."""

    value: float
    style: str
    """A Content style, colours only through theme variables (e.g. `$success`)."""
    char: str = "█"


@dataclass(frozen=True)
class BarMark:
    """A tick drawn over the bar at a value (a threshold, a budget)."""

    value: float
    style: str
    char: str = "┃"


def allocate(values: Sequence[float], scale: float, width: int) -> list[int]:
    """Cells for each value on a bar `width` cells wide that represents `scale`.

    Largest-remainder rounding keeps the total exact; a non-zero value gets at least one
    cell (taken from the largest part) so it stays visible.
    """
    if width <= 0 or scale <= 0:
        return [0] * len(values)
    clipped: list[float] = []
    room = scale
    for value in values:
        share = max(0.0, min(value, room))
        clipped.append(share)
        room -= share
    exact = [v / scale * width for v in clipped]
    cells = [int(e) for e in exact]
    spare = min(width, round(sum(exact))) - sum(cells)
    order = sorted(range(len(exact)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: max(0, spare)]:
        cells[i] += 1
    for i, value in enumerate(clipped):
        if value > 0 and cells[i] == 0:
            donor = max(range(len(cells)), key=lambda j: cells[j])
            if cells[donor] > 1:
                cells[donor] -= 1
                cells[i] = 1
            elif sum(cells) < width:
                cells[i] = 1
    return cells


def mark_column(value: float, scale: float, width: int) -> int | None:
    """The cell a tick at `value` falls in, or None when it is off the bar."""
    if width <= 0 or scale <= 0 or value < 0 or value > scale:
        return None
    return min(width - 1, int(value / scale * width))


class SplitBar(Widget):
    """Coloured parts laid end to end on a track, scaled to the widget's width."""

    DEFAULT_CSS = """
    SplitBar {
        height: 1;
        width: 1fr;
        min-width: 8;
    }
    """

    parts: reactive[tuple[BarPart, ...]] = reactive(tuple)
    """The stretches, left to right."""
    marks: reactive[tuple[BarMark, ...]] = reactive(tuple)
    """Ticks drawn over the parts and the track."""
    scale: reactive[float] = reactive(0.0)
    """The value the full width stands for (0: the sum of the parts)."""
    track_style: reactive[str] = reactive("$foreground 20%")
    """Style of the empty track past the parts."""

    def update_bar(
        self,
        parts: Sequence[BarPart],
        *,
        scale: float = 0.0,
        marks: Sequence[BarMark] = (),
    ) -> None:
        """Replace everything the bar shows in one go."""
        self.set_reactive(SplitBar.parts, tuple(parts))
        self.set_reactive(SplitBar.marks, tuple(marks))
        self.set_reactive(SplitBar.scale, float(scale))
        self.refresh()

    def render(self) -> Content:
        width = self.content_size.width
        if width <= 0:
            return Content("")
        scale = self.scale or sum(p.value for p in self.parts) or 1.0
        cells = allocate([p.value for p in self.parts], scale, width)
        chars: list[tuple[str, str]] = []
        for part, count in zip(self.parts, cells, strict=True):
            chars.extend((part.char, part.style) for _ in range(count))
        chars.extend((TRACK_CHAR, self.track_style) for _ in range(width - len(chars)))
        for mark in self.marks:
            column = mark_column(mark.value, scale, width)
            if column is not None:
                chars[column] = (mark.char, mark.style)
        runs: list[tuple[str, str]] = []
        for char, style in chars:
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + char, style)
            else:
                runs.append((char, style))
        return Content.assemble(*runs)
