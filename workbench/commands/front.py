"""The front ends: `workbench` / `workbench tui` and `workbench demo`."""

from __future__ import annotations

import argparse

from workbench.engine.errors import WorkbenchError


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    tui = subparsers.add_parser("tui", parents=[common], help="open the app on the project")
    tui.add_argument("--theme", metavar="NAME", help="colour theme for this run")
    tui.set_defaults(handler=run_tui)
    demo = subparsers.add_parser(
        "demo", parents=[common], help="open the app on a temporary copy of a sample project"
    )
    demo.add_argument("--sample", metavar="NAME", default="healthy", help="sample project name")
    demo.add_argument("--theme", metavar="NAME", help="colour theme for this run")
    demo.set_defaults(handler=run_demo)


def run_tui(args: argparse.Namespace) -> int:
    raise WorkbenchError("the app is not wired up yet")


def run_demo(args: argparse.Namespace) -> int:
    raise WorkbenchError("the demo is not wired up yet")
