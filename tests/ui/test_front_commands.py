"""`workbench tui` / bare `workbench` and `workbench demo`, with the app's run loop stubbed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ui.conftest import build_project
from workbench.cli import main
from workbench.ui.app import WorkbenchApp

HEADLESS = "textual.drivers.headless_driver:HeadlessDriver"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[WorkbenchApp]:
    """Apps the CLI built and ran; `run` records instead of taking over the terminal."""
    apps: list[WorkbenchApp] = []

    def fake_run(self: WorkbenchApp, *args: object, **kwargs: object) -> None:
        apps.append(self)
        memory_dir = Path(self.engine.locations.memory_dir)
        self.seen_files = sorted(p.name for p in memory_dir.rglob("*.md"))  # type: ignore[attr-defined]
        self.seen_home = os.environ.get("WORKBENCH_HOME")  # type: ignore[attr-defined]

    monkeypatch.setattr(WorkbenchApp, "run", fake_run)
    monkeypatch.setenv("TEXTUAL_DRIVER", HEADLESS)  # the stubbed run needs no terminal
    return apps


def test_bare_workbench_opens_the_app_on_the_project(tmp_path: Path, opened, monkeypatch):
    project = build_project(tmp_path)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(project.config_home))
    assert main([]) == 0
    assert len(opened) == 1
    assert opened[0].engine.locations.memory_dir == str(project.memory_dir) + "/"


def test_tui_takes_the_common_options_and_a_theme(tmp_path: Path, opened):
    project = build_project(tmp_path)
    code = main(
        [
            "tui",
            "--project",
            str(project.root),
            "--config-home",
            str(project.config_home),
            "--theme",
            "workbench-paper",
        ]
    )
    assert code == 0
    app = opened[0]
    assert app.settings.theme == "workbench-paper"
    assert app.theme == "workbench-paper"
    assert "user_role.md" in app.seen_files  # type: ignore[attr-defined]


def test_tui_on_a_missing_folder_is_a_clean_error(tmp_path: Path, opened, capsys):
    assert main(["tui", "--project", str(tmp_path / "nope")]) == 2
    assert "project folder not found" in capsys.readouterr().err
    assert opened == []


def test_broken_config_is_a_clean_error(opened, capsys, tmp_path: Path):
    Path(os.environ["WORKBENCH_CONFIG"]).write_text("theme = [\n", encoding="utf-8")
    assert main(["tui", "--project", str(tmp_path)]) == 2
    assert "not valid TOML" in capsys.readouterr().err


@pytest.mark.parametrize("sample", ["warnings", "healthy"])
def test_demo_installs_a_sample_and_removes_it_on_quit(sample: str, opened):
    before_home = os.environ.get("WORKBENCH_HOME")
    args = ["demo"] if sample == "warnings" else ["demo", "--sample", sample]
    assert main(args) == 0
    app = opened[0]
    assert app.demo_name == sample
    memory_dir = Path(app.engine.locations.memory_dir)
    assert "MEMORY.md" in app.seen_files  # type: ignore[attr-defined]
    # Everything, including the demo's undo history, lived in the temporary folder.
    assert app.seen_home.startswith(str(memory_dir).split("/claude-home/")[0])  # type: ignore[attr-defined]
    assert not memory_dir.exists()
    assert os.environ.get("WORKBENCH_HOME") == before_home


def test_demo_with_an_unknown_sample_is_a_clean_error(opened, capsys):
    assert main(["demo", "--sample", "nope"]) == 2
    assert "no sample project named 'nope'" in capsys.readouterr().err


def test_the_collector_is_off_while_the_app_starts_and_on_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import gc

    seen: list[bool] = []

    def fake_run(self: WorkbenchApp, *args: object, **kwargs: object) -> None:
        seen.append(gc.isenabled())

    monkeypatch.setattr(WorkbenchApp, "run", fake_run)
    monkeypatch.setenv("TEXTUAL_DRIVER", HEADLESS)
    project = build_project(tmp_path)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(project.config_home))
    assert main([]) == 0
    assert seen == [False]  # start-up ran without cyclic collections
    assert gc.isenabled()  # and the CLI turned it back on when the app returned
    assert main(["paths", "--json"]) == 0 and gc.isenabled()


async def test_the_first_frame_turns_the_collector_back_on(tmp_path: Path):
    import gc

    from tests.ui.conftest import TEST_SETTINGS, settle
    from workbench.ui.app import make_app

    project = build_project(tmp_path)
    app = make_app(project.engine(), TEST_SETTINGS, now=project.now)
    frozen_before = gc.get_freeze_count()
    gc.disable()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(app, pilot)
            assert gc.isenabled()
            # What start-up built is kept out of later collections.
            assert gc.get_freeze_count() > frozen_before
    finally:
        gc.unfreeze()
        gc.enable()


@pytest.mark.parametrize("argv", [["demo"], ["tui"], []])
def test_without_a_terminal_the_app_says_so_and_exits_2(argv, tmp_path: Path, monkeypatch, capsys):
    import subprocess
    import sys

    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *argv, "--project", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,  # a bound against the old hang, not a speed
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "needs a terminal" in result.stderr
