"""The token gauge pane: how full the context of a session is, on Claude Code's ladder.

For the chosen session (the newest by default) it draws the threshold ladder, says the
percent left exactly as Claude Code computes it, sets the measured usage beside the rough
estimates (and the cl100k count, computed later in a worker), names the model with its window
and output reserve, lists every environment override in force, follows the transcript live,
and plots the context size before every API call with compactions and the thresholds marked.

What it reads, and how it follows the transcript live, is `GaugeReading` in `gauge_reading`,
which the pane inherits; what it shows is built by the pure functions in `gauge_view`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Select, Static

from workbench.ui.actions import ActionSpec
from workbench.ui.panes.gauge_reading import GaugeReading
from workbench.ui.panes.gauge_view import (
    compactions_content,
    counts_content,
    engine_label,
    follow_content,
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
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.context.views import GaugeView

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

# --- the pane -------------------------------------------------------------------------------


class GaugePane(GaugeReading):
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
        self.query_one(".gauge-follow", Static).update(follow_content(self.following, self.updates))

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
