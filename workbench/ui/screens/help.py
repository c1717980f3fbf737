"""The help screen (F1): every binding with its id, plus where things live."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.ui.actions import ACTIONS, effective_keys


def keys_display(keys: str, display: Callable[[Binding], str]) -> str:
    """Several comma-separated keys as the footer would show them."""
    return "  ".join(display(Binding(key.strip(), "")) for key in keys.split(",") if key.strip())


class HelpScreen(ModalScreen[None]):
    """Lists every action: keys, binding id (for `[keymap]` in config.toml) and what it does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close", show=False),
    ]

    def __init__(self, keymap: Mapping[str, str], locations: Mapping[str, str]) -> None:
        super().__init__(classes="modal")
        self.keymap = keymap
        self.locations = locations

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog -wide"):
            yield Static("Keys and commands", classes="dialog-title")
            with VerticalScroll(classes="help-body"):
                yield Static(self._bindings_content(), classes="help-bindings")
                yield Static(self._locations_content(), classes="help-locations")
            yield Static(
                Content(
                    "Every action is also in the command palette (ctrl+p). Rebind keys in the "
                    '[keymap] table of config.toml, e.g.  new-memory = "ctrl+n".  Esc closes.'
                ),
                classes="dialog-detail",
            )

    def _bindings_content(self) -> Content:
        display = self.app.get_key_display
        rows: list[Content] = []
        category = ""
        for spec in ACTIONS:
            spec_category = spec.title.split(":", 1)[0]
            if spec_category != category:
                if rows:
                    rows.append(Content(""))
                rows.append(Content.styled(spec_category, "bold $text-primary"))
                category = spec_category
            keys = keys_display(effective_keys(spec, self.keymap), display)
            rows.append(
                Content.assemble(
                    (f"  {keys:<12}", "bold $text-accent"),
                    (f"{spec.id:<20}", "$text-muted"),
                    spec.help,
                )
            )
        return Content("\n").join(rows)

    def _locations_content(self) -> Content:
        rows = [Content(""), Content.styled("Where things are", "bold $text-primary")]
        for label, value in self.locations.items():
            rows.append(Content.assemble((f"  {label:<18}", "$text-muted"), value))
        return Content("\n").join(rows)
