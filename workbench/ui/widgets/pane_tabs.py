"""The pane tabs: every pane's title on one line and the bar under the one in front, drawn by
a single widget.

Textual's TabbedContent mounts a widget per tab, an underline widget and a pane wrapper per
tab, and restyles them on every change; measured on `workbench demo` the tab machinery cost
about 45 ms of the first full paint. This strip only draws text: ←/→ (while it has the focus)
and clicks pick a tab, and the screen is told with `PaneTabs.Activated`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

TAB_PADDING = 1
"""Cells of space each side of a title."""


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
        id: str | None = None,  # noqa: A002 - Textual's keyword
    ) -> None:
        """`tabs` are (id, title) pairs in order."""
        super().__init__(id=id)
        self._tabs = tuple(tabs)
        self._spans: list[tuple[int, int]] = []
        start = 0
        for _tab_id, title in self._tabs:
            width = Content(title).cell_length + 2 * TAB_PADDING
            self._spans.append((start, start + width))
            start += width
        self.set_reactive(PaneTabs.active, active or (self._tabs[0][0] if self._tabs else ""))

    @property
    def tab_ids(self) -> tuple[str, ...]:
        """Every tab id, in order."""
        return tuple(tab_id for tab_id, _title in self._tabs)

    def span_of(self, tab_id: str) -> tuple[int, int]:
        """The cells [start, end) a tab's title takes on the first line."""
        return self._spans[self.tab_ids.index(tab_id)]

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
        for (tab_id, _title), (start, end) in zip(self._tabs, self._spans, strict=True):
            if start <= event.x < end:
                event.stop()
                self._activate(tab_id)
                return

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            tab_style = self.get_visual_style("pane-tabs--tab", partial=True)
            active_style = self.get_visual_style("pane-tabs--active", partial=True)
            pad = " " * TAB_PADDING
            line = Content.assemble(
                *(
                    (f"{pad}{title}{pad}", active_style if tab_id == self.active else tab_style)
                    for tab_id, title in self._tabs
                )
            )
        elif y == 1:
            bar_style = self.get_visual_style("pane-tabs--bar", partial=True)
            lit_style = self.get_visual_style("pane-tabs--highlight", partial=True)
            start, end = self.span_of(self.active) if self.active in self.tab_ids else (0, 0)
            end = min(end, width)
            line = Content.assemble(
                ("━" * min(start, width), bar_style),
                ("━" * max(end - start, 0), lit_style),
                ("━" * max(width - max(end, start), 0), bar_style),
            )
        else:
            return Strip.blank(width, self.rich_style)
        segments = line.truncate(width, pad=True).render_segments(self.visual_style)
        return Strip(segments, width)
