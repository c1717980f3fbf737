"""The headless core: Claude Code's memory engine in Python. Imports neither Textual nor Rich."""

from workbench.engine.engine import Engine

__all__ = ["Engine"]
