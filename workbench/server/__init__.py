"""The team-memory server the workbench ships: Starlette + uvicorn over SQLite.

It speaks the protocol of spec 03 §6 so teams can self-host team sync, and every sync test runs
against it on loopback. Nothing here imports Textual or Rich; importing this package loads
nothing heavy until `TeamServer` is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.server.runner import TeamServer, parse_token_specs

__all__ = ["TeamServer", "parse_token_specs"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from workbench.server import runner

        return getattr(runner, name)
    raise AttributeError(name)
