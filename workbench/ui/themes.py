"""Colour themes: two built in, more from YAML files in posting's schema.

Sources, later ones winning on a name clash: the built-ins below, the bundled `themes/` folder,
the user themes dir, then an extra `themes_dir` from the settings. A file that fails to load is
reported (the app shows one notification listing every failure) and never stops start-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from workbench.engine.errors import UnreadableFileError
from workbench.ui.formatting import plural_noun

COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
META_KEYS = ("name", "dark", "variables", "author", "description")
_ALPHA = re.compile(r"^\d{1,3}%$")

# App-specific theme variables, each defaulting to a role of the theme's own palette so a
# stock Textual theme (or a YAML file that sets none of them) still looks deliberate.
APP_VARIABLE_ROLES: dict[str, str] = {
    "memory-user": "text-secondary",
    "memory-feedback": "text-warning",
    "memory-project": "text-primary",
    "memory-reference": "text-success",
    "memory-untyped": "foreground-muted",
    "memory-pinned": "text-warning",
    "index-loaded": "text-success",
    "index-dropped": "text-error",
    "index-cut": "error",
    "index-dangling": "text-warning",
    "lint-error": "text-error",
    "lint-warning": "text-warning",
    "lint-info": "foreground-muted",
    "token-over-budget": "text-error",
    "diff-added": "success-muted",
    "diff-removed": "error-muted",
}
APP_VARIABLES = tuple(APP_VARIABLE_ROLES)


class ThemeFileError(ValueError):
    """A theme file that cannot be used, with a message naming the problem."""


def _check_color(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f'`{key}` must be a colour string such as "#1a1b26"')
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"`{key}` is not a colour: {value!r}") from None
    return value


def _check_variable(key: str, value: Any) -> str:
    # A TCSS colour value: a colour, optionally followed by an alpha percentage.
    if not isinstance(value, str) or not value.strip():
        raise ThemeFileError(f"variable `{key}` must be a colour string")
    parts = value.split()
    if len(parts) > 2 or (len(parts) == 2 and not _ALPHA.match(parts[1])):
        raise ThemeFileError(
            f'variable `{key}` must be a colour with an optional alpha, like "#9ece6a 30%"'
        )
    _check_color(f"variables.{key}", parts[0])
    return value


@dataclass(frozen=True)
class ThemeSpec:
    """One theme as written in a YAML file (posting's schema)."""

    name: str
    primary: str
    colors: dict[str, str] = field(default_factory=dict)
    dark: bool = True
    variables: dict[str, str] = field(default_factory=dict)
    author: str | None = None
    description: str | None = None

    @classmethod
    def from_mapping(cls, data: Any) -> ThemeSpec:
        """Validate a parsed YAML document."""
        if not isinstance(data, dict):
            raise ThemeFileError("a theme file must be a YAML mapping")
        name = data.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            raise ThemeFileError("`name` is required: letters, digits, '-', '_' or '.'")
        if "primary" not in data:
            raise ThemeFileError("`primary` is required")
        unknown = sorted(set(data) - set(COLOR_KEYS) - set(META_KEYS))
        if unknown:
            raise ThemeFileError(
                f"unknown {plural_noun(len(unknown), 'key')}: {', '.join(map(str, unknown))}"
            )
        colors = {
            key: _check_color(key, data[key]) for key in COLOR_KEYS if data.get(key) is not None
        }
        dark = data.get("dark", True)
        if not isinstance(dark, bool):
            raise ThemeFileError("`dark` must be true or false")
        raw_vars = data.get("variables") or {}
        if not isinstance(raw_vars, dict):
            raise ThemeFileError("`variables` must be a mapping of name: colour")
        variables = {str(k): _check_variable(str(k), v) for k, v in raw_vars.items()}
        return cls(
            name=name,
            primary=colors.pop("primary"),
            colors=colors,
            dark=dark,
            variables=variables,
            author=_optional_str(data.get("author")),
            description=_optional_str(data.get("description")),
        )

    @classmethod
    def from_file(cls, path: Path) -> ThemeSpec:
        """Read and validate one YAML theme file."""
        import yaml

        from workbench.engine import Engine

        try:
            data = yaml.safe_load(Engine.read_user_text(path, "a theme file"))
        except UnreadableFileError as exc:
            raise ThemeFileError(f"cannot read the file: {exc.reason}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ThemeFileError(f"cannot read the file: {exc}") from None
        except yaml.YAMLError as exc:
            raise ThemeFileError(f"invalid YAML: {str(exc).splitlines()[0]}") from None
        return cls.from_mapping(data)

    def to_textual(self) -> Theme:
        """The Textual theme this spec describes."""
        color = self.colors.get
        return Theme(
            name=self.name,
            primary=self.primary,
            secondary=color("secondary"),
            accent=color("accent"),
            foreground=color("foreground"),
            background=color("background"),
            surface=color("surface"),
            panel=color("panel"),
            boost=color("boost"),
            success=color("success"),
            warning=color("warning"),
            error=color("error"),
            dark=self.dark,
            variables=dict(self.variables),
        )


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class ThemeLoadResult:
    """The themes a folder yielded and the files that failed."""

    loaded: dict[str, Theme] = field(default_factory=dict)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def load_theme_dir(folder: Path) -> ThemeLoadResult:
    """Every `*.yaml` / `*.yml` theme in `folder`, in name order; a missing folder is empty."""
    result = ThemeLoadResult()
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))
    except (FileNotFoundError, NotADirectoryError):
        return result
    except OSError as exc:
        result.failed.append((folder, f"cannot list the folder: {exc.strerror}"))
        return result
    for path in files:
        try:
            spec = ThemeSpec.from_file(path)
        except ThemeFileError as exc:
            result.failed.append((path, str(exc)))
            continue
        result.loaded[spec.name] = spec.to_textual()
    return result


def load_themes(folders: Iterable[Path]) -> ThemeLoadResult:
    """Themes from several folders; a later folder wins on a name clash."""
    merged = ThemeLoadResult()
    for folder in folders:
        result = load_theme_dir(folder)
        merged.loaded.update(result.loaded)
        merged.failed.extend(result.failed)
    return merged


BUILTIN_THEMES: dict[str, Theme] = {
    "workbench-dark": Theme(
        name="workbench-dark",
        primary="#5fa8d3",
        secondary="#b48ead",
        accent="#e3a857",
        foreground="#dde3ea",
        background="#161b22",
        surface="#1d232c",
        panel="#283140",
        success="#8fbf7f",
        warning="#e3b35a",
        error="#e06c75",
        dark=True,
    ),
    "workbench-light": Theme(
        name="workbench-light",
        primary="#1f6feb",
        secondary="#8250df",
        accent="#bc4c00",
        foreground="#1f2328",
        background="#f6f8fa",
        surface="#ffffff",
        panel="#e6eaef",
        success="#1a7f37",
        warning="#9a6700",
        error="#cf222e",
        dark=False,
    ),
}


def app_variable_defaults(theme: Theme) -> dict[str, str]:
    """Defaults for every app variable, taken from the theme's own palette."""
    palette = theme.to_color_system().generate()
    return {name: palette[role] for name, role in APP_VARIABLE_ROLES.items()}
