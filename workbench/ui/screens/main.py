"""The main screen: the memory tree on the left, the panes on the right, status and footer.

This module keeps the layout, the focus and pane switching. What the screen reads (the scan,
the viewer's file, the watcher, the first frame) is `MemoryLoading` in memory_loading.py, and
its memory verbs are `MemoryActions` in memory_actions.py; `MainScreen` inherits both. The
memory viewer is built with the screen; the other panes are built once the first full frame
(tree and document) is painted, their modules imported only then, and each loads its data the
first time it is shown.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.color import Color
from textual.containers import Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widget import MountError, Widget
from textual.widgets import ContentSwitcher, Input, Static, TextArea, Tree

from workbench.engine.memories.models import IndexReport, MemoryEntry
from workbench.ui.actions import INDEX_VERBS, MEMORY_VERBS, SHORT_TABS, bindings
from workbench.ui.formatting import display_memory_dir, memory_dir_label, project_name
from workbench.ui.host import while_running
from workbench.ui.messages import (
    EngineReported,
    OpenMemoryRequested,
)
from workbench.ui.panes.base import Pane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.panes.registry import PANE_INFOS, PaneInfo
from workbench.ui.screens.memory_actions import HISTORY_PLACES, HISTORY_VERBS, MemoryActions
from workbench.ui.widgets.footer import KeyHints
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.pane_tabs import PaneTabs
from workbench.ui.widgets.status_line import StatusLine
from workbench.ui.widgets.text_fields import FieldInput

if TYPE_CHECKING:
    pass

ENGINE_PATH = "engine: local files"
"""The status line's engine label for panes that read the memory folder directly."""
NARROW_WIDTH = 120
"""Below this many columns the sidebar narrows (and the tree drops its token column)."""
TINY_WIDTH = 100
"""Below this many columns it narrows further, so every pane keeps room (80x24 included)."""
SHORT_HEIGHT = 32
"""Below this many rows the MEMORY.md pane clips its banner to keep room for the lines."""
LEGEND = Content.assemble(
    ("U", "bold $memory-user"),
    " user  ",
    ("F", "bold $memory-feedback"),
    " feedback  ",
    ("P", "bold $memory-project"),
    " project  ",
    ("R", "bold $memory-reference"),
    " reference\n",
    ("columns: age · tokens · ", "$foreground-muted"),
    ("✖", "$lint-error"),
    ("▲", "$lint-warning"),
    (" lint", "$foreground-muted"),
)


class PaneBox(Vertical):
    """One pane's place in the switcher (`#pane-<id>`): the pane, or its slot until built."""


class PaneSlot(Widget):
    """Holds a pane's place in its tab until the pane is built (its module is imported then)."""

    DEFAULT_CSS = """
    PaneSlot {
        display: none;
    }
    """

    def __init__(self, info: PaneInfo, now_ms: Callable[[], float]) -> None:
        super().__init__(id=f"slot-{info.id}")
        self.info = info
        self._now_ms = now_ms
        self._pane: Pane | None = None
        self._mounted = asyncio.Event()

    async def build(self) -> Pane:
        """Build and mount the pane in the slot's place (once; later callers wait for it)."""
        if self._pane is None:
            self._pane = self.info.build(self._now_ms)
            parent = cast(Widget, self.parent)
            try:
                await parent.mount(self._pane, after=self)
            except MountError:
                return self._pane  # the app is closing: its tab is already gone
            finally:
                self._mounted.set()
            await self.remove()
        else:
            await self._mounted.wait()
        return self._pane


