"""Every user-facing action, declared once: binding, palette entry and help line come from here.

An `ActionSpec` names the action method, its default keys, the binding id users rebind in the
`[keymap]` table of config.toml, the footer label, and the "Category: Action" palette title.
The app, main-screen and editor actions are listed below; each pane declares its own verbs as
`PANE_ACTIONS` in its module, and `workbench.ui.panes.registry` gathers them (this module
imports no pane, so start-up does not pay for them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from textual.binding import Binding, BindingType

Scope = Literal["app", "main", "editor", "pane"]


@dataclass(frozen=True)
class ActionSpec:
    """One action with its three faces."""

    id: str
    """Binding id (kebab case); the key of the `[keymap]` table."""
    keys: str
    """Default keys, comma-separated."""
    action: str
    """Textual action string, e.g. `new_memory` or `show_pane('index')`."""
    label: str
    """Short footer label."""
    title: str
    """Command palette title, "Category: Action"."""
    help: str
    """One sentence for the palette and the help screen."""
    scope: Scope = "main"
    """Where the binding lives: the App (global), the main screen (memory and index verbs), the
    editor, or one pane (declared in that pane's module as `PANE_ACTIONS`). The main screen's
    memory verbs fire only while the tree or the viewer has the focus, its index verbs only
    while the MEMORY.md pane has it (`MEMORY_VERBS`, `INDEX_VERBS`)."""
    show: bool = False
    """Shown in the footer (keep it to about six)."""
    priority: bool = False
    """Run before the key reaches the focused widget. For keys that move the focus into a text
    box: Textual hands each key to the widget focused when the key is dispatched, so the text
    typed right after (already queued) follows only if the focus moved first. Where the key is
    also text (`/`, `i`), the action's `check_action` refuses it while a text box has the
    focus, so it is typed there; the editor's tab and shift+tab always move between fields."""

    def binding(self) -> Binding:
        """The Textual binding for this action."""
        return Binding(
            self.keys,
            self.action,
            self.label,
            show=self.show,
            id=self.id,
            tooltip=self.help,
            priority=self.priority,
        )


PANES: tuple[tuple[str, str, str], ...] = (
    ("memory", "Memory", "Memory viewer"),
    ("index", "MEMORY.md", "MEMORY.md load report"),
    ("session", "Session", "Session memory"),
    ("gauge", "Gauge", "Token gauge"),
    ("compaction", "Compact", "Compaction preview"),
    ("recall", "Recall", "Recall simulator"),
    ("team", "Team", "Team sync"),
    ("review", "Review", "Review queue"),
    ("instructions", "Instructions", "Instruction files"),
    ("context", "Context", "Context attribution"),
)
"""Pane id, tab title and full title, in tab order."""
SHORT_TABS: dict[str, str] = {
    "index": "Index",
    "session": "Sess",
    "compaction": "Comp",
    "instructions": "Instr",
    "context": "Ctx",
}
"""Tab titles for narrow screens, where the others are short already."""

ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "show-help",
        "f1,question_mark",
        "show_help",
        "Help",
        "App: Help and key bindings",
        "List every key binding and what it does",
        scope="app",
        show=True,
    ),
    ActionSpec(
        "quit-app", "ctrl+q", "quit", "Quit", "App: Quit", "Leave the workbench", scope="app"
    ),
    *(
        ActionSpec(
            f"show-{pane}",
            # Digits too: many terminals (and tmux) do not pass alt+digit through.
            f"{number % 10},alt+{number % 10}",  # the tenth pane is 0
            f"show_pane('{pane}')",
            tab,
            f"Pane: Show {title}",
            f"Show the {title} pane",
            scope="app",
        )
        for number, (pane, tab, title) in enumerate(PANES, start=1)
    ),
    ActionSpec(
        "new-memory",
        "n",
        "new_memory",
        "New",
        "Memory: New memory",
        "Write a new memory file and its index line",
        show=True,
    ),
    ActionSpec(
        "edit-memory",
        "e",
        "edit_memory",
        "Edit",
        "Memory: Edit memory",
        "Edit the selected memory's frontmatter and body",
        show=True,
    ),
    ActionSpec(
        "rename-memory",
        "r",
        "rename_memory",
        "Rename",
        "Memory: Rename memory",
        "Rename the selected memory file and re-point index links",
    ),
    ActionSpec(
        "delete-memory",
        "d,delete",
        "delete_memory",
        "Delete",
        "Memory: Delete memory",
        "Delete the selected memory and its index lines",
        show=True,
    ),
    ActionSpec(
        "undo-change",
        "u,ctrl+z",
        "undo_change",
        "Undo",
        "Memory: Undo last change",
        "Undo the newest change; press again to go further back",
        show=True,
    ),
    ActionSpec(
        "redo-change",
        "U,ctrl+y",
        "redo_change",
        "Redo",
        "Memory: Redo",
        "Re-apply the change the last undo reversed",
    ),
    ActionSpec(
        "filter-memories",
        "slash",
        "filter_memories",
        "Filter",
        "Memory: Filter tree",
        "Type to filter memories by name, path, description or type",
        show=True,
        priority=True,
    ),
    ActionSpec(
        "toggle-source",
        "v",
        "toggle_source",
        "Source",
        "Memory: Toggle source view",
        "Switch the viewer between rendered markdown and the raw file",
    ),
    ActionSpec(
        "reload-memories",
        "ctrl+r",
        "reload_memories",
        "Reload",
        "Memory: Reload from disk",
        "Scan the memory folder again",
    ),
    ActionSpec(
        "focus-tree",
        "escape",
        "focus_tree",
        "Tree",
        "Memory: Focus the tree",
        "Put the focus back on the memory tree, from any pane (clears the filter when in it)",
    ),
    ActionSpec(
        "toggle-sidebar",
        "f2",
        "toggle_sidebar",
        "Sidebar",
        "Pane: Hide or show the memory sidebar",
        "Give the panes the whole width (a small screen); f2 or escape brings the tree back",
    ),
    ActionSpec(
        "toggle-team-index",
        "t",
        "toggle_team_index",
        "Team index",
        "Index: Toggle private / team MEMORY.md",
        "Show the team MEMORY.md instead of the private one, or back",
        show=True,
    ),
    ActionSpec(
        "fix-dangling",
        "alt+d",
        "fix_dangling",
        "Fix dangling",
        "Index: Remove dangling lines",
        "Delete index lines that link to missing files (shows the change first)",
        show=True,
    ),
    ActionSpec(
        "fix-orphans",
        "alt+o",
        "fix_orphans",
        "Index orphans",
        "Index: Add orphan files",
        "Add an index line for every memory no line links to (shows the change first)",
        show=True,
    ),
    ActionSpec(
        "fix-long-lines",
        "alt+l",
        "fix_long_lines",
        "Shorten lines",
        "Index: Shorten long lines",
        "Trim index lines over the ~200-character guideline (shows the change first)",
        show=True,
    ),
    ActionSpec(
        "save-memory",
        "ctrl+s",
        "save",
        "Save",
        "Editor: Save",
        "Save the memory (refused if the file changed on disk meanwhile)",
        scope="editor",
        show=True,
    ),
    ActionSpec(
        "toggle-raw",
        "ctrl+t",
        "toggle_raw",
        "Raw text",
        "Editor: Toggle raw text",
        "Edit the whole file as text instead of the form",
        scope="editor",
        show=True,
    ),
    ActionSpec(
        "next-field",
        "tab",
        "next_field",
        "Next field",
        "Editor: Next field",
        "Move to the next field (what is typed right after, text or cursor keys, follows it there)",
        scope="editor",
        priority=True,
    ),
    ActionSpec(
        "previous-field",
        "shift+tab",
        "previous_field",
        "Previous field",
        "Editor: Previous field",
        "Move to the previous field",
        scope="editor",
        priority=True,
    ),
    ActionSpec(
        "cancel-edit",
        "escape",
        "cancel",
        "Cancel",
        "Editor: Cancel",
        "Leave the editor (asks first when there are unsaved changes)",
        scope="editor",
        show=True,
    ),
)


