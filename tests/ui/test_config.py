"""Settings: defaults, the TOML file, env overrides, and writing a setting back safely."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.config import Settings, load_settings, read_config, remember
from workbench.engine.errors import UserInputError


def config_path() -> Path:
    return Path(os.environ["WORKBENCH_CONFIG"])


def test_defaults_without_a_file():
    assert not config_path().exists()
    assert load_settings() == Settings()


def test_values_and_keymap_are_read():
    config_path().write_text(
        'theme = "workbench-paper"\nwatch_files = false\nanimation = "none"\n'
        '[keymap]\nnew-memory = "ctrl+n"\n',
        encoding="utf-8",
    )
    settings = load_settings()
    assert settings.theme == "workbench-paper"
    assert settings.watch_files is False
    assert settings.animation == "none"
    assert dict(settings.keymap) == {"new-memory": "ctrl+n"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("watch_files = 'no'", "`watch_files` must be true or false"),
        ("animation = 'fast'", "`animation` must be one of"),
        ("theme = ''", "`theme` must be a non-empty string"),
        ("[keymap]\nnew-memory = 3", "[keymap] entries"),
        ("theme = ", "not valid TOML"),
    ],
)
def test_bad_values_are_clear_errors(text: str, problem: str):
    config_path().write_text(text, encoding="utf-8")
    with pytest.raises(UserInputError, match=re_escape(problem)):
        load_settings()


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


def test_env_theme_beats_the_file():
    config_path().write_text('theme = "workbench-paper"\n', encoding="utf-8")
    assert load_settings(env={"WORKBENCH_THEME": "workbench-forest"}).theme == "workbench-forest"


def test_remember_keeps_other_keys():
    config_path().write_text('cursor_blink = false\nfuture_key = 1\n[keymap]\nundo-change = "z"\n')
    remember({"theme": "workbench-dusk"})
    data = read_config()
    assert data == {
        "cursor_blink": False,
        "future_key": 1,
        "keymap": {"undo-change": "z"},
        "theme": "workbench-dusk",
    }


def test_remember_never_overwrites_a_broken_file():
    config_path().write_text("theme = [broken\n", encoding="utf-8")
    remember({"theme": "workbench-dusk"})
    assert config_path().read_text(encoding="utf-8") == "theme = [broken\n"


def test_remember_creates_the_file():
    remember({"theme": "workbench-light"})
    assert load_settings().theme == "workbench-light"
