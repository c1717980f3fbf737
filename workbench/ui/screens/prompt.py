"""A one-line text prompt (used for renaming)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from workbench.ui.widgets.text_fields import FieldInput


class TextPromptModal(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(
        self,
        title: str,
        value: str = "",
        *,
        hint: str = "",
        check: Callable[[str], str | None] | None = None,
        confirm: str = "OK",
    ) -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.value = value
        self.hint = hint
        self.check = check
        self.confirm = confirm
        """What Enter does, in a word ("Rename"), for the key line."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield FieldInput(self.value, classes="prompt-input")
            yield Static(Content(self.hint), classes="dialog-detail prompt-hint")
            yield Static(
                Content.assemble(
                    ("enter", "bold"), f" {self.confirm}   ", ("esc", "bold"), " Cancel"
                ),
                classes="dialog-keys",
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        problem = self.check(value) if self.check else None
        if problem:
            hint = self.query_one(".prompt-hint", Static)
            hint.update(Content(problem))
            hint.add_class("-invalid")
            return
        self.dismiss(value or None)
