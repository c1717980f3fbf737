"""The compaction preview: what a compaction of one session would keep, summarise and restore.

For the chosen transcript the pane lays out the engine's dry run (`engine.context.
compact_preview`): the context against the auto-compact threshold, which path Claude Code
would take (session memory or full) and why, the kept / summarised / restored split as bars
and numbers, micro-compaction savings, cut note sections, and the survival check of the
paths, commands, numbers and identifiers in the span a summary replaces.

Disk work runs in thread workers; results come back as messages that set the reactives. The
dry run's thread work and those messages are in `compaction_workers`, what the pane shows is
built by the pure functions in `compaction_view`, and the summary dialog is
`compaction_summary`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.ui.actions import ActionSpec
from workbench.ui.panes.base import Pane
from workbench.ui.panes.compaction_summary import SummaryChoice, SummaryModal
from workbench.ui.panes.compaction_view import (
    SECTIONS,
    after_value,
    bars,
    before_value,
    engine_label,
    headline_content,
    headline_detail,
    legend_content,
    numbers_content,
    preview_sections,
    session_prompt,
    status_content,
)
from workbench.ui.panes.compaction_workers import (
    Previewed,
    PreviewFailed,
    PreviewProgress,
    SessionsLoaded,
    run_preview,
)
from workbench.ui.widgets.split_bar import SplitBar

if TYPE_CHECKING:
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.context.compaction_log import CompactionRecord
    from workbench.engine.context.session_list import SessionInfo

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-compaction",
        "f5",
        "refresh_compaction",
        "Refresh",
        "Compaction: Refresh preview",
        "List the sessions again and re-run the dry run on the chosen one",
        scope="pane",
    ),
    ActionSpec(
        "pick-session",
        "s",
        "pick_session",
        "Session",
        "Compaction: Pick session",
        "Choose which session transcript the compaction preview runs on",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "load-summary",
        "c",
        "load_summary",
        "Check summary",
        "Compaction: Check a summary",
        "Paste a summary or load one from a file and see which facts of the span it lost",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "cancel-preview",
        "escape",
        "cancel_preview",
        "Cancel",
        "Compaction: Cancel the preview",
        "Stop reading a big transcript for the dry run (f5 runs it again)",
        scope="pane",
    ),
)
"""The pane's verbs (binding id, keys, palette title and help line)."""


