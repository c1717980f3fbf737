"""Progress of long work, reported through an `on_progress` callback (the engine never prints).

Long operations (a secret scan of many files, a replay of a big transcript, a push of a large
team folder) take `on_progress: ProgressCallback | None`. They call it now and then with a
`Progress`; the front end draws it (a line on a terminal's stderr, a bar in a pane). The same
callback is the way to cancel: raising `OperationCancelled` from it stops the work at that step.

Reports are throttled here (`Reporter`), so the work pays for a clock read every few items and
the callback runs at most every `interval` seconds, plus once at the start and once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from workbench.engine.records import Record


class Progress(Record):
    """How far one operation has got."""

    task: str
    """What is running, in a few words: "scanning", "replaying", "pushing"."""
    done: int
    total: int | None
    """None when the total is not known in advance."""
    unit: str = "items"
    detail: str = ""
    """The current item (a file name, a batch), never secret text."""

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total


ProgressCallback = Callable[[Progress], None]

DEFAULT_INTERVAL = 0.1
"""Seconds between two reports of one operation (besides its first and last)."""


class Reporter:
    """Throttles calls to a progress callback; a no-op when there is none."""

    __slots__ = ("_callback", "_interval", "_last", "task", "total", "unit")

    def __init__(
        self,
        callback: ProgressCallback | None,
        task: str,
        total: int | None = None,
        *,
        unit: str = "items",
        interval: float | None = None,
    ) -> None:
        self._callback = callback
        self.task, self.total, self.unit = task, total, unit
        self._interval = DEFAULT_INTERVAL if interval is None else interval
        self._last = float("-inf")

    @property
    def active(self) -> bool:
        return self._callback is not None

    def __call__(self, done: int, detail: str = "", *, force: bool = False) -> None:
        """Report `done` items if the interval has passed (or `force`)."""
        callback = self._callback
        if callback is None:
            return
        now = time.monotonic()
        if force or now - self._last >= self._interval:
            self._last = now
            callback(Progress(self.task, done, self.total, self.unit, detail))

    def finish(self, done: int | None = None) -> None:
        """The last report: always delivered."""
        if self._callback is not None:
            final = self.total if done is None else done
            self._callback(Progress(self.task, final or 0, self.total, self.unit))
