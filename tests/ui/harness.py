"""A one-pane app with the real stylesheet and theme, fed engine result objects."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widget import Widget

from workbench.ui.app import APP_TCSS
from workbench.ui.themes import BUILTIN_THEMES, app_variable_defaults


class PaneHarness(App[None]):
    """Mounts one pane; `setup` runs after mount to hand it its data."""

    CSS_PATH = str(APP_TCSS)

    def __init__(
        self,
        make_pane: Callable[[], Widget],
        setup: Callable[[Widget], None] | None = None,
        theme: str = "workbench-dark",
    ) -> None:
        super().__init__()
        self._make_pane = make_pane
        self._setup = setup
        for builtin in BUILTIN_THEMES.values():
            self.register_theme(builtin)
        self.theme = theme
        self.animation_level = "none"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return app_variable_defaults(self.current_theme)

    def compose(self) -> ComposeResult:
        yield self._make_pane()

    def on_mount(self) -> None:
        if self._setup is not None:
            self._setup(self.query_one("*"))
