"""The Compaction pane's workers: the dry run of one session, done off the UI thread, and the
messages the pane's workers post back.

The pane starts the workers (`CompactionPane._load_sessions`, `CompactionPane._run_preview`);
the messages keep the pane's handler names (`on_compaction_pane_previewed`, ...), as if nested
in `CompactionPane`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from workbench.engine.errors import OperationCancelled, WorkbenchError

if TYPE_CHECKING:
    from datetime import datetime

    from textual.worker import Worker

    from workbench.engine import Engine
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.context.compaction_log import CompactionRecord
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.progress import Progress
    from workbench.ui.panes.compaction_summary import SummaryChoice


class SessionsLoaded(Message, namespace="compaction_pane"):
    """The sessions were listed."""

    def __init__(self, sessions: tuple[SessionInfo, ...]) -> None:
        super().__init__()
        self.sessions = sessions


class Previewed(Message, namespace="compaction_pane"):
    """A dry run finished."""

    def __init__(
        self,
        session_id: str,
        preview: CompactPreview,
        summary: SummaryChoice | None,
        history: tuple[CompactionRecord, ...] = (),
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.preview = preview
        self.summary = summary
        """The summary it was checked against (None: the default)."""
        self.history = history
        """The session's recorded compactions."""


class PreviewFailed(Message, namespace="compaction_pane"):
    """Listing sessions or the dry run failed, with a message for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class PreviewProgress(Message, namespace="compaction_pane"):
    """How far the dry run has got (posted from its worker)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


def run_preview(
    engine: Engine,
    session_id: str,
    transcript: str,
    summary: SummaryChoice | None,
    now: datetime,
    summary_path: Callable[[str], Path],
    worker: Worker[None],
    post: Callable[[Message], object],
) -> None:
    """The dry run of `transcript` (checked against `summary`, if any) in `worker`'s thread:
    `PreviewProgress` as it reads, then `Previewed` with the session's recorded compactions,
    or `PreviewFailed` (nothing once the worker is cancelled)."""

    def progress(step: Progress) -> None:
        # Called in this thread by the engine: the way to stop it, and to show how far.
        if worker.is_cancelled:
            raise OperationCancelled("preview cancelled")
        shown = f"{step.task} {step.fraction:.0%}" if step.total else f"{step.task}…"
        post(PreviewProgress(shown))

    compact_preview = partial(engine.context.compact_preview, on_progress=progress)
    try:
        if summary is not None and summary.text:
            # The engine reads summaries from files; pasted text goes through a private
            # temporary file that is gone before the result is shown.
            with tempfile.TemporaryDirectory(prefix="workbench-summary-") as folder:
                file = Path(folder) / "summary.md"
                file.write_text(summary.text, encoding="utf-8")
                preview = compact_preview(transcript, summary_file=str(file), now=now)
        elif summary is not None and summary.path:
            path = summary_path(summary.path)
            preview = compact_preview(transcript, summary_file=str(path), now=now)
        else:
            preview = compact_preview(transcript, now=now)
    except OperationCancelled:
        return  # the user's cancel (or a newer preview) already settled the status
    except (WorkbenchError, OSError) as exc:
        post(PreviewFailed(str(exc)))
        return
    if summary is not None and not summary.is_default:
        survival = replace(preview.survival, summary_source=summary.label)
        preview = replace(preview, survival=survival)
    try:
        history = tuple(engine.context.compaction_log.records(session_id))
    except (WorkbenchError, OSError):
        history = ()  # the preview stands on its own; a missing history is no error
    if not worker.is_cancelled:
        post(Previewed(session_id, preview, summary, history))
