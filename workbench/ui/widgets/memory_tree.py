"""The memory tree: private, team and log groups with type badge, age, tokens and lint mark."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.engine.memories.models import MemoryEntry
from workbench.ui.formatting import (
    SEVERITY_MARKS,
    TYPE_BADGES,
    age_days,
    age_short,
    entry_matches,
    filter_terms,
    tokens_short,
    worst_severity,
)

GROUPS: tuple[tuple[str, str, str], ...] = (
    ("private", "Private", ""),
    ("team", "Team", "team/"),
    ("log", "Daily logs", "logs/"),
)
NodeData = MemoryEntry | str
# Columns after the name: "  12d" / " today" (6) + "  1.2k" (6) + " ▲" (2).
_TAIL_WIDTH = 14
_NARROW_TAIL_WIDTH = 8
"""A narrow tree (a small screen) drops the token column to keep room for names."""
NARROW_ROW = 40
BATCH_SIZE = 200
MAX_PER_GROUP = 1_000
"""A tree of 10,000 rows helps nobody and costs Tree a full re-layout per change; past this
the newest are shown and the filter (and the palette) reach the rest."""
MORE = "more"
NO_MATCH = "no-match"
BATCH_DELAY_S = 0.001


class MemoryTree(Tree[NodeData]):
    """A tree of memory files; leaves carry their `MemoryEntry`."""

    class Filled(Message):
        """Every leaf of the latest rebuild has been added (large trees fill in batches)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-tree--user",
        "memory-tree--feedback",
        "memory-tree--project",
        "memory-tree--reference",
        "memory-tree--untyped",
        "memory-tree--meta",
        "memory-tree--group",
        "memory-tree--error",
        "memory-tree--warning",
        "memory-tree--info",
    }
    DEFAULT_CSS = """
    MemoryTree {
        & > .memory-tree--meta { color: $foreground-muted; }
        & > .memory-tree--group { text-style: bold; }
    }
    """

    def __init__(
        self,
        *,
        now_ms: Callable[[], float] | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
    ) -> None:
        self._styles: dict[tuple[tuple[str, ...], bool], Style] = {}
        """Component styles (see `get_component_rich_style`)."""
        super().__init__("memories", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 3
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._entries: tuple[MemoryEntry, ...] = ()
        self._filter = ""
        self._generation = 0
        self._cursor_placed = False
        self._more_nodes: list[tuple[TreeNode[NodeData], str]] = []
        self.shown_count = 0
        """How many memories pass the filter."""
        self._leaf_width = 24
        self._leaf_width_for: object = None
        self.filled = False
        """Every leaf of the latest rebuild has been added (`Filled` is posted then too)."""

    @property
    def filter_text(self) -> str:
        """The filter as typed ("" when off)."""
        return self._filter

    @property
    def entries(self) -> tuple[MemoryEntry, ...]:
        """Every memory the tree knows, before filtering."""
        return self._entries

    def set_entries(self, entries: Iterable[MemoryEntry], *, keep: str | None = None) -> None:
        """Replace the memories, keeping the cursor on `keep` (a path) when it is still there."""
        self._entries = tuple(entries)
        self._rebuild(keep)

    def set_filter(self, text: str) -> None:
        """Show only memories matching every word of `text`."""
        if text == self._filter:
            return
        self._filter = text
        self._rebuild(self.selected_path)

    @property
    def selected_entry(self) -> MemoryEntry | None:
        """The memory under the cursor (None on a group row or an empty tree)."""
        node = self.cursor_node
        if node is not None and isinstance(node.data, MemoryEntry):
            return node.data
        return None

    @property
    def selected_path(self) -> str | None:
        """The path of the memory under the cursor."""
        entry = self.selected_entry
        return entry.path if entry is not None else None

    def neighbour_of(self, path: str) -> str | None:
        """The memory shown after `path` in its group (else the one before): where the cursor
        goes once `path` is deleted."""
        for group in self.root.children:
            leaves = [n.data for n in group.children if isinstance(n.data, MemoryEntry)]
            paths = [entry.path for entry in leaves]
            if path in paths:
                position = paths.index(path)
                rest = paths[position + 1 :] or paths[:position][-1:]
                return rest[0] if rest else None
        return None

    def select_path(self, path: str) -> bool:
        """Move the cursor to the memory at `path`; False when it is not shown."""
        for group in self.root.children:
            for node in group.children:
                if isinstance(node.data, MemoryEntry) and node.data.path == path:
                    group.expand()
                    self.move_cursor(node)
                    return True
        return False

    def _rebuild(self, keep: str | None) -> None:
        terms = filter_terms(self._filter)
        previously_collapsed = {group.data for group in self.root.children if not group.is_expanded}
        self._generation += 1
        self._cursor_placed = False
        self.filled = False
        self._more_nodes = []
        self.clear()
        pending: list[tuple[TreeNode[NodeData], list[MemoryEntry]]] = []
        shown = 0
        for scope, title, _prefix in GROUPS:
            members = [e for e in self._entries if e.scope == scope and entry_matches(e, terms)]
            if not members and scope != "private":
                continue
            group = self.root.add(
                f"{title} ({len(members)})", scope, expand=scope not in previously_collapsed
            )
            pending.append((group, members[:MAX_PER_GROUP]))
            if len(members) > MAX_PER_GROUP:
                hidden = len(members) - MAX_PER_GROUP
                # Added after the batches (see _add_batch); the filter reaches every memory.
                self._more_nodes.append((group, f"… {hidden:,} older · the filter finds them"))
            shown += len(members)
        if terms and not shown and self.root.children:
            # An empty result says so, rather than only "Private (0)".
            self.root.children[0].add_leaf(
                f"No memory matches “{self._filter.strip()}” · Esc clears the filter", NO_MATCH
            )
        self.shown_count = shown
        self._add_batch(self._generation, pending, keep)

    def _add_batch(
        self,
        generation: int,
        pending: list[tuple[TreeNode[NodeData], list[MemoryEntry]]],
        keep: str | None,
    ) -> None:
        # Every added node invalidates the tree, so thousands of them are added a batch per
        # tick: the screen keeps answering keys while a 10,000-memory tree fills in.
        if generation != self._generation:
            return  # a newer rebuild (a scan or a keystroke in the filter) replaced this one
        budget = BATCH_SIZE
        target: TreeNode[NodeData] | None = None
        while pending and budget:
            group, members = pending[0]
            take, rest = members[:budget], members[budget:]
            for entry in take:
                node = group.add_leaf(entry.path, entry)
                if entry.path == keep:
                    target = node
            budget -= len(take)
            if rest:
                pending[0] = (group, rest)
            else:
                pending.pop(0)
        if not self._cursor_placed:
            if target is None and (keep is None or not pending):
                # No wish, or the wished-for path is gone: the newest memory.
                target = next((g.children[0] for g in self.root.children if g.children), None)
            if target is not None:
                self._cursor_placed = True
                # Reading `last_line` lays the lines out now, so the cursor lands on this very
                # frame (at start-up, the first one) rather than on the next.
                _ = self.last_line
                line = self.cursor_line
                if self.size.height:
                    self.move_cursor(target)
                else:
                    # Not laid out yet (a scan read ahead of the first frame). Scrolling
                    # the cursor into a window of no height would scroll it to the top
                    # row, hiding its group's title for good; once laid out, the window
                    # starts at the top and scrolls only if the cursor is below it.
                    self.cursor_line = target.line
                    self.call_after_refresh(self._reveal_cursor)
                if self.cursor_line == line:
                    # Tree only says "highlighted" when the line number changes; a rebuild
                    # can put another memory on the same line (a new file, a rename, a
                    # delete), and the viewer must follow it.
                    self.post_message(self.NodeHighlighted(target))
        if pending:
            self.set_timer(BATCH_DELAY_S, partial(self._add_batch, generation, pending, keep))
            return
        for group, label in self._more_nodes:
            group.add_leaf(label, MORE)
        self.filled = True
        self._freeze_objects()
        self.post_message(self.Filled())

    def _reveal_cursor(self) -> None:
        node = self.cursor_node
        if node is not None:
            self.scroll_to_node(node, animate=False)

    _frozen: ClassVar[bool] = False

    @classmethod
    def _freeze_objects(cls) -> None:
        # What is alive once the tree first fills (the app, the scan, 10,000 entries and
        # their nodes) mostly stays alive, yet every full garbage collection walked it all
        # again: 100-300 ms with the GIL held, a frozen frame while a pane loaded. Frozen
        # objects are left out of collections. Once per process: the price is that the
        # first tree's nodes, if a rebuild replaces them, are never reclaimed.
        if not cls._frozen:
            cls._frozen = True
            gc.freeze()

    # --- rendering ---------------------------------------------------------------------

    def process_label(self, label: str | Text) -> Text:
        # Labels are file names and counts: `note[n0].md` is a name, not a style tag.
        return super().process_label(Text(label) if isinstance(label, str) else label)

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        # Leaves are padded to the widget's width, so measuring each one (which Tree does for
        # every line when it lays out) would render 10,000 labels for nothing.
        data = node.data
        if isinstance(data, MemoryEntry) or data in (MORE, NO_MATCH):
            # Tree asks once per line while it rebuilds its line list; the width is worked out
            # once per rebuild (a region computation each time cost ~0.2 s per 10,000 lines).
            lines = self._tree_lines_cached
            if lines is None or self._leaf_width_for is not lines:
                self._leaf_width = max(24, self.scrollable_content_region.width - self.guide_depth)
                self._leaf_width_for = lines
            if isinstance(data, MemoryEntry):
                return self._leaf_width
            # A note row is cut to the leaves' width (see render_label): one wider line would
            # give the tree a horizontal scrollbar, and every cursor move would redraw it.
            return min(self._leaf_width, super().get_label_width(node))
        return super().get_label_width(node)

    def watch_show_vertical_scrollbar(self) -> None:
        # Leaves are as wide as the viewport: when the scrollbar comes or goes (no resize
        # happens then), lay the lines out again or they overflow and cut the lint column.
        self._invalidate()

    _pass_style: Style | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        # Tree looks its own style up again for every line, walking the ancestors each time;
        # once per pass is enough (a scrolled frame redraws every line from the line cache).
        self._pass_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        style = self._pass_style or self.rich_style
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width, style)

    def notify_style_update(self) -> None:
        self._styles.clear()
        super().notify_style_update()

    def get_component_rich_style(
        self, *names: str, partial: bool = False, default: Style | None = None
    ) -> Style:
        # Widget forgets these on every repaint and rebuilds each from the ancestors' styles,
        # several times per line drawn: kept here until the stylesheet or the theme changes
        # (which is when they can change).
        key = (names, partial)
        style = self._styles.get(key)
        if style is None:
            try:
                style = super().get_component_rich_style(*names, partial=partial)
            except KeyError:
                if default is None:
                    raise
                return default
            self._styles[key] = style
        return style

    def _style(self, component: str) -> Style:
        # Labels are measured once before the stylesheet reaches the widget; unstyled is fine then.
        try:
            return self.get_component_rich_style(component, partial=True)
        except KeyError:
            return Style.null()

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        data = node.data
        if data in (MORE, NO_MATCH):
            label = super().render_label(node, base_style, style)
            label.stylize(self._style("memory-tree--meta"))
            label.truncate(
                max(24, self.scrollable_content_region.width - self.guide_depth),
                overflow="ellipsis",
            )
            return label
        if not isinstance(data, MemoryEntry):
            label = super().render_label(node, base_style, style)
            label.stylize(self._style("memory-tree--group"))
            return label
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        width = max(24, self.scrollable_content_region.width - self.guide_depth * depth)
        badge_class = f"memory-tree--{data.type or 'untyped'}"
        badge = TYPE_BADGES.get(data.type, TYPE_BADGES[None])
        prefix = next((p for s, _t, p in GROUPS if s == data.scope), "")
        name = data.path[len(prefix) :] if prefix and data.path.startswith(prefix) else data.path
        name = name.removesuffix(".md")
        narrow = width < NARROW_ROW
        name_width = max(4, width - 2 - (_NARROW_TAIL_WIDTH if narrow else _TAIL_WIDTH))
        if len(name) > name_width:
            name = name[: name_width - 1] + "…"
        age = age_short(age_days(data.mtime_ms, self._now_ms()))
        severity = worst_severity(data.lints)
        mark = SEVERITY_MARKS[severity] if severity else " "
        meta_style = self._style("memory-tree--meta")
        text = Text.assemble(
            (badge, self._style(badge_class)),
            " ",
            name.ljust(name_width),
            (f"{age:>6}", meta_style),
            ("" if narrow else f"{tokens_short(data.tokens):>6}", meta_style),
            " ",
            (
                mark,
                self._style(f"memory-tree--{severity}") if severity else meta_style,
            ),
        )
        # Beneath the parts' own colours, so the cursor's background spans the whole row.
        text.stylize_before(style)
        return text