class MainScreen(MemoryActions):
    """Browse, inspect and edit the project's memory."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    def __init__(self) -> None:
        super().__init__(id="main")
        self._change_lock = threading.Lock()
        self._ring_painted = False
        self._focus_pending = False
        """A pane is being built to take the focus (the screen holds none meanwhile)."""
        self._engine_labels: dict[str, str] = {"memory": ENGINE_PATH, "index": ENGINE_PATH}

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.workbench
        # The sidebar and the panes sit on the screen itself (its layout is horizontal), not
        # in a row box: one container fewer for every cursor move in the tree to redraw.
        with Vertical(id="sidebar"):
            yield FieldInput(placeholder="Filter memories (/)", id="memory-filter")
            yield MemoryTree(now_ms=app.now_ms, id="memory-tree")
            yield Static(LEGEND, classes="tree-legend")
        with Vertical(id="panes"):
            tabs = [(f"pane-{info.id}", info.tab) for info in PANE_INFOS]
            short = {f"pane-{pane_id}": title for pane_id, title in SHORT_TABS.items()}
            yield PaneTabs(tabs, active="pane-memory", short=short, id="pane-tabs")
            with ContentSwitcher(id="pane-switcher", initial="pane-memory"):
                for info in PANE_INFOS:
                    with PaneBox(id=f"pane-{info.id}"):
                        if info.id == "memory":
                            yield MemoryPane(
                                now_ms=app.now_ms, lazy_markdown=True, id="memory-pane"
                            )
                        else:
                            yield PaneSlot(info, app.now_ms)
        # In a box of their own: the compositor redraws every widget whose clip overlaps a
        # change, and the screen's children are clipped only by the screen (so each cursor
        # move in the tree would redraw both lines as well).
        with Vertical(id="bottom-bar"):
            yield StatusLine(id="status")
            yield KeyHints()

    def on_mount(self) -> None:
        app = self.workbench
        self.query_one("#sidebar").border_title = "Memories"
        self.query_one("#memory-filter", Input).cursor_blink = app.settings.cursor_blink
        status = self.query_one(StatusLine)
        name = project_name(app.engine.locations)
        status.project = f"{name} (demo: {app.demo_name})" if app.demo_name else name
        status.memory_dir = (
            memory_dir_label(app.engine.locations)
            if app.settings.show_full_paths
            else display_memory_dir(app.engine.locations)
        )
        status.counts = "scanning…"
        status.engine_path = ENGINE_PATH
        status.claude_version = app.engine.claude.short()
        self.query_one(MemoryTree).focus()
        self.watch(self.app, "theme", self._theme_changed, init=False)
        self._start_loading()

    def highlighted_entry(self) -> MemoryEntry | None:
        """The memory under the tree's cursor: what the viewer shows and the memory verbs act
        on (None on a group row, or while the screen is being torn down)."""
        tree = self._tree_if_mounted()
        return tree.selected_entry if tree is not None else None

    def _tree_if_mounted(self) -> MemoryTree | None:
        # query_one stops at the first match, where a query walks the whole DOM (1 ms with
        # every pane open): this runs for each binding the footer and the palette check.
        try:
            return self.query_one(MemoryTree)
        except NoMatches:
            return None

    def show_pane(self, pane_id: str, *, focus: bool | None = None) -> None:
        """Bring one pane to the front.

        `focus=True` also moves the focus into it, so its keys work (the jump keys and the
        palette do that); None does so only when the focus is in another pane, which is about
        to be hidden; False leaves the focus to the caller (who moves it first).
        """
        if focus or (focus is None and self._focus_in_other_pane(pane_id)):
            # The focus moves before the old pane is hidden: a focused widget that is hidden
            # hands the focus to a sibling in its own pane.
            pane = self.pane(pane_id)
            if pane is None or not pane.focus_default():
                self._focus_pending = True
                self.set_focus(None)
                self.call_later(self._focus_pane, pane_id)
        self.query_one(PaneTabs).active = f"pane-{pane_id}"
        self._pane_in_front(pane_id)

    @property
    def active_pane(self) -> str:
        """The id of the pane in front."""
        return self.query_one(PaneTabs).active.removeprefix("pane-")

    def pane(self, pane_id: str) -> Pane | None:
        """The pane widget, once it has been built."""
        try:
            return self.query_one(f"#{pane_id}-pane", Pane)
        except NoMatches:
            return None

    async def built_pane(self, pane_id: str) -> Pane | None:
        """The pane widget, built now if it was still waiting in its slot."""
        try:
            slot: PaneSlot | None = self.query_one(f"#slot-{pane_id}", PaneSlot)
        except NoMatches:
            slot = None
        if slot is not None:
            return await slot.build()
        return self.pane(pane_id)

    async def _focus_pane(self, pane_id: str) -> None:
        pane = await self.built_pane(pane_id)
        # After a refresh: the pane's own classes (which hide parts of it) are applied by then.
        self.call_after_refresh(self._focus_into, pane)

    async def run_pane_action(self, pane_id: str, action: str) -> None:
        """Bring a pane forward with the focus in it, then run one of its actions (the
        palette's pane commands; the pane's `check_action` still decides)."""
        pane = await self.built_pane(pane_id)
        if pane is not None:
            self.show_pane(pane_id, focus=True)
            self.call_after_refresh(self._run_if_applies, pane, action)

    async def _run_if_applies(self, pane: Pane, action: str) -> None:
        # The palette offers a pane's verbs before the pane is built; once it is, it decides.
        name = action.split("(", 1)[0]
        if pane.check_action(name, ()):
            await pane.run_action(action)
        else:
            self.notify(f"Not available in the {pane.title} pane right now.", severity="warning")

    def _focus_into(self, pane: Pane | None) -> None:
        self._focus_pending = False
        if pane is not None and pane.id != f"{self.active_pane}-pane":
            # Another pane came forward meanwhile (keys pressed in quick succession): this one
            # is hidden now and cannot take the focus.
            return
        if pane is not None and pane.focus_default():
            return
        if self.active_pane == "memory":
            self.set_focus(self.memory_tree)
        else:
            self.set_focus(self.query_one(PaneTabs))

    def on_resize(self, event: events.Resize) -> None:
        width = event.size.width
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self.set_class(width < TINY_WIDTH, "-tiny")
        self.set_class(event.size.height < SHORT_HEIGHT, "-short")

    @property
    def sidebar_hidden(self) -> bool:
        """Whether the sidebar is collapsed (f2), leaving the panes the whole width."""
        return self.has_class("-sidebar-hidden")

    def action_toggle_sidebar(self) -> None:
        """Collapse the sidebar, or bring it back."""
        hide = not self.sidebar_hidden
        if hide and self._focus_within("sidebar"):
            self.show_pane(self.active_pane, focus=True)  # before the tree is hidden
        self.set_class(hide, "-sidebar-hidden")

    def on_descendant_focus(self) -> None:
        self._paint_focus_ring()

    def on_descendant_blur(self) -> None:
        self._paint_focus_ring()
        self.call_after_refresh(self._keep_focus)

    def _keep_focus(self) -> None:
        """Something always has the focus (and wears the ring): when the focused widget went
        away (hidden, removed) and no pane is about to take it, the tree does."""
        if self.focused is None and not self._focus_pending and self.is_current:
            if self.sidebar_hidden:
                self._focus_into(self.pane(self.active_pane))
            elif (tree := self._tree_if_mounted()) is not None:
                self.set_focus(tree)

    def _paint_focus_ring(self) -> None:
        """The panes' border in the focus colour while the focus is in a pane.

        Set inline on #panes alone: a `:focus-within` rule or a class there would restyle
        every widget of all eight panes on each focus change (see app.tcss).
        """
        panes = self.query_one("#panes")
        focused = self.focused
        inside = focused is not None and panes in focused.ancestors
        if inside == self._ring_painted:
            return
        self._ring_painted = inside
        if inside:
            colour = Color.parse(self.app.theme_variables.get("primary", "ansi_blue"))
            panes.styles.border = ("round", colour)
        else:
            for edge in ("border_top", "border_right", "border_bottom", "border_left"):
                panes.styles.clear_rule(edge)
        panes.refresh()

    def _theme_changed(self) -> None:
        if self._ring_painted:
            self._ring_painted = False
            self.call_after_refresh(self._paint_focus_ring)

    def _focus_in_other_pane(self, pane_id: str) -> bool:
        """Whether the focused widget sits in a pane other than `pane_id`."""
        focused = self.focused
        if focused is None:
            return False
        # Only the main tabs count (the recall pane has tabs of its own).
        boxes = [node.id for node in focused.ancestors if isinstance(node, PaneBox)]
        return bool(boxes) and boxes[0] != f"pane-{pane_id}"

    # --- the engine label --------------------------------------------------------------

    @on(EngineReported)
    @while_running
    def _engine_reported(self, message: EngineReported) -> None:
        message.stop()
        self._engine_labels[message.pane_id] = message.label
        self._show_engine_label()

    @on(PaneTabs.Activated, "#pane-tabs")
    def _tab_picked(self, message: PaneTabs.Activated) -> None:
        message.stop()
        self._pane_in_front(message.tab_id.removeprefix("pane-"))

    def _pane_in_front(self, pane_id: str) -> None:
        """Show a pane's box (a tab click, a jump key), building the pane if it still waits in
        its slot, and say which engine it runs."""
        switcher = self.query_one("#pane-switcher", ContentSwitcher)
        if switcher.current == f"pane-{pane_id}":
            return
        switcher.current = f"pane-{pane_id}"
        self._show_engine_label()
        self.run_worker(self.built_pane(pane_id), group="panes")

    def _show_engine_label(self) -> None:
        self.query_one(StatusLine).engine_path = self._engine_labels.get(self.active_pane, "")

    def engine_label(self, pane_id: str) -> str:
        """What the status line says about a pane's engine path."""
        return self._engine_labels.get(pane_id, "")

    @on(Tree.NodeSelected, "#memory-tree")
    def _selected(self, event: Tree.NodeSelected[object]) -> None:
        if isinstance(event.node.data, MemoryEntry):
            self.show_pane("memory")

    @on(OpenMemoryRequested)
    def _open_requested(self, message: OpenMemoryRequested) -> None:
        tree = self.memory_tree
        if not tree.select_path(message.path):
            tree.set_filter("")
            self.query_one("#memory-filter", Input).value = ""
            tree.select_path(message.path)
        self._load_document(message.path)
        self.set_focus(tree)  # before the pane the request came from is hidden
        self.show_pane("memory", focus=False)

    # --- filtering ---------------------------------------------------------------------

    @on(Input.Changed, "#memory-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.memory_tree.set_filter(event.value)
        self._update_counts()

    @on(Input.Submitted, "#memory-filter")
    def _filter_submitted(self) -> None:
        self.memory_tree.focus()

    def action_filter_memories(self) -> None:
        """Focus the filter box."""
        # At once, not on the next message as `focus()` would: keys typed right after this one
        # are already queued, and must land in the box.
        self.set_focus(self.query_one("#memory-filter", Input))

    def action_focus_tree(self) -> None:
        """Back to the memory tree from anywhere on the screen (in the filter box, clear it)."""
        box = self.query_one("#memory-filter", Input)
        if box.has_focus:
            box.value = ""
        self.remove_class("-sidebar-hidden")
        self.set_focus(self.memory_tree)

    # --- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Keys act only where their target is focused and on show: the memory verbs in the
        # tree or the viewer, the index verbs in the MEMORY.md pane (hidden elsewhere, so the
        # footer shows the focused pane's own keys).
        if action == "filter_memories" and isinstance(self.focused, Input | TextArea):
            return False  # a priority key: in a text box, `/` is typed there
        if action in MEMORY_VERBS and not self._focus_within("sidebar", "memory-pane"):
            return False
        if action in INDEX_VERBS and not self._focus_within("index-pane"):
            return False
        if action in HISTORY_VERBS and not self._focus_within(*HISTORY_PLACES):
            return False  # undo acts on memories: only where they (or MEMORY.md) are on show
        return self.action_applies(action)

    async def run_command(self, action: str) -> None:
        """Run a memory or index verb from the palette: its target (the tree, the MEMORY.md
        pane) comes forward with the focus first, so the verb acts on what is on show."""
        name = action.split("(", 1)[0]
        if name in MEMORY_VERBS:
            self.remove_class("-sidebar-hidden")
            self.set_focus(self.memory_tree)
            self.show_pane("memory", focus=False)
        elif name in INDEX_VERBS:
            await self.built_pane("index")
            self.show_pane("index", focus=True)
        elif name in HISTORY_VERBS and not self._focus_within(*HISTORY_PLACES):
            self.remove_class("-sidebar-hidden")
            self.set_focus(self.memory_tree)
            self.show_pane("memory", focus=False)
        self.call_after_refresh(self.run_action, action)

    def action_applies(self, action: str) -> bool | None:
        """Whether a main-screen action can run now, wherever the focus is (the palette asks
        this; `check_action` adds where the focus must be for its keys)."""
        needs_selection = ("edit_memory", "rename_memory", "delete_memory")
        if action in needs_selection:
            return True if self.highlighted_entry() is not None else None
        report = self._current_report()
        # None, not False: the MEMORY.md pane's footer shows its keys dimmed when nothing applies.
        if action == "fix_dangling":
            return True if report and report.dangling else None
        if action == "fix_orphans":
            return True if report and report.orphans else None
        if action == "fix_long_lines":
            return True if report and report.long_lines else None
        if action == "toggle_team_index":
            return True if self.snapshot and self.snapshot.team_index is not None else None
        return True

    def _current_report(self) -> IndexReport | None:
        if self.snapshot is None:
            return None
        return self.snapshot.team_index if self.show_team_index else self.snapshot.index
