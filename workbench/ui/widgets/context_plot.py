"""A bar plot of the context size before every API call, drawn with block characters.

Why draw it here rather than use a plotting widget: the plot needs the theme's own colours
(bars shade by ladder zone, threshold lines in the rung colours) and compaction markers
between bars, which neither plotext-based widgets (their own palette) nor a new dependency
would give more simply. Eighth blocks give each bar 8 steps per row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from workbench.ui.widgets.token_bars import short_tokens

if TYPE_CHECKING:
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.thresholds import Thresholds

VERTICAL_EIGHTHS = " ▁▂▃▄▅▆▇█"
GUTTER = 6
"""Width of the y-axis labels on the left."""
MAX_COLUMN = 3
"""Widest a single call's column grows when there are few calls."""


@dataclass(frozen=True)
class ThresholdLine:
    """A horizontal rung line across the plot."""

    name: str
    tokens: int
    glyph: str
    style: str


@dataclass(frozen=True)
class PlotSeries:
    """What the plot draws: one value per API call, the boundaries between them, and "now"."""

    values: tuple[int, ...]
    """Context size (tokenCountWithEstimation) just before each API call."""
    segments: tuple[int, ...]
    """How many compact boundaries precede each call."""
    compactions: tuple[str | None, ...] = ()
    """The trigger (`auto`, `manual`) of each boundary, in file order."""
    fires: frozenset[int] = field(default_factory=frozenset)
    """Calls where auto-compaction would fire but the transcript records none."""
    now: int | None = None
    """The count right now (the live gauge reading), drawn as the last column."""
    lines: tuple[ThresholdLine, ...] = ()
    top: int = 1
    """The value at the top of the plot (the effective window, or more)."""

    @classmethod
    def from_replay(cls, replay: ReplayReport, *, now: int | None = None) -> PlotSeries:
        """The series for a replay, with the ladder of its model."""
        turns = replay.turns
        return cls(
            values=tuple(t.estimated_before for t in turns),
            segments=tuple(t.segment for t in turns),
            compactions=tuple(c.trigger for c in replay.compactions),
            fires=frozenset(p.turn for p in replay.unrecorded_fires),
            now=replay.final_tokens if now is None else now,
            lines=threshold_lines(replay.thresholds),
            top=plot_top(replay.thresholds, [*(t.estimated_before for t in turns), now or 0]),
        )

    def with_now(self, now: int) -> PlotSeries:
        """The same series with a new live reading."""
        from dataclasses import replace

        return replace(self, now=now, top=max(self.top, now))


def threshold_lines(thresholds: Thresholds) -> tuple[ThresholdLine, ...]:
    """Warning, auto-compact (when on) and blocking (where the release blocks), as lines."""
    t = thresholds
    lines = [ThresholdLine("warning", t.warning, "╌", "$warning")]
    if t.auto_compact_enabled:
        lines.append(ThresholdLine("auto-compact", t.autocompact, "╌", "$error"))
    if t.blocking_enabled:
        lines.append(ThresholdLine("blocking", t.blocking, "─", "$text-error"))
    return tuple(lines)


def plot_top(thresholds: Thresholds, values: list[int]) -> int:
    """The effective window, unless a value or the blocking limit goes past it."""
    return max(thresholds.effective_window, thresholds.blocking, *values, 1)


@dataclass(frozen=True)
class _Column:
    kind: str
    """`bar`, `now` or `boundary`."""
    value: int = 0
    trigger: str | None = None
    fire: bool = False


def _items(series: PlotSeries) -> list[_Column]:
    """Bars in call order with a boundary column wherever a compaction sits between calls."""
    items: list[_Column] = []
    boundary = 0
    for index, (value, segment) in enumerate(zip(series.values, series.segments, strict=True)):
        while boundary < segment:
            items.append(_Column("boundary", trigger=_trigger(series, boundary)))
            boundary += 1
        items.append(_Column("bar", value, fire=index in series.fires))
    while boundary < len(series.compactions):
        items.append(_Column("boundary", trigger=_trigger(series, boundary)))
        boundary += 1
    if series.now is not None:
        items.append(_Column("now", series.now))
    return items


def _trigger(series: PlotSeries, index: int) -> str | None:
    return series.compactions[index] if index < len(series.compactions) else None


