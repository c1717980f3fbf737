"""The front ends: `workbench` / `workbench tui` and `workbench demo`.

Textual is imported inside the handlers only, so every other command starts light.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from workbench.commands.common import ExitCode, open_engine, option

if TYPE_CHECKING:
    from workbench.config import Settings
    from workbench.engine import Engine
    from workbench.engine.samples import InstalledSample

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


def run_tui(args: argparse.Namespace) -> int:
    """Open the app on the current (or given) project."""
    settings = load_front_settings(args)
    engine = open_engine(args)
    from workbench.ui.app import make_app

    make_app(engine, settings).run()
    return ExitCode.OK


def run_demo(args: argparse.Namespace) -> int:
    """Copy a sample project into a temporary folder, open the app on it, remove it on quit."""
    from workbench.engine import Engine
    from workbench.engine.samples import install_sample

    settings = load_front_settings(args)
    sample_name = getattr(args, "sample", DEFAULT_SAMPLE)
    previous_home = os.environ.get("WORKBENCH_HOME")
    try:
        with tempfile.TemporaryDirectory(prefix="workbench-demo-") as folder:
            sample = install_sample(sample_name, folder)
            # Changes made in the demo (and their undo history) stay inside the temporary folder.
            os.environ["WORKBENCH_HOME"] = os.path.join(folder, "workbench-home")
            env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
            engine = Engine.open(
                sample.project_root,
                config_home=str(sample.config_home),
                memory_dir=option(args, "memory_dir"),
                env=env,
            )
            with demo_services(sample, engine):
                from workbench.ui.app import make_app

                make_app(engine, settings, demo_name=sample.name).run()
    finally:
        if previous_home is None:
            os.environ.pop("WORKBENCH_HOME", None)
        else:
            os.environ["WORKBENCH_HOME"] = previous_home
    return ExitCode.OK


@contextlib.contextmanager
def demo_services(sample: InstalledSample, engine: Engine) -> Iterator[None]:
    """Everything the demo runs beside the app, stopped when the app quits.

    This is the hook for the team-sync demo: once the sync engine lands it starts the bundled
    team server on loopback and a simulated teammate who pushes a conflicting change, and stops
    both on exit. Until then the demo is the memory store alone.
    """
    yield
