"""Command-line entry point: `workbench [COMMAND] ...` (spec 05).

Commands live in `workbench/commands/`, one module per area, each exposing
`register(subparsers, common)`. Nothing here imports Textual: the TUI is imported inside the
`tui` and `demo` commands only.
"""

from __future__ import annotations

import gc
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from workbench.commands.common import ExitCode, fail

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

FRONT_MODULE = "workbench.commands.front"
# Each module's commands. A command line builds only its own module's parser and imports only
# that module: every area's parser together cost ~0.1 s of each call (and Claude Code runs
# `statusline` and `hook` on every message; programs call `ls` and `replay`). A test checks
# these names against what each module's `register` adds.
COMMANDS_BY_MODULE = {
    FRONT_MODULE: "tui demo",
    "workbench.commands.store": "ls show save rm index lint manifest paths history undo redo",
    "workbench.commands.context": "gauge replay transcripts compact-preview session-memory "
    "statusline",
    "workbench.commands.instructions": "instructions",
    "workbench.commands.attribution": "context sessions",
    "workbench.commands.agents": "recall extract dream review log prompt",
    "workbench.commands.team": "sync scan-secrets redact team-server",
    "workbench.commands.live": "hook integrate mcp compactions",
    "workbench.commands.serve": "serve",
}
COMMAND_MODULES = tuple(COMMANDS_BY_MODULE)
COMMAND_MODULE = {
    command: module for module, names in COMMANDS_BY_MODULE.items() for command in names.split()
}
FRONT_COMMANDS = frozenset(COMMANDS_BY_MODULE[FRONT_MODULE].split())
# Options that take a value, so the word after them is never the command name.
_VALUE_OPTIONS = frozenset(
    {
        "--config-home",
        "--project",
        "--memory-dir",
        "--settings",
        "--claude-version",
        "--theme",
        "--themes-dir",
        "--sample",
    }
)


def first_command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line, or None when there is none."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUE_OPTIONS:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def fast_args(argv: Sequence[str]) -> SimpleNamespace | None:
    """The command lines `workbench integrate` writes into Claude Code's settings, parsed
    without building a parser (`statusline`, `hook EVENT`); None for anything else.

    They run on every prompt refresh and session event, and argparse (its import and its
    parsers) was a fifth of the status line's start-up. The namespace has the attributes
    argparse would give; handlers read only those."""
    if list(argv) == ["statusline"]:
        from workbench.commands.context import STATUSLINE_DEFAULTS, run_statusline

        return SimpleNamespace(command="statusline", handler=run_statusline, **STATUSLINE_DEFAULTS)
    if len(argv) == 2 and argv[0] == "hook" and not argv[1].startswith("-"):
        from workbench.commands.live import HOOK_DEFAULTS, run_hook

        return SimpleNamespace(command="hook", event=argv[1], handler=run_hook, **HOOK_DEFAULTS)
    return None


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    """The parser with the commands of `modules` (all of them by default)."""
    import importlib

    from workbench import __version__
    from workbench.commands.common import add_common_options
    from workbench.commands.parsing import WorkbenchArgumentParser

    common = WorkbenchArgumentParser(add_help=False)
    add_common_options(common)
    parser = WorkbenchArgumentParser(
        prog="workbench",
        description="See, edit and trust Claude Code's memory. Without a command, opens the app.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers, common)
    return parser


def _parse(
    argv: Sequence[str], command: str | None, *, app_only: bool, wants_help: bool
) -> argparse.Namespace:
    if app_only:
        modules: Sequence[str] = (FRONT_MODULE,)
    elif not wants_help and command in COMMAND_MODULE:
        modules = (COMMAND_MODULE[command],)
    else:  # help, or a word that is no command: every command, to list them
        modules = COMMAND_MODULES
    return build_parser(modules).parse_args(argv)


def _handler(args: argparse.Namespace | SimpleNamespace) -> Callable[[Any], int]:
    """The command's handler, or the app's when no command was given. A handler reads only
    attributes, so the fast path's SimpleNamespace serves it as well as argparse's result."""
    handler: Callable[[Any], int] | None = getattr(args, "handler", None)
    if handler is not None:
        return handler
    from workbench.commands.front import run_tui

    return run_tui


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (0 ok, 1 act on it, 2 bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    wants_help = any(token in ("-h", "--help") for token in argv)
    # Opening the app needs only the front commands; skip importing the other areas.
    app_only = not wants_help and first_command(argv) in FRONT_COMMANDS | {None}
    if app_only:
        # Start-up allocates hundreds of thousands of objects (Textual, the DOM, the scan) and
        # the collector kept walking them: off until the first frame is on screen (the app
        # turns it back on then), worth ~20 ms of a 0.6 s start.
        gc.disable()
    command = first_command(argv)
    args: argparse.Namespace | SimpleNamespace | None = fast_args(argv)
    if args is None:
        args = _parse(argv, command, app_only=app_only, wants_help=wants_help)
    handler = _handler(args)
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        # ctrl+c: the work stopped where it was (nothing half-written); say so on one line.
        sys.stderr.write(("\n" if sys.stderr.isatty() else "") + "workbench: cancelled\n")
        sys.stderr.flush()
        return 130
    except BrokenPipeError:
        # A closed pipe (`workbench ls | head`) is not an error worth a message.
        sys.stderr.close()
        return ExitCode.OK
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        return fail(exc)
    finally:
        gc.enable()  # the app never reached its first frame, or this was another command


if __name__ == "__main__":
    raise SystemExit(main())
