"""The parser command lines are read with, in a module of its own: `workbench statusline` and
`workbench hook EVENT` build none (see `cli.fast_args`), so they never import argparse."""

from __future__ import annotations

import argparse
from typing import NoReturn

from workbench.commands.common import ExitCode


class WorkbenchArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error (the usage text is one `--help` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: {message} (see '{self.prog} --help')\n")