class CompactionPane(Pane):
    """The compaction dry run for one session transcript."""

    pane_id = "compaction"
    title = "Compaction preview"
    focus_target = ".compaction-scroll"
    empty_title = "Reading sessions…"
    empty_message = "The dry run appears once this project's transcripts have been listed."

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]
    DEFAULT_CSS = """
    CompactionPane {
        & .compaction-top { height: auto; margin-top: 1; }
        & #compaction-session { width: 1fr; }
        & #compaction-session Static#label { text-wrap: nowrap; text-overflow: ellipsis; }
        & #compaction-session SelectOverlay { text-wrap: nowrap; text-overflow: ellipsis; }
        & .compaction-status { width: auto; padding: 0 1; color: $text-muted; }
        & .compaction-scroll { height: 1fr; scrollbar-size-vertical: 1; }
        & .compaction-headline { margin-top: 1; }
        & .compaction-bars { margin-top: 1; }
        & .section-title { margin-top: 1; }
        & .section-body { padding-left: 2; }
        & .compaction-numbers { margin-top: 1; padding-left: 2; }
        & .bar-row { height: 1; }
        & .bar-label { width: 8; color: $text-muted; }
        & .bar-value { width: 10; text-align: right; }
    }
    """

    sessions: reactive[tuple[SessionInfo, ...]] = reactive(tuple, init=False)
    """The project's sessions, newest first."""
    session_id: reactive[str | None] = reactive(None, init=False)
    """The session the preview is for."""
    preview: reactive[CompactPreview | None] = reactive(None, init=False)
    """The dry run on show."""
    summary: reactive[SummaryChoice | None] = reactive(None, init=False)
    """A summary of the user's to check the span against (None: the engine's default)."""
    busy: reactive[bool] = reactive(False, init=False)
    """A preview is being computed."""
    history: reactive[tuple[CompactionRecord, ...]] = reactive(tuple, init=False)
    """The session's real compactions, as the hooks recorded them."""

    def __init__(
        self,
        *,
        now_ms: Callable[[], float] | None = None,
        autoload: bool = True,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._autoload = autoload
        self._loaded = False
        self._summary_draft: SummaryChoice | None = None
        self._progress = ""
        """What the running preview is doing ("reading 40%"), for the status."""
        self._cancelled = False
        """The user stopped the last preview (the status says so until the next one)."""

    # --- layout ------------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="compaction-top"):
            yield Select[str]((), prompt="Session", id="compaction-session", compact=True)
            yield Static(classes="compaction-status")
        with VerticalScroll(classes="compaction-scroll"):
            yield Static(classes="compaction-headline")
            yield Static(classes="compaction-headline-detail section-body")
            with Horizontal(classes="bar-row compaction-bars"):
                yield Static("before", classes="bar-label")
                yield SplitBar(classes="compaction-before")
                yield Static(classes="bar-value compaction-before-value")
            with Horizontal(classes="bar-row"):
                yield Static("after", classes="bar-label")
                yield SplitBar(classes="compaction-after")
                yield Static(classes="bar-value compaction-after-value")
            yield Static(classes="compaction-legend")
            for name in SECTIONS:
                yield Static(classes=f"section-title {name}-title")
                yield Static(classes=f"section-body {name}-body")
                if name == "full":
                    yield Static(classes="compaction-numbers")

    def on_mount(self) -> None:
        self.border_title = self.title
        self._update_status()
        if self.preview is not None:
            self._render_preview(self.preview)

    def on_show(self) -> None:
        # Loading waits for the first time the pane is shown: start-up stays light.
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load_sessions()

    # --- feeding the pane ----------------------------------------------------------------

    def show_sessions(
        self, sessions: Sequence[SessionInfo], *, selected: str | None = None
    ) -> None:
        """Fill the session picker (without starting a preview)."""
        self.sessions = tuple(sessions)
        if not sessions:
            self.set_empty(
                "No sessions yet",
                "Claude Code has not written a transcript for this project, so there is "
                "nothing to compact. Sessions appear here after the first conversation.",
            )
            return
        ids = [s.session_id for s in sessions]
        chosen = selected if selected in ids else ids[0]
        self.session_id = chosen
        picker = self.query_one("#compaction-session", Select)
        picker.set_options((session_prompt(s), s.session_id) for s in sessions)
        picker.value = chosen

    def watch_session_id(self, session_id: str | None) -> None:
        self.hold_session(self.sessions, session_id)

    def show_preview(
        self,
        preview: CompactPreview,
        *,
        session_id: str | None = None,
        history: Sequence[CompactionRecord] | None = None,
    ) -> None:
        """Show a dry run and the session's recorded compactions (the workers call this;
        tests may too)."""
        if session_id is not None:
            self.session_id = session_id
        if history is not None:
            self.set_reactive(CompactionPane.history, tuple(history))
        self.preview = preview

    def show_error(self, error: str) -> None:
        """Say why nothing can be shown (keeps an earlier preview if there is one)."""
        if self.preview is None:
            self.set_empty("Cannot preview compaction", error)
        else:
            self.notify(error, title="Compaction preview", severity="error")

    def watch_preview(self, preview: CompactPreview | None) -> None:
        if preview is not None:
            self._render_preview(preview)

    def watch_busy(self) -> None:
        self._update_status()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_preview":
            return True if self.busy else None  # otherwise escape goes back to the tree
        return True

    def watch_summary(self) -> None:
        self._update_status()

    def _update_status(self) -> None:
        statuses = self.query(".compaction-status").results(Static)
        text = status_content(
            busy=self.busy,
            progress=self._progress,
            cancelled=self._cancelled,
            summary_label=self._summary_label(),
        )
        for status in statuses:
            status.update(text)

    def _summary_label(self) -> str | None:
        """The user's summary the preview checks, by name (None: the default)."""
        summary = self.summary
        return summary.label if summary is not None and not summary.is_default else None

    # --- rendering -----------------------------------------------------------------------

    def _render_preview(self, preview: CompactPreview) -> None:
        self.query_one(".compaction-headline", Static).update(headline_content(preview))
        self.query_one(".compaction-headline-detail", Static).update(headline_detail(preview))
        before, after = bars(preview)
        self.query_one(".compaction-before", SplitBar).update_bar(
            before.parts, scale=before.scale, marks=before.marks
        )
        self.query_one(".compaction-after", SplitBar).update_bar(
            after.parts, scale=after.scale, marks=after.marks
        )
        self.query_one(".compaction-before-value", Static).update(before_value(preview))
        self.query_one(".compaction-after-value", Static).update(after_value(preview))
        self.query_one(".compaction-legend", Static).update(
            Content.assemble((" " * 8, ""), legend_content(preview))
        )
        sections = preview_sections(preview, self.history, self._summary_label())
        for name, (title, body) in sections.items():
            title_widget = self.query_one(f".{name}-title", Static)
            title_widget.update(title)
            body_widget = self.query_one(f".{name}-body", Static)
            body_widget.update(body)
            body_widget.display = bool(body.plain)
            if name == "history":  # only sessions the hooks saw compact have a history
                title_widget.display = bool(self.history)
        self.query_one(".compaction-numbers", Static).update(numbers_content(preview))
        self.has_content = True
        self.report_engine(engine_label(preview))

    # --- workers -------------------------------------------------------------------------

    def _load_sessions(self) -> None:
        context = self.engine.context
        self.read_in_thread(
            lambda: tuple(context.sessions()),
            SessionsLoaded,
            PreviewFailed,
            group="compaction-sessions",
        )

    @on(SessionsLoaded)
    def _sessions_loaded(self, message: SessionsLoaded) -> None:
        message.stop()
        self.show_sessions(message.sessions, selected=self.session_id)
        if message.sessions:
            self._start_preview()

    @on(Select.Changed, "#compaction-session")
    def _session_picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.session_id:
            self.session_id = event.value
            self._start_preview()

    def _start_preview(self, summary: SummaryChoice | None | bool = True) -> None:
        """Preview the chosen session; `summary` replaces the current one (True: keep it)."""
        info = next((s for s in self.sessions if s.session_id == self.session_id), None)
        if info is None:
            return
        self._progress, self._cancelled = "", False
        self.busy = True
        wanted = self.summary if summary is True else summary
        self._run_preview(info.session_id, info.path, wanted or None)

    @work(thread=True, exclusive=True, group="compaction-preview", exit_on_error=False)
    def _run_preview(self, session_id: str, transcript: str, summary: SummaryChoice | None) -> None:
        engine = self.engine
        now = datetime.fromtimestamp(self._now_ms() / 1000, tz=UTC)
        worker = get_current_worker()
        run_preview(
            engine,
            session_id,
            transcript,
            summary,
            now,
            self._summary_path,
            worker,
            self.post_message,
        )

    @on(Previewed)
    def _previewed(self, message: Previewed) -> None:
        message.stop()
        self.busy = False
        # A slow preview must not replace the session the user has moved on to.
        if message.session_id == self.session_id:
            # The summary sticks only once a preview with it succeeded.
            self.set_reactive(CompactionPane.summary, message.summary)
            new_history = message.history != self.history
            self.set_reactive(CompactionPane.history, message.history)
            self._update_status()
            unchanged = self.preview == message.preview
            self.preview = message.preview
            if unchanged and new_history:
                self._render_preview(message.preview)  # the watcher only fires on a new preview

    @on(PreviewProgress)
    def _preview_progressed(self, message: PreviewProgress) -> None:
        message.stop()
        if self.busy:
            self._progress = message.text
            self._update_status()

    def action_cancel_preview(self) -> None:
        """Stop the running dry run; what is on show stays (f5 runs it again)."""
        if self.busy:
            self.workers.cancel_group(self, "compaction-preview")
            self._cancelled = True
            self.busy = False

    @on(PreviewFailed)
    def _preview_failed(self, message: PreviewFailed) -> None:
        message.stop()
        self.busy = False
        self.show_error(message.error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Expected failures arrive as PreviewFailed; anything else still must not leave the
        # pane saying "previewing…" for ever.
        if event.state == WorkerState.ERROR and event.worker.group.startswith("compaction-"):
            self.busy = False
            self.show_error(f"The preview failed unexpectedly: {event.worker.error!r}")

    # --- actions -------------------------------------------------------------------------

    def action_refresh_compaction(self) -> None:
        """List the sessions again and re-run the preview."""
        self._loaded = True
        self._load_sessions()

    def action_pick_session(self) -> None:
        """Open the session picker."""
        if not self.sessions:
            self.notify("There are no sessions to pick from yet.", title="Compaction preview")
            return
        picker = self.query_one("#compaction-session", Select)
        picker.focus()
        picker.action_show_overlay()

    def action_load_summary(self) -> None:
        """Ask for a summary to check, then re-run the preview with it."""
        if self.session_id is None:
            self.notify("Pick a session first.", title="Compaction preview")
            return
        modal = SummaryModal(self.summary, draft=self._summary_draft, resolve=self._summary_path)
        self.app.push_screen(modal, partial(self._summary_chosen, modal))

    def _summary_path(self, value: str) -> Path:
        """A summary file named in the dialog: relative to the project, or `~/…`."""
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = Path(self.engine.locations.project_root) / path
        return path

    def _summary_chosen(self, modal: SummaryModal, choice: SummaryChoice | None) -> None:
        # A cancelled dialog's text comes back next time; a used one starts from the choice.
        self._summary_draft = modal.draft if choice is None else None
        if choice is None:
            return
        self._start_preview(None if choice.is_default else choice)
