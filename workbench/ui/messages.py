"""Messages that cross panes: worker results (past tense) and requests (`…Requested`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from workbench.engine.memories.models import IndexReport, MemoryDocument, MemoryEntry


@dataclass(frozen=True)
class MemorySnapshot:
    """One scan of the memory folder: every file and both load reports."""

    entries: tuple[MemoryEntry, ...] = ()
    index: IndexReport | None = None
    team_index: IndexReport | None = None
    folder_exists: bool = True

    def count(self, scope: str) -> int:
        """How many memories of one scope (`private`, `team`, `log`)."""
        return sum(1 for entry in self.entries if entry.scope == scope)

    def find(self, path: str) -> MemoryEntry | None:
        """The entry for a relative path, if it is in this snapshot."""
        for entry in self.entries:
            if entry.path == path:
                return entry
        return None


class MemoriesLoaded(Message):
    """A scan finished."""

    def __init__(self, snapshot: MemorySnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class MemoriesFailed(Message):
    """A scan failed with a message for the user."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class DocumentLoaded(Message):
    """A memory file was read for the viewer."""

    def __init__(self, document: MemoryDocument) -> None:
        super().__init__()
        self.document = document


class DocumentFailed(Message):
    """A memory file could not be read."""

    def __init__(self, path: str, error: str) -> None:
        super().__init__()
        self.path = path
        self.error = error


@dataclass(frozen=True)
class ChangeOutcome:
    """What a change did, in words for the status line, and what to select afterwards."""

    summary: str
    select: str | None = None
    undo_hint: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Extra warnings worth a toast (e.g. the index will now drop entries)."""


class ChangeApplied(Message):
    """A change to the memory folder succeeded."""

    def __init__(self, outcome: ChangeOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class ChangeFailed(Message):
    """A change was refused or failed."""

    def __init__(self, verb: str, error: str) -> None:
        super().__init__()
        self.verb = verb
        self.error = error


class MemoryFilesChanged(Message):
    """The watcher saw memory files change on disk."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        super().__init__()
        self.paths = paths

    def can_replace(self, message: Message) -> bool:
        # A burst of file events only needs one re-scan.
        return isinstance(message, MemoryFilesChanged)


class OpenMemoryRequested(Message):
    """Show this memory in the viewer (from the index pane or the palette)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path


class EngineReported(Message):
    """A pane says which engine path produced its result (the status line shows it while that
    pane is in front): the offline ranker or the model, measured or estimated, which server."""

    def __init__(self, pane_id: str, label: str) -> None:
        super().__init__()
        self.pane_id = pane_id
        self.label = label
