"""The front ends: `workbench` / `workbench tui` and `workbench demo`.

Textual is imported inside the handlers only, so every other command starts light.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from workbench.commands.common import ExitCode, open_engine
from workbench.engine.errors import UserInputError

if TYPE_CHECKING:
    from workbench.config import Settings

DEFAULT_SAMPLE = "warnings"
"""The demo opens the project that trips every warning: a newcomer sees the truncated index,
dangling links, orphans and stale memories the workbench exists to explain. `--sample healthy`
shows the tidy one."""


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    tui = subparsers.add_parser("tui", parents=[common], help="open the app on the project")
    _add_look_options(tui)
    tui.set_defaults(handler=run_tui)
    demo = subparsers.add_parser(
        "demo",
        parents=[common],
        help="open the app on a temporary copy of a sample project (removed on quit)",
    )
    demo.add_argument(
        "--sample",
        metavar="NAME",
        default=DEFAULT_SAMPLE,
        help=f"sample project to copy (default: {DEFAULT_SAMPLE}; also: healthy)",
    )
    _add_look_options(demo)
    demo.set_defaults(handler=run_demo)


def _add_look_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", metavar="NAME", help="colour theme for this run")
    parser.add_argument("--themes-dir", metavar="DIR", help="load more YAML themes from DIR")


def load_front_settings(args: argparse.Namespace) -> Settings:
    """Settings from the config file, with this run's flags on top."""
    from workbench.config import load_settings

    settings = load_settings()
    if getattr(args, "theme", None):
        settings = settings.replace(theme=args.theme)
    if getattr(args, "themes_dir", None):
        settings = settings.replace(themes_dir=args.themes_dir)
    return settings


def needs_terminal(invocation: str) -> None:
    """The app draws on a terminal: without one (piped, redirected, cron) say so at once
    instead of waiting on input that never comes. A Textual driver set in the environment
    (headless tests, textual-serve's web driver) brings its own screen."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserInputError(
            f"`{invocation}` needs a terminal (standard input and output are not one); "
            "for scripts use the headless commands, e.g. `workbench ls`"
        )


def run_tui(args: argparse.Namespace) -> int:
    """Open the app on the current (or given) project."""
    needs_terminal("workbench tui" if getattr(args, "command", None) == "tui" else "workbench")
    settings = load_front_settings(args)
    engine = open_engine(args)
    engine.memories.warm_up()  # reads the folder while the UI imports
    from workbench.ui.app import make_app

    make_app(engine, settings).run()
    return ExitCode.OK


def run_demo(args: argparse.Namespace) -> int:
    """Open the app on a temporary sample project with a live team server; remove all on quit."""
    from workbench.demo import demo_session

    needs_terminal("workbench demo")
    settings = load_front_settings(args)
    sample_name = getattr(args, "sample", DEFAULT_SAMPLE)
    # The team server's process starts once the app's first frame is painted.
    with demo_session(sample_name, team_later=True) as session:
        session.engine.memories.warm_up()  # reads the folder while the UI imports
        from workbench.ui.app import make_app

        make_app(
            session.engine,
            settings,
            demo_name=session.sample.name,
            after_first_paint=session.start_team,
        ).run()
    return ExitCode.OK
