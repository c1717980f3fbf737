"""Command palette providers that search data: "Open memory: …"."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from workbench.engine.memories.models import MemoryEntry
from workbench.ui.messages import OpenMemoryRequested

DISCOVER_LIMIT = 8


class MemoryProvider(Provider):
    """Open any memory by name, path, type or description."""

    def _entries(self) -> tuple[MemoryEntry, ...]:
        # The main screen already holds the latest scan (made in a thread worker), so the
        # palette searches memory it has, with no disk work of its own.
        from workbench.ui.screens.main import MainScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, MainScreen) and screen.snapshot is not None:
                return screen.snapshot.entries
        return ()

    def _open(self, path: str) -> None:
        from workbench.ui.screens.main import MainScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, MainScreen):
                screen.post_message(OpenMemoryRequested(path))

    @staticmethod
    def _help(entry: MemoryEntry) -> str:
        kind = entry.type or "no type"
        return f"{kind} · {entry.scope}" + (f" · {entry.description}" if entry.description else "")

    async def discover(self) -> Hits:
        for entry in self._entries()[:DISCOVER_LIMIT]:
            yield DiscoveryHit(
                f"Open memory: {entry.path}",
                partial(self._open, entry.path),
                help=self._help(entry),
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._entries():
            candidate = f"Open memory: {entry.path} {entry.name}"
            score = matcher.match(candidate)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"Open memory: {entry.path}"),
                    partial(self._open, entry.path),
                    help=self._help(entry),
                )
