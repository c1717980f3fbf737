"""The Context pane: what each API call's context was made of, the largest items now and what
compaction would do to them, and the project's sessions over time (rendering: `context_view`).

Workers read the session list, the attribution of the chosen session and the history (cached
summaries); results come back as messages and are drawn by the pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Select, Static

from workbench.ui.actions import ActionSpec
from workbench.ui.formatting import plural
from workbench.ui.panes.base import Pane
from workbench.ui.panes.context_view import (
    breakdown_content,
    call_items_content,
    category_plot,
    headline_content,
    history_plot,
    largest_content,
    legend_content,
)
from workbench.ui.panes.session_reading import ReadFailed, SessionsListed, list_sessions
from workbench.ui.panes.session_view import session_title, session_when

if TYPE_CHECKING:
    from textual.content import Content

    from workbench.engine.context.attribution_models import AttributionReport
    from workbench.engine.context.session_history import SessionHistory
    from workbench.engine.context.session_list import SessionInfo

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-context",
        "f5",
        "refresh_context",
        "Refresh",
        "Context: Refresh",
        "Attribute the session again and re-read the session history",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "context-earlier-call",
        "comma",
        "earlier_call",
        "Call ←",
        "Context: Earlier call",
        "Show what the call before the one on show sent",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "context-later-call",
        "full_stop",
        "later_call",
        "Call →",
        "Context: Later call",
        "Show what the next call sent (past the last: the context now)",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "pick-context-session",
        "s",
        "pick_session",
        "Session",
        "Context: Pick session",
        "Choose which session's context is attributed",
        show=True,
        scope="pane",
    ),
)


@dataclass(frozen=True)
class ContextView:
    """Everything the pane shows (what the workers produce, in one object)."""

    sessions: tuple[SessionInfo, ...]
    report: AttributionReport | None
    history: SessionHistory | None = None


@dataclass(frozen=True)
class ReportParts:
    """What the pane draws of a report, built by the attribution worker (on a long session
    these walk thousands of calls)."""

    report: AttributionReport
    headline: Content
    breakdown: Content
    largest: Content
    reconciled: int
    plot: tuple[int, Content] | None = None
    """The plot and the width it was drawn at (None: not drawn yet)."""

    @classmethod
    def of(cls, report: AttributionReport, plot_width: int | None = None) -> ReportParts:
        plot = None if plot_width is None else (plot_width, category_plot(report, width=plot_width))
        return cls(
            report,
            headline_content(report),
            breakdown_content(report, call=None),
            largest_content(report),
            report.reconciled_calls,
            plot,
        )


class ContextPane(Pane):
    """Categories per call with compactions marked, the largest items, the session history."""

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]
    DEFAULT_CSS = """
    ContextPane {
        .ctx-body { height: 1fr; scrollbar-size-vertical: 1; }
        .ctx-session { width: 1fr; margin-top: 1; }
        .ctx-headline, .ctx-plot, .ctx-legend, .ctx-breakdown, .ctx-call-items, .ctx-largest,
        .ctx-history-title { margin-top: 1; }
        .ctx-notes { color: $text-warning; margin-top: 1; }
        /* A bar is drawn to the full row: on a narrow pane it is cut, not wrapped onto a
           line of its own. */
        .ctx-breakdown { text-wrap: nowrap; text-overflow: clip; }
    }
    """

    pane_id = "context"
    title = "Context"
    focus_target = ".ctx-body"
    empty_title = "Attributing the context…"
    empty_message = "What each API call's context held appears once the newest session is read."

    sessions: reactive[tuple[SessionInfo, ...]] = reactive((), init=False, bindings=True)
    """The project's sessions, newest first."""
    session_id: reactive[str | None] = reactive(None, init=False)
    report: reactive[AttributionReport | None] = reactive(None, init=False)
    history: reactive[SessionHistory | None] = reactive(None, init=False)
    call: reactive[int | None] = reactive(None, init=False)
    """The call whose breakdown is on show (None: the context now)."""

    class Attributed(Message):
        def __init__(
            self, session_id: str, report: AttributionReport, drawn: ReportParts | None = None
        ) -> None:
            super().__init__()
            self.session_id = session_id
            self.report = report
            self.drawn = drawn

    class HistoryRead(Message):
        def __init__(self, history: SessionHistory) -> None:
            super().__init__()
            self.history = history

    def __init__(self, *, autoload: bool = True, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._autoload = autoload
        self._loaded = False
        self._drawn: ReportParts | None = None

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="ctx-body"):
            yield Select[str]([], prompt="Session", compact=True, classes="ctx-session")
            yield Static(classes="ctx-headline")
            yield Static(classes="ctx-plot")
            yield Static(classes="ctx-legend")
            yield Static(classes="ctx-breakdown")
            call_items = Static(classes="ctx-call-items")
            call_items.display = False  # only while a call is on show
            yield call_items
            yield Static(classes="ctx-largest")
            yield Static(classes="ctx-history-title")
            yield Static(classes="ctx-history")
            yield Static(classes="ctx-notes")

    # --- loading ------------------------------------------------------------------------

    def on_show(self) -> None:
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load_sessions()
            self._load_history()

    # The engine's areas are reached inside the reads: opening one may import and build it.
    def _load_sessions(self) -> None:
        list_sessions(self, group="context-sessions")

    def _attribute(self, session_id: str, plot_width: int) -> None:
        def read() -> tuple[AttributionReport, ReportParts]:
            context = self.engine.context
            report = context.attribution(context.resolve_transcript(session=session_id))
            # The sections are built here, off the UI thread; the plot at the pane's width
            # when the read began (drawn again on the UI thread if the width moved since).
            return report, ReportParts.of(report, plot_width)

        self.read_in_thread(
            read,
            lambda read_back: self.Attributed(session_id, *read_back),
            lambda error: ReadFailed("attribution", error),
            group="context-attribution",
        )

    def _load_history(self) -> None:
        self.read_in_thread(
            lambda: self.engine.context.session_history(),
            self.HistoryRead,
            lambda error: ReadFailed("history", error),
            group="context-history",
        )

    @on(SessionsListed)
    def _listed(self, message: SessionsListed) -> None:
        message.stop()
        self.sessions = message.sessions
        if not message.sessions:
            self.set_empty(
                "No sessions yet",
                "Claude Code has not written a transcript for this project, so there is no "
                "context to attribute.",
            )
            return
        ids = [s.session_id for s in message.sessions]
        if self.session_id not in ids:
            self.open_session(ids[0])

    @on(Attributed)
    def _attributed(self, message: Attributed) -> None:
        message.stop()
        if message.session_id == self.session_id:
            self._drawn = message.drawn
            self.report = message.report

    @on(HistoryRead)
    def _history_read(self, message: HistoryRead) -> None:
        message.stop()
        self.history = message.history

    @on(ReadFailed)
    def _failed(self, message: ReadFailed) -> None:
        message.stop()
        if message.what == "sessions" or (message.what == "attribution" and self.report is None):
            self.set_empty(f"Cannot read the {message.what}", message.error)
        else:
            self.notify(
                message.error, title=f"Context: cannot read the {message.what}", severity="error"
            )

    # --- feeding ------------------------------------------------------------------------

    def open_session(self, session_id: str) -> None:
        """Attribute another session."""
        self.session_id = session_id
        self.call = None
        self.report = None
        self._sync_picker()
        self._attribute(session_id, self._width())

    def show_view(self, view: ContextView) -> None:
        """Show a whole view at once (snapshot tests; no worker runs)."""
        self.sessions = view.sessions
        if view.report is not None:
            self.set_reactive(
                ContextPane.session_id, view.sessions[0].session_id if view.sessions else None
            )
            self._sync_picker()
        self.report = view.report
        self.history = view.history

    # --- rendering ----------------------------------------------------------------------

    def watch_sessions(self, sessions: tuple[SessionInfo, ...]) -> None:
        picker = self.query_one(".ctx-session", Select)
        with picker.prevent(Select.Changed):
            picker.set_options(
                (f"{session_title(s, 48)}  ·  {session_when(s)}", s.session_id) for s in sessions
            )
        self._sync_picker()

    def _sync_picker(self) -> None:
        picker = self.query_one(".ctx-session", Select)
        if self.session_id is None or picker.value == self.session_id:
            return
        if any(s.session_id == self.session_id for s in self.sessions):
            with picker.prevent(Select.Changed):
                picker.value = self.session_id

    def watch_report(self, report: AttributionReport | None) -> None:
        self._draw_report()

    def watch_call(self, call: int | None) -> None:
        if self.report is not None:
            breakdown = breakdown_content(self.report, call=call)
            self.query_one(".ctx-breakdown", Static).update(breakdown)
            self._draw_call_items()

    def _draw_call_items(self) -> None:
        items = self.query_one(".ctx-call-items", Static)
        content = call_items_content(self.report, self.call) if self.report is not None else ""
        items.update(content)
        items.display = bool(content)

    def watch_history(self, history: SessionHistory | None) -> None:
        self._draw_history()

    def on_resize(self, event: events.Resize) -> None:
        self._draw_report()
        self._draw_history()

    def _width(self) -> int:
        return max(20, self.content_size.width - 2)

    def _draw_report(self) -> None:
        report = self.report
        headline = self.query_one(".ctx-headline", Static)
        if report is None:
            headline.update("Attributing the session…")
            return
        drawn = self._drawn
        if drawn is None or drawn.report is not report:
            drawn = self._drawn = ReportParts.of(report)
        headline.update(drawn.headline)
        width = self._width()
        plot = drawn.plot[1] if drawn.plot and drawn.plot[0] == width else None
        self.query_one(".ctx-plot", Static).update(plot or category_plot(report, width=width))
        self.query_one(".ctx-legend", Static).update(legend_content())
        breakdown = (
            drawn.breakdown if self.call is None else breakdown_content(report, call=self.call)
        )
        self.query_one(".ctx-breakdown", Static).update(breakdown)
        self._draw_call_items()
        largest = self.query_one(".ctx-largest", Static)
        largest.update(drawn.largest)
        largest.display = bool(report.largest)
        notes = self.query_one(".ctx-notes", Static)
        notes.update("\n".join(f"Note: {n}" for n in report.notes))
        notes.display = bool(report.notes)
        self.has_content = True
        self.report_engine(f"context: {plural(drawn.reconciled, 'call')} reconciled with usage")

    def _draw_history(self) -> None:
        title = self.query_one(".ctx-history-title", Static)
        plot = self.query_one(".ctx-history", Static)
        if self.history is None:
            title.update("Sessions over time: reading…")
            plot.update("")
            return
        title.update("Sessions over time (peak against the auto-compact threshold, oldest left)")
        plot.update(history_plot(self.history, width=self._width()))

    # --- actions ------------------------------------------------------------------------

    @on(Select.Changed, ".ctx-session")
    def _picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.session_id:
            self.open_session(event.value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick_session":
            return True if self.sessions else None
        if action in ("earlier_call", "later_call"):
            return True if self.report is not None and self.report.calls else None
        return True

    def action_refresh_context(self) -> None:
        """Attribute the session again and re-read the history."""
        self._loaded = True
        self._load_sessions()
        self._load_history()
        if self.session_id is not None:
            self._attribute(self.session_id, self._width())

    def action_pick_session(self) -> None:
        picker = self.query_one(".ctx-session", Select)
        picker.focus()
        picker.expanded = True

    def action_earlier_call(self) -> None:
        """Show the call before the one on show (from the context now: the last call)."""
        self._step_call(-1)

    def action_later_call(self) -> None:
        """Show the next call; past the last one, the context now."""
        self._step_call(1)

    def _step_call(self, step: int) -> None:
        if self.report is None or not self.report.calls:
            return
        last = len(self.report.calls)
        current = last + 1 if self.call is None else self.call
        target = min(last + 1, max(1, current + step))
        self.call = None if target > last else target
