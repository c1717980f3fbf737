"""Results that reach the main screen while the app shuts down are dropped, not errors.

Textual closes a screen after its widgets: a worker's result posted just before a quit (a
browser tab closed while the app was starting) is handled with the panes already gone. The
error that caused used to keep the app from exiting under `workbench serve`."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.ui.conftest import settle
from workbench.ui.host import while_running
from workbench.ui.messages import ChangeFailed, DocumentFailed, DocumentLoaded
from workbench.ui.screens.main import MainScreen


async def test_a_guarded_handler_runs_while_the_app_runs_and_not_after():
    seen: list[int] = []

    class Box(Static):
        @while_running
        def take(self, value: int) -> None:
            seen.append(value)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield Box()

    app = One()
    async with app.run_test():
        box = app.query_one(Box)
        box.take(1)
    box.take(2)
    assert seen == [1]


async def test_the_main_screens_results_after_shutdown_raise_nothing(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        document = app.engine.memories.read(screen.memory_tree.selected_path or "")
    # The widgets are gone now; each of these looked one up.
    screen._document_loaded(DocumentLoaded(document))
    screen._document_failed(DocumentFailed(document.entry.path, "gone"))
    screen._change_failed(ChangeFailed("delete", "gone"))
