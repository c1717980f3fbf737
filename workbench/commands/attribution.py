"""`workbench context` and `workbench sessions`: what a session's context is made of, and how
the project's sessions went."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    return None
