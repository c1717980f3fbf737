"""The panes that read a session through the engine's shared session model let go of it when
they close, so the app does not keep a long session's model alive after leaving it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.ui.conftest import settle
from tests.ui.harness import EngineHarness
from workbench.ui.panes.base import Pane
from workbench.ui.panes.compaction import CompactionPane
from workbench.ui.panes.gauge import GaugePane
from workbench.ui.panes.session import SessionPane

NOW_MS = 1_800_000_000_000
PANES: dict[str, Callable[[], Pane]] = {
    "session": lambda: SessionPane(id="session-pane"),
    "gauge": lambda: GaugePane(follow=False, id="gauge-pane"),
    "compaction": lambda: CompactionPane(now_ms=lambda: NOW_MS, id="compaction-pane"),
}


def held_model_path(engine) -> str | None:  # type: ignore[no-untyped-def]
    # The one model the context service keeps for the panes to share (None: none held).
    model = engine.context._model
    return None if model is None else model.path


@pytest.mark.parametrize("pane_id", list(PANES))
async def test_closing_the_pane_releases_its_session_model(sample_engine, pane_id: str):
    engine = sample_engine("warnings")
    newest = engine.context.sessions()[0]
    app = EngineHarness(engine, PANES[pane_id], now_ms=NOW_MS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.query_one(Pane).has_content
        # The pane's read went through the shared model of the newest session.
        assert held_model_path(engine) == newest.path
    assert held_model_path(engine) is None
