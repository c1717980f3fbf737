"""The pane tabs: every pane's title on one line and the bar under the one in front, drawn by
a single widget.

Textual's TabbedContent mounts a widget per tab, an underline widget and a pane wrapper per
tab, and restyles them on every change; measured on `workbench demo` the tab machinery cost
about 45 ms of the first full paint. This strip only draws text: ←/→ (while it has the focus)
and clicks pick a tab, and the screen is told with `PaneTabs.Activated`.

On a narrow screen the strip tightens (one space between titles, then the short titles), and
if even that does not fit it scrolls so the tab in front is always visible, with ‹ › marking
tabs off either edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

TAB_PADDING = 1
"""Cells of space each side of a title (the roomy layout)."""
MORE_LEFT, MORE_RIGHT = "‹", "›"


class PaneTabs(Widget, can_focus=True):
    """A one-line tab strip with an underline bar; `active` is the id of the tab in front."""

    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "previous_tab", "Previous tab", show=False),
        Binding("right", "next_tab", "Next tab", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pane-tabs--tab",
        "pane-tabs--active",
        "pane-tabs--bar",
        "pane-tabs--highlight",
    }
    DEFAULT_CSS = """
    PaneTabs {
        width: 1fr;
        height: 2;
        & > .pane-tabs--tab { color: $foreground 50%; }
        & > .pane-tabs--active { color: $foreground; }
        & > .pane-tabs--bar { color: $foreground 10%; }
        & > .pane-tabs--highlight { color: $block-cursor-background; }
        &:focus {
            & > .pane-tabs--active {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
            & > .pane-tabs--bar { color: $foreground 30%; }
        }
        &:ansi {
            & > .pane-tabs--tab { text-style: dim; }
            & > .pane-tabs--active { text-style: not dim bold; }
            & > .pane-tabs--bar { color: $border-blurred; }
        }
    }
    """

    active: reactive[str] = reactive("", init=False)
    """The id of the tab in front."""

    class Activated(Message):
        """A tab was brought to the front by a click or a key."""

        def __init__(self, tabs: PaneTabs, tab_id: str) -> None:
            super().__init__()
            self.tabs = tabs
            self.tab_id = tab_id

        @property
        def control(self) -> PaneTabs:
            return self.tabs

    def __init__(
        self,
        tabs: Sequence[tuple[str, str]],
        *,
        active: str | None = None,
        short: Mapping[str, str] | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
    ) -> None:
        """`tabs` are (id, title) pairs in order; `short` titles (by id) serve narrow screens."""
        super().__init__(id=id)
        self._tabs = tuple(tabs)
        short = short or {}
        full = [title for _tab_id, title in self._tabs]
        brief = [short.get(tab_id, title) for tab_id, title in self._tabs]
        # Roomiest first: the first that fits the width is drawn.
        self._layouts: tuple[tuple[list[str], int, int], ...] = (
            (full, TAB_PADDING, TAB_PADDING),
            (full, 1, 0),
            (brief, 1, 0),
        )
        self._titles: list[str] = full
        self._pads = (TAB_PADDING, TAB_PADDING)
        self._spans: list[tuple[int, int]] = []
        self._offset = 0
        self._lay_out(full, TAB_PADDING, TAB_PADDING)
        self.set_reactive(PaneTabs.active, active or (self._tabs[0][0] if self._tabs else ""))

    def _lay_out(self, titles: list[str], left: int, right: int) -> int:
        self._titles, self._pads = titles, (left, right)
        self._spans = []
        start = 0
        for title in titles:
            width = Content(title).cell_length + left + right
            self._spans.append((start, start + width))
            start += width
        return start

    def on_resize(self) -> None:
        self._fit()

    def watch_active(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Pick the roomiest layout that fits, else scroll the active tab into view."""
        width = self.size.width
        if not width or not self._tabs:
            return
        for titles, left, right in self._layouts:
            if self._lay_out(titles, left, right) <= width:
                self._offset = 0
                break
        else:
            total = self._spans[-1][1]
            start, end = self.span_of(self.active) if self.active in self.tab_ids else (0, 0)
            # Keep a cell each side for the ‹ › marks.
            offset = min(self._offset, max(start - 1, 0))
            if end - offset > width - 1:
                offset = end - width + 1
            self._offset = max(0, min(offset, total - width + 1))
        self.refresh()

    @property
    def titles(self) -> tuple[str, ...]:
        """The titles as drawn now (short ones on a narrow screen)."""
        return tuple(self._titles)

    @property
    def tab_ids(self) -> tuple[str, ...]:
        """Every tab id, in order."""
        return tuple(tab_id for tab_id, _title in self._tabs)

    def span_of(self, tab_id: str) -> tuple[int, int]:
        """The cells [start, end) a tab's title takes on the first line (before scrolling)."""
        return self._spans[self.tab_ids.index(tab_id)]

    def visible_span(self, tab_id: str) -> tuple[int, int] | None:
        """Where a tab's title is on screen, or None while it is scrolled out of view."""
        start, end = self.span_of(tab_id)
        start, end = start - self._offset, end - self._offset
        if start < 0 or end > self.size.width:
            return None
        return start, end

    def _activate(self, tab_id: str) -> None:
        if tab_id != self.active:
            self.active = tab_id
            self.post_message(self.Activated(self, tab_id))

    def action_previous_tab(self) -> None:
        ids = self.tab_ids
        if ids:
            self._activate(ids[(ids.index(self.active) - 1) % len(ids)])

    def action_next_tab(self) -> None:
        ids = self.tab_ids
        if ids:
            self._activate(ids[(ids.index(self.active) + 1) % len(ids)])

    def on_click(self, event: events.Click) -> None:
        if event.y != 0:
            return
        if self._offset and event.x == 0:
            event.stop()
            self.action_previous_tab()
            return
        if event.x == self.size.width - 1 and self._spans[-1][1] - self._offset > self.size.width:
            event.stop()
            self.action_next_tab()
            return
        x = event.x + self._offset
        for (tab_id, _title), (start, end) in zip(self._tabs, self._spans, strict=True):
            if start <= x < end:
                event.stop()
                self._activate(tab_id)
                return

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        offset = self._offset
        if y == 0:
            tab_style = self.get_visual_style("pane-tabs--tab", partial=True)
            active_style = self.get_visual_style("pane-tabs--active", partial=True)
            left, right = (" " * pad for pad in self._pads)
            line = Content.assemble(
                *(
                    (f"{left}{title}{right}", active_style if tab_id == self.active else tab_style)
                    for (tab_id, _full), title in zip(self._tabs, self._titles, strict=True)
                )
            )
            if offset or line.cell_length > width:
                line = line[offset:]
                more = self.get_visual_style("pane-tabs--tab", partial=True)
                if offset:
                    line = Content.styled(MORE_LEFT, more) + line[1:]
                if line.cell_length > width:
                    line = line[: width - 1] + Content.styled(MORE_RIGHT, more)
        elif y == 1:
            bar_style = self.get_visual_style("pane-tabs--bar", partial=True)
            lit_style = self.get_visual_style("pane-tabs--highlight", partial=True)
            start, end = self.span_of(self.active) if self.active in self.tab_ids else (0, 0)
            start, end = max(start - offset, 0), max(min(end - offset, width), 0)
            line = Content.assemble(
                ("━" * min(start, width), bar_style),
                ("━" * max(end - start, 0), lit_style),
                ("━" * max(width - max(end, start), 0), bar_style),
            )
        else:
            return Strip.blank(width, self.rich_style)
        segments = line.truncate(width, pad=True).render_segments(self.visual_style)
        return Strip(segments, width)
