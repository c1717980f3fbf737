"""`workbench serve`: the app (or, with `--demo`, the demo) in a browser, via textual-serve.

Loopback by default. Any other address needs a token (`--token`, `$WORKBENCH_SERVE_TOKEN`,
or one made up and printed in the URL). See `workbench/webserve.py` for how requests are
checked and sessions end.
"""

from __future__ import annotations

import argparse
import os
import sys

from workbench.commands.common import ExitCode, check_explicit_paths, option
from workbench.engine.errors import UserInputError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    serve = subparsers.add_parser(
        "serve",
        parents=[common],
        help="open the app in a web browser (textual-serve), on loopback unless told otherwise",
        description=(
            "Serve the app to web browsers: each tab runs its own app, ended when the tab "
            "closes. Loopback only by default; on any other address every request needs a "
            "token, printed in the URL. Prints 'listening on URL' once it accepts connections."
        ),
    )
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"address (default: {DEFAULT_HOST})")
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port, 0 for any free one (default: {DEFAULT_PORT})",
    )
    serve.add_argument(
        "--token",
        metavar="TOKEN",
        help="the token browsers must present (default: $WORKBENCH_SERVE_TOKEN; off loopback "
        "one is made up when neither is set)",
    )
    serve.add_argument(
        "--demo", action="store_true", help="serve the demo (a temporary sample per tab)"
    )
    serve.add_argument("--sample", metavar="NAME", help="with --demo: the sample project")
    serve.add_argument("--theme", metavar="NAME", help="colour theme for this run")
    serve.add_argument("--themes-dir", metavar="DIR", help="load more YAML themes from DIR")
    serve.set_defaults(handler=run_serve)


def app_argv(args: argparse.Namespace) -> list[str]:
    """The `workbench …` arguments each tab's app process runs with."""
    argv: list[str] = []
    for name, flag in (
        ("config_home", "--config-home"),
        ("project", "--project"),
        ("memory_dir", "--memory-dir"),
        ("settings", "--settings"),
    ):
        value = option(args, name)
        if value:
            argv += [flag, os.path.abspath(value)]
    argv.append("demo" if args.demo else "tui")
    if args.demo and args.sample:
        argv += ["--sample", args.sample]
    if args.theme:
        argv += ["--theme", args.theme]
    if args.themes_dir:
        argv += ["--themes-dir", os.path.abspath(args.themes_dir)]
    return argv


def run_serve(args: argparse.Namespace) -> int:
    if args.sample and not args.demo:
        raise UserInputError("--sample picks the demo's project; use it with --demo")
    if not 0 <= args.port <= 65535:
        raise UserInputError(f"--port {args.port}: ports are 0 to 65535")
    check_explicit_paths(args)
    project = option(args, "project")
    if project and not os.path.isdir(project):
        raise UserInputError(f"project folder not found: {project}")
    token = args.token or os.environ.get("WORKBENCH_SERVE_TOKEN") or None
    from workbench.webserve import serve

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    try:
        serve(
            app_argv(args),
            host=args.host,
            port=args.port,
            token=token,
            title="Memory Workbench demo" if args.demo else "Memory Workbench",
            say=say,
        )
    except OSError as exc:
        raise UserInputError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    return ExitCode.OK
