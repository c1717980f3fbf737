"""Command palette providers: the app's actions, found by any of their names, and the ones
that search data: "Open memory: …"."""

from __future__ import annotations

from functools import cache, partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.system_commands import SystemCommandsProvider

from workbench.engine.memories.models import MemoryEntry
from workbench.ui.messages import OpenMemoryRequested

DISCOVER_LIMIT = 8


@cache
def other_names() -> dict[str, tuple[str, ...]]:
    """Each action's palette title, with the names it has elsewhere: the footer's label and
    the binding id the help screen and the keymap use (all from its one `ActionSpec`)."""
    from workbench.ui.panes.registry import every_action

    return {spec.title: (spec.label, spec.id) for spec in every_action()}


class ActionsProvider(SystemCommandsProvider):
    """The app's commands (`get_system_commands`), found by their title, their footer label
    or their binding id. The palette searched titles only: with the MEMORY.md pane focused,
    the footer said "alt+d Fix dangling" and help said `fix-dangling`, but "fix" found
    nothing ("Index: Remove dangling lines")."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        names = other_names()
        for title, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            score = matcher.match(title)
            shown = matcher.highlight(title) if score > 0 else title
            for name in names.get(title, ()):
                score = max(score, matcher.match(name))
            if score > 0:
                yield Hit(score, shown, callback, help=help_text)


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
