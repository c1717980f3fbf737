"""Push, pull, watch and restore for the team sync pane: the verbs, when each applies, their
workers, the messages those post back and what the pane does with each result.

`TeamSyncPane` (panes/team.py) shows the status and inherits these. Push, pull and watch are
async workers in the exclusive group "sync"; after each, the status is read again. Pulled
overwrites and restored versions go through the engine's history and are reported to the main
screen as `ChangeApplied`, so its undo reverts them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from textual import on, work
from textual.message import Message
from textual.reactive import reactive
from textual.worker import Worker, WorkerState

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.engine.models import Progress
from workbench.engine.team.sync.models import PushResult
from workbench.ui.formatting import plural
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.panes.base import Pane
from workbench.ui.panes.team_view import LastSync, pull_summary, push_summary

if TYPE_CHECKING:
    from workbench.engine.team.models import TeamOverview
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import PullResult


class TeamSyncActions(Pane):
    """The team pane's sync verbs and their workers; the pane provides the status."""

    watching: reactive[bool] = reactive(False, init=False, bindings=True)
    """The watcher is running (or starting)."""
    busy: reactive[str | None] = reactive(None, init=False, bindings=True)
    """What a sync worker is doing right now (`pushing…`), or None."""
    last: reactive[LastSync | None] = reactive(None, init=False)
    """The latest push, pull or watch event, in words."""

    if TYPE_CHECKING:
        # Provided by TeamSyncPane.
        report: TeamOverview | None

        def _load_report(self) -> None: ...

    class SyncFinished(Message, namespace="team_sync_pane"):
        """A push or pull finished (by hand or from the watcher)."""

        def __init__(
            self, operation: str, result: PushResult | PullResult, repo: str, *, watch: bool = False
        ) -> None:
            super().__init__()
            self.operation = operation
            self.result = result
            self.repo = repo
            self.watch = watch

    class SyncFailed(Message, namespace="team_sync_pane"):
        """A sync could not start (no server, token or repo)."""

        def __init__(self, operation: str, error: str) -> None:
            super().__init__()
            self.operation = operation
            self.error = error

    class WatchEvent(Message, namespace="team_sync_pane"):
        """The watcher is live, or lifted a suppression."""

        def __init__(self, event: str, detail: str) -> None:
            super().__init__()
            self.event = event
            self.detail = detail

    class WatchStopped(Message, namespace="team_sync_pane"):
        """The watcher stopped (flushing pending changes first)."""

    class PushCancelled(Message, namespace="team_sync_pane"):
        """A push stopped between batches because the user cancelled it."""

        def __init__(self, uploaded: int, total: int) -> None:
            super().__init__()
            self.uploaded = uploaded
            self.total = total

    class PullCancelled(Message, namespace="team_sync_pane"):
        """A pull stopped between files because the user cancelled it."""

        def __init__(self, written: int, total: int) -> None:
            super().__init__()
            self.written = written
            self.total = total

    class RestoreFinished(Message, namespace="team_sync_pane"):
        """A teammate's replaced version was put back (or could not be)."""

        def __init__(self, key: str, error: str | None) -> None:
            super().__init__()
            self.key = key
            self.error = error

    def __init__(
        self,
        *,
        watch_debounce: float | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._watch_debounce = watch_debounce
        self._watch_stop: asyncio.Event | None = None
        self._sync_kind: Literal["push", "pull"] | None = None
        """The push or pull running now."""
        self._cancel_sync = False

    def on_unmount(self) -> None:
        # Let the watcher flush and save its state; the worker is cancelled right after.
        if self._watch_stop is not None:
            self._watch_stop.set()

    # --- when each verb applies --------------------------------------------------------

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

    # --- the verbs ---------------------------------------------------------------------

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

    def action_restore_overwritten(self) -> None:
        """Put back the newest teammate's version a push replaced (undoable)."""
        report = self.report
        if report is None or not report.restorable or self.busy:
            return
        history_id = report.restorable[0]
        key = next(o.key for o in report.status.overwrites if o.history_id == history_id)
        self.busy = f"restoring the teammate's version of {key}…"
        self._run_restore(history_id, key)

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

    @work(thread=True, exclusive=True, group="team-restore", exit_on_error=False)
    def _run_restore(self, history_id: str, key: str) -> None:
        engine = self.engine
        try:
            engine.team.restore_overwritten(history_id)
        except WorkbenchError as exc:
            self.post_message(self.RestoreFinished(key, str(exc)))
            return
        self.post_message(self.RestoreFinished(key, None))

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
            f"Pull cancelled after {message.written:,} of {plural(message.total, 'entry')}; each "
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
