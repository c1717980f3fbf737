"""What the token gauge reads, and how it keeps up: the session list, the gauge reading (once,
or followed live), and the replay and token counts behind the plot.

`GaugePane` (panes/gauge.py) lays the reading out and inherits this. The session list, the
reading, the replay and the counts run in thread workers; live follow is a long-lived thread
worker in the exclusive `watch` group that reads only appended bytes and stops when the
toggle, the `watch_files` setting or the pane says so. Live bursts recompute the plot and the
counts once the transcript has been quiet for `ANALYSIS_DELAY` seconds.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual import on, work
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.worker import get_current_worker

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.ui.panes.base import Pane
from workbench.ui.panes.session_reading import ReadFailed, SessionsListed, list_sessions

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.progress import Progress
    from workbench.ui.widgets.context_plot import PlotSeries

ANALYSIS_DELAY = 1.5
"""Seconds of quiet after a live change before the plot and the counts are recomputed."""


class GaugeReading(Pane):
    """The gauge's reads and live follow; the pane provides the layout and the rendering."""

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

    if TYPE_CHECKING:
        # Provided by GaugePane.
        _plot_series: PlotSeries | None

        def _sync_picker(self) -> None: ...
        def _render_plot(self) -> None: ...
        def _render_follow(self) -> None: ...

    class GaugeRead(Message, namespace="gauge_pane"):
        """A gauge reading, from a one-off read or from the follower."""

        def __init__(self, session_id: str, report: GaugeReport, *, live: bool) -> None:
            super().__init__()
            self.session_id = session_id
            self.report = report
            self.live = live

    class ReplayRead(Message, namespace="gauge_pane"):
        """The transcript was replayed call by call."""

        def __init__(self, session_id: str, replay: ReplayReport) -> None:
            super().__init__()
            self.session_id = session_id
            self.replay = replay

    class ReplayProgress(Message, namespace="gauge_pane"):
        """How far the replay behind the plot has read (a fraction of the file)."""

        def __init__(self, session_id: str, fraction: float | None) -> None:
            super().__init__()
            self.session_id = session_id
            self.fraction = fraction

    class ReplayCancelled(Message, namespace="gauge_pane"):
        """The replay was cancelled before it finished."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class Measured(Message, namespace="gauge_pane"):
        """The messages were counted with the rough estimate and cl100k."""

        def __init__(self, session_id: str, measurements: TokenMeasurements) -> None:
            super().__init__()
            self.session_id = session_id
            self.measurements = measurements

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._analysed: tuple[str, int] | None = None
        self._analysis_timer: Timer | None = None
        self._replaying = False
        self._replay_progress: float | None = None
        self._replay_cancelled = False

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

    def _stop_following(self) -> None:
        self.workers.cancel_group(self, "watch")

    # --- workers -------------------------------------------------------------------------

    def _load_sessions(self) -> None:
        list_sessions(self, group="gauge-sessions")

    def _read_gauge(self, session_id: str) -> None:
        context = self.engine.context
        self.read_in_thread(
            lambda: context.gauge(session=session_id),
            lambda report: self.GaugeRead(session_id, report, live=False),
            lambda error: ReadFailed("gauge", error, session_id),
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
            self.post_message(ReadFailed("follow", str(exc), session_id))

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
            self.post_message(ReadFailed("replay", str(exc), session_id))
            return
        if worker.is_cancelled:
            return
        self.post_message(self.ReplayRead(session_id, replay))
        try:
            measurements = context.measure(path, tiktoken=True)
        except ImportError:
            measurements = context.measure(path, tiktoken=False)
        except (WorkbenchError, OSError) as exc:
            self.post_message(ReadFailed("counts", str(exc), session_id))
            return
        if not worker.is_cancelled:
            self.post_message(self.Measured(session_id, measurements))

    # --- results -------------------------------------------------------------------------

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
            self.set_reactive(GaugeReading.following, False)
            self._render_follow()
