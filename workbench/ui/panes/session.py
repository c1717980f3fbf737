"""The session memory pane: each session's notes file against Claude Code's limits.

For the selected session it shows the ten sections with a token bar against the 2,000-token
section limit, the total against 12,000, whether the notes are still the empty template, which
template is in force, and where the update trigger would fire over that session's transcript.
Reads run in thread workers that post results back as messages; the handlers set reactives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.ui.actions import ActionSpec
from workbench.ui.panes.base import Pane
from workbench.ui.panes.session_reading import ReadFailed, SessionsListed, list_sessions
from workbench.ui.panes.session_view import (
    header_content,
    session_prompt,
    session_title,
    trigger_heading,
    trigger_table,
)
from workbench.ui.widgets.session_notes import SectionBars, TriggerTimeline

if TYPE_CHECKING:
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.context.views import SessionNotes

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-sessions",
        "f5",
        "refresh_sessions",
        "Refresh",
        "Session: Refresh sessions",
        "Read the session list and the selected session's notes again",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "toggle-notes-text",
        "o",
        "toggle_notes_text",
        "Notes text",
        "Session: Toggle notes text",
        "Show the selected session's notes file as text, or the section bars again",
        show=True,
        scope="pane",
    ),
)
"""The pane's actions, for the palette, the help screen and the keymap."""

WIDE = 110
"""From this width the session list sits beside the notes instead of above them."""


# --- the pane -------------------------------------------------------------------------------


