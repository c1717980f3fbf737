"""Progress of long commands on standard error, only when it is a terminal.

`progress_line(args)` gives the `on_progress` callback to hand the engine, or None when
standard error is not a terminal (piped, redirected, CI logs) or `--json` asked for machine
output, so nothing is printed there. The line appears only once the work has run for a moment
(short commands never flash it), redraws in place, and is erased when the work ends, so the
command's own output starts on a clean line.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from workbench.commands.common import wants_json

if TYPE_CHECKING:
    from workbench.engine.progress import Progress, ProgressCallback

SHOW_AFTER = 0.3
"""Seconds of work before the line first appears (`$WORKBENCH_PROGRESS_AFTER` overrides it;
0 shows it at once)."""


def _show_after() -> float:
    try:
        return max(0.0, float(os.environ.get("WORKBENCH_PROGRESS_AFTER", SHOW_AFTER)))
    except ValueError:
        return SHOW_AFTER


class ProgressLine:
    """Draws `Progress` reports on one terminal line."""

    def __init__(self, stream: TextIO, *, show_after: float = SHOW_AFTER) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.show_after = show_after
        self.drawn = False

    def __call__(self, progress: Progress) -> None:
        if not self.drawn and time.monotonic() - self.started < self.show_after:
            return
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        text = describe(progress)
        if len(text) > width:
            text = text[: width - 1] + "…"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def describe(progress: Progress) -> str:
    """`scanning 1,234/10,000 files (12%) notes/a.md`."""
    if progress.total:
        fraction = progress.fraction or 0.0
        text = f"{progress.task} {progress.done:,}/{progress.total:,} {progress.unit}"
        text += f" ({fraction:.0%})"
    else:
        text = f"{progress.task} {progress.done:,} {progress.unit}"
    if progress.detail:
        text += f" {progress.detail}"
    return text


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress_line(args: argparse.Namespace | None = None) -> Iterator[ProgressCallback | None]:
    """The callback for the engine (None when progress stays quiet); the line is erased
    when the block ends, however it ends."""
    stream = sys.stderr
    if not _isatty(stream) or (args is not None and wants_json(args)):
        yield None
        return
    line = ProgressLine(stream, show_after=_show_after())
    try:
        yield line
    finally:
        line.clear()
