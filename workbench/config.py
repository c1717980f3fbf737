"""The workbench's own settings: a TOML file at `workbench.paths.config_file()`.

Precedence: defaults < config file < environment (`WORKBENCH_THEME`) < CLI flags (applied by
the front end with `Settings.replace`). The file is read with `tomllib` and written back with
`tomli-w`; keys this version does not know are kept when a setting is remembered.

```toml
theme = "workbench-dark"
watch_files = true
cursor_blink = true
animation = "full"
claude_version = "auto"
user_themes = true
themes_dir = "~/my-themes"

[keymap]
new-memory = "ctrl+n"
```
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.engine.errors import UserInputError

AnimationLevel = Literal["none", "basic", "full"]
ANIMATION_LEVELS: tuple[str, ...] = ("none", "basic", "full")
DEFAULT_THEME = "workbench-dark"


@dataclass(frozen=True)
class Settings:
    """Every setting the app reads, with its default."""

    theme: str = DEFAULT_THEME
    """Colour theme by name: a built-in, a file in `themes/`, or one in the user themes dir."""
    keymap: Mapping[str, str] = field(default_factory=dict)
    """Binding id -> keys (comma-separated for several), e.g. `new-memory = "ctrl+n"`."""
    watch_files: bool = True
    """Refresh the memory tree when files change on disk (off in tests)."""
    cursor_blink: bool = True
    """Blink the cursor in inputs and editors (off in snapshot tests)."""
    animation: AnimationLevel = "full"
    """Textual animation level: `none`, `basic` or `full`."""
    user_themes: bool = True
    """Load YAML themes from the user themes dir as well as the bundled ones."""
    themes_dir: str | None = None
    """One more folder of YAML themes, loaded last (it wins on name clashes)."""
    show_full_paths: bool = True
    """Show absolute folder paths in the help screen (off for screenshots and snapshots)."""
    claude_version: str = "auto"
    """The Claude Code release whose rules to follow: `auto` (the transcript's own version,
    else `claude --version`, else the newest profile) or X.Y.Z."""

    def replace(self, **changes: Any) -> Settings:
        """A copy with some settings changed (for CLI flags and tests)."""
        return dataclasses.replace(self, **changes)


_BOOL_KEYS = ("watch_files", "cursor_blink", "user_themes", "show_full_paths")
_STR_KEYS = ("theme", "themes_dir")


def default_config_path() -> Path:
    """Where the config file lives (`$WORKBENCH_CONFIG` or the platform config dir)."""
    from workbench.paths import config_file

    return config_file()


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The raw TOML table; `{}` when the file does not exist."""
    from workbench.engine.userfiles import SETTINGS_LIMIT, describe, read_bytes

    path = path or default_config_path()
    try:
        raw = read_bytes(path, SETTINGS_LIMIT, "a config file")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UserInputError(f"cannot read config file {path}: {describe(path, exc)}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserInputError(f"config file {path} is not valid TOML: {exc}") from None


def settings_from_mapping(data: Mapping[str, Any], source: str = "config") -> Settings:
    """Validate a parsed config table into Settings; a wrong type is a clear error."""
    values: dict[str, Any] = {}
    for key in _BOOL_KEYS:
        if key in data:
            if not isinstance(data[key], bool):
                raise UserInputError(f"{source}: `{key}` must be true or false")
            values[key] = data[key]
    for key in _STR_KEYS:
        if key in data:
            if not isinstance(data[key], str) or not data[key].strip():
                raise UserInputError(f"{source}: `{key}` must be a non-empty string")
            values[key] = data[key].strip()
    if "claude_version" in data:
        from workbench.engine.profiles.detect import check_version_value

        if not isinstance(data["claude_version"], str):
            raise UserInputError(f"{source}: `claude_version` must be auto or X.Y.Z")
        values["claude_version"] = check_version_value(
            data["claude_version"], f"{source}: claude_version"
        )
    if "animation" in data:
        if data["animation"] not in ANIMATION_LEVELS:
            raise UserInputError(
                f"{source}: `animation` must be one of {', '.join(ANIMATION_LEVELS)}"
            )
        values["animation"] = data["animation"]
    if "keymap" in data:
        keymap = data["keymap"]
        if not isinstance(keymap, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in keymap.items()
        ):
            raise UserInputError(f'{source}: [keymap] entries must look like binding-id = "keys"')
        values["keymap"] = dict(keymap)
    return Settings(**values)


def load_settings(path: Path | None = None, *, env: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then the config file, then environment overrides."""
    settings = settings_from_mapping(read_config(path), source=str(path or default_config_path()))
    env = os.environ if env is None else env
    if env.get("WORKBENCH_THEME"):
        settings = settings.replace(theme=env["WORKBENCH_THEME"])
    return settings


def remember(changes: Mapping[str, Any], path: Path | None = None) -> None:
    """Write some settings back to the config file, keeping every other key in it."""
    import tomli_w

    from workbench.engine.atomic import atomic_write_bytes

    path = path or default_config_path()
    try:
        data = read_config(path)
    except UserInputError:
        # Never overwrite a file the user broke by hand: their edits matter more than ours.
        return
    data.update(changes)
    atomic_write_bytes(path, tomli_w.dumps(data).encode("utf-8"))
