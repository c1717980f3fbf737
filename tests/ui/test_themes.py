"""Themes: every shipped file loads, bad files are reported, app variables always resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.ui.conftest import Toasts, settle
from workbench.paths import bundled_dir
from workbench.ui.app import APP_TCSS
from workbench.ui.themes import (
    APP_VARIABLES,
    BUILTIN_THEMES,
    ThemeFileError,
    ThemeSpec,
    app_variable_defaults,
    load_theme_dir,
    load_themes,
)

THEMES_DIR = bundled_dir("themes")
THEME_FILES = sorted(THEMES_DIR.glob("*.yaml"))


def test_at_least_three_themes_ship_and_one_is_light():
    specs = [ThemeSpec.from_file(path) for path in THEME_FILES]
    assert len(specs) >= 3
    assert any(not spec.dark for spec in specs)
    assert len({spec.name for spec in specs}) == len(specs)


@pytest.mark.parametrize("path", THEME_FILES, ids=lambda p: p.name)
def test_every_shipped_theme_loads_and_registers(path: Path, memory_project, app_factory):
    spec = ThemeSpec.from_file(path)
    theme = spec.to_textual()
    assert theme.name == spec.name
    result = load_theme_dir(THEMES_DIR)
    assert result.failed == []
    assert spec.name in result.loaded
    # Every app variable resolves under the theme, whether or not the file sets it.
    variables = app_variable_defaults(theme) | theme.variables
    assert set(APP_VARIABLES) <= set(variables)


async def test_shipped_themes_apply_in_the_app(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        for path in THEME_FILES:
            name = ThemeSpec.from_file(path).name
            app.theme = name
            await pilot.pause()
            assert app.current_theme.name == name
            assert app.get_css_variables()["memory-feedback"]


def test_tcss_uses_only_variables_that_exist():
    css = APP_TCSS.read_text(encoding="utf-8")
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b", css), "colours belong in themes, not app.tcss"
    declared = set(re.findall(r"^\$([\w-]+):", css, re.MULTILINE))
    used = set(re.findall(r"\$([\w-]+)", css)) - declared
    palette = BUILTIN_THEMES["workbench-dark"].to_color_system().generate()
    missing = sorted(name for name in used if name not in palette and name not in APP_VARIABLES)
    assert missing == []


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("- just a list", "must be a YAML mapping"),
        ("primary: '#fff'", "`name` is required"),
        ("name: x", "`primary` is required"),
        ("name: x\nprimary: notacolour", "not a colour"),
        ("name: x\nprimary: '#fff'\ndark: maybe", "`dark` must be true or false"),
        ("name: x\nprimary: '#fff'\nprimery: '#000'", "unknown key"),
        ("name: x\nprimary: '#fff'\nvariables: {memory-user: '#fff 30'}", "optional alpha"),
        ("name: 'bad name!'\nprimary: '#fff'", "`name` is required"),
        ("name: x\nprimary: [", "invalid YAML"),
    ],
)
def test_bad_theme_files_are_refused_with_a_reason(tmp_path: Path, document: str, problem: str):
    path = tmp_path / "t.yaml"
    path.write_text(document, encoding="utf-8")
    with pytest.raises(ThemeFileError, match=re.escape(problem)):
        ThemeSpec.from_file(path)


def test_later_folders_win_and_failures_are_collected(tmp_path: Path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "one.yaml").write_text("name: mine\nprimary: '#111111'\n")
    (second / "two.yaml").write_text("name: mine\nprimary: '#222222'\n")
    (second / "broken.yml").write_text("name: [\n")
    result = load_themes([first, second, tmp_path / "missing"])
    assert result.loaded["mine"].primary == "#222222"
    assert [path.name for path, _ in result.failed] == ["broken.yml"]


async def test_broken_theme_files_give_one_error_notification(tmp_path: Path, memory_project):
    from tests.ui.conftest import TEST_SETTINGS
    from workbench.ui.app import make_app

    folder = tmp_path / "themes"
    folder.mkdir()
    (folder / "good.yaml").write_text("name: good\nprimary: '#336699'\n")
    (folder / "bad1.yaml").write_text("name: bad1\n")
    (folder / "bad2.yaml").write_text("primary: '#fff'\n")
    settings = TEST_SETTINGS.replace(theme="good")
    app = make_app(memory_project.engine(), settings, theme_dirs=[folder], now=memory_project.now)
    toasts = Toasts()
    async with app.run_test(size=(100, 30), notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        errors = [n for n in toasts if n.severity == "error"]
        assert len(errors) == 1
        assert "bad1.yaml" in errors[0].message and "bad2.yaml" in errors[0].message
        assert app.theme == "good"


async def test_missing_configured_theme_falls_back_to_the_default(memory_project):
    from tests.ui.conftest import TEST_SETTINGS
    from workbench.ui.app import make_app

    app = make_app(memory_project.engine(), TEST_SETTINGS.replace(theme="nope"), theme_dirs=[])
    toasts = Toasts()
    async with app.run_test(size=(100, 30), notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        assert app.theme == "workbench-dark"
        assert any("nope" in n.message for n in toasts)


async def test_theme_choice_is_remembered(memory_project, app_factory, tmp_path: Path):
    from workbench.config import load_settings

    app = app_factory(memory_project)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.theme = "workbench-light"
        await settle(app, pilot)
    assert load_settings().theme == "workbench-light"


async def test_only_styled_themes_are_offered(memory_project, app_factory):
    # Textual's own themes (ansi-light drew the over-limit banner red on red) are not
    # offered: the picker lists ours and the YAML themes, each snapshotted.
    shipped = {ThemeSpec.from_file(path).name for path in THEME_FILES}
    app = app_factory(memory_project)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert set(app.available_themes) == set(BUILTIN_THEMES) | shipped
        assert "textual-ansi" not in app.available_themes
        assert "ansi-light" not in app.available_themes
