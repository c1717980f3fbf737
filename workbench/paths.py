"""Where the workbench keeps its own files (never Claude Code's).

`WORKBENCH_HOME` holds state (history, sync state, review queue); `WORKBENCH_CONFIG` names the
config file. Folders are created when first asked for, never at import.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "memory-workbench"


def workbench_home() -> Path:
    """The data root: `$WORKBENCH_HOME`, else the platform's user data folder."""
    override = os.environ.get("WORKBENCH_HOME")
    if override:
        return Path(override).expanduser()
    if sys.platform.startswith("linux"):
        return _xdg("XDG_DATA_HOME", "~/.local/share")
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def state_dir(*parts: str) -> Path:
    """A sub-folder of the data root, created on demand with private permissions."""
    folder = workbench_home().joinpath(*parts)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (FileExistsError, NotADirectoryError):
        raise _state_error(folder, "part of that path is a file, not a folder") from None
    except PermissionError:
        raise _state_error(folder, "permission denied") from None
    except OSError as exc:
        raise _state_error(folder, exc.strerror or type(exc).__name__) from None
    if not folder.is_dir():  # exist_ok lets an existing file of that name through
        raise _state_error(folder, "it is a file, not a folder")
    return folder


def _state_error(folder: Path, reason: str) -> Exception:
    # One line, exit 2 (bad input: the environment points somewhere unusable).
    from workbench.engine.errors import UserInputError

    return UserInputError(
        f"cannot keep workbench state in {folder}: {reason} (check WORKBENCH_HOME); "
        "nothing was written"
    )


def config_file() -> Path:
    """The TOML config file: `$WORKBENCH_CONFIG`, else the platform's user config folder."""
    override = os.environ.get("WORKBENCH_CONFIG")
    if override:
        return Path(override).expanduser()
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CONFIG_HOME", "~/.config") / "config.toml"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def _xdg(variable: str, default: str) -> Path:
    """platformdirs' answer on Linux without importing it (~10 ms of every status line and
    hook): the XDG variable when set, else its default, then the app's folder."""
    base = os.environ.get(variable, "").strip() or os.path.expanduser(default)
    return Path(base) / APP_NAME


def user_themes_dir() -> Path:
    """Where users drop their own YAML themes."""
    return workbench_home() / "themes"


def bundled_dir(name: str) -> Path:
    """A folder shipped with the project (`themes`, `sample_projects`), installed or not."""
    here = Path(__file__).resolve().parent
    installed = here / f"_bundled_{'samples' if name == 'sample_projects' else name}"
    if installed.is_dir():
        return installed
    return here.parent / name
