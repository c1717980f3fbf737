"""The Textual app: global bindings, themes, keymap and the palette. Screens live elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES as TEXTUAL_THEMES

from workbench.config import DEFAULT_THEME, Settings
from workbench.ui.actions import ACTIONS, bindings, unknown_keymap_ids
from workbench.ui.formatting import plural_noun
from workbench.ui.themes import (
    BUILTIN_THEMES,
    ThemeLoadResult,
    app_variable_defaults,
    load_themes,
)

if TYPE_CHECKING:
    from textual.command import Provider
    from textual.notifications import SeverityLevel

    from workbench.engine import Engine
    from workbench.ui.screens.main import MainScreen

APP_TCSS = Path(__file__).with_name("app.tcss")
TEXTUAL_COMMAND_TITLES = {
    "Theme": "App: Change theme",
    "Keys": "App: Keys panel",
    "Maximize": "Pane: Maximize the focused widget",
    "Minimize": "Pane: Minimize the maximized widget",
    "Screenshot": "App: Save a screenshot (SVG)",
}
"""Textual's palette commands, retitled "Category: Action" like every other entry."""
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that quit the app the way ctrl+q does (a `kill`, the terminal closing)."""
HANGUP_CHECK_SECONDS = 1.0
"""How often the app asks whether its terminal is still there (see `_exit_on_hangup`)."""


def actions_provider() -> type[Provider]:
    """The app's commands, found by title, footer label or binding id; imported when the
    palette first opens (it replaces Textual's provider of the same commands)."""
    from workbench.ui.commands import ActionsProvider

    return ActionsProvider


def memory_provider() -> type[Provider]:
    """The "Open memory" palette provider, imported when the palette first opens."""
    from workbench.ui.commands import MemoryProvider

    return MemoryProvider


def theme_folders(settings: Settings) -> list[Path]:
    """Where YAML themes are loaded from, lowest precedence first."""
    from workbench.paths import bundled_dir, user_themes_dir

    folders = [bundled_dir("themes")]
    if settings.user_themes:
        folders.append(user_themes_dir())
    if settings.themes_dir:
        folders.append(Path(settings.themes_dir).expanduser())
    return folders


class WorkbenchApp(App[None]):
    """Memory Workbench: see, edit and trust Claude Code's memory."""

    CSS_PATH = "app.tcss"
    TITLE = "Memory Workbench"
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")
    # Callables, so `textual.command` is imported when the palette opens, not at start-up.
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        actions_provider,
        memory_provider,
    }

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        *,
        now: float | None = None,
        theme_dirs: Sequence[Path] | None = None,
        demo_name: str | None = None,
        after_first_paint: Callable[[], object] | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.settings = settings
        self.demo_name = demo_name
        self._after_first_paint = after_first_paint
        """Run in a worker once the main screen's first full frame is painted (the demo
        starts its team server then, so the server's start-up does not compete with ours)."""
        self._fixed_now_ms = None if now is None else now * 1000
        self.animation_level = settings.animation
        self.theme_problems: list[str] = []
        self._asking_to_quit = False
        """Whether the "discard your changes?" question of a quit is on screen."""
        """Theme files that failed to load, and a missing configured theme."""
        self._theme_folders = list(theme_folders(settings) if theme_dirs is None else theme_dirs)
        self._register_themes()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Toasts carry file names, memory text and error messages: never read as markup
        (a `[n0]` in a name would vanish, a `[/]` would raise), whatever the caller asked."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def now_ms(self) -> float:
        """The clock ages are measured against (fixed in tests so snapshots do not drift)."""
        return self._fixed_now_ms if self._fixed_now_ms is not None else time.time() * 1000

    # --- themes ------------------------------------------------------------------------

    def _register_themes(self) -> None:
        for theme in BUILTIN_THEMES.values():
            self.register_theme(theme)
        wanted = self.settings.theme
        if wanted in self.available_themes:
            # YAML themes are not needed for the first frame: load them after it, off the UI
            # thread (reading and parsing them is most of a start-up's theme cost).
            self.theme = wanted
            self._themes_deferred = True
        else:
            self._themes_deferred = False
            self._apply_theme_files(load_themes(self._theme_folders))
        self._drop_unstyled_themes()

    def _drop_unstyled_themes(self) -> None:
        """Offer only the themes the app is styled for: ours and the YAML ones (which get the
        app's variables from their own palette). Textual's built-ins are not: in `ansi-light`
        the over-limit banner is red on red."""
        for name, theme in list(self.available_themes.items()):
            if TEXTUAL_THEMES.get(name) is theme:  # still Textual's own, not a YAML override
                self.unregister_theme(name)

    def _apply_theme_files(self, result: ThemeLoadResult) -> None:
        for theme in result.loaded.values():
            self.register_theme(theme)
        self.theme_problems = [f"{path.name}: {error}" for path, error in result.failed]
        wanted = self.settings.theme
        if wanted in self.available_themes:
            if self.theme != wanted:
                self.theme = wanted
        else:
            self.theme_problems.append(f"no theme named {wanted!r}; using {DEFAULT_THEME}")
            self.theme = DEFAULT_THEME

    class ThemeFilesLoaded(Message):
        """The YAML themes were read (in a worker)."""

        def __init__(self, result: ThemeLoadResult) -> None:
            super().__init__()
            self.result = result

    @work(thread=True, exclusive=True, group="themes", exit_on_error=False)
    def _load_theme_files(self) -> None:
        self.post_message(self.ThemeFilesLoaded(load_themes(self._theme_folders)))

    def on_workbench_app_theme_files_loaded(self, message: ThemeFilesLoaded) -> None:
        self._apply_theme_files(message.result)
        self._report_theme_problems()

    def _report_theme_problems(self) -> None:
        if self.theme_problems:
            self.notify(
                "\n".join(self.theme_problems),
                title="Some themes could not be loaded",
                severity="error",
                timeout=10,
            )

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return app_variable_defaults(self.current_theme)

    def _remember_theme(self, theme: str) -> None:
        self._save_setting("theme", theme)

    @work(thread=True, exclusive=True, group="config", exit_on_error=False)
    def _save_setting(self, key: str, value: object) -> None:
        from workbench.config import remember

        remember({key: value})

    # --- start-up ----------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        from workbench.ui.screens.main import MainScreen

        return MainScreen()

    def first_paint_done(self) -> None:
        """The main screen painted its first full frame: start what was waiting for it."""
        callback, self._after_first_paint = self._after_first_paint, None
        if callback is not None:
            self.run_worker(callback, thread=True, group="after-first-paint", exit_on_error=False)

    def on_ready(self) -> None:
        from workbench.ui.screens.main import MainScreen

        if isinstance(self.screen, MainScreen):
            self.screen.first_frame_shown()
        if not gc.isenabled():
            # The CLI turned the collector off for start-up (see workbench.cli). What start-up
            # built lives as long as the app: frozen out of later collections rather than
            # walked by the first one (a ~25 ms pause right after the first frame).
            gc.freeze()
            gc.enable()

    def on_mount(self) -> None:
        keymap = dict(self.settings.keymap)
        if keymap:
            # Pane bindings are rebound too: the keymap applies to every binding by id.
            self.set_keymap(keymap)
            # Checking the ids imports every pane module: after the first frame.
            self.call_after_refresh(self._check_keymap, keymap)
        if self._themes_deferred:
            self._load_theme_files()
        else:
            self._report_theme_problems()
        self.watch(self, "theme", self._remember_theme, init=False)
        self._exit_on_signals()
        self._exit_on_hangup()

    def _exit_on_signals(self) -> None:
        """SIGTERM (a `kill`) and SIGHUP (the terminal closed) quit the way ctrl+q does, so
        workers stop, files are flushed and the demo removes what it started."""
        loop = asyncio.get_running_loop()
        for number in QUIT_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self.exit)

    def _exit_on_hangup(self) -> None:
        """Quit the way ctrl+q does once the terminal is gone, SIGHUP or not.

        The kernel sends SIGHUP only to the terminal's session leader. Started under another
        process (`make run`, a wrapper script, `sh -c`), the app is not the leader: when the
        window closes it gets no signal, and Textual's input thread, reading end-of-file from
        the hung-up terminal, spun a core forever while the demo's team server and folder
        stayed behind. A hung-up terminal answers every ioctl with an error, so asking its
        size once a second tells."""
        if self.is_headless or sys.__stdin__ is None:
            return
        try:
            fd = sys.__stdin__.fileno()
            os.get_terminal_size(fd)
        except (OSError, ValueError):
            return  # not a terminal (a web driver, a pipe): nothing to watch
        self._hangup_check = self.set_interval(
            HANGUP_CHECK_SECONDS, partial(self._exit_if_hung_up, fd)
        )

    def _exit_if_hung_up(self, fd: int) -> None:
        try:
            os.get_terminal_size(fd)
        except OSError:
            self._hangup_check.stop()
            self.exit()

    def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for number in QUIT_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(number)

    def _check_keymap(self, keymap: dict[str, str]) -> None:
        from workbench.ui.panes.registry import every_action

        unknown = unknown_keymap_ids(keymap, every_action())
        if unknown:
            self.notify(
                f"Unknown binding {plural_noun(len(unknown), 'id')} in [keymap]: {', '.join(unknown)}. "
                "The help screen (F1) lists the ids.",
                title="Keymap",
                severity="warning",
            )

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # The blink switch covers every input, including the command palette's.
        if not self.settings.cursor_blink and hasattr(event.widget, "cursor_blink"):
            event.widget.cursor_blink = False

    # --- actions and the palette -------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from self._textual_commands(screen)
        from workbench.ui.screens.main import MainScreen

        for spec in ACTIONS:
            if spec.scope == "app":
                yield SystemCommand(spec.title, spec.help, partial(self.run_action, spec.action))
            elif spec.scope == "main" and isinstance(screen, MainScreen):
                name = spec.action.split("(", 1)[0]
                if screen.action_applies(name):
                    yield SystemCommand(
                        spec.title, spec.help, partial(screen.run_command, spec.action)
                    )
            elif (
                spec.scope == "editor"
                and screen.__class__.__name__ == "MemoryEditorScreen"
                and screen.check_action(spec.action, ())
            ):
                yield SystemCommand(spec.title, spec.help, partial(screen.run_action, spec.action))
        if isinstance(screen, MainScreen):
            yield from self._pane_commands(screen)

    def _textual_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own commands, titled "Category: Action" like ours; its Quit is ours
        already ("App: Quit"), and the screenshot is saved where it can be (see below)."""
        for command in super().get_system_commands(screen):
            title = TEXTUAL_COMMAND_TITLES.get(command.title, command.title)
            if command.title == "Quit":
                continue
            if command.title == "Screenshot":
                # After a moment, so the palette is gone from the picture.
                yield SystemCommand(
                    title, command.help, lambda: self.set_timer(0.1, self.save_screenshot_here)
                )
                continue
            yield SystemCommand(title, command.help, command.callback, command.discover)

    def save_screenshot_here(self) -> Path | None:
        """Save an SVG of the screen in the Downloads folder, else the workbench's own
        folder (created), and say where (Textual's command fails with no reason when there is
        no ~/Downloads)."""
        import platformdirs

        from workbench.paths import workbench_home

        downloads = Path(platformdirs.user_downloads_dir())
        folders = [downloads] if downloads.is_dir() else []
        folders.append(workbench_home() / "screenshots")
        problems = []
        for folder in folders:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                saved = Path(self.save_screenshot(path=str(folder)))
            except OSError as exc:
                problems.append(f"{folder}: {exc.strerror or exc}")
                continue
            self.notify(f"Saved to {saved}", title="Screenshot")
            return saved
        self.notify(
            "Could not save a screenshot: " + "; ".join(problems),
            title="Screenshot",
            severity="error",
        )
        return None

    def _pane_commands(self, screen: MainScreen) -> Iterable[SystemCommand]:
        """Every pane verb that applies now; a pane not built yet (panes are built when first
        shown) offers all of its verbs, and decides once built (`run_pane_action`)."""
        from workbench.ui.panes.registry import pane_actions

        for info, spec in pane_actions():
            pane = screen.pane(info.id)
            if pane is None or pane.check_action(spec.action.split("(", 1)[0], ()):
                yield SystemCommand(
                    spec.title,
                    spec.help,
                    partial(screen.run_pane_action, info.id, spec.action),
                )

    async def action_quit(self) -> None:
        """Quit (ctrl+q, the palette's "App: Quit"); while a screen holds unsaved edits, only
        once the user agrees to discard them, the question the editor's Esc asks. A signal or
        a hung-up terminal still quits at once (`exit`): nobody is there to answer."""
        from workbench.ui.screens.confirm import HoldsUnsavedEdits, discard_changes_modal

        if self._asking_to_quit:
            return  # the question is on screen already
        if not any(
            isinstance(screen, HoldsUnsavedEdits) and screen.is_dirty
            for screen in self.screen_stack
        ):
            self.exit()
            return

        def answered(discard: bool | None) -> None:
            self._asking_to_quit = False
            if discard:
                self.exit()

        self._asking_to_quit = True
        self.push_screen(discard_changes_modal("Discard and quit"), answered)

    def action_show_help(self) -> None:
        """Open the help screen."""
        from workbench.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.settings.keymap, self.locations_for_help()))

    def action_show_pane(self, pane_id: str) -> None:
        """Bring a pane to the front of the main screen."""
        from workbench.ui.screens.main import MainScreen

        if isinstance(self.screen, MainScreen):
            self.screen.show_pane(pane_id, focus=True)

    def locations_for_help(self) -> dict[str, str]:
        """Where things are, for the help screen."""
        from workbench.config import default_config_path
        from workbench.ui.formatting import display_memory_dir

        locations = self.engine.locations
        if not self.settings.show_full_paths:
            return {"memory folder": display_memory_dir(locations)}
        return {
            "project": locations.project_root,
            "memory folder": locations.memory_dir,
            "  resolved from": locations.memory_dir_source,
            "transcripts": locations.transcripts_dir,
            "config file": str(default_config_path()),
        }


def make_app(
    engine: Engine,
    settings: Settings | None = None,
    *,
    now: float | None = None,
    theme_dirs: Sequence[Path] | None = None,
    demo_name: str | None = None,
    after_first_paint: Callable[[], object] | None = None,
) -> WorkbenchApp:
    """Build the app the way the CLI does; tests use this too."""
    return WorkbenchApp(
        engine,
        settings or Settings(),
        now=now,
        theme_dirs=theme_dirs,
        demo_name=demo_name,
        after_first_paint=after_first_paint,
    )
