"""What the app shows about the Claude Code release: the status line, the gauge's notes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from current_release import CurrentReleaseSession, long_session

from tests.ui.conftest import TEST_SETTINGS, settle
from workbench.engine import Engine
from workbench.engine.claude_paths import project_root_for, sanitize_path
from workbench.engine.context.views import GaugeView
from workbench.ui.app import make_app
from workbench.ui.panes.gauge import GaugePane
from workbench.ui.widgets.status_line import StatusLine
from workbench.ui.widgets.threshold_ladder import ladder_lines

from .harness import PaneHarness

NOW = 1_800_000_000.0


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "claude"
    transcripts = home / "projects" / sanitize_path(project_root_for(root))
    (transcripts / "memory").mkdir(parents=True)
    (transcripts / "memory" / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (transcripts / "memory" / "a.md").write_text(
        "---\nname: a\ndescription: the first\nmetadata:\n  type: user\n---\nBody.\n"
    )
    return root, home, transcripts


def _fake_claude(folder: Path, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "claude"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


async def test_the_status_line_names_the_release_and_the_worker_asks_claude(tmp_path: Path):
    root, home, _ = _project(tmp_path)
    _fake_claude(tmp_path / "bin", "2.1.88")
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "WORKBENCH_CLAUDE_COMMAND": "claude",
    }
    engine = Engine.open(root, config_home=str(home), env=env, ask_claude=False)
    assert engine.claude.source == "newest"  # nothing ran on the way in
    app = make_app(engine, TEST_SETTINGS, now=NOW)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one(StatusLine)
        assert status.claude_version == "Claude Code 2.1.88 (installed)"
        assert engine.claude.source == "claude-cli"


def _release_view(tmp_path: Path, builder: CurrentReleaseSession) -> GaugeView:
    root, home, transcripts = _project(tmp_path)
    builder.write(transcripts / f"{builder.session_id}.jsonl")
    engine = Engine.open(root, config_home=str(home))
    return engine.context.gauge_view(builder.session_id)


def _fed(view: GaugeView) -> PaneHarness:
    return PaneHarness(
        lambda: GaugePane(autoload=False, follow=False, id="gauge-pane"),
        lambda pane: pane.show_view(view),  # type: ignore[attr-defined]
    )


def _no_threshold_session() -> CurrentReleaseSession:
    b = CurrentReleaseSession(
        model="claude-sonnet-4-5-20250929",
        session_id="5a5a5a5a-0000-4000-8000-000000000045",
        system_prompt_tokens=150_000,
        seed=11,
    )
    b.opening()
    b.prompt("Refactor the importer")
    for i in range(4):
        b.tool_call("Read", {"file_path": f"/repo/importer_{i}.py"}, "line\n" * 7_000)
    b.reply("Refactored.")
    return b


def test_the_gauge_says_a_model_has_no_threshold_compaction(tmp_path: Path):
    view = _release_view(tmp_path, _no_threshold_session())
    report = view.report
    assert report.used > 167_000 and not report.thresholds.threshold_compaction
    ladder = "\n".join(str(line) for line in ladder_lines(report, 100))
    assert "auto-compact" not in ladder and "blocking" not in ladder
    assert "effective window" in ladder


class TestReleaseSnapshots:
    def test_no_threshold_compaction(self, snap_compare, tmp_path: Path):
        view = _release_view(tmp_path, _no_threshold_session())
        assert snap_compare(_fed(view), terminal_size=(100, 48))

    def test_default_model_of_the_current_release(self, snap_compare, tmp_path: Path):
        builder, _ = long_session()  # seeded: the same session id every run
        view = _release_view(tmp_path, builder)
        assert view.report.thresholds.context_window == 1_000_000
        assert snap_compare(_fed(view), terminal_size=(100, 48))
