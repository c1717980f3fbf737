"""The test apps that mount one pane with the real stylesheet and theme: `PaneHarness` feeds it
engine result objects, `EngineHarness` gives it a real engine."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widget import Widget

from workbench.config import Settings
from workbench.engine import Engine
from workbench.ui.app import APP_TCSS
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.themes import BUILTIN_THEMES, app_variable_defaults

TEST_SETTINGS = Settings(
    watch_files=False,
    cursor_blink=False,
    animation="none",
    user_themes=False,
    show_full_paths=False,
)
"""The app's settings in tests: watchers, blinking, animation and user themes off."""


class _OnePane(App[None]):
    CSS_PATH = str(APP_TCSS)

    def __init__(self, make_pane: Callable[[], Widget], theme: str) -> None:
        super().__init__()
        self._make_pane = make_pane
        for builtin in BUILTIN_THEMES.values():
            self.register_theme(builtin)
        self.theme = theme
        self.animation_level = "none"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return app_variable_defaults(self.current_theme)

    def compose(self) -> ComposeResult:
        yield self._make_pane()


class PaneHarness(_OnePane):
    """Mounts one pane; `setup` runs after mount to hand it its data."""

    def __init__(
        self,
        make_pane: Callable[[], Widget],
        setup: Callable[[Widget], None] | None = None,
        theme: str = "workbench-dark",
    ) -> None:
        super().__init__(make_pane, theme)
        self._setup = setup

    def on_mount(self) -> None:
        if self._setup is not None:
            self._setup(self.query_one("*"))


class EngineHarness(_OnePane):
    """One pane on a real engine, with the app's settings and clock; keeps the outcome of
    every change the pane applies (`applied`).

    `now_ms` fixes the clock the pane reads ages against; None reads the wall clock (for
    panes over files the test has just written)."""

    def __init__(
        self,
        engine: Engine,
        make_pane: Callable[[], Widget],
        *,
        settings: Settings = TEST_SETTINGS,
        now_ms: float | None = None,
        theme: str = "workbench-dark",
    ) -> None:
        super().__init__(make_pane, theme)
        self.engine = engine
        self.settings = settings
        self._now_ms = now_ms
        self.applied: list[ChangeOutcome] = []

    def now_ms(self) -> float:
        return time.time() * 1000 if self._now_ms is None else self._now_ms

    def on_change_applied(self, message: ChangeApplied) -> None:
        self.applied.append(message.outcome)
