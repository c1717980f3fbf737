"""Command-line entry point: `workbench [COMMAND] ...` (spec 05).

Commands live in `workbench/commands/`, one module per area, each exposing
`register(subparsers, common)`. Nothing here imports Textual: the TUI is imported inside the
`tui` and `demo` commands only.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.commands.common import ExitCode, add_common_options, fail

COMMAND_MODULES = (
    "workbench.commands.front",
    "workbench.commands.store",
    "workbench.commands.context",
    "workbench.commands.agents",
    "workbench.commands.team",
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered command."""
    common = argparse.ArgumentParser(add_help=False)
    add_common_options(common)
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="See, edit and trust Claude Code's memory. Without a command, opens the app.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # an area that has not landed yet
        module.register(subparsers, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (0 ok, 1 act on it, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        from workbench.commands.front import run_tui

        handler = run_tui
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # A closed pipe (`workbench ls | head`) is not an error worth a message.
        sys.stderr.close()
        return ExitCode.OK
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        return fail(exc)


if __name__ == "__main__":
    raise SystemExit(main())
