"""The team sync panel: where team memory syncs to, what a push would send, and how syncs went.

The engine's `TeamOverview` is read offline (no request) in a thread worker and arrives as
`TeamSyncPane.ReportLoaded`; what it shows is rendered by the pure functions in `team_view`. Push, pull and watch are async workers in the exclusive group
"sync"; their results come back as messages and the status is read again. Pulled overwrites go
through the engine's history, so the main screen's undo reverts them. Secrets are shown by
path, rule and position only; the redaction preview is the file with each secret replaced by
`[REDACTED]`, made by the engine so the secret's text never reaches the pane's state.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.engine.models import Progress
from workbench.engine.team.sync.models import PushResult
from workbench.ui.actions import ActionSpec
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.panes.base import Pane
from workbench.ui.panes.review_view import plural
from workbench.ui.panes.team_view import (
    KEYS_LEGEND,
    LastSync,
    conflicts_content,
    engine_label,
    header_content,
    held_back_content,
    history_content,
    keys_rows,
    notices_content,
    overwrites_content,
    pull_summary,
    push_summary,
    secrets_content,
)
from workbench.ui.widgets.rows_static import RowsStatic

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.content import Content

    from workbench.engine.team.models import TeamOverview
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import PullResult

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
        "Put back the newest teammate's version a push overwrote (from history; u undoes it)",
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


class TeamSyncPane(Pane):
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
    watching: reactive[bool] = reactive(False, init=False, bindings=True)
    """The watcher is running (or starting)."""
    busy: reactive[str | None] = reactive(None, init=False, bindings=True)
    """What a sync worker is doing right now (`pushing…`), or None."""
    last: reactive[LastSync | None] = reactive(None, init=False)
    """The latest push, pull or watch event, in words."""

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

    class SyncFinished(Message):
        """A push or pull finished (by hand or from the watcher)."""

        def __init__(
            self, operation: str, result: PushResult | PullResult, repo: str, *, watch: bool = False
        ) -> None:
            super().__init__()
            self.operation = operation
            self.result = result
            self.repo = repo
            self.watch = watch

    class SyncFailed(Message):
        """A sync could not start (no server, token or repo)."""

        def __init__(self, operation: str, error: str) -> None:
            super().__init__()
            self.operation = operation
            self.error = error

    class WatchEvent(Message):
        """The watcher is live, or lifted a suppression."""

        def __init__(self, event: str, detail: str) -> None:
            super().__init__()
            self.event = event
            self.detail = detail

    class WatchStopped(Message):
        """The watcher stopped (flushing pending changes first)."""

    class PushCancelled(Message):
        """A push stopped between batches because the user cancelled it."""

        def __init__(self, uploaded: int, total: int) -> None:
            super().__init__()
            self.uploaded = uploaded
            self.total = total

    class PullCancelled(Message):
        """A pull stopped between files because the user cancelled it."""

        def __init__(self, written: int, total: int) -> None:
            super().__init__()
            self.written = written
            self.total = total

    class RestoreFinished(Message):
        """A teammate's replaced version was put back (or could not be)."""

        def __init__(self, key: str, error: str | None) -> None:
            super().__init__()
            self.key = key
            self.error = error

    def __init__(
        self,
        *,
        report: TeamOverview | None = None,
        now_ms: Callable[[], float] | None = None,
        watch_debounce: float | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._fed = report
        self._loaded = False
        self._watch_debounce = watch_debounce
        self._watch_stop: asyncio.Event | None = None
        self._sync_kind: Literal["push", "pull"] | None = None
        """The push or pull running now."""
        self._cancel_sync = False
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

    def on_unmount(self) -> None:
        # Let the watcher flush and save its state; the worker is cancelled right after.
        if self._watch_stop is not None:
            self._watch_stop.set()

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

    # --- actions -----------------------------------------------------------------------

    def _can_sync(self) -> bool:
        return (
            not self.busy and not self.watching and (self.report is None or self.report.available)
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("push_team", "pull_team"):
            return True if self._can_sync() else None
        if action == "force_push_team":
            suppressed = self.report is not None and self.report.status.suppressed_reason
            return True if (self._can_sync() and suppressed) else None
        if action == "toggle_watch":
            return True if (self.watching or self._can_sync()) else None
        if action == "cancel_sync":
            return True if self._sync_kind is not None else None
        if action == "restore_overwritten":
            restorable = self.report is not None and self.report.restorable
            return True if (restorable and not self.busy and not self.watching) else None
        return True

    EXPLAINED_ACTIONS = frozenset({"push_team", "pull_team", "force_push_team", "toggle_watch"})

    def why_disabled(self, action: str) -> str | None:
        if action not in self.EXPLAINED_ACTIONS or self.check_action(action, ()):
            return None
        if self.busy:
            return f"Wait a moment: {self.busy}"
        if self.watching:
            return "The watcher is syncing: w stops it first."
        if self.report is not None and self.report.problems:
            problem = self.report.problems[0]
            return f"{problem.problem}. {problem.fix}"
        if action == "force_push_team":
            return "Pushes are not suppressed, so there is nothing to force: P pushes."
        return None

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

    def action_restore_overwritten(self) -> None:
        """Put back the newest teammate's version a push replaced (undoable)."""
        report = self.report
        if report is None or not report.restorable or self.busy:
            return
        history_id = report.restorable[0]
        key = next(o.key for o in report.status.overwrites if o.history_id == history_id)
        self.busy = f"restoring the teammate's version of {key}…"
        self._run_restore(history_id, key)

    @work(thread=True, exclusive=True, group="team-restore", exit_on_error=False)
    def _run_restore(self, history_id: str, key: str) -> None:
        engine = self.engine
        try:
            engine.team.restore_overwritten(history_id)
        except WorkbenchError as exc:
            self.post_message(self.RestoreFinished(key, str(exc)))
            return
        self.post_message(self.RestoreFinished(key, None))

    @on(RestoreFinished)
    def _restore_finished(self, message: RestoreFinished) -> None:
        message.stop()
        self.busy = None
        if message.error is not None:
            self.last = LastSync(f"Cannot restore {message.key}: {message.error}.", "error")
            self.notify(message.error, title=f"Cannot restore {message.key}", severity="error")
        else:
            self.last = LastSync(
                f"Restored the teammate's version of {message.key}; the next push sends it."
            )
            # The main screen reports it with the undo hint and re-scans the memory folder.
            self.post_message(
                ChangeApplied(ChangeOutcome(f"restored the teammate's version of {message.key}"))
            )
        self._load_report()

    def action_push_team(self) -> None:
        """Push the team folder."""
        if self._can_sync():
            self.busy = "pushing…"
            self._run_sync("push")

    def action_force_push_team(self) -> None:
        """Push despite a suppression."""
        if self._can_sync():
            self.busy = "pushing (forced)…"
            self._run_sync("push", force=True)

    def action_cancel_sync(self) -> None:
        """Ask the running push to stop after the batch in flight (a pull, before its next
        file)."""
        if self._sync_kind is not None and not self._cancel_sync:
            self._cancel_sync = True
            self.busy = f"cancelling the {self._sync_kind}…"

    def action_pull_team(self) -> None:
        """Pull the team memory."""
        if self._can_sync():
            self.busy = "pulling…"
            self._run_sync("pull")

    def action_toggle_watch(self) -> None:
        """Start the watcher, or stop it (it flushes pending changes first)."""
        if self.watching:
            if self._watch_stop is not None:
                self.busy = "stopping watch…"
                self._watch_stop.set()
            return
        if self._can_sync():
            self.watching = True
            self.busy = "starting watch…"
            self._run_watch()

    # --- workers -----------------------------------------------------------------------

    async def _open_client(self, operation: str) -> TeamSyncClient | None:
        engine = self.engine
        try:
            # Reading the git config and the saved state is disk work: keep it off the loop.
            return await asyncio.to_thread(engine.team.sync_client)
        except WorkbenchError as exc:
            self.post_message(self.SyncFailed(operation, str(exc)))
            return None

    @work(exclusive=True, group="sync", exit_on_error=False, description="Syncing team memory")
    async def _run_sync(self, kind: Literal["push", "pull"], force: bool = False) -> None:
        """Push (`force`: despite a suppression) or pull, with progress in the header and
        esc cancelling between batches (a push) or files (a pull)."""
        client = await self._open_client(kind)
        if client is None:
            return
        self._sync_kind, self._cancel_sync = kind, False
        self.refresh_bindings()
        seen = Progress(f"{kind}ing", 0, 0)

        def progress(step: Progress) -> None:
            # Runs on the event loop between batches or files: show how far, or stop here.
            nonlocal seen
            seen = step
            if self._cancel_sync:
                raise OperationCancelled(f"{kind} cancelled")
            if step.total:
                self.busy = (
                    f"{kind}ing {step.done:,}/{step.total:,} entries ({step.fraction:.0%}) "
                    "· esc cancels"
                )

        result: PushResult | PullResult
        try:
            async with client:
                if kind == "push":
                    result = await client.push(force=force, on_progress=progress)
                else:
                    result = await client.pull(on_progress=progress)
        except OperationCancelled:
            cancelled = self.PushCancelled if kind == "push" else self.PullCancelled
            self.post_message(cancelled(seen.done, seen.total or 0))
            return
        finally:
            self._sync_kind = None
            self.refresh_bindings()
        self.post_message(self.SyncFinished(kind, result, client.repo))

    @work(exclusive=True, group="sync", exit_on_error=False, description="Watching team memory")
    async def _run_watch(self) -> None:
        client = await self._open_client("watch")
        if client is None:
            return
        repo = client.repo

        def report(event: str, result: Any) -> None:
            # Called on the event loop by the watcher, so posting is safe.
            if event in ("push", "pull"):
                self.post_message(self.SyncFinished(event, result, repo, watch=True))
            else:
                self.post_message(self.WatchEvent(event, str(result)))

        stop = asyncio.Event()
        self._watch_stop = stop
        watcher = self.engine.team.sync_watcher(
            client, debounce=self._watch_debounce, report=report
        )
        try:
            async with client:
                await watcher.run(stop)
        finally:
            self._watch_stop = None
            self.post_message(self.WatchStopped())

    # --- results -----------------------------------------------------------------------

    @on(SyncFinished)
    def _sync_finished(self, message: SyncFinished) -> None:
        message.stop()
        if not message.watch:
            self.busy = None
        result = message.result
        if isinstance(result, PushResult):
            summary = push_summary(result, message.repo)
            # The watcher pushes after every settled change; only news is worth a toast.
            if not (message.watch and summary.severity == "information" and not result.uploaded):
                self.notify(summary.text, title="Team sync", severity=summary.severity)
        else:
            summary = pull_summary(result, message.repo)
            if result.written:
                # The main screen reports it with the undo hint and re-scans the memory folder.
                written = result.written
                shown = ", ".join(written[:3]) + (" …" if len(written) > 3 else "")
                self.post_message(
                    ChangeApplied(
                        ChangeOutcome(
                            f"pulled {plural(len(written), 'team file')} from "
                            f"{message.repo} ({shown})"
                        )
                    )
                )
            elif not message.watch or summary.severity != "information":
                self.notify(summary.text, title="Team sync", severity=summary.severity)
        self.last = summary
        self._load_report()

    @on(SyncFailed)
    def _sync_failed(self, message: SyncFailed) -> None:
        message.stop()
        self.busy = None
        if message.operation == "watch":
            self.watching = False
        self.last = LastSync(f"Cannot {message.operation}: {message.error}.", "error")
        self.notify(message.error, title=f"Cannot {message.operation}", severity="error")

    @on(WatchEvent)
    def _watch_event(self, message: WatchEvent) -> None:
        message.stop()
        if message.event == "watching":
            self.busy = None
            self.last = LastSync("Watching the team folder: changes are pushed once they settle.")
        elif message.event == "unsuppressed":
            self.notify("A team file was deleted: pushes are allowed again.", title="Team sync")
            self._load_report()

    @on(PushCancelled)
    def _push_cancelled(self, message: PushCancelled) -> None:
        message.stop()
        self.busy = None
        text = (
            f"Push cancelled after {message.uploaded:,} of {message.total:,} changed "
            "entries; the next push sends the rest."
        )
        self.last = LastSync(text, "warning")
        self.notify(text, title="Team sync", severity="warning")
        self._load_report()

    @on(PullCancelled)
    def _pull_cancelled(self, message: PullCancelled) -> None:
        message.stop()
        self.busy = None
        text = (
            f"Pull cancelled after {message.written:,} of {message.total:,} entries; each "
            "file is whole, and the next pull fetches the rest."
        )
        self.last = LastSync(text, "warning")
        self.notify(text, title="Team sync", severity="warning")
        self._load_report()

    @on(WatchStopped)
    def _watch_stopped(self, message: WatchStopped) -> None:
        message.stop()
        self.watching = False
        self.busy = None
        self._load_report()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "sync" or event.state != WorkerState.ERROR:
            return
        self.busy = None
        self.watching = False
        error = worker.error
        text = f"{type(error).__name__}: {error}" if error else "unknown error"
        self.last = LastSync(f"Sync stopped unexpectedly ({text}).", "error")
        self.notify(text, title="Team sync failed", severity="error")
