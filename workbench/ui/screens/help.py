"""The help screen (F1): every binding with its id (the panes' too), plus where things live."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.ui.actions import effective_keys
from workbench.ui.panes.registry import every_action, pane_actions

KEYS_WIDTH = 12
ID_WIDTH = 22
HELP_INDENT = 2 + KEYS_WIDTH + ID_WIDTH
"""Where the help sentences start; wrapped lines continue under them."""
SCREEN_NOTES = {
    "Memory": "  new, edit, rename, delete, filter and source work in the tree or the viewer",
    "Index": "  keys work while the MEMORY.md pane has the focus",
}
"""Where the main screen's verbs work (see MEMORY_VERBS and INDEX_VERBS)."""


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

    def on_resize(self) -> None:
        # The help sentences wrap under their own column, so a new width re-wraps them.
        self.call_after_refresh(self._rewrap)

    def _rewrap(self) -> None:
        bindings = self.query_one(".help-bindings", Static)
        width = bindings.content_region.width
        if width > HELP_INDENT + 20:
            bindings.update(self._bindings_content(width))

    def _bindings_content(self, width: int = 92) -> Content:
        display = self.app.get_key_display
        owners = {spec.id: info.title for info, spec in pane_actions()}
        rows: list[Content] = []
        category = ""
        for spec in every_action():
            spec_category = spec.title.split(":", 1)[0]
            if spec_category != category:
                if rows:
                    rows.append(Content(""))
                heading = Content.styled(spec_category, "bold $text-primary")
                if spec.id in owners:
                    where = f"  keys work while the {owners[spec.id]} pane has the focus"
                    heading += Content.styled(where, "$foreground-muted")
                elif spec_category in SCREEN_NOTES:
                    heading += Content.styled(SCREEN_NOTES[spec_category], "$foreground-muted")
                rows.append(heading)
                category = spec_category
            keys = keys_display(effective_keys(spec, self.keymap), display)
            lines = textwrap.wrap(spec.help, max(20, width - HELP_INDENT)) or [""]
            rows.append(
                Content.assemble(
                    (f"  {keys:<{KEYS_WIDTH}}", "bold $text-accent"),
                    (f"{spec.id:<{ID_WIDTH}}", "$foreground-muted"),
                    f"\n{' ' * HELP_INDENT}".join(lines),
                )
            )
        return Content("\n").join(rows)

    def _locations_content(self) -> Content:
        rows = [Content(""), Content.styled("Where things are", "bold $text-primary")]
        for label, value in self.locations.items():
            rows.append(Content.assemble((f"  {label:<18}", "$foreground-muted"), value))
        return Content("\n").join(rows)
