"""The threshold ladder drawn as one horizontal bar.

The bar runs from 0 to the model's context window. The used count fills it from the left;
the track behind it is shaded by zone (calm, warning, past auto-compact, the output reserve);
each rung (warning / error, auto-compact, blocking, the effective window) is a tick with a
leader line down to its label, so rungs a few cells apart never overprint each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from workbench.ui.widgets.token_bars import EIGHTHS, filled_eighths, short_tokens

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.thresholds import Thresholds

BAR_ROWS = 2


@dataclass(frozen=True)
class Rung:
    """One threshold on the ladder."""

    label: str
    tokens: int
    style: str
    short: str = ""
    """A short name for narrow ladders."""


def ladder_rungs(thresholds: Thresholds) -> list[Rung]:
    """The rungs to draw, lowest first."""
    t = thresholds
    auto_label = (
        "auto-compact"
        if t.auto_compact_enabled
        else f"auto-compact off ({t.auto_compact_disabled_by})"
    )
    rungs = [Rung("warning / error" if t.error == t.warning else "warning", t.warning, "$warning")]
    # A model the release never compacts by threshold has no auto-compact rung, and
    # without a threshold there may be no client-side blocking either.
    if t.threshold_compaction:
        rungs.append(
            Rung(
                auto_label,
                t.autocompact,
                "$error" if t.auto_compact_enabled else "$foreground-muted",
            )
        )
    if t.blocking_enabled:
        rungs.append(Rung("blocking", t.blocking, "$text-error"))
    rungs.append(Rung("effective window", t.effective_window, "$text-primary"))
    if t.error != t.warning:
        rungs.append(Rung("error", t.error, "$warning"))
    return sorted(rungs, key=lambda rung: rung.tokens)


def fill_style(report: GaugeReport) -> str:
    """The colour of the used part: calm, warning, or past auto-compact / blocking."""
    state = report.state
    if state.at_blocking or state.above_autocompact:
        return "$error"
    if state.above_warning:
        return "$warning"
    return "$success"


def _zone(value: float, thresholds: Thresholds) -> tuple[str, str]:
    """The empty track at `value` tokens: its glyph and background."""
    t = thresholds
    if value >= t.effective_window:
        return "░", "$panel"
    if t.auto_compact_enabled and value >= t.autocompact:
        return " ", "$error-muted"
    if value >= t.warning:
        return " ", "$warning-muted"
    return " ", "$panel"


def _status(rung: Rung, used: int) -> str:
    return "reached" if used >= rung.tokens else f"{rung.tokens - used:,} to go"


def ladder_lines(report: GaugeReport, width: int) -> list[Content]:
    """The ladder as lines of `width` cells: the used marker, the bar, one leader row per rung."""
    if width < 20:
        return [Content(f"{report.used:,} used")]
    t = report.thresholds
    used = report.used
    scale = max(t.context_window, used, t.blocking, t.effective_window, 1)

    def column(tokens: int) -> int:
        return max(0, min(width - 1, int(tokens / scale * width)))

    rungs = ladder_rungs(t)
    columns = [column(rung.tokens) for rung in rungs]
    style = fill_style(report)
    eighths = filled_eighths(used, scale, width)
    full, part = divmod(eighths, 8)

    # The used marker, pointing at the end of the fill.
    tip = max(0, min(width - 1, full if part else full - 1))
    marker = f"▼ {used:,} used"
    if tip + len(marker) <= width:
        top = Content.assemble(" " * tip, (marker, f"bold {style}"))
    else:
        text = f"{used:,} used ▼"
        top = Content.assemble(" " * max(0, tip - len(text) + 1), (text, f"bold {style}"))

    cells: list[tuple[str, str]] = []
    for index in range(width):
        rung_here = next((r for r, c in zip(rungs, columns, strict=True) if c == index), None)
        glyph, background = _zone(index * scale / width, t)
        if index < full:
            cells.append(("│", f"$background on {style}") if rung_here else ("█", style))
        elif index == full and part:
            cells.append((EIGHTHS[part], f"{style} on {background}"))
        elif rung_here is not None:
            cells.append(("┃", f"bold {rung_here.style} on {background}"))
        else:
            cells.append((glyph, f"$foreground-muted on {background}"))
    bar = _merge(cells)
    lines = [top, *([bar] * BAR_ROWS)]
    lines.extend(_leader_rows(rungs, columns, used, width))
    return lines


def _leader_rows(rungs: list[Rung], columns: list[int], used: int, width: int) -> list[Content]:
    """One row per rung: a label ending at (or starting from) its tick, joined by a leader.

    Labels go left of their tick where they fit, taken from the leftmost rung up, so a label
    never crosses a leader that is still running down; the rest go right, rightmost first.
    """
    # One level of detail for every label: the most detailed at which each label fits.
    candidates = [
        (
            f"{rung.label} {rung.tokens:,} · {_status(rung, used)}",
            f"{rung.label} {rung.tokens:,}",
            f"{rung.short} {short_tokens(rung.tokens)}",
        )
        for rung in rungs
    ]

    def fits(label: str, col: int) -> bool:
        return col >= len(label) + 2 or width - col - 2 >= len(label)

    level = next(
        (
            level
            for level in range(3)
            if all(fits(c[level], col) for c, col in zip(candidates, columns, strict=True))
        ),
        2,
    )
    labels = [c[level] for c in candidates]
    lefts = [i for i, col in enumerate(columns) if col >= len(labels[i]) + 2]
    rights = sorted((i for i in range(len(rungs)) if i not in lefts), key=lambda i: -columns[i])
    lefts.sort(key=lambda i: columns[i])
    sequence = lefts + rights
    rows: list[Content] = []
    for row, index in enumerate(sequence):
        pending = {columns[i]: rungs[i].style for i in sequence[row + 1 :]}
        cells: list[tuple[str, str]] = [(" ", "")] * width
        for col, rung_style in pending.items():
            cells[col] = ("│", rung_style)
        col = columns[index]
        rung = rungs[index]
        label = labels[index]
        if index in lefts:
            start = col - len(label) - 1
            blocked = [c for c in pending if c < col]
            if blocked and max(blocked) >= start:
                start = max(blocked) + 2
                label = label[: max(0, col - start - 2)] + "…"
            for offset, char in enumerate(f"{label} "):
                cells[start + offset] = (char, rung.style)
            cells[col] = ("┘", rung.style)
        else:
            cells[col] = ("└", rung.style)
            room = width - col - 2
            if room < len(label):
                label = label[: max(0, room - 1)] + "…"
            for offset, char in enumerate(f" {label}"):
                if col + 1 + offset < width:
                    cells[col + 1 + offset] = (char, rung.style)
        rows.append(_merge(cells))
    return rows


def _merge(cells: list[tuple[str, str]]) -> Content:
    """Cells to Content, joining runs of one style into one span."""
    pieces: list[tuple[str, str]] = []
    for char, style in cells:
        if pieces and pieces[-1][1] == style:
            pieces[-1] = (pieces[-1][0] + char, style)
        else:
            pieces.append((char, style))
    return Content.assemble(*pieces)


class ThresholdLadder(Widget):
    """The gauge's threshold ladder for one reading."""

    DEFAULT_CSS = """
    ThresholdLadder {
        height: auto;
        width: 1fr;
    }
    """

    report: reactive[GaugeReport | None] = reactive(None, layout=True)
    """The gauge reading drawn."""

    def render(self) -> Content:
        if self.report is None:
            return Content.styled("Reading the transcript…", "$foreground-muted")
        return Content("\n").join(ladder_lines(self.report, self.size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.report is None:
            return 1
        return len(ladder_lines(self.report, width))
