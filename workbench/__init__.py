"""Memory Workbench: see, edit and trust Claude Code's memory."""

__version__ = "0.1.0"
