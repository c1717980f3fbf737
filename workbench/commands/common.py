"""What every command shares: common options, the engine, output and exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import UserInputError, WorkbenchError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from rich.console import Console

    from workbench.engine import Engine
    from workbench.engine.profiles.detect import ResolvedVersion


class ExitCode(IntEnum):
    """Spec 05 exit codes."""

    OK = 0
    ACTION_REQUIRED = 1
    BAD_INPUT = 2


# The folder and file options: (flag, metavar, help).
_PATH_OPTIONS = (
    (
        "--config-home",
        "DIR",
        "Claude Code config home (default: $CLAUDE_CONFIG_DIR, else ~/.claude)",
    ),
    ("--project", "DIR", "the project folder (default: the current directory)"),
    ("--memory-dir", "DIR", "use this folder as the auto-memory directory instead of resolving it"),
    ("--settings", "FILE", "a settings file read as Claude Code's --settings (flagSettings)"),
)


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """The options every command accepts. Defaults are filled in by `option()`."""
    import argparse  # here: the status line and the hooks build no parser (see cli.fast_args)

    group = parser.add_argument_group("common options")
    for flag, metavar, help_text in _PATH_OPTIONS:
        group.add_argument(flag, metavar=metavar, default=argparse.SUPPRESS, help=help_text)
    group.add_argument(
        "--claude-version",
        metavar="VERSION",
        default=argparse.SUPPRESS,
        help="the Claude Code release whose rules to follow, X.Y.Z or auto (default: "
        "$WORKBENCH_CLAUDE_VERSION, the claude_version config key, else auto: the "
        "transcript's own version, else `claude --version`, else the newest profile)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print machine-readable JSON on stdout",
    )


def add_command(
    subparsers: argparse._SubParsersAction,
    common: argparse.ArgumentParser,
    name: str,
    handler: Callable[[argparse.Namespace], int],
    help_text: str,
) -> argparse.ArgumentParser:
    """A subcommand with the common options, run by `handler`; its help is its description."""
    parser = subparsers.add_parser(name, parents=[common], help=help_text, description=help_text)
    parser.set_defaults(handler=handler)
    return parser


def option(args: argparse.Namespace, name: str, default: Any = None) -> Any:
    """A common option's value, wherever on the command line it was given."""
    return getattr(args, name, default)


def wants_json(args: argparse.Namespace) -> bool:
    return bool(option(args, "json", False))


def check_explicit_paths(args: argparse.Namespace) -> None:
    """Folders and files named on the command line must exist and be the right kind."""
    memory_dir = option(args, "memory_dir")
    if memory_dir:
        if not os.path.exists(memory_dir):
            raise UserInputError(f"--memory-dir {memory_dir}: no such folder")
        if not os.path.isdir(memory_dir):
            raise UserInputError(f"--memory-dir {memory_dir}: not a folder")
    settings = option(args, "settings")
    if settings:
        if not os.path.exists(settings):
            raise UserInputError(f"--settings {settings}: no such file")
        if not os.path.isfile(settings):
            raise UserInputError(f"--settings {settings}: not a regular file")
    config_home = option(args, "config_home")
    if config_home and os.path.exists(config_home) and not os.path.isdir(config_home):
        raise UserInputError(f"--config-home {config_home}: not a folder")


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """TRANSCRIPT, --session and --latest: one way to name a session, for every command
    that reads one (the default is the newest session of the project)."""
    parser.add_argument(
        "transcript",
        metavar="TRANSCRIPT",
        nargs="?",
        help="a .jsonl file or a session id (a unique prefix is enough); default: the newest",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="a session of this project (or a prefix)")
    which.add_argument("--latest", action="store_true", help="the newest session (the default)")


def resolve_session(engine: Engine, args: argparse.Namespace) -> Path:
    """The transcript `add_session_arguments` named, through the engine's one resolver."""
    transcript = getattr(args, "transcript", None)
    session = getattr(args, "session", None)
    latest = bool(getattr(args, "latest", False))
    if transcript and (session or latest):
        raise UserInputError("give a TRANSCRIPT, --session or --latest, not more than one")
    return engine.context.resolve_transcript(transcript, session=session, latest=latest)


def open_engine(args: argparse.Namespace, *, ask_claude: bool = True) -> Engine:
    """The engine for the project, folders and Claude Code release the options name.

    `ask_claude=False` never runs `claude --version` now (the app asks in a worker later).
    """
    from workbench.engine import Engine

    project = option(args, "project") or os.getcwd()
    if not os.path.isdir(project):
        raise WorkbenchError(f"project folder not found: {project}")
    check_explicit_paths(args)
    engine = Engine.open(
        project,
        config_home=option(args, "config_home"),
        memory_dir=option(args, "memory_dir"),
        settings_file=option(args, "settings"),
        claude_version=option(args, "claude_version"),
        config_claude_version=configured_claude_version(),
        ask_claude=ask_claude,
        cache_dir=version_cache_dir,
    )
    # Settings files found on disk may be broken (`paths` reports them); one named on the
    # command line was asked for, so it not being read is an error.
    for source, error in engine.locations.settings_errors:
        if source == "flagSettings":
            raise UserInputError(f"--settings {error}")
    return engine


