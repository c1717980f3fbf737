"""The main screen: the memory tree on the left, the panes on the right, status and footer.

Disk work runs in thread workers that post messages back; the handlers here own the state
(the latest `MemorySnapshot`) and hand it down to the tree and the panes. The memory viewer is
built with the screen; the others are built once the first full frame (tree and document) is
painted, their modules imported only then, and each loads its data the first time it is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.color import Color
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import MountError, Widget
from textual.widgets import ContentSwitcher, Input, Static, Tree
from textual.worker import get_current_worker

from workbench.engine.errors import WorkbenchError
from workbench.engine.memories.models import IndexReport, MemoryEntry
from workbench.ui.actions import INDEX_VERBS, MEMORY_VERBS, SHORT_TABS, bindings
from workbench.ui.first_paint import report_first_paint
from workbench.ui.formatting import display_memory_dir, memory_dir_label, project_name
from workbench.ui.host import while_running
from workbench.ui.messages import (
    DocumentFailed,
    DocumentLoaded,
    EngineReported,
    MemoriesFailed,
    MemoriesLoaded,
    MemoryFilesChanged,
    MemorySnapshot,
    OpenMemoryRequested,
)
from workbench.ui.panes.base import Pane
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.panes.registry import PANE_INFOS, PaneInfo
from workbench.ui.screens.memory_actions import MemoryActions
from workbench.ui.widgets.footer import KeyHints
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.pane_tabs import PaneTabs
from workbench.ui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion
    from workbench.ui.app import WorkbenchApp

ENGINE_PATH = "engine: local files"
"""The status line's engine label for panes that read the memory folder directly."""
NARROW_WIDTH = 120
"""Below this many columns the sidebar narrows (and the tree drops its token column)."""
TINY_WIDTH = 100
"""Below this many columns it narrows further, so every pane keeps room (80x24 included)."""
SHORT_HEIGHT = 32
"""Below this many rows the MEMORY.md pane clips its banner to keep room for the lines."""
WATCH_DELAY_S = 1.0
FIRST_FRAME_FALLBACK_S = 5.0
"""What waits for the first full frame (the after-paint hook, importing the panes' modules,
the markdown viewer) starts once the tree and the first memory are painted, or this long after
the first scan at the latest."""
WARM_WAIT_S = 0.3
"""How long the first mount waits for the warm-up's view of the folder before scanning itself
(a 10,000-memory folder takes longer: the tree then fills in when its scan lands)."""
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

