"""The app on a memory folder holding hostile files (issue 10): a YAML alias bomb, a named
pipe and a /dev/zero link named like memories, and a MEMORY.md that is a pipe. The app starts,
lists every readable memory, shows the bomb without expanding it, and reports the index it
cannot read, all within a deadline and a memory bound."""

from __future__ import annotations

import os

from hostile import alias_bomb, guarded_case, link_to_dev_zero, make_fifo

from tests.ui.conftest import build_project, settle
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.screens.main import MainScreen
from workbench.ui.widgets.status_line import StatusLine

SIZE = (130, 40)


async def test_app_survives_hostile_memory_files(tmp_path, app_factory):
    project = build_project(tmp_path)
    memory = project.memory_dir
    bomb = memory / "bomb.md"
    bomb.write_text(alias_bomb(), encoding="utf-8")
    os.utime(bomb, (project.now, project.now))  # the newest: the cursor opens it first
    make_fifo(memory / "pipe.md")
    link_to_dev_zero(memory / "zero.md")
    (memory / "MEMORY.md").unlink()
    make_fifo(memory / "MEMORY.md")

    with guarded_case(deadline=90, traced_cap=1024**3, headroom=3 * 1024**3):
        app = app_factory(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, MainScreen)
            listed = {entry.path for entry in screen.snapshot.entries}
            assert "bomb.md" in listed and "user_role.md" in listed
            assert not listed & {"pipe.md", "zero.md"}
            assert screen.snapshot.index.unreadable is not None
            assert "named pipe" in screen.snapshot.index.unreadable
            pane = screen.query_one(MemoryPane)
            assert pane.document is not None and pane.document.entry.path == "bomb.md"
            assert pane.document.entry.description == "*i"  # read as plain text, not expanded
            assert screen.query_one(StatusLine).counts != "scan failed"