UNBOUNDED_WIDTH = 1 << 16
"""The width tables are laid out in when output is not a terminal: nothing is cut or folded."""


def configured_claude_version() -> str | None:
    """The `claude_version` key of the config file; a broken file is reported, not fatal
    (the app reports it in full when it opens)."""
    from workbench.paths import config_file

    path = config_file()
    if not path.is_file():
        return None  # no TOML parser to import for a file that is not there
    from workbench.config import read_config

    try:
        value = read_config(path).get("claude_version")
    except WorkbenchError as exc:
        warn(f"{exc}; claude_version from it is not used")
        return None
    if value is None:
        return None
    if not isinstance(value, str):
        raise WorkbenchError("config: `claude_version` must be a string (auto or X.Y.Z)")
    return value


def version_cache_dir() -> Path | None:
    """Where the answer of `claude --version` is kept between runs (the workbench's home)."""
    from workbench.paths import workbench_home

    try:
        return workbench_home() / "cache"
    except OSError:
        return None


def with_claude(data: dict[str, Any], claude: ResolvedVersion) -> dict[str, Any]:
    """`data` with the keys that say which Claude Code release it follows, first."""
    return {**claude.to_json(), **data}


def console(stderr: bool = False) -> Console:
    """A Rich console that drops colour when not on a terminal or when NO_COLOR is set, and
    never truncates when its output goes to a pipe or a file."""
    from rich.console import Console

    no_color = bool(os.environ.get("NO_COLOR"))
    stream = sys.stderr if stderr else sys.stdout
    width = None if _isatty(stream) else UNBOUNDED_WIDTH
    return Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True, width=width)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def escape(text: str) -> str:
    """`text` made safe to put inside a Rich markup string."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def plain(text: object) -> Any:
    """`text` as a Rich Text: printed as is, never read as markup (memory text, paths)."""
    from rich.text import Text

    return Text(str(text))


def emit(
    args: argparse.Namespace,
    data: Any,
    human: Callable[[Console], None] | str | None = None,
    *,
    compact_when_piped: bool = False,
) -> None:
    """Print `data` as JSON with --json, else the human rendering (or plain JSON).
    `compact_when_piped`: one line without indents when stdout is not a terminal (a big
    listing read by a program, where indenting costs more than the data)."""
    if wants_json(args) or human is None:
        indent: int | None = 2
        separators = None
        if compact_when_piped and not sys.stdout.isatty():
            compact = _compact_json(data)
            if compact is not None:
                write_bytes(compact + b"\n")
                return
            indent, separators = None, (",", ":")
        text = json.dumps(
            data, indent=indent, separators=separators, ensure_ascii=False, default=str
        )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate from a transcript ("\ud800") cannot be written as UTF-8;
            # JSON's own escapes can carry it exactly.
            text = json.dumps(
                data, indent=indent, separators=separators, ensure_ascii=True, default=str
            )
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    if isinstance(human, str):
        sys.stdout.write(human if human.endswith("\n") or not human else human + "\n")
        sys.stdout.flush()
        return
    human(console())


def write_bytes(data: bytes) -> None:
    """Write UTF-8 `data` to stdout as bytes when it takes them (a captured stdout in a test,
    or one replaced by a caller, may take text only)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        sys.stdout.flush()
        buffer.write(data)
    else:
        sys.stdout.write(data.decode("utf-8"))
    sys.stdout.flush()


def _compact_json(data: Any) -> bytes | None:
    """`data` as one line of JSON, the bytes `json.dumps` would write compact (orjson: about
    a tenth of its time on a 10,000-file listing); None when orjson cannot write it the same
    way (a lone surrogate, an integer past 64 bits, a key that is not a string)."""
    import orjson

    try:
        return orjson.dumps(data, default=str)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None


def warn(message: str) -> None:
    """One diagnostic line on stderr."""
    sys.stderr.write(f"workbench: {message}\n")
    sys.stderr.flush()


def fail(exc: BaseException) -> int:
    """Turn an exception into one stderr line and an exit code; never a traceback for
    expected errors."""
    if isinstance(exc, WorkbenchError):
        warn(str(exc))
        return exc.exit_code
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        warn(f"{exc.strerror or 'not found'}: {exc.filename}")
        return ExitCode.BAD_INPUT
    if isinstance(exc, PermissionError):
        warn(f"permission denied: {exc.filename}")
        return ExitCode.BAD_INPUT
    if isinstance(exc, UnicodeDecodeError):
        warn(f"not valid UTF-8 text ({exc.reason})")
        return ExitCode.BAD_INPUT
    if isinstance(exc, OSError) and exc.filename:
        # Any other file the system refused (a link loop, a socket): name it, no traceback.
        from workbench.engine import Engine

        name = str(exc.filename)
        shown = name if len(name) <= 200 else name[:200] + "…"
        warn(f"{shown}: {Engine.describe_os_error(name, exc)}")
        return ExitCode.BAD_INPUT
    if os.environ.get("WORKBENCH_DEBUG"):
        raise exc
    import logging  # here, not at the top: the status line and hooks start faster without it

    logging.getLogger("workbench").debug("unexpected error", exc_info=exc)
    warn(f"internal error: {exc.__class__.__name__}: {exc} (set WORKBENCH_DEBUG=1 for details)")
    return ExitCode.BAD_INPUT
