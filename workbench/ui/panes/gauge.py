"""The token gauge pane: how full the context of a session is, on Claude Code's ladder.

For the chosen session (the newest by default) it draws the threshold ladder, says the
percent left exactly as Claude Code computes it, sets the measured usage beside the rough
estimates (and the cl100k count, computed later in a worker), names the model with its window
and output reserve, lists every environment override in force, follows the transcript live,
and plots the context size before every API call with compactions and the thresholds marked.

Workers: the session list, the gauge reading, the replay and token measurements run in thread
workers; live follow is a long-lived thread worker in the exclusive `watch` group that reads
only appended bytes and stops when the toggle, the `watch_files` setting or the pane says so.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Select, Static
from textual.worker import get_current_worker

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.ui.actions import ActionSpec
from workbench.ui.panes.base import Pane
from workbench.ui.panes.gauge_view import (
    compactions_content,
    counts_content,
    engine_label,
    model_content,
    overrides_content,
    plot_title,
    reading_content,
    session_label,
)
from workbench.ui.widgets.context_plot import ContextPlot, PlotSeries
from workbench.ui.widgets.threshold_ladder import ThresholdLadder

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.transcript import SessionInfo
    from workbench.engine.context.views import GaugeView
    from workbench.engine.progress import Progress

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-gauge",
        "f5",
        "refresh_gauge",
        "Refresh",
        "Gauge: Refresh",
        "Read the session list, the gauge, the plot and the token counts again",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "toggle-follow",
        "f",
        "toggle_follow",
        "Follow",
        "Gauge: Toggle live follow",
        "Start or stop following the transcript as Claude Code writes it",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "pick-gauge-session",
        "s",
        "pick_session",
        "Session",
        "Gauge: Pick session",
        "Choose which session's transcript the gauge reads",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "cancel-replay",
        "escape",
        "cancel_replay",
        "Cancel",
        "Gauge: Cancel the replay",
        "Stop replaying a big transcript for the plot (f5 runs it again)",
        scope="pane",
    ),
)
"""The pane's actions, for the palette, the help screen and the keymap."""

WIDE = 100
"""From this width the counts and the overrides sit side by side."""
ANALYSIS_DELAY = 1.5
"""Seconds of quiet after a live change before the plot and the counts are recomputed."""

# --- the pane -------------------------------------------------------------------------------


