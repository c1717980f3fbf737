"""Yes/no confirmation and the conflict dialog."""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol, runtime_checkable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

ConflictChoice = Literal["reload", "overwrite", "keep"]


@runtime_checkable
class HoldsUnsavedEdits(Protocol):
    """A screen whose edits are lost if it goes away: leaving it, or quitting the app while it
    is open, asks first (`discard_changes_modal`)."""

    @property
    def is_dirty(self) -> bool:
        """Whether anything changed since the screen opened."""
        ...


class ConfirmModal(ModalScreen[bool]):
    """Ask before doing something; dismisses with True to go ahead."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str, detail: str = "", *, confirm_label: str = "Yes") -> None:
        super().__init__(classes="modal")
        self.question = question
        self.detail = detail
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(self.question), classes="dialog-title")
            if self.detail:
                yield Static(Content(self.detail), classes="dialog-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label} (y)", id="confirm", variant="error")
                yield Button("Cancel (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")


def discard_changes_modal(confirm_label: str = "Discard") -> ConfirmModal:
    """The one question asked before unsaved edits are thrown away (Esc in the editor, quit)."""
    return ConfirmModal(
        "Discard your changes?", "Nothing has been saved.", confirm_label=confirm_label
    )


class ConflictModal(ModalScreen[ConflictChoice]):
    """The file changed on disk while it was being edited: reload, overwrite, or keep editing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('reload')", "Reload", show=False),
        Binding("o", "choose('overwrite')", "Overwrite", show=False),
        Binding("k,escape", "choose('keep')", "Keep editing", show=False),
    ]

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(classes="modal")
        self.path = path
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog -conflict"):
            yield Static(Content(f"{self.path} changed on disk"), classes="dialog-title")
            yield Static(
                Content(
                    f"{self.detail}\n\nReload discards your edits and shows the file as it is now. "
                    "Overwrite replaces what is on disk with your version (the replaced text stays "
                    "in history, so undo brings it back)."
                ),
                classes="dialog-detail",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reload (r)", id="reload")
                yield Button("Overwrite (o)", id="overwrite", variant="error")
                yield Button("Keep editing (k)", id="keep", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#keep", Button).focus()

    def action_choose(self, choice: ConflictChoice) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choices: tuple[ConflictChoice, ...] = ("reload", "overwrite", "keep")
        for choice in choices:
            if event.button.id == choice:
                self.dismiss(choice)


class DiffConfirmModal(ModalScreen[bool]):
    """Show a change as a diff before it is written; dismisses with True to write it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Apply", show=False),
        Binding("n,escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, question: str, detail: str, diff: str, *, confirm_label: str) -> None:
        super().__init__(classes="modal")
        self.question = question
        self.detail = detail
        self.diff = diff
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        from workbench.ui.widgets.diff_view import DiffView

        with Vertical(classes="dialog -wide -diff"):
            yield Static(Content(self.question), classes="dialog-title")
            yield Static(Content(self.detail), classes="dialog-detail")
            yield DiffView(self.diff, classes="dialog-diff")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label} (y)", id="confirm", variant="primary")
                yield Button("Cancel (n, esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")
