"""The headless core: Claude Code's memory engine in Python. Imports neither Textual nor Rich."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.engine import Engine

__all__ = ["Engine"]


def __getattr__(name: str) -> Any:
    # The facade loads on first use (PEP 562): `workbench.engine.errors` and the other small
    # modules the front ends import should not pull path resolution in with them.
    if name == "Engine":
        from workbench.engine.engine import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
