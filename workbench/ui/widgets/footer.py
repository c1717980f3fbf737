"""The footer, rebuilt at most once per refresh however many times the bindings change.

Textual's Footer recomposes on every bindings change. At start-up the focus moves, the scan
lands and the selection changes within a few frames, and each rebuild mounts and styles every
key again (tens of milliseconds each), so the first frame waited on several identical footers.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class CoalescingFooter(Footer):
    """A Footer that folds bursts of bindings changes into one recompose."""

    _recompose_pending = False

    def bindings_changed(self, screen: Screen) -> None:
        # Same conditions as Footer.bindings_changed; `_bindings_ready` is Footer's own flag.
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        await self.recompose()
