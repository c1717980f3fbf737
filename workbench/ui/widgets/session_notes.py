"""Widgets for a session's notes: section bars against the limits, and the update timeline.

Both draw to their own width, so the bars and the timeline use whatever room the pane gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from workbench.engine.context.views import MAX_SECTION_LENGTH, MAX_TOTAL_SESSION_MEMORY_TOKENS

if TYPE_CHECKING:
    from workbench.engine.context.session_memory import SessionMemoryReport, TriggerReport
from workbench.ui.widgets.token_bars import meter_bar

COUNT_WIDTH = 8
"""Room for a count such as ` 12,383`."""
NOTE_WIDTH = 24
"""Room for ` / 12,000  over by 5,705` after a count."""


def _layout(width: int) -> tuple[int, int]:
    """Label and bar widths for a given width."""
    label = 26 if width >= 90 else 21 if width >= 60 else 14
    bar = max(8, min(40, width - label - COUNT_WIDTH - NOTE_WIDTH))
    return label, bar


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width - 1 else text[: width - 2] + "…"


def total_line(report: SessionMemoryReport, width: int) -> Content:
    """The whole file against 12,000 tokens."""
    label_width, bar_width = _layout(width)
    limit = MAX_TOTAL_SESSION_MEMORY_TOKENS
    over = report.total_tokens > limit
    parts = [
        Content.styled("Total".ljust(label_width), "bold"),
        meter_bar(report.total_tokens, limit, bar_width, fill="$primary"),
        Content.styled(
            f"{report.total_tokens:>{COUNT_WIDTH},}", "bold $token-over-budget" if over else "bold"
        ),
        Content.styled(f" / {limit:,}", "$foreground-muted"),
    ]
    if over:
        parts.append(
            Content.styled(f"  over by {report.total_tokens - limit:,}", "bold $token-over-budget")
        )
    return Content.assemble(*parts)


def section_lines(report: SessionMemoryReport, width: int) -> list[Content]:
    """One row per section: name, bar against 2,000 tokens, count, and what is wrong."""
    label_width, bar_width = _layout(width)
    rows = [
        Content.assemble(
            ("Sections".ljust(label_width), "bold"),
            (f"each up to {MAX_SECTION_LENGTH:,} tokens", "$foreground-muted"),
        )
    ]
    for section in report.sections:
        name = _cut(section.header.removeprefix("# ").strip(), label_width).ljust(label_width)
        bar = meter_bar(section.tokens, MAX_SECTION_LENGTH, bar_width, fill="$secondary")
        count = f"{section.tokens:>{COUNT_WIDTH},}"
        if section.over_limit:
            over = f"  over by {section.tokens - MAX_SECTION_LENGTH:,}"
            rows.append(
                Content.assemble(
                    (name, "bold $token-over-budget"),
                    bar,
                    (count, "bold $token-over-budget"),
                    (over, "bold $token-over-budget"),
                )
            )
        elif section.is_template_only:
            rows.append(
                Content.assemble(
                    (name, "$foreground-muted"),
                    bar,
                    (count, "$foreground-muted"),
                    ("  template only", "$foreground-muted"),
                )
            )
        else:
            rows.append(Content.assemble(name, bar, count))
    return rows


class SectionBars(Widget):
    """The notes' total against 12,000 tokens and each section against 2,000."""

    DEFAULT_CSS = """
    SectionBars {
        height: auto;
    }
    """

    report: reactive[SessionMemoryReport | None] = reactive(None, layout=True)
    """The notes report drawn (None or a missing file draws nothing)."""

    def _lines(self, width: int) -> list[Content]:
        report = self.report
        if report is None or not report.exists:
            return []
        return [total_line(report, width), Content(""), *section_lines(report, width)]

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))


def timeline_lines(trigger: TriggerReport, messages: int, width: int) -> list[Content]:
    """The transcript as a track from its first to its last message (`messages` of them), with
    a numbered diamond wherever an update would fire."""
    start, end = "start ", " end"
    track_width = max(10, width - len(start) - len(end))
    track = ["─"] * track_width
    styles = ["$foreground-muted"] * track_width
    numbers = [" "] * track_width
    label_end = -1
    for number, point in enumerate(trigger.points, 1):
        col = min(track_width - 1, int(point.index / max(1, messages) * track_width))
        track[col] = "◆"
        styles[col] = "bold $accent"
        label = str(number)
        if col > label_end and col + len(label) <= track_width:
            numbers[col : col + len(label)] = list(label)
            label_end = col + len(label)
    line = Content.assemble(*zip(track, styles, strict=True))
    return [
        Content.assemble((start, "$foreground-muted"), line, (end, "$foreground-muted")),
        Content.assemble(" " * len(start), ("".join(numbers).rstrip(), "$text-accent")),
    ]


class TriggerTimeline(Widget):
    """Where session-memory updates would fire over the transcript."""

    DEFAULT_CSS = """
    TriggerTimeline {
        height: 2;
    }
    """

    trigger: reactive[TriggerReport | None] = reactive(None)
    """The evaluated trigger."""
    messages: reactive[int] = reactive(0)
    """Messages in the transcript (the track's length)."""

    def render(self) -> Content:
        if self.trigger is None or not self.trigger.points:
            return Content("")
        return Content("\n").join(timeline_lines(self.trigger, self.messages, self.size.width))
