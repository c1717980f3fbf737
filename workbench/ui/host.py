"""What panes may ask of the app they run in: the engine, the settings, and a thread to read in.

The workbench app provides the engine and the settings; the harnesses tests run a single pane
in provide an engine and may leave the settings out (then every setting has its default).
`read_in_thread` is the one form of the many "read in a thread, post the result" workers: the
read runs off the UI thread, its answer (or its one-line error) comes back as a message, and
an answer that arrives after the worker was cancelled is dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar, cast

from textual.worker import Worker, get_current_worker

if TYPE_CHECKING:
    from textual.message import Message
    from textual.widget import Widget

    from workbench.config import Settings
    from workbench.engine import Engine

T = TypeVar("T")
P = ParamSpec("P")
W = TypeVar("W", bound="Widget")


class EngineHost(Protocol):
    """The app side of the contract: an engine (and, in the workbench app, its settings)."""

    engine: Engine


def app_engine(widget: Widget) -> Engine:
    """The engine of the app `widget` runs in."""
    return cast("EngineHost", widget.app).engine


def app_settings(widget: Widget) -> Settings | None:
    """The settings of the app `widget` runs in, or None where it has none (a test harness)."""
    return cast("Settings | None", getattr(widget.app, "settings", None))


def read_in_thread(
    widget: Widget,
    read: Callable[[], T],
    loaded: Callable[[T], Message],
    failed: Callable[[str], Message],
    *,
    group: str,
    name: str = "",
) -> Worker[None]:
    """Run `read` in a thread (exclusive in `group`); post `loaded(result)` to `widget`, or
    `failed(message)` when it raises a workbench or OS error."""
    from workbench.engine.errors import WorkbenchError

    def run() -> None:
        try:
            result = read()
        except (WorkbenchError, OSError) as exc:
            widget.post_message(failed(str(exc)))
            return
        if not get_current_worker().is_cancelled:
            widget.post_message(loaded(result))

    return widget.run_worker(
        run, name=name or group, group=group, thread=True, exclusive=True, exit_on_error=False
    )


def while_running(
    handler: Callable[Concatenate[W, P], None],
) -> Callable[Concatenate[W, P], None]:
    """Drop a result that arrives once the app is shutting down.

    A screen is closed last: while Textual removes its widgets, it still handles the messages
    its workers posted, and a handler that looks a pane up then finds it gone (a browser tab
    closed while the app was starting left the app stuck on that error).
    """

    @functools.wraps(handler)
    def guarded(self: W, *args: P.args, **kwargs: P.kwargs) -> None:
        # Attached: in the DOM of an app that has not been asked to exit (and is still one).
        if self.is_attached and self.app.is_running:
            handler(self, *args, **kwargs)

    return guarded
