"""The panes in tab order: which class each one is, how it is built, and its actions.

Each pane module declares its verbs once, as `PANE_ACTIONS`; this module gathers them for the
palette, the help screen and the keymap check. Pane modules are imported on first use (when
the main screen mounts a pane after the first frame, or the palette or help screen opens), so
start-up does not pay for the panes it does not show.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from workbench.ui.actions import ACTIONS, PANES, ActionSpec

if TYPE_CHECKING:
    from workbench.ui.panes.base import Pane


@dataclass(frozen=True)
class PaneInfo:
    """One pane: where its class lives and how it is constructed."""

    id: str
    """Pane id (`gauge`); the widget id is `<id>-pane`, the tab id `pane-<id>`."""
    tab: str
    """The tab's title."""
    title: str
    """The full title, for the palette ("Pane: Show Token gauge")."""
    module: str
    class_name: str
    clocked: bool
    """The constructor takes `now_ms=` (ages are measured against the app's clock)."""

    @property
    def widget_id(self) -> str:
        """The pane widget's id."""
        return f"{self.id}-pane"

    def pane_class(self) -> type[Pane]:
        """The pane class (imports its module)."""
        pane_class: type[Pane] = getattr(importlib.import_module(self.module), self.class_name)
        return pane_class

    def build(self, now_ms: Callable[[], float]) -> Pane:
        """A new pane, wired the way the main screen places it."""
        cls = self.pane_class()
        if self.clocked:
            return cls(now_ms=now_ms, id=self.widget_id)  # type: ignore[call-arg]
        return cls(id=self.widget_id)

    def actions(self) -> tuple[ActionSpec, ...]:
        """The pane's own verbs (`PANE_ACTIONS` in its module)."""
        module = importlib.import_module(self.module)
        return tuple(getattr(module, "PANE_ACTIONS", ()))


_CLASSES: dict[str, tuple[str, str, bool]] = {
    "memory": ("workbench.ui.panes.memory", "MemoryPane", True),
    "index": ("workbench.ui.panes.index", "IndexPane", False),
    "session": ("workbench.ui.panes.session", "SessionPane", False),
    "gauge": ("workbench.ui.panes.gauge", "GaugePane", False),
    "compaction": ("workbench.ui.panes.compaction", "CompactionPane", True),
    "recall": ("workbench.ui.panes.recall", "RecallPane", True),
    "team": ("workbench.ui.panes.team", "TeamSyncPane", True),
    "review": ("workbench.ui.panes.review", "ReviewPane", True),
    "instructions": ("workbench.ui.panes.instructions", "InstructionsPane", False),
    "context": ("workbench.ui.panes.context", "ContextPane", False),
}

PANE_INFOS: tuple[PaneInfo, ...] = tuple(
    PaneInfo(pane_id, tab, title, *_CLASSES[pane_id]) for pane_id, tab, title in PANES
)
"""Every pane, in tab order."""


def pane_info(pane_id: str) -> PaneInfo:
    """The entry for one pane id."""
    for info in PANE_INFOS:
        if info.id == pane_id:
            return info
    raise KeyError(pane_id)


@cache
def pane_actions() -> tuple[tuple[PaneInfo, ActionSpec], ...]:
    """Every pane's verbs with the pane that owns them, in tab order."""
    return tuple((info, spec) for info in PANE_INFOS for spec in info.actions())


def every_action() -> tuple[ActionSpec, ...]:
    """Every action with a binding id: the app's, the main screen's, each pane's, the editor's."""
    before_editor = tuple(spec for spec in ACTIONS if spec.scope != "editor")
    editor = tuple(spec for spec in ACTIONS if spec.scope == "editor")
    return before_editor + tuple(spec for _info, spec in pane_actions()) + editor