class SessionPane(Pane):
    """Each session's notes against the section and total limits, and the update trigger."""

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]

    DEFAULT_CSS = """
    SessionPane {
        &.-wide { layout: horizontal; }
        .session-list, .session-list:focus {
            height: auto;
            max-height: 9;
            border: none;
            padding: 0;
            background: $surface;
            text-wrap: nowrap;
            text-overflow: ellipsis;
            scrollbar-size-vertical: 1;
        }
        &.-wide .session-list { width: 50; height: 1fr; max-height: 100%; }
        .session-detail { height: 1fr; scrollbar-size-vertical: 1; }
        &.-wide .session-detail { padding-left: 2; }
        .session-header, .session-missing, SectionBars, .session-trigger { margin-top: 1; }
        TriggerTimeline, .session-trigger-table, .session-text { margin-top: 1; }
        .session-missing, .session-text { display: none; }
        &.-no-notes .session-missing { display: block; }
        &.-no-notes SectionBars { display: none; }
        &.-no-points TriggerTimeline, &.-no-points .session-trigger-table { display: none; }
        &.-text .session-text { display: block; }
        &.-text .session-missing, &.-text SectionBars, &.-text .session-trigger,
        &.-text TriggerTimeline, &.-text .session-trigger-table {
            display: none;
        }
    }
    """

    pane_id = "session"
    title = "Session memory"
    focus_target = ".session-list"
    empty_title = "Reading sessions…"
    empty_message = "The project's sessions appear once their transcripts have been read."

    sessions: reactive[tuple[SessionInfo, ...]] = reactive((), init=False)
    """The project's sessions, newest first."""
    notes: reactive[SessionNotes | None] = reactive(None, init=False, bindings=True)
    """The selected session's notes report."""
    show_text: reactive[bool] = reactive(False, init=False)
    """Show the notes file as text instead of the section bars."""

    class NotesRead(Message):
        """A session's notes were read and its trigger evaluated."""

        def __init__(self, notes: SessionNotes) -> None:
            super().__init__()
            self.notes = notes

    def __init__(self, *, autoload: bool = True, id: str | None = None) -> None:  # noqa: A002
        """`autoload=False` leaves loading to the caller (snapshots feed results directly)."""
        super().__init__(id=id)
        self._autoload = autoload
        self._loaded = False
        self._selected: str | None = None

    def compose_body(self) -> ComposeResult:
        yield OptionList(classes="session-list")
        with VerticalScroll(classes="session-detail"):
            yield Static(classes="session-header")
            yield Static(classes="session-missing")
            yield SectionBars()
            yield Static(classes="session-trigger")
            yield TriggerTimeline()
            yield Static(classes="session-trigger-table")
            yield Static(classes="session-text")

    # --- loading --------------------------------------------------------------------------

    def on_show(self) -> None:
        # Loading waits for the first time the pane is shown: start-up stays light.
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load_sessions()

    def _load_sessions(self) -> None:
        list_sessions(self, group="session-list")

    def _load_notes(self, session: SessionInfo) -> None:
        engine = self.engine
        self.read_in_thread(
            lambda: engine.context.session_notes(session),
            self.NotesRead,
            lambda error: ReadFailed(session.session_id[:8], error),
            group="session-notes",
        )

    @on(SessionsListed)
    def _sessions_listed(self, message: SessionsListed) -> None:
        message.stop()
        self.report_engine("engine: local transcripts")
        self.show_sessions(message.sessions)
        session = self.selected_session
        if session is not None:
            self._load_notes(session)

    @on(NotesRead)
    def _notes_read(self, message: NotesRead) -> None:
        message.stop()
        # A slow read must not replace what the cursor has moved on to.
        if message.notes.session.session_id == self._selected:
            self.notes = message.notes

    @on(ReadFailed)
    def _read_failed(self, message: ReadFailed) -> None:
        message.stop()
        if message.what == "sessions":
            self.set_empty("Cannot read the sessions", message.error)
        else:
            self.notify(
                message.error, title=f"Cannot read session {message.what}", severity="error"
            )

    # --- feeding --------------------------------------------------------------------------

    def show_sessions(self, sessions: tuple[SessionInfo, ...], select: str | None = None) -> None:
        """Show a session list; the cursor stays on the selected session if it is still there."""
        wanted = select or self._selected
        ids = [s.session_id for s in sessions]
        self._selected = wanted if wanted in ids else (ids[0] if ids else None)
        self.sessions = sessions
        if not sessions:
            self.set_empty(
                "No sessions yet",
                "Claude Code has not written a transcript for this project, so there are no "
                "session notes to show.",
            )

    def show_notes(self, notes: SessionNotes) -> None:
        """Show one session's notes (the snapshot tests feed results through here)."""
        self._selected = notes.session.session_id
        if not any(s.session_id == self._selected for s in self.sessions):
            self.sessions = (*self.sessions, notes.session)
        else:
            self._sync_cursor()
        self.hold_session(self.sessions, self._selected)
        self.notes = notes

    @property
    def selected_session(self) -> SessionInfo | None:
        """The session under the cursor."""
        return next((s for s in self.sessions if s.session_id == self._selected), None)

    # --- rendering ------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")

    def watch_sessions(self, sessions: tuple[SessionInfo, ...]) -> None:
        self.hold_session(sessions, self._selected)
        options = self.query_one(".session-list", OptionList)
        with options.prevent(OptionList.OptionHighlighted):
            options.set_options(Option(session_prompt(s), id=s.session_id) for s in sessions)
        self._sync_cursor()

    def _sync_cursor(self) -> None:
        options = self.query_one(".session-list", OptionList)
        if self._selected is None:
            return
        try:
            index = options.get_option_index(self._selected)
        except LookupError:
            return
        if options.highlighted != index:
            with options.prevent(OptionList.OptionHighlighted):
                options.highlighted = index

    def watch_notes(self, notes: SessionNotes | None) -> None:
        if notes is not None:
            self._render_notes(notes)
            self.has_content = True

    def watch_show_text(self, show_text: bool) -> None:
        self.set_class(show_text, "-text")

    def _render_notes(self, notes: SessionNotes) -> None:
        report = notes.report
        trigger = report.trigger
        self.border_title = session_title(notes.session, 40)
        self.query_one(".session-header", Static).update(header_content(notes))
        self.set_class(not report.exists, "-no-notes")
        self.set_class(not (trigger and trigger.points), "-no-points")
        self.query_one(".session-missing", Static).update(
            Content.styled(
                "Claude Code creates the notes file from the template at the first update, once "
                "the session has enough context (see the trigger below).",
                "$foreground-muted",
            )
        )
        self.query_one(SectionBars).report = report
        self.query_one(".session-trigger", Static).update(trigger_heading(notes))
        timeline = self.query_one(TriggerTimeline)
        timeline.messages = notes.messages
        timeline.trigger = trigger
        self.query_one(".session-trigger-table", Static).update(trigger_table(trigger))
        text = report.content if report.content is not None else "(no notes file)"
        self.query_one(".session-text", Static).update(Content(text.strip("\n")))

    # --- events and actions ---------------------------------------------------------------

    @on(OptionList.OptionHighlighted, ".session-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        session_id = event.option.id
        if session_id is None or session_id == self._selected:
            return
        self._selected = session_id
        self.hold_session(self.sessions, session_id)
        session = self.selected_session
        if session is not None and self._autoload:
            self._load_notes(session)

    @on(OptionList.OptionSelected, ".session-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The text view needs a session's notes on show.
        if action == "toggle_notes_text":
            return True if self.notes is not None else None
        return True

    def action_refresh_sessions(self) -> None:
        """Read the session list and the selected session's notes again."""
        self._loaded = True
        self._load_sessions()

    def action_toggle_notes_text(self) -> None:
        """Switch between the section bars and the notes file as text."""
        self.show_text = not self.show_text
