"""The memory verbs of the main screen: new, edit, rename, delete, undo and redo, the bulk
index fixes, and how a change's outcome is reported.

`MainScreen` (screens/main.py) keeps the layout, the focus and pane switching, and inherits
these; they build on `MemoryLoading` (screens/memory_loading.py), which scans the folder again
after each change. Every change runs in the one "change" thread worker, one at a time (index edits are
read-modify-write), and comes back as `ChangeApplied` or `ChangeFailed`; a change a pane makes
(a pull, an accepted proposal, a restored teammate version) is reported the same way.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.message import Message

from workbench.engine.errors import WorkbenchError
from workbench.ui.formatting import plural
from workbench.ui.host import while_running
from workbench.ui.messages import ChangeApplied, ChangeFailed, ChangeOutcome
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.screens.confirm import ConfirmModal
from workbench.ui.screens.memory_loading import MemoryLoading
from workbench.ui.screens.prompt import TextPromptModal
from workbench.ui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from workbench.engine.memories.models import MemoryDocument, MemoryEntry
    from workbench.engine.memories.store import IndexFixPlan


HISTORY_VERBS = frozenset({"undo_change", "redo_change"})
"""Undo and redo: their keys work only in the tree, the viewer or the MEMORY.md pane."""
HISTORY_PLACES = ("sidebar", "memory-pane", "index-pane")


class MemoryActions(MemoryLoading):
    """The memory and index verbs, over the loading (a change is followed by a scan)."""

    if TYPE_CHECKING:
        # Provided by MainScreen.
        _change_lock: threading.Lock

        def highlighted_entry(self) -> MemoryEntry | None: ...
        def show_pane(self, pane_id: str, *, focus: bool | None = None) -> None: ...

    class EditorRequested(Message):
        """A document was read and the editor should open on it."""

        def __init__(self, document: MemoryDocument) -> None:
            super().__init__()
            self.document = document

    def action_reload_memories(self) -> None:
        """Scan the memory folder again."""
        self._load_memories()
        if self.memory_tree.selected_path:
            self._load_document(self.memory_tree.selected_path)

    def action_toggle_source(self) -> None:
        """Rendered markdown or raw source in the viewer."""
        pane = self.query_one(MemoryPane)
        pane.show_source = not pane.show_source
        self.show_pane("memory")

    def action_toggle_team_index(self) -> None:
        """Switch the MEMORY.md pane between the private and the team index."""
        self.show_team_index = not self.show_team_index
        self.show_pane("index")

    def action_new_memory(self) -> None:
        """Open the editor on a new memory."""
        from workbench.ui.screens.editor import MemoryEditorScreen

        highlighted = self.highlighted_entry()
        team = bool(highlighted and highlighted.scope == "team")
        self.app.push_screen(
            MemoryEditorScreen(
                self.workbench.engine,
                None,
                team=team,
                cursor_blink=self.workbench.settings.cursor_blink,
            ),
            self._editor_closed,
        )

    def action_edit_memory(self) -> None:
        """Open the editor on the highlighted memory (read fresh from disk)."""
        entry = self.highlighted_entry()
        if entry is not None:
            self._open_editor(entry.path)

    @work(thread=True, exclusive=True, group="editor", exit_on_error=False)
    def _open_editor(self, path: str) -> None:
        try:
            document = self.workbench.engine.memories.read(path)
        except (WorkbenchError, OSError) as exc:
            self.post_message(ChangeFailed("edit", str(exc)))
            return
        self.post_message(self.EditorRequested(document))

    @on(EditorRequested)
    def _editor_requested(self, message: EditorRequested) -> None:
        from workbench.ui.screens.editor import MemoryEditorScreen

        self.app.push_screen(
            MemoryEditorScreen(
                self.workbench.engine,
                message.document,
                cursor_blink=self.workbench.settings.cursor_blink,
            ),
            self._editor_closed,
        )

    def _editor_closed(self, outcome: ChangeOutcome | None) -> None:
        if outcome is not None:
            self.post_message(ChangeApplied(outcome))

    @work(exclusive=True, group="ask")
    async def action_delete_memory(self) -> None:
        """Delete the highlighted memory and its index lines, after asking."""
        entry = self.highlighted_entry()
        if entry is None:
            return
        after = self.memory_tree.neighbour_of(entry.path)
        what = (
            "The file goes, with the MEMORY.md lines that link to it. Undo (u) brings them all back."
            if entry.indexed
            else "The file goes (no MEMORY.md line links to it). Undo (u) brings it back."
        )
        confirmed = await self.app.push_screen_wait(
            ConfirmModal(
                f"Delete {entry.path}?",
                what,
                confirm_label="Delete",
            )
        )
        if not confirmed:
            return
        store = self.workbench.engine.memories

        def delete() -> ChangeOutcome:
            result = store.remove(entry.path)
            lines = result.index_lines_removed
            suffix = f" and {plural(lines, 'index line')}" if lines else ""
            return ChangeOutcome(f"deleted {result.removed}{suffix}", select=after)

        self._run_change("delete", delete)

    @work(exclusive=True, group="ask")
    async def action_rename_memory(self) -> None:
        """Rename the highlighted memory; index links follow."""
        entry = self.highlighted_entry()
        if entry is None:
            return
        current = os.path.basename(entry.path)

        def check(value: str) -> str | None:
            # Said here, in the dialog, so a wrong name can be fixed without typing it again.
            if "/" in value or "\\" in value:
                return "Just a file name: the memory stays in its folder"
            if not value.endswith(".md"):
                return "The name must end in .md"
            if value == "MEMORY.md":
                return "MEMORY.md is the index; pick another name"
            # A space, brackets, `memory.md`, …: the engine's rule, as rename would refuse it.
            return self.workbench.engine.memories.file_name_problem(value)

        new_name = await self.app.push_screen_wait(
            TextPromptModal(
                f"Rename {entry.path}",
                current,
                hint="A new file name in the same folder; index lines that link to it follow.",
                check=check,
                confirm="Rename",
            )
        )
        if not new_name or new_name == current:
            return
        store = self.workbench.engine.memories

        def rename() -> ChangeOutcome:
            result = store.rename(entry.path, new_name)
            links = result.links_updated
            suffix = f" ({plural(links, 'index link')} updated)" if links else ""
            return ChangeOutcome(
                f"renamed {result.old_path} to {result.new_path}{suffix}", select=result.new_path
            )

        self._run_change("rename", rename)

    def action_undo_change(self) -> None:
        """Undo the newest change still in effect; again to walk further back."""
        self._run_change("undo", lambda: self._undo_outcome("undo"))

    def action_redo_change(self) -> None:
        """Re-apply the change the last undo reversed."""
        self._run_change("redo", lambda: self._undo_outcome("redo"))

    def _undo_outcome(self, kind: str) -> ChangeOutcome:
        history = self.workbench.engine.history
        memory_dir = self.workbench.engine.locations.memory_dir
        result = history.undo() if kind == "undo" else history.redo()
        said = result.lines(lambda path: os.path.relpath(path, memory_dir))
        summary = f"{kind} of {result.what}: " + (", ".join(said) or "files already matched")
        # Select a file that is still there, so the viewer shows what the tree highlights.
        kept = [e.path for e in result.entries if e.after is not None]
        names = [os.path.relpath(p, memory_dir) for p in kept if p.endswith(".md")]
        select = next((n for n in names if os.path.basename(n) != "MEMORY.md"), None)
        return ChangeOutcome(summary, select=select, undo_hint=False)

    FIXES: ClassVar[dict[str, tuple[str, str, str]]] = {
        "dangling": ("removed", "Remove {n} from {index}?", "dangling line"),
        "orphans": ("indexed", "Add {n} to {index}?", "orphan"),
        "long-lines": ("shortened", "Shorten {n} in {index}?", "long line"),
    }
    """Each bulk index fix: the past tense for the status line, the question, the noun."""

    class FixPlanned(Message):
        """An index fix was planned (nothing written yet): show it and ask."""

        def __init__(self, plan: IndexFixPlan) -> None:
            super().__init__()
            self.plan = plan

    def _fix(self, kind: str) -> None:
        self.show_pane("index")
        self._plan_fix(kind, self.show_team_index)

    @work(thread=True, exclusive=True, group="fix-plan", exit_on_error=False)
    def _plan_fix(self, kind: str, team: bool) -> None:
        try:
            plan = self.workbench.engine.memories.plan_index_fix(kind, team)
        except (WorkbenchError, OSError) as exc:
            self.post_message(ChangeFailed("plan the fix", str(exc)))
            return
        self.post_message(self.FixPlanned(plan))

    @on(FixPlanned)
    @while_running
    def _fix_planned(self, message: FixPlanned) -> None:
        import difflib

        from workbench.ui.screens.confirm import DiffConfirmModal

        plan = message.plan
        label = "team/MEMORY.md" if plan.team else "MEMORY.md"
        _past, question, noun = self.FIXES[plan.kind]
        if not plan.count:
            self.notify(f"Nothing to fix: {label} has no {noun}s.", title="Index")
            return
        diff = "".join(
            difflib.unified_diff(
                plan.before.splitlines(keepends=True),
                plan.after.splitlines(keepends=True),
                f"a/{label}",
                f"b/{label}",
            )
        )
        nouns = plural(plan.count, noun)
        verb = question.split(" ", 1)[0]
        explained = (
            f"{label} is rewritten as shown; nothing is written until you apply it, "
            "and undo (u) brings the old index back."
        )
        if plan.past_the_cut:
            explained = f"{past_the_cut_warning(plan, label)} {explained}"
        self.app.push_screen(
            DiffConfirmModal(
                question.format(n=nouns, index=label),
                explained,
                diff,
                confirm_label=verb,
            ),
            partial(self._fix_answered, plan),
        )

    def _fix_answered(self, plan: IndexFixPlan, apply: bool | None) -> None:
        if not apply:
            return
        store = self.workbench.engine.memories
        label = "team/MEMORY.md" if plan.team else "MEMORY.md"
        past, _verb, noun = self.FIXES[plan.kind]

        def fix() -> ChangeOutcome:
            count = store.apply_index_fix(plan)
            done = f"{past} {plural(count, noun)} in {label}"
            if plan.past_the_cut:
                done += f"; {past_the_cut_note(plan.past_the_cut)}"
            return ChangeOutcome(done)

        self._run_change(past, fix)

    def action_fix_dangling(self) -> None:
        """Remove index lines that link to missing files (after showing the change)."""
        self._fix("dangling")

    def action_fix_orphans(self) -> None:
        """Add index lines for memories nothing links to (after showing the change)."""
        self._fix("orphans")

    def action_fix_long_lines(self) -> None:
        """Shorten index lines over the guideline (after showing the change)."""
        self._fix("long-lines")

    # --- changes -----------------------------------------------------------------------

    @work(thread=True, group="change", exit_on_error=False)
    def _run_change(self, verb: str, change: Callable[[], ChangeOutcome]) -> None:
        # One change at a time: index edits are read-modify-write.
        with self._change_lock:
            try:
                outcome = change()
            except (WorkbenchError, OSError) as exc:
                self.post_message(ChangeFailed(verb, str(exc)))
                return
        self.post_message(ChangeApplied(outcome))

    def _focus_within(self, *ids: str) -> bool:
        """Whether the focus is inside one of the widgets with these ids."""
        focused = self.focused
        if focused is None:
            return False
        return any(node.id in ids for node in focused.ancestors_with_self)

    @on(ChangeApplied)
    @while_running
    def _change_applied(self, message: ChangeApplied) -> None:
        outcome = message.outcome
        self.query_one(StatusLine).say(outcome.summary)
        hint = ""
        if outcome.undo_hint:
            # `u` acts only where memories are on show (HISTORY_PLACES): from the Review or
            # Team pane, say where to press it.
            here = self._focus_within(*HISTORY_PLACES)
            hint = " (u undoes it)" if here else " (u in the tree undoes it)"
        self.notify(outcome.summary[:1].upper() + outcome.summary[1:] + hint)
        for note in outcome.notes:
            self.notify(note, title="Index", severity="warning")
        self._pending_select = outcome.select
        self._load_memories()
        path = outcome.select or self.memory_tree.selected_path
        if path:
            self._load_document(path)

    @on(ChangeFailed)
    @while_running
    def _change_failed(self, message: ChangeFailed) -> None:
        self.query_one(StatusLine).say(f"{message.verb} failed")
        self.notify(message.error, title=f"Could not {message.verb}", severity="error")


def past_the_cut_warning(plan: IndexFixPlan, label: str) -> str:
    """What an orphans fix cannot do: lines it adds past the cut still do not load."""
    past = plan.past_the_cut
    lines = "the last new line" if past == 1 else f"the last {past} new lines"
    memories = "its memory stays" if past == 1 else "their memories stay"
    return (
        f"{label} reaches its cut, so {lines} will not load and {memories} unseen at the "
        "start of a session: shorten or remove entries above them first."
    )


def past_the_cut_note(past: int) -> str:
    """The status line's half-sentence for new index lines past the cut."""
    if past == 1:
        return "the last new line is past the cut and does not load"
    return f"the last {past} new lines are past the cut and do not load"