MEMORY_VERBS = frozenset(
    {
        "new_memory",
        "edit_memory",
        "rename_memory",
        "delete_memory",
        "filter_memories",
        "toggle_source",
    }
)
"""Main-screen actions whose keys work only while the memory tree or the viewer has the focus:
typed text elsewhere never opens an editor or deletes a memory that is not on show."""
INDEX_VERBS = frozenset({"toggle_team_index", "fix_dangling", "fix_orphans", "fix_long_lines"})
"""Main-screen actions whose keys work only while the MEMORY.md pane has the focus."""


def specs(scope: Scope) -> tuple[ActionSpec, ...]:
    """The actions that live at one scope."""
    return tuple(spec for spec in ACTIONS if spec.scope == scope)


def bindings(scope: Scope) -> list[BindingType]:
    """Textual bindings for one scope, typed for a `BINDINGS` class variable."""
    return [spec.binding() for spec in specs(scope)]


def effective_keys(spec: ActionSpec, keymap: Mapping[str, str]) -> str:
    """The keys that trigger `spec` once the user's keymap is applied."""
    return keymap.get(spec.id, spec.keys)


def unknown_keymap_ids(keymap: Iterable[str], specs: Iterable[ActionSpec] = ACTIONS) -> list[str]:
    """Keymap entries that name no binding in `specs` (most likely typos)."""
    known = {spec.id for spec in specs}
    return sorted(set(keymap) - known)