HISTORY_VERBS = frozenset({"undo_change", "redo_change"})
"""Undo and redo: their keys work only in the tree, the viewer or the MEMORY.md pane."""
HISTORY_PLACES = ("sidebar", "memory-pane", "index-pane")


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

    snapshot: reactive[MemorySnapshot | None] = reactive(None, init=False, bindings=True)
    """The latest scan of the memory folder."""
    show_team_index: reactive[bool] = reactive(False, init=False, bindings=True)
    """The MEMORY.md pane shows team/MEMORY.md instead of the private index."""
    selected: reactive[MemoryEntry | None] = reactive(None, init=False, repaint=False)
    """The memory under the tree cursor (the screen draws nothing of it: repainting the
    whole screen on each cursor move was what made a move cost a full frame)."""

    def __init__(self) -> None:
        super().__init__(id="main")
        self._change_lock = threading.Lock()
        self._watching = False
        self._pending_select: str | None = None
        self._first_frame_over = False
        self._first_frame_waits = {"tree", "document"}
        """What the first full frame still waits for (see `_after_first_frame`)."""
        self._ring_painted = False
        self._focus_pending = False
        """A pane is being built to take the focus (the screen holds none meanwhile)."""
        self._engine_labels: dict[str, str] = {"memory": ENGINE_PATH, "index": ENGINE_PATH}

    @property
    def workbench(self) -> WorkbenchApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.workbench
        # The sidebar and the panes sit on the screen itself (its layout is horizontal), not
        # in a row box: one container fewer for every cursor move in the tree to redraw.
        with Vertical(id="sidebar"):
            yield Input(placeholder="Filter memories (/)", id="memory-filter")
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
        # Waiting a moment here costs no more than the frames a later scan result would.
        view = app.engine.memories.take_warm_view(wait=WARM_WAIT_S)
        if view is None:
            self._load_memories(first_document=True)
            return
        # The front end warmed the store while the UI was importing: applied here, before
        # the first frame, so that frame already holds the tree and the first memory (posting
        # the messages instead would queue them behind the start-up's own and cost frames).
        snapshot = MemorySnapshot(view.entries, view.index, view.team_index, view.folder_exists)
        self._memories_loaded(MemoriesLoaded(snapshot))
        # A small folder fills in one go: no need to wait for the message.
        if self.memory_tree.filled:
            self._first_frame_done("tree")
        if view.first_document is not None:
            self._document_loaded(DocumentLoaded(view.first_document))

    @property
    def memory_tree(self) -> MemoryTree:
        """The memory tree."""
        return self.query_one(MemoryTree)

    def highlighted_entry(self) -> MemoryEntry | None:
        """The memory under the tree's cursor: what the viewer shows and the memory verbs act
        on (None on a group row, or while the screen is being torn down)."""
        trees = self.query(MemoryTree)
        return trees.first().selected_entry if trees else None

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
        return next(iter(self.query(f"#{pane_id}-pane").results(Pane)), None)

    async def built_pane(self, pane_id: str) -> Pane | None:
        """The pane widget, built now if it was still waiting in its slot."""
        slot = next(iter(self.query(f"#slot-{pane_id}").results(PaneSlot)), None)
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
            trees = self.query(MemoryTree)
            if self.sidebar_hidden:
                self._focus_into(self.pane(self.active_pane))
            elif trees:
                self.set_focus(trees.first())

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

    @work(thread=True, group="pane-imports", exit_on_error=False)
    def _import_panes(self) -> None:
        """Import the panes' modules off the UI thread, so building one when it is first
        shown only composes it (building all of them up front froze the screen for up to a
        quarter of a second per pane)."""
        for info in PANE_INFOS:
            with contextlib.suppress(ImportError):
                info.pane_class()

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

    # --- loading -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def _load_memories(self, first_document: bool = False) -> None:
        store = self.workbench.engine.memories
        store.wait_warm()
        worker = get_current_worker()
        try:
            folder_exists = os.path.isdir(store.root)
            entries = tuple(store.list("all")) if folder_exists else ()
            index = store.index()
            team_index = store.index(team=True) if os.path.isdir(store.root / "team") else None
        except (WorkbenchError, OSError) as exc:
            self.post_message(MemoriesFailed(str(exc)))
            return
        if worker.is_cancelled:
            return
        snapshot = MemorySnapshot(entries, index, team_index, folder_exists)
        self.post_message(MemoriesLoaded(snapshot))
        if first_document and entries:
            # The first scan also reads the file the cursor will land on, so the first full
            # frame already shows it (one worker round trip fewer at start-up).
            with contextlib.suppress(WorkbenchError, OSError):
                opening = store.first_listed(entries)
                if opening is not None:
                    self.post_message(DocumentLoaded(store.read(opening.path)))

    @on(MemoriesLoaded)
    @while_running
    def _memories_loaded(self, message: MemoriesLoaded) -> None:
        snapshot = message.snapshot
        self.snapshot = snapshot
        tree = self.memory_tree
        keep = self._pending_select or tree.selected_path
        self._pending_select = None
        tree.set_entries(snapshot.entries, keep=keep)
        self._show_index()
        self._update_counts()
        if not snapshot.folder_exists:
            self.query_one(MemoryPane).set_empty(
                "No memory folder yet",
                "Claude Code has not saved a memory for this project. Press n to write the first one.",
            )
        elif not snapshot.entries:
            self.query_one(MemoryPane).set_empty(
                "No memories yet", "Press n to write the first one."
            )
        if not snapshot.entries:
            self._first_frame_done("document")  # no document is coming
        if not self._first_frame_over:
            # Normally the first full frame starts it (see _first_frame_done); the backstop.
            self.set_timer(FIRST_FRAME_FALLBACK_S, self._after_first_frame)
        if self.workbench.settings.watch_files and not self._watching and snapshot.folder_exists:
            self._watching = True
            # Started a moment later so importing watchfiles never competes with the first paint.
            self.set_timer(WATCH_DELAY_S, self._run_watcher)

    @on(MemoryTree.Filled)
    @while_running
    def _tree_filled(self, message: MemoryTree.Filled) -> None:
        message.stop()
        # A rebuild that left no memory under the cursor (an empty filter result, the last
        # memory deleted) highlights nothing: no memory verb may act on the one before.
        tree = self.memory_tree
        if tree.selected_entry is None:
            self.selected = None
            if self._no_memory_matches():
                # A read started before the filter left nothing must not land afterwards.
                self.workers.cancel_group(self, "document")
                self.query_one(MemoryPane).set_empty(
                    "No memory matches the filter",
                    f"Nothing matches “{tree.filter_text.strip()}”. Esc in the filter box "
                    "clears it.",
                )
        self._first_frame_done("tree")

    def _no_memory_matches(self) -> bool:
        """The filter hides every memory, so the viewer has nothing to show."""
        tree = self.memory_tree
        return bool(tree.filter_text.strip() and not tree.shown_count and tree.entries)

    def first_frame_shown(self) -> None:
        """The app's first frame is on the terminal (Textual's `Ready`). When the mount had
        the warm view, that frame already held the tree and the first memory: it is the first
        full paint, and what waited for it starts now."""
        if not self._first_frame_waits:
            self._after_first_frame()

    def _first_frame_done(self, part: str) -> None:
        """The tree is filled or the first document is shown; once both are, and painted,
        what waits for the first frame starts (so none of it ever delays either)."""
        self._first_frame_waits.discard(part)
        if not self._first_frame_waits and not self._first_frame_over:
            self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if not self._first_frame_over:
            self._first_frame_over = True
            if report_first_paint(len(self.snapshot.entries) if self.snapshot else 0):
                self.app.exit()
                return
            self.workbench.first_paint_done()
            self.query_one(MemoryPane).enable_markdown()
            # The first full frame (tree and document) is on screen: the other panes are
            # built when first shown; their modules are imported meanwhile.
            self._import_panes()
            versions = self.workbench.engine.versions
            if versions.request.is_auto and not versions.ask_cli:
                self._ask_claude_version()

    class ClaudeVersionFound(Message):
        """`claude --version` was asked (in a worker, after the first frame)."""

        def __init__(self, before: ResolvedVersion, after: ResolvedVersion) -> None:
            super().__init__()
            self.before = before
            self.after = after

    @work(thread=True, exclusive=True, group="claude-version", exit_on_error=False)
    def _ask_claude_version(self) -> None:
        engine = self.workbench.engine
        before = engine.claude
        after = engine.versions.refresh()
        self.post_message(self.ClaudeVersionFound(before, after))

    @on(ClaudeVersionFound)
    @while_running
    def _claude_version_found(self, message: ClaudeVersionFound) -> None:
        message.stop()
        before, after = message.before, message.after
        self.query_one(StatusLine).claude_version = after.short()
        if after.version == before.version:
            return
        engine = self.workbench.engine
        differs = [
            what
            for what, changed in (
                ("where memory is kept", engine.locations_for(after.profile) != engine.locations),
                (
                    "how memory files are read",
                    after.profile.memory_files != before.profile.memory_files,
                ),
            )
            if changed
        ]
        if differs:
            self.notify(
                f"{after.describe()} is installed; its rules for {' and '.join(differs)} "
                f"differ from the {before.version} rules this window opened with. Restart "
                "the workbench to apply them.",
                title="Claude Code version",
            )

    @on(MemoriesFailed)
    @while_running
    def _memories_failed(self, message: MemoriesFailed) -> None:
        self._after_first_frame()
        self.query_one(StatusLine).counts = "scan failed"
        self.notify(message.error, title="Cannot read the memory folder", severity="error")

    def _update_counts(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        parts = [
            f"{snapshot.count('private')} private",
            f"{snapshot.count('team')} team",
            f"{snapshot.count('log')} logs",
        ]
        if snapshot.index is not None and snapshot.index.exists:
            parts.append(f"index {snapshot.index.line_count}/{snapshot.index.max_lines} lines")
        tree = self.memory_tree
        if tree.shown_count != len(snapshot.entries):
            parts.append(f"{tree.shown_count} shown")
        self.query_one(StatusLine).counts = " · ".join(parts)

    def _show_index(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        pane = self.query(IndexPane).first() if self.query(IndexPane) else None
        if pane is None:
            return  # not mounted yet: it asks for the report when it is (IndexPane.Ready)
        if self.show_team_index:
            pane.show_report(snapshot.team_index, team=True)
        else:
            pane.show_report(snapshot.index, team=False)

    def watch_show_team_index(self) -> None:
        self._show_index()

    @on(IndexPane.Ready)
    @while_running
    def _index_pane_ready(self) -> None:
        self._show_index()

    # --- the viewer --------------------------------------------------------------------

    def watch_selected(self, previous: MemoryEntry | None, selected: MemoryEntry | None) -> None:
        # Only whether a memory is selected changes which keys apply; re-checking every
        # binding on each cursor move was most of a move's cost before its frame.
        if (previous is None) != (selected is None):
            self.refresh_bindings()

    @on(Tree.NodeHighlighted, "#memory-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[object]) -> None:
        data = event.node.data
        self.selected = data if isinstance(data, MemoryEntry) else None
        if isinstance(data, MemoryEntry):
            # The moved cursor is drawn first; starting the read's thread can wait a frame.
            self.call_after_refresh(self._load_document, data.path)

    @on(Tree.NodeSelected, "#memory-tree")
    def _selected(self, event: Tree.NodeSelected[object]) -> None:
        if isinstance(event.node.data, MemoryEntry):
            self.show_pane("memory")

    @work(thread=True, exclusive=True, group="document", exit_on_error=False)
    def _load_document(self, path: str) -> None:
        try:
            document = self.workbench.engine.memories.read(path)
        except (WorkbenchError, OSError) as exc:
            self.post_message(DocumentFailed(path, str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(DocumentLoaded(document))

    @on(DocumentLoaded)
    @while_running
    def _document_loaded(self, message: DocumentLoaded) -> None:
        # A slow read must not replace what the cursor has moved on to, nor fill the viewer
        # once a filter has hidden every memory (fast typing outruns the read's thread).
        if self._document_wanted(message.document.entry.path):
            self.query_one(MemoryPane).document = message.document
        self._first_frame_done("document")

    @on(DocumentFailed)
    @while_running
    def _document_failed(self, message: DocumentFailed) -> None:
        # Only about the highlighted row: a read of a file just renamed or deleted (started
        # before the tree moved on) must not replace the memory the tree now shows.
        if self._document_wanted(message.path):
            self.query_one(MemoryPane).show_error(message.path, message.error)
        self._first_frame_done("document")

    def _document_wanted(self, path: str) -> bool:
        """Whether a read of `path` that just finished is still what the viewer should show."""
        selected = self.memory_tree.selected_path
        if selected is None:
            return not self._no_memory_matches()
        return selected == path

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
        self.query_one("#memory-filter", Input).focus()

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
        if action in MEMORY_VERBS and not self._focus_within("sidebar", "memory-pane"):
            return False
        if action in INDEX_VERBS and not self._focus_within("index-pane"):
            return False
        if action in HISTORY_VERBS and not self._focus_within(*HISTORY_PLACES):
            return False  # undo acts on memories: only where they (or MEMORY.md) are on show
        return self.action_applies(action)

    def _focus_within(self, *ids: str) -> bool:
        focused = self.focused
        if focused is None:
            return False
        return any(node.id in ids for node in focused.ancestors_with_self)

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

    # --- live refresh ------------------------------------------------------------------

    @work(exclusive=True, group="watch", exit_on_error=False)
    async def _run_watcher(self) -> None:
        from watchfiles import awatch

        root = self.workbench.engine.locations.memory_dir
        # Catch anything that changed between the first scan and the watcher starting.
        self.post_message(MemoryFilesChanged(()))
        async for changes in awatch(root, debounce=300, step=100, recursive=True):
            paths = tuple(sorted({path for _change, path in changes if path.endswith(".md")}))
            if paths:
                self.post_message(MemoryFilesChanged(paths))

    @on(MemoryFilesChanged)
    @while_running
    def _files_changed(self, message: MemoryFilesChanged) -> None:
        self._load_memories()
        team_folder = os.path.join(self.workbench.engine.locations.memory_dir, "team", "")
        if not message.paths or any(path.startswith(team_folder) for path in message.paths):
            team = self.pane("team")
            if team is not None:
                team.team_files_changed()  # type: ignore[attr-defined]
        # Bursts are coalesced, so the paths may be partial: re-read the highlighted file
        # regardless (not the one on show: it may be the name a rename just replaced).
        path = self.memory_tree.selected_path
        if path is not None:
            self._load_document(path)
