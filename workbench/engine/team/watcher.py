"""Watch the team folder and push after edits settle (spec 03 §6.6).

One pull before watching (so its writes trigger nothing), then every change restarts a
debounce timer (2 s by default; a parameter so tests need not sleep); a timer that fires while
a push is still running re-arms itself instead of starting a second push. On shutdown the
timer is dropped, the running push awaited, and one last push flushes pending changes unless
pushes are suppressed. Deleting a file lifts a suppression, as in Claude Code.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from workbench.engine.team.sync.protocol import DEBOUNCE_SECONDS

if TYPE_CHECKING:
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import PullResult, PushResult

log = logging.getLogger(__name__)

Reporter = Callable[[str, Any], None]


class PushScheduler:
    """Debounced, never-overlapping pushes."""

    def __init__(
        self,
        push: Callable[[], Awaitable[Any]],
        *,
        debounce: float = DEBOUNCE_SECONDS,
        is_suppressed: Callable[[], bool] = lambda: False,
    ) -> None:
        self._push = push
        self.debounce = debounce
        self._is_suppressed = is_suppressed
        self._timer: asyncio.TimerHandle | None = None
        self._inflight: asyncio.Task[Any] | None = None
        self.pending = False
        """Changes seen that no successful push has carried yet."""
        self.pushes_started = 0

    @property
    def push_in_flight(self) -> bool:
        return self._inflight is not None and not self._inflight.done()

    def notify(self) -> None:
        """A change happened: (re)start the debounce timer."""
        self.pending = True
        self._arm()

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.debounce, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self.push_in_flight:
            self._arm()  # wait for the running push rather than overlapping it
            return
        if self._is_suppressed():
            return  # pending stays set; a later event (or lifting) tries again
        self._inflight = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> Any:
        self.pending = False  # changes from here on need another push
        self.pushes_started += 1
        try:
            result = await self._push()
        except Exception:
            log.exception("team memory push failed")
            self.pending = True
            return None
        if not getattr(result, "ok", True):
            self.pending = True
        return result

    async def aclose(self) -> Any:
        """Drop the timer, await the running push, then flush once if needed."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._inflight is not None:
            await asyncio.shield(self._inflight)
        if self.pending and not self._is_suppressed():
            return await self._run()
        return None


class TeamWatcher:
    """Pull once, then push the team folder on change until `stop` is set."""

    def __init__(
        self,
        client: TeamSyncClient,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        report: Reporter | None = None,
        force_polling: bool | None = None,
    ) -> None:
        self.client = client
        self.debounce = debounce
        self._report = report or (lambda _op, _result: None)
        self._force_polling = force_polling
        self.scheduler = PushScheduler(
            self._push, debounce=debounce, is_suppressed=self._suppressed
        )
        self.watching = asyncio.Event()
        """Set once file events are being delivered (tests wait on it)."""

    def _suppressed(self) -> bool:
        return self.client.state.push_suppressed_reason is not None

    async def _push(self) -> PushResult:
        result = await self.client.push()
        self._report("push", result)
        return result

    def notify_write(self) -> None:
        """The app wrote a team file itself: push it like any watched change."""
        self.scheduler.notify()

    async def initial_pull(self) -> PullResult:
        """The pull done before watching; a fresh session ignores the ETag cache."""
        self.client.state.lift_suppression()  # a new watcher is a new session
        result = await self.client.pull(skip_etag_cache=True)
        self._report("pull", result)
        return result

    async def run(self, stop: asyncio.Event) -> None:
        """Pull, watch until `stop` is set, then flush."""
        import watchfiles

        await self.initial_pull()
        team_dir = self.client.team_dir
        os.makedirs(team_dir, exist_ok=True)
        try:
            watch = watchfiles.awatch(
                team_dir,
                stop_event=stop,
                watch_filter=None,  # every file counts, as fs.watch reports them all
                debounce=50,  # our own debounce decides when to push
                step=20,
                recursive=True,
                force_polling=self._force_polling,
            )
            self.watching.set()
            self._report("watching", team_dir)
            async for changes in watch:
                self._on_changes(changes)
        finally:
            flushed = await self.scheduler.aclose()
            if flushed is not None:
                self._report("push", flushed)
            self.client.save_state()

    def _on_changes(self, changes: set[tuple[Any, str]]) -> None:
        import watchfiles

        if self._suppressed():
            for change, path in changes:
                if change == watchfiles.Change.deleted or not os.path.lexists(path):
                    self.client.lift_suppression()
                    self._report("unsuppressed", path)
                    break
        self.scheduler.notify()
