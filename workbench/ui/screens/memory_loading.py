"""What the main screen reads, and when: the memory folder's scan (the tree, the counts, the
MEMORY.md pane), the file behind the viewer, the watcher that scans again when files change,
and the start-up around the first full frame (after it, the panes' modules are imported and
`claude --version` is asked).

`MainScreen` (screens/main.py) keeps the layout, the focus and pane switching; it inherits
this through `MemoryActions` (screens/memory_actions.py), whose verbs scan again after each
change. Disk work runs in thread workers that post messages back; the handlers here own the
state (the latest `MemorySnapshot`) and hand it down to the tree and the panes.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from textual import on, work
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Tree
from textual.worker import get_current_worker

from workbench.engine.errors import WorkbenchError
from workbench.engine.memories.models import MemoryEntry
from workbench.ui.first_paint import report_first_paint
from workbench.ui.formatting import plural
from workbench.ui.host import while_running
from workbench.ui.messages import (
    DocumentFailed,
    DocumentLoaded,
    MemoriesFailed,
    MemoriesLoaded,
    MemoryFilesChanged,
    MemorySnapshot,
)
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.panes.registry import PANE_INFOS
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion
    from workbench.ui.app import WorkbenchApp
    from workbench.ui.panes.base import Pane

WATCH_DELAY_S = 1.0
"""How long after the first scan the watcher starts (importing watchfiles stays off the first
paint)."""
FIRST_FRAME_FALLBACK_S = 5.0
"""What waits for the first full frame (the after-paint hook, importing the panes' modules,
the markdown viewer) starts once the tree and the first memory are painted, or this long after
the first scan at the latest."""
WARM_WAIT_S = 0.3
"""How long the first mount waits for the warm-up's view of the folder before scanning itself
(a 10,000-memory folder takes longer: the tree then fills in when its scan lands)."""


class MemoryLoading(Screen[None]):
    """The main screen's reads: the scan, the viewer's file, the watcher and the first frame."""

    snapshot: reactive[MemorySnapshot | None] = reactive(None, init=False, bindings=True)
    """The latest scan of the memory folder."""
    show_team_index: reactive[bool] = reactive(False, init=False, bindings=True)
    """The MEMORY.md pane shows team/MEMORY.md instead of the private index."""
    selected: reactive[MemoryEntry | None] = reactive(None, init=False, repaint=False)
    """The memory under the tree cursor (the screen draws nothing of it: repainting the
    whole screen on each cursor move was what made a move cost a full frame)."""

    if TYPE_CHECKING:
        # Provided by MainScreen.
        def pane(self, pane_id: str) -> Pane | None: ...

    def __init__(
        self,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        classes: str | None = None,
    ) -> None:
        super().__init__(name, id, classes)
        self._watching = False
        self._pending_select: str | None = None
        """The memory the next scan puts the cursor on (a change names it)."""
        self._first_frame_over = False
        self._first_frame_waits = {"tree", "document"}
        """What the first full frame still waits for (see `_after_first_frame`)."""

    @property
    def workbench(self) -> WorkbenchApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    @property
    def memory_tree(self) -> MemoryTree:
        """The memory tree."""
        return self.query_one(MemoryTree)

    # --- the scan ----------------------------------------------------------------------

    def _start_loading(self) -> None:
        """Fill the tree and the viewer for the first frame: from the warm-up's view of the
        folder when it is ready in time, else from a scan of its own."""
        # Waiting a moment here costs no more than the frames a later scan result would.
        view = self.workbench.engine.memories.take_warm_view(wait=WARM_WAIT_S)
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
            plural(snapshot.count("log"), "log"),
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
        try:
            pane = self.query_one(IndexPane)
        except NoMatches:
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

    # --- the first frame ---------------------------------------------------------------

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

    @work(thread=True, group="pane-imports", exit_on_error=False)
    def _import_panes(self) -> None:
        """Import the panes' modules off the UI thread, so building one when it is first
        shown only composes it (building all of them up front froze the screen for up to a
        quarter of a second per pane)."""
        for info in PANE_INFOS:
            with contextlib.suppress(ImportError):
                info.pane_class()

    # --- Claude Code's version ---------------------------------------------------------

    class ClaudeVersionFound(Message, namespace="main_screen"):
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

    # --- the watcher -------------------------------------------------------------------

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
