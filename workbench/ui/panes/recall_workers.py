"""The Recall pane's workers: what a run is asked, the work it does off the UI thread, and
the messages it posts back.

A `RecallRequest` is one query with its options as the user set them in the pane. The pane
starts the workers (`RecallPane._load_manifest`, `RecallPane._run_recall`); the functions here
do their work in the worker's thread and answer with the messages below, which keep the pane's
handler names (`on_recall_pane_completed`, ...), as if nested in `RecallPane`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.engine.recall.models import EngineChoice

if TYPE_CHECKING:
    from textual.worker import Worker

    from workbench.engine import Engine
    from workbench.engine.progress import Progress
    from workbench.engine.recall.models import RecallResult
    from workbench.engine.recall.service import RecallService


@dataclass(frozen=True)
class RecallRequest:
    """One query with its options, as the user set them."""

    query: str
    engine: EngineChoice = "auto"
    recent_tools: tuple[str, ...] = ()
    surfaced: tuple[str, ...] = ()


def split_list(text: str) -> tuple[str, ...]:
    """`Bash, Read` → `('Bash', 'Read')`: comma-separated, blanks and repeats dropped."""
    return tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


class ManifestLoaded(Message, namespace="recall_pane"):
    """The candidates were scanned (before any query)."""

    def __init__(self, count: int, manifest: str, has_key: bool | None = None) -> None:
        super().__init__()
        self.count = count
        self.manifest = manifest
        self.has_key = has_key
        """Whether an API key is set (auto then asks the model); None: not known."""


class Completed(Message, namespace="recall_pane"):
    """A recall simulation finished."""

    def __init__(self, request: RecallRequest, result: RecallResult) -> None:
        super().__init__()
        self.request = request
        self.result = result


class Progressed(Message, namespace="recall_pane"):
    """The running recall reached a step (posted from its worker)."""

    def __init__(self, request: RecallRequest, step: str) -> None:
        super().__init__()
        self.request = request
        self.step = step


class Failed(Message, namespace="recall_pane"):
    """A recall simulation failed, with a message for the user."""

    def __init__(self, request: RecallRequest | None, error: str) -> None:
        super().__init__()
        self.request = request
        self.error = error


# --- the work --------------------------------------------------------------------------------


def warm(engine: Engine, lock: threading.Lock, choice: EngineChoice) -> RecallService:
    """Open the recall service, scan and index the memory folder, and load the SDK when the
    model will be asked (called in the worker thread)."""
    service = engine.recall
    with lock:
        service.ranker()
    if choice == "llm" or (choice == "auto" and service.llm_config.has_key):
        importlib.import_module("anthropic")
    return service


def read_manifest(engine: Engine, lock: threading.Lock) -> ManifestLoaded:
    """The candidates and the manifest the selector would see, before any query."""
    service = engine.recall  # opening it imports and builds: off the UI thread
    with lock:
        service.ranker()
    candidates = service.candidates()
    manifest = service.manifest()
    return ManifestLoaded(len(candidates), manifest, bool(service.llm_config.has_key))


def run_recall(
    engine: Engine,
    lock: threading.Lock,
    request: RecallRequest,
    now_ms: Callable[[], float],
    worker: Worker[None],
    post: Callable[[Message], object],
) -> None:
    """Run `request` in `worker`'s thread: `Progressed` at each step, then `Completed` or
    `Failed` (nothing once the worker is cancelled; a cancel stops it at its next step)."""

    def progress(step: Progress) -> None:
        # Called in this thread at each step: the way to stop it, and to say what it does.
        if worker.is_cancelled:
            raise OperationCancelled("recall cancelled")
        post(Progressed(request, step.detail))

    try:
        service = warm(engine, lock, request.engine)
        # One run at a time against the service's caches (the manifest reader shares them).
        with lock:
            result = service.run(
                request.query,
                engine=request.engine,
                recent_tools=request.recent_tools,
                surfaced=request.surfaced,
                now=now_ms(),
                on_progress=progress,
            )
    except OperationCancelled:
        return  # the cancel action already put the pane back
    except (WorkbenchError, OSError, ImportError) as exc:
        if not worker.is_cancelled:
            post(Failed(request, str(exc)))
        return
    if not worker.is_cancelled:
        post(Completed(request, result))