def _fit(items: list[_Column], width: int) -> tuple[list[_Column], int]:
    """Columns that fit `width` cells, and how wide each bar is drawn.

    Few calls get wider bars; too many are bucketed (each bucket shows its largest value),
    never across a boundary, and if still too wide the oldest columns are dropped.
    """
    bars = sum(1 for item in items if item.kind != "boundary")
    boundaries = len(items) - bars
    if bars == 0:
        return items[-width:], 1
    room = max(1, width - boundaries)
    if bars <= room:
        return items, max(1, min(MAX_COLUMN, room // bars))
    per_bucket = math.ceil(bars / room)
    fitted: list[_Column] = []
    bucket: list[_Column] = []

    def flush() -> None:
        if bucket:
            fitted.append(
                _Column("bar", max(b.value for b in bucket), fire=any(b.fire for b in bucket))
            )
            bucket.clear()

    for item in items:
        if item.kind == "bar":
            bucket.append(item)
            if len(bucket) == per_bucket:
                flush()
        else:
            flush()
            fitted.append(item)
    flush()
    return fitted[-width:], 1


def _zone_style(value: float, lines: tuple[ThresholdLine, ...], base: str) -> str:
    """Bars take the colour of the highest line their cell sits above."""
    style = base
    for line in sorted(lines, key=lambda item: item.tokens):
        if value >= line.tokens and line.name != "blocking":
            style = line.style
    return style


def plot_lines(series: PlotSeries, width: int, height: int) -> list[Content]:
    """The plot as `height` lines of `width` cells: bars, axis, legend."""
    plot_rows = max(2, height - 2)
    area = max(1, width - GUTTER)
    columns, bar_width = _fit(_items(series), area)
    top = max(series.top, 1)

    # Which row each threshold line falls in (several may share one; the higher one wins).
    line_rows = _line_rows(series.lines, top, plot_rows)
    scale = _Scale(line_rows, top, plot_rows)

    rows: list[Content] = []
    for row in range(plot_rows - 1, -1, -1):
        line = line_rows.get(row)
        if line is not None:
            gutter = Content.styled(f"{short_tokens(line.tokens):>{GUTTER - 1}} ", line.style)
        elif row == plot_rows - 1:
            gutter = Content.styled(f"{short_tokens(top):>{GUTTER - 1}} ", "$foreground-muted")
        else:
            gutter = Content(" " * GUTTER)
        row_top = scale.tokens_at((row + 1) * 8)
        cells: list[tuple[str, str]] = []
        for column in columns:
            span = 1 if column.kind == "boundary" else bar_width
            if column.kind == "boundary":
                style = "$accent" if column.trigger == "auto" else "$secondary"
                cells.append(("┊", style))
                continue
            fill = max(0, min(8, scale.eighths(column.value) - row * 8))
            if column.value > 0 and row == 0:
                fill = max(1, fill)
            base = "$primary" if column.kind == "bar" else "$text-accent"
            # A cell takes the zone of the highest value it shows.
            cell_top = min(column.value, row_top)
            style = _zone_style(cell_top, series.lines, base) if column.kind == "bar" else base
            drawn = span - 1 if span > 1 else span
            if fill:
                cells.append((VERTICAL_EIGHTHS[fill] * drawn, style))
            elif line is not None:
                cells.append((line.glyph * drawn, line.style))
            else:
                cells.append((" " * drawn, ""))
            if span > 1:
                gap = line.glyph if line is not None and not fill else " "
                cells.append((gap, line.style if line is not None else ""))
        used = sum(len(text) for text, _ in cells)
        if line is not None and used < area:
            cells.append((line.glyph * (area - used), line.style))
        rows.append(Content.assemble(gutter, *cells))
    rows.append(_axis(columns, bar_width))
    rows.append(_legend(series, width))
    return rows


class _Scale:
    """Token counts to heights in eighths of a row, straight between fixed points: nothing at
    0, each threshold line at the foot of its row, the top value at the top.

    With every line at its true height this is one straight scale. Where lines were spread
    apart to stay readable, the bars bend with them, so a bar reaches a line's row exactly
    when its value reaches that line (a straight scale would draw it through lines it is
    below)."""

    def __init__(self, line_rows: dict[int, ThresholdLine], top: int, rows: int) -> None:
        points = [(0, 0)]
        for row, line in sorted(line_rows.items()):
            if points[-1][0] < line.tokens < top and points[-1][1] <= row * 8:
                points.append((line.tokens, row * 8))
        points.append((top, rows * 8))
        self._points = points

    def eighths(self, tokens: int) -> int:
        """How many eighths of a row a bar of `tokens` fills, from the bottom."""
        points = self._points
        for (low, low_at), (high, high_at) in zip(points, points[1:], strict=False):
            if tokens <= high:
                return round(low_at + (tokens - low) / (high - low) * (high_at - low_at))
        return points[-1][1]

    def tokens_at(self, eighths: int) -> float:
        """The token count a bar must reach to fill `eighths` (the inverse of `eighths`)."""
        points = self._points
        for (low, low_at), (high, high_at) in zip(points, points[1:], strict=False):
            if eighths <= high_at and high_at > low_at:
                return low + (eighths - low_at) / (high_at - low_at) * (high - low)
        return points[-1][0]


def _line_rows(lines: tuple[ThresholdLine, ...], top: int, rows: int) -> dict[int, ThresholdLine]:
    """The row of each threshold line. Lines closer than a row apart are spread over
    neighbouring rows (order kept) so each stays visible; the gutter gives exact values."""
    placed: dict[int, ThresholdLine] = {}
    wanted = [
        (min(rows - 1, int(line.tokens / top * rows)), line)
        for line in sorted(lines, key=lambda item: item.tokens)
    ]
    taken: list[int] = []
    for row, _line in wanted:
        if taken and row <= taken[-1]:
            row = taken[-1] + 1
        taken.append(row)
    # Anything pushed past the top slides back down, keeping one row per line if possible.
    for index in range(len(taken) - 1, -1, -1):
        ceiling = rows - 1 - (len(taken) - 1 - index)
        taken[index] = max(0, min(taken[index], ceiling))
    for row, (_wanted, line) in zip(taken, wanted, strict=True):
        placed[row] = line
    return placed


def _axis(columns: list[_Column], bar_width: int) -> Content:
    pieces: list[tuple[str, str]] = [(f"{'0':>{GUTTER - 1}} ", "$foreground-muted")]
    for column in columns:
        if column.kind == "boundary":
            mark = "◆" if column.trigger == "auto" else "◇"
            pieces.append((mark, "$accent" if column.trigger == "auto" else "$secondary"))
        elif column.fire:
            pieces.append(("▲".ljust(bar_width), "bold $error"))
        elif column.kind == "now":
            pieces.append(("▔".ljust(bar_width), "$text-accent"))
        else:
            pieces.append(
                ("▔" * max(1, bar_width - 1) + (" " if bar_width > 1 else ""), "$foreground-muted")
            )
    return Content.assemble(*pieces)


def _legend(series: PlotSeries, width: int) -> Content:
    """What each mark means, as many entries as fit in `width`."""
    entries: list[tuple[tuple[str, str], str]] = [(("█", "$primary"), "before each call")]
    if series.now is not None:
        entries.append((("█", "$text-accent"), "now"))
    entries += [((line.glyph * 2, line.style), line.name) for line in series.lines]
    if series.compactions:
        entries.append((("┊◆", "$accent"), "compaction"))
    if series.fires:
        entries.append((("▲", "bold $error"), "would auto-compact"))
    legend = Content(" " * GUTTER)
    for mark, name in entries:
        entry = Content.assemble(mark, (f" {name}  ", "$foreground-muted"))
        if legend.cell_length + entry.cell_length - 2 > width:
            break
        legend += entry
    return legend


class ContextPlot(Widget):
    """Context size per API call with the ladder's lines and compactions marked."""

    DEFAULT_CSS = """
    ContextPlot {
        height: 1fr;
        min-height: 8;
        width: 1fr;
    }
    """

    series: reactive[PlotSeries | None] = reactive(None)
    """The data drawn (None while the transcript is being replayed)."""
    message: reactive[str] = reactive("Replaying the transcript…")
    """What to say while there is no series."""

    def render(self) -> Content:
        if self.series is None:
            return Content.styled(self.message, "$foreground-muted")
        if not self.series.values and self.series.now is None:
            return Content.styled(
                "No API call with usage in this transcript yet.", "$foreground-muted"
            )
        size = self.size
        return Content("\n").join(plot_lines(self.series, size.width, size.height))