class GaugePane(Pane):
    """The threshold ladder, counts, overrides and per-call plot for one session, live."""

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]

    DEFAULT_CSS = """
    GaugePane {
        .gauge-body { height: 1fr; scrollbar-size-vertical: 1; }
        .gauge-top { height: 1; margin-top: 1; }
        .gauge-session { width: 1fr; }
        .gauge-follow { width: auto; padding-left: 2; }
        .gauge-model, .gauge-reading, ThresholdLadder, .gauge-plot-title { margin-top: 1; }
        .gauge-facts { height: auto; margin-top: 1; layout: vertical; }
        &.-wide .gauge-facts { layout: horizontal; }
        .gauge-counts { width: auto; height: auto; }
        .gauge-overrides { width: 1fr; height: auto; margin-top: 1; }
        &.-wide .gauge-overrides { margin-top: 0; padding-left: 4; }
        ContextPlot { height: 1fr; min-height: 10; }
        .gauge-compactions { margin-top: 1; }
        .gauge-notes { color: $text-warning; }
    }
    """

    pane_id = "gauge"
    title = "Token gauge"
    focus_target = ".gauge-body"
    empty_title = "Reading the transcript…"
    empty_message = "The gauge appears once the newest session's transcript has been read."

    sessions: reactive[tuple[SessionInfo, ...]] = reactive((), init=False, bindings=True)
    """The project's sessions, newest first (the picker's choices)."""
    session_id: reactive[str | None] = reactive(None, init=False)
    """The session the gauge reads."""
    report: reactive[GaugeReport | None] = reactive(None, init=False)
    """The latest gauge reading."""
    replay: reactive[ReplayReport | None] = reactive(None, init=False)
    """The turn-by-turn replay behind the plot."""
    measurements: reactive[TokenMeasurements | None] = reactive(None, init=False)
    """The rough and cl100k counts (computed after the reading)."""
    following: reactive[bool] = reactive(False, init=False)
    """Whether the transcript is followed live."""
    updates: reactive[int] = reactive(0, init=False)
    """Live readings received since following started."""

    class SessionsListed(Message):
        """The session list was read."""

        def __init__(self, sessions: tuple[SessionInfo, ...]) -> None:
            super().__init__()
            self.sessions = sessions

    class GaugeRead(Message):
        """A gauge reading, from a one-off read or from the follower."""

        def __init__(self, session_id: str, report: GaugeReport, *, live: bool) -> None:
            super().__init__()
            self.session_id = session_id
            self.report = report
            self.live = live

    class ReplayRead(Message):
        """The transcript was replayed call by call."""

        def __init__(self, session_id: str, replay: ReplayReport) -> None:
            super().__init__()
            self.session_id = session_id
            self.replay = replay

    class ReplayProgress(Message):
        """How far the replay behind the plot has read (a fraction of the file)."""

        def __init__(self, session_id: str, fraction: float | None) -> None:
            super().__init__()
            self.session_id = session_id
            self.fraction = fraction

    class ReplayCancelled(Message):
        """The replay was cancelled before it finished."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class Measured(Message):
        """The messages were counted with the rough estimate and cl100k."""

        def __init__(self, session_id: str, measurements: TokenMeasurements) -> None:
            super().__init__()
            self.session_id = session_id
            self.measurements = measurements

    class ReadFailed(Message):
        """Something could not be read; `what` says which part."""

        def __init__(self, what: str, error: str, session_id: str | None = None) -> None:
            super().__init__()
            self.what = what
            self.error = error
            self.session_id = session_id

    def __init__(
        self,
        *,
        autoload: bool = True,
        follow: bool | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        """`follow=None` follows live unless the app's `watch_files` setting is off;
        `autoload=False` leaves loading to the caller (snapshots feed a `GaugeView`)."""
        super().__init__(id=id)
        self._autoload = autoload
        self._follow_setting = follow
        self._loaded = False
        self._analysed: tuple[str, int] | None = None
        self._analysis_timer: Timer | None = None
        self._replaying = False
        self._replay_progress: float | None = None
        self._replay_cancelled = False
        self._plot_series: PlotSeries | None = None

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="gauge-body"):
            with Horizontal(classes="gauge-top"):
                yield Select[str]([], prompt="Session", compact=True, classes="gauge-session")
                yield Static(classes="gauge-follow")
            yield Static(classes="gauge-model")
            yield Static(classes="gauge-reading")
            yield ThresholdLadder()
            with Horizontal(classes="gauge-facts"):
                yield Static(classes="gauge-counts")
                yield Static(classes="gauge-overrides")
            yield Static(classes="gauge-plot-title")
            yield ContextPlot()
            yield Static(classes="gauge-compactions")
            yield Static(classes="gauge-notes")

    def on_mount(self) -> None:
        self._render_follow()

    # --- loading --------------------------------------------------------------------------

    def on_show(self) -> None:
        # Loading waits for the first time the pane is shown: start-up stays light.
        if self._autoload and not self._loaded:
            self._loaded = True
            self.set_reactive(GaugePane.following, self._follow_wanted())
            self._render_follow()
            self._load_sessions()

    def _follow_wanted(self) -> bool:
        if self._follow_setting is not None:
            return self._follow_setting
        settings = self.settings
        return True if settings is None else bool(settings.watch_files)

    def _load_sessions(self) -> None:
        context = self.engine.context
        self.read_in_thread(
            lambda: tuple(context.sessions()),
            self.SessionsListed,
            lambda error: self.ReadFailed("sessions", error),
            group="gauge-sessions",
        )

    def _read_gauge(self, session_id: str) -> None:
        context = self.engine.context
        self.read_in_thread(
            lambda: context.gauge(session=session_id),
            lambda report: self.GaugeRead(session_id, report, live=False),
            lambda error: self.ReadFailed("gauge", error, session_id),
            group="gauge-read",
        )

    @work(thread=True, exclusive=True, group="watch", name="gauge-follow", exit_on_error=False)
    def _follow(self, session_id: str) -> None:
        # The follower reads only what was appended; `watch` wakes at least every 0.5 s to
        # check the stop flag, so cancelling this worker ends the thread promptly.
        worker = get_current_worker()
        try:
            follower = self.engine.context.follower(session=session_id)
            for report in follower.watch(stop=worker.cancelled_event.is_set):
                if worker.is_cancelled:
                    return
                self.post_message(self.GaugeRead(session_id, report, live=True))
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.ReadFailed("follow", str(exc), session_id))

    @work(thread=True, exclusive=True, group="gauge-analysis", exit_on_error=False)
    def _analyse(self, session_id: str, path: str) -> None:
        context = self.engine.context
        worker = get_current_worker()

        def progress(step: Progress) -> None:
            # Called in this thread by the replay: the way to stop it, and to show how far.
            if worker.is_cancelled:
                raise OperationCancelled("replay cancelled")
            self.post_message(self.ReplayProgress(session_id, step.fraction))

        try:
            replay = context.replay(path, on_progress=progress)
        except OperationCancelled:
            self.post_message(self.ReplayCancelled(session_id))
            return
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.ReadFailed("replay", str(exc), session_id))
            return
        if worker.is_cancelled:
            return
        self.post_message(self.ReplayRead(session_id, replay))
        try:
            measurements = context.measure(path, tiktoken=True)
        except ImportError:
            measurements = context.measure(path, tiktoken=False)
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.ReadFailed("counts", str(exc), session_id))
            return
        if not worker.is_cancelled:
            self.post_message(self.Measured(session_id, measurements))

    # --- results --------------------------------------------------------------------------

    @on(SessionsListed)
    def _sessions_listed(self, message: SessionsListed) -> None:
        message.stop()
        self.sessions = message.sessions
        if not message.sessions:
            self._stop_following()
            self.set_empty(
                "No sessions yet",
                "Claude Code has not written a transcript for this project, so there is no "
                "context to measure.",
            )
            return
        ids = [s.session_id for s in message.sessions]
        if self.session_id not in ids:
            self.open_session(ids[0])
        else:
            self._sync_picker()

    @on(GaugeRead)
    def _gauge_read(self, message: GaugeRead) -> None:
        message.stop()
        if message.session_id != self.session_id:
            return
        previous = self.report
        if (
            message.live
            and previous is not None
            and previous.size_bytes != message.report.size_bytes
        ):
            self.updates += 1
        self.report = message.report
        size = message.report.size_bytes
        if self._analysed is None or self._analysed[0] != message.session_id:
            self._start_analysis(message.session_id, message.report.transcript or "", size)
        elif self._analysed[1] != size:
            # Live bursts: recompute the plot and the counts once the file is quiet again.
            if self._analysis_timer is not None:
                self._analysis_timer.stop()
            self._analysis_timer = self.set_timer(
                ANALYSIS_DELAY,
                partial(
                    self._start_analysis, message.session_id, message.report.transcript or "", size
                ),
            )

    def _start_analysis(self, session_id: str, path: str, size: int) -> None:
        if session_id != self.session_id or not path or self._replay_cancelled:
            return
        self._analysed = (session_id, size)
        self._replaying = True
        self._replay_progress = None
        self.refresh_bindings()
        self._analyse(session_id, path)

    def _replay_done(self) -> None:
        self._replaying = False
        self._replay_progress = None
        self.refresh_bindings()

    @on(ReplayRead)
    def _replay_read(self, message: ReplayRead) -> None:
        message.stop()
        if message.session_id == self.session_id:
            self._replay_done()
            self.replay = message.replay

    @on(ReplayProgress)
    def _replay_progressed(self, message: ReplayProgress) -> None:
        message.stop()
        if message.session_id == self.session_id and self._replaying:
            self._replay_progress = message.fraction
            self._render_plot()

    @on(ReplayCancelled)
    def _replay_cancelled_message(self, message: ReplayCancelled) -> None:
        message.stop()
        # A replay replaced by a newer one is cancelled too; only the user's cancel shows.
        if message.session_id == self.session_id and self._replay_cancelled:
            self._replay_done()
            self._render_plot()

    def action_cancel_replay(self) -> None:
        """Stop the replay behind the plot (the reading and the counts stay); live changes
        do not start it again until f5 or another session."""
        if self._replaying:
            self._replay_cancelled = True
            self.workers.cancel_group(self, "gauge-analysis")
            self._render_plot()

    @on(Measured)
    def _measured(self, message: Measured) -> None:
        message.stop()
        if message.session_id == self.session_id:
            self.measurements = message.measurements

    @on(ReadFailed)
    def _read_failed(self, message: ReadFailed) -> None:
        message.stop()
        if message.what == "sessions":
            self.set_empty("Cannot read the sessions", message.error)
        elif message.session_id not in (None, self.session_id):
            return
        elif message.what in ("gauge", "follow") and self.report is None:
            self.set_empty("Cannot read the transcript", message.error)
        else:
            self.notify(
                message.error, title=f"Gauge: cannot read the {message.what}", severity="error"
            )
        if message.what == "follow":
            self.set_reactive(GaugePane.following, False)
            self._render_follow()

    # --- feeding --------------------------------------------------------------------------

    def open_session(self, session_id: str) -> None:
        """Point the gauge at another session and read it (following it if follow is on)."""
        self._stop_following()
        self.session_id = session_id
        self.report = None
        self.replay = None
        self.measurements = None
        self._analysed = None
        self._replay_cancelled = False
        self._replay_done()
        self._plot_series = None
        if self._analysis_timer is not None:
            self._analysis_timer.stop()
        self.updates = 0
        if self.following:
            self._follow(session_id)
        else:
            self._read_gauge(session_id)

    def show_view(self, view: GaugeView) -> None:
        """Show a whole view at once (snapshot tests; no worker runs)."""
        self.sessions = view.sessions
        self.set_reactive(GaugePane.session_id, view.report.session_id)
        self._sync_picker()
        self._analysed = (view.report.session_id or "", view.report.size_bytes)
        self.report = view.report
        self.replay = view.replay
        self.measurements = view.measurements

    # --- rendering ------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")

    def watch_sessions(self, sessions: tuple[SessionInfo, ...]) -> None:
        self.hold_session(sessions, self.session_id)
        picker = self.query_one(".gauge-session", Select)
        with picker.prevent(Select.Changed):
            picker.set_options((session_label(s), s.session_id) for s in sessions)
        self._sync_picker()

    def watch_session_id(self) -> None:
        self.hold_session(self.sessions, self.session_id)
        self._sync_picker()

    def _sync_picker(self) -> None:
        picker = self.query_one(".gauge-session", Select)
        if self.session_id is None or self.session_id == picker.value:
            return
        if any(s.session_id == self.session_id for s in self.sessions):
            with picker.prevent(Select.Changed):
                picker.value = self.session_id

    def watch_report(self, report: GaugeReport | None) -> None:
        self.query_one(ThresholdLadder).report = report
        if report is None:
            self.query_one(".gauge-reading", Static).update(
                Content.styled("Reading the transcript…", "$foreground-muted")
            )
            self._render_plot()
            return
        self.query_one(".gauge-model", Static).update(model_content(report))
        self.query_one(".gauge-reading", Static).update(reading_content(report))
        self.query_one(".gauge-counts", Static).update(counts_content(report, self.measurements))
        self.query_one(".gauge-overrides", Static).update(overrides_content(report))
        notes = self.query_one(".gauge-notes", Static)
        lines = [*report.notes, *report.problems]
        notes.update(Content("\n").join(f"Note: {line}" for line in lines))
        notes.display = bool(lines)
        self._render_plot()
        self.has_content = True
        self.report_engine(engine_label(report, following=self.following))

    def watch_replay(self, replay: ReplayReport | None) -> None:
        self._plot_series = PlotSeries.from_replay(replay) if replay is not None else None
        compactions = self.query_one(".gauge-compactions", Static)
        compactions.update(compactions_content(replay))
        compactions.display = bool(replay and replay.compactions)
        self._render_plot()

    def watch_measurements(self, measurements: TokenMeasurements | None) -> None:
        if self.report is not None:
            self.query_one(".gauge-counts", Static).update(
                counts_content(self.report, measurements)
            )

    def _render_plot(self) -> None:
        plot = self.query_one(ContextPlot)
        self.query_one(".gauge-plot-title", Static).update(
            plot_title(
                self.replay,
                self.report,
                progress=self._replay_progress if self._replaying else None,
                cancelled=self._replay_cancelled,
            )
        )
        series = self._plot_series
        if series is not None and self.report is not None:
            series = series.with_now(self.report.used)
        plot.series = series

    def watch_following(self, following: bool) -> None:
        self._render_follow()
        if self.report is not None:
            self.report_engine(engine_label(self.report, following=following))

    def watch_updates(self) -> None:
        self._render_follow()

    def _render_follow(self) -> None:
        label = self.query_one(".gauge-follow", Static)
        if self.following:
            count = (
                f" · {self.updates} update{'s' if self.updates != 1 else ''}"
                if self.updates
                else ""
            )
            label.update(
                Content.assemble(
                    ("● ", "$text-success"), ("following", "bold"), (count, "$foreground-muted")
                )
            )
        else:
            label.update(
                Content.assemble(
                    ("○ ", "$foreground-muted"), ("not following", "$foreground-muted")
                )
            )

    # --- events and actions ---------------------------------------------------------------

    @on(Select.Changed, ".gauge-session")
    def _picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.session_id:
            self.open_session(event.value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Following and picking need a session; refresh is always there.
        if action in ("toggle_follow", "pick_session"):
            return True if self.sessions else None
        if action == "cancel_replay":
            return True if self._replaying else None
        return True

    def _stop_following(self) -> None:
        self.workers.cancel_group(self, "watch")

    def action_refresh_gauge(self) -> None:
        """Read the session list, the gauge, the plot and the counts again."""
        self._loaded = True
        self._load_sessions()
        self._replay_cancelled = False
        if self.session_id is not None:
            session_id = self.session_id
            self._analysed = None
            if self.following:
                self._follow(session_id)
            else:
                self._read_gauge(session_id)

    def action_toggle_follow(self) -> None:
        """Start or stop following the transcript."""
        self.following = not self.following
        if self.following:
            self.updates = 0
            if self.session_id is not None:
                self._follow(self.session_id)
        else:
            self._stop_following()

    def action_pick_session(self) -> None:
        """Open the session picker."""
        picker = self.query_one(".gauge-session", Select)
        picker.focus()
        picker.expanded = True
