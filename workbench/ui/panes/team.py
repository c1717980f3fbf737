"""The team sync panel: where team memory syncs to, what a push would send, and how syncs went.

The engine's `TeamOverview` is read offline (no request) in a thread worker and arrives as
`TeamSyncPane.ReportLoaded`; what it shows is rendered by the pure functions in `team_view`.
The verbs (push, pull, watch, restore), their workers and their results are
`TeamSyncActions` in `team_actions`, which the pane inherits; pulled overwrites go through the
engine's history, so the main screen's undo reverts them. Secrets are shown by path, rule
and position only; the redaction preview is the file with each secret replaced by
`[REDACTED]`, made by the engine so the secret's text never reaches the pane's state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from workbench.ui.actions import ActionSpec
from workbench.ui.panes.team_actions import TeamSyncActions
from workbench.ui.panes.team_view import (
    KEYS_LEGEND,
    conflicts_content,
    engine_label,
    header_content,
    held_back_content,
    history_content,
    keys_rows,
    notices_content,
    overwrites_content,
    secrets_content,
)
from workbench.ui.widgets.rows_static import RowsStatic

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.content import Content

    from workbench.engine.team.models import TeamOverview

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "pull-team",
        "p",
        "pull_team",
        "Pull",
        "Sync: Pull team memory",
        "Fetch the team memory; the server wins per file (u undoes the overwrites)",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "push-team",
        "P",
        "push_team",
        "Push",
        "Sync: Push team memory",
        "Upload the team files that changed; files holding a secret never leave",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "toggle-watch",
        "w",
        "toggle_watch",
        "Watch",
        "Sync: Toggle watch",
        "Pull once, then push the team folder after each change settles; again to stop",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "force-push-team",
        "F",
        "force_push_team",
        "Force push",
        "Sync: Force push",
        "Push even though an earlier permanent failure suppressed pushes",
        scope="pane",
    ),
    ActionSpec(
        "cancel-push",
        "escape",
        "cancel_sync",
        "Cancel",
        "Sync: Cancel the push or pull",
        "Stop a running push after the batch in flight (what went up stays recorded), or a "
        "pull before its next file",
        scope="pane",
    ),
    ActionSpec(
        "restore-theirs",
        "o",
        "restore_overwritten",
        "Restore theirs",
        "Sync: Restore the teammate's version",
        "Put back the newest teammate's version a push overwrote (from history: u in the tree undoes it)",
        scope="pane",
    ),
    ActionSpec(
        "refresh-sync",
        "f5",
        "refresh_sync",
        "Refresh",
        "Sync: Refresh status",
        "Read the team folder and the saved sync state again (no request)",
        scope="pane",
    ),
)

# --- the pane ----------------------------------------------------------------------------


class TeamSyncPane(TeamSyncActions):
    """Team sync: server and repo, per-file state, conflicts, limits, secrets and history."""

    pane_id = "team"
    title = "Team sync"
    focus_target = ".team-scroll"
    empty_title = "Reading the team folder…"
    empty_message = "The sync status appears once the team folder and the saved state are read."

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]

    DEFAULT_CSS = """
    TeamSyncPane {
        & .team-header { padding: 1 0 0 0; }
        & .team-notices {
            margin: 1 0 0 0; padding: 0 1; border-left: outer $primary; background: $surface;
            &.-warning { border-left: outer $warning; }
            &.-error { border-left: outer $error; }
        }
        & .team-scroll { height: 1fr; margin: 1 0 0 0; scrollbar-size-vertical: 1; }
        & .team-section { margin: 0 0 1 0; }
        & .team-keys { text-wrap: nowrap; text-overflow: ellipsis; }
    }
    """

    report: reactive[TeamOverview | None] = reactive(
        None, init=False, bindings=True, always_update=True
    )
    """The latest offline status (every read re-renders, so relative times stay fresh)."""

    class ReportLoaded(Message):
        """The offline status was read."""

        def __init__(self, report: TeamOverview, keys: Sequence[Content] = ()) -> None:
            super().__init__()
            self.report = report
            self.keys = keys
            """The per-file table's rows, built with the report (off the UI thread)."""

    class ReportFailed(Message):
        """The status could not be read."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        *,
        report: TeamOverview | None = None,
        now_ms: Callable[[], float] | None = None,
        watch_debounce: float | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(watch_debounce=watch_debounce, id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._fed = report
        self._loaded = False
        self._keys: tuple[TeamOverview, Sequence[Content]] | None = None

    def compose_body(self) -> ComposeResult:
        yield Static(classes="team-header")
        yield Static(classes="team-notices")
        with VerticalScroll(classes="team-scroll"):
            yield Static(classes="team-section team-overwrites")
            yield RowsStatic(classes="team-keys")
            yield Static(KEYS_LEGEND, classes="team-section team-legend")
            yield Static(classes="team-section team-held")
            yield Static(classes="team-section team-secrets")
            yield Static(classes="team-section team-conflicts")
            yield Static(classes="team-section team-history")

    def on_mount(self) -> None:
        if self._fed is not None:
            self.show_report(self._fed)

    def on_show(self) -> None:
        # The status is read the first time the pane is shown: start-up stays light.
        if self._fed is None and not self._loaded:
            self._loaded = True
            self._load_report()

    # --- data in -----------------------------------------------------------------------

    def show_report(self, report: TeamOverview, keys: Sequence[Content] = ()) -> None:
        """Show a status report (also how snapshot tests feed the pane); `keys` are its
        per-file rows if they were built already."""
        self._keys = (report, keys) if keys else None
        self.report = report

    def _load_report(self) -> None:
        overview = self.engine.team.overview

        def read() -> tuple[TeamOverview, list[Content]]:
            report = overview()
            # A thousand files make a thousand rows: built here, not on the UI thread.
            return report, keys_rows(report.status)

        self.read_in_thread(
            read, lambda read: self.ReportLoaded(*read), self.ReportFailed, group="team-status"
        )

    @on(ReportLoaded)
    def _report_loaded(self, message: ReportLoaded) -> None:
        message.stop()
        self.show_report(message.report, message.keys)

    @on(ReportFailed)
    def _report_failed(self, message: ReportFailed) -> None:
        message.stop()
        self.set_empty("Cannot read the team sync status", message.error)

    # --- rendering ---------------------------------------------------------------------

    def watch_report(self, report: TeamOverview | None) -> None:
        if report is None:
            return
        now = self._now_ms()
        status = report.status
        overwrites = self.query_one(".team-overwrites", Static)
        overwrites.display = bool(status.overwrites)
        if status.overwrites:
            overwrites.update(overwrites_content(report, now))
        built = self._keys
        keys = built[1] if built is not None and built[0] is report else keys_rows(status)
        self.query_one(".team-keys", RowsStatic).set_rows(keys)
        self.query_one(".team-legend").display = bool(status.keys)
        self.query_one(".team-held", Static).update(held_back_content(report))
        self.query_one(".team-secrets", Static).update(secrets_content(report))
        self.query_one(".team-conflicts", Static).update(conflicts_content(status, now))
        self.query_one(".team-history", Static).update(history_content(status, now))
        self._render_header()
        self._render_notices()
        self.has_content = True
        self.report_engine(engine_label(report, watching=self.watching))

    def watch_watching(self, watching: bool) -> None:
        self._render_header()
        if self.report is not None:
            self.report_engine(engine_label(self.report, watching=watching))

    def watch_busy(self) -> None:
        self._render_header()

    def watch_last(self) -> None:
        self._render_notices()

    def _render_header(self) -> None:
        if self.report is not None:
            header = header_content(self.report, busy=self.busy, watching=self.watching)
            self.query_one(".team-header", Static).update(header)

    def _render_notices(self) -> None:
        if self.report is None:
            return
        content, level = notices_content(self.report, self.last)
        notices = self.query_one(".team-notices", Static)
        notices.display = bool(content)
        notices.set_class(level == "warning", "-warning")
        notices.set_class(level == "error", "-error")
        notices.update(content)

    # --- reading again -----------------------------------------------------------------

    def team_files_changed(self) -> None:
        """Team files changed on disk (the main screen's watcher saw it): read the status
        again, as the tree does, once it has been read at all and no sync is running (a sync
        reads it when it ends)."""
        if self._loaded and not self.busy:
            self._load_report()

    def action_refresh_sync(self) -> None:
        """Read the status again."""
        self._loaded = True
        self._load_report()
