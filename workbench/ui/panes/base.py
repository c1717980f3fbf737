"""The pane base class: a titled area that shows an empty state until it has something."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static


class EmptyState(Static):
    """A centred explanation shown when a pane has nothing to show."""

    DEFAULT_CSS = """
    EmptyState {
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-align: center;
        padding: 1 4;
    }
    """


class Pane(Vertical):
    """Base class for the right-hand panes.

    Subclasses set `pane_id` and `title`, yield their body from `compose_body()`, and flip
    `has_content`; while it is False the pane shows `empty_message` instead of the body.
    """

    pane_id = "pane"
    title = "Pane"
    empty_title = "Nothing to show yet"
    empty_message = ""

    has_content: reactive[bool] = reactive(False)
    """Whether the body is shown (True) or the empty state (False)."""

    def compose(self) -> ComposeResult:
        yield EmptyState(self.empty_content(), classes="pane-empty")
        yield from self.compose_body()

    def compose_body(self) -> ComposeResult:
        """The pane's own widgets (hidden while the pane is empty)."""
        yield from ()

    def empty_content(self) -> Content:
        """What the empty state says."""
        return Content.assemble(
            (self.empty_title, "bold"), "\n\n", (self.empty_message, "$text-muted")
        )

    def set_empty(self, title: str, message: str) -> None:
        """Show the empty state with a different explanation."""
        self.empty_title, self.empty_message = title, message
        if self.is_mounted:
            self.query_one(EmptyState).update(self.empty_content())
        self.has_content = False

    def watch_has_content(self, has_content: bool) -> None:
        self.set_class(not has_content, "-empty")


class PlaceholderPane(Pane):
    """A pane whose engine has not landed in this build: a tidy explanation, nothing else."""

    def __init__(self, pane_id: str, title: str, purpose: str, *, id: str | None = None) -> None:  # noqa: A002
        self.pane_id = pane_id
        self.title = title
        self.empty_title = title
        self.empty_message = f"{purpose}\n\nThis pane is waiting for its engine, which is not part of this build yet."
        super().__init__(id=id)
