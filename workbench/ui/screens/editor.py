"""The memory editor: a frontmatter form and a body editor, linted as you type.

Saving runs in a thread worker. An edit passes the fingerprint of the text it started from, so
a file that changed on disk meanwhile is refused by the store (ConflictError) and the user
chooses: reload, overwrite, or keep editing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea
from textual.worker import get_current_worker

from workbench.engine.errors import ConflictError, WorkbenchError
from workbench.engine.memories.models import MEMORY_TYPES, DraftForm, LintFinding, MemoryDocument
from workbench.ui.actions import bindings
from workbench.ui.messages import ChangeOutcome
from workbench.ui.panes.memory import finding_line
from workbench.ui.screens.confirm import ConflictChoice, ConflictModal, discard_changes_modal
from workbench.ui.widgets.footer import KeyHints
from workbench.ui.widgets.text_fields import FieldInput, FieldTextArea

if TYPE_CHECKING:
    from workbench.engine import Engine

LINT_DELAY_S = 0.15
FIELD_RULES = {
    "description-missing": "description",
    "recall-description-generic": "description",
    "type-missing": "type",
    "type-invalid": "type",
    "name-missing": "name",
}


@dataclass(frozen=True)
class Draft:
    """The editor's fields at one moment."""

    memory_type: str | None
    name: str
    description: str
    body: str
    file: str
    team: bool
    raw: bool


class MemoryEditorScreen(Screen[ChangeOutcome | None]):
    """Write a new memory or edit one; dismisses with what changed, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("editor")

    class Validated(Message):
        """Live lint results for the current draft."""

        def __init__(
            self,
            findings: tuple[LintFinding, ...],
            projection: str | None,
            default_file: str | None = None,
        ) -> None:
            super().__init__()
            self.findings = findings
            self.projection = projection
            self.default_file = default_file

    class Saved(Message):
        """The save went through."""

        def __init__(self, outcome: ChangeOutcome) -> None:
            super().__init__()
            self.outcome = outcome

    class SaveRefused(Message):
        """The save failed; `conflict` when the file changed on disk."""

        def __init__(self, error: str, *, conflict: bool = False) -> None:
            super().__init__()
            self.error = error
            self.conflict = conflict

    class Reloaded(Message):
        """The file was read again after a conflict."""

        def __init__(self, document: MemoryDocument) -> None:
            super().__init__()
            self.document = document

    def __init__(
        self,
        engine: Engine,
        document: MemoryDocument | None = None,
        *,
        team: bool = False,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__(classes="editor-screen")
        self.engine = engine
        self.document = document
        self.start_team = team
        self.cursor_blink = cursor_blink
        self.editable = engine.memories.editable(document) if document else None
        self.raw = bool(self.editable and self.editable.raw)
        self._initial: Draft | None = None
        self._save_tried = False
        self.findings: tuple[LintFinding, ...] = ()
        self.projection: str | None = None

    @property
    def is_new(self) -> bool:
        """Whether this editor writes a new memory."""
        return self.document is None

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        editable = self.editable
        document = self.document
        title = "New memory" if document is None else f"Edit {document.entry.path}"
        with Vertical(classes="editor"):
            yield Static(Content(title), classes="editor-title")
            with Vertical(classes="editor-form"):
                with Horizontal(classes="form-row"):
                    yield Label("Type", classes="form-label")
                    yield Select(
                        [(t, t) for t in MEMORY_TYPES],
                        value=editable.type
                        if editable and editable.type in MEMORY_TYPES
                        else Select.NULL,
                        prompt="choose a type",
                        id="field-type",
                    )
                    if self.is_new:
                        yield Checkbox("Team memory", self.start_team, id="field-team")
                with Horizontal(classes="form-row"):
                    yield Label("Name", classes="form-label")
                    yield FieldInput(
                        editable.name if editable else "",
                        placeholder="a short title",
                        id="field-name",
                    )
                with Horizontal(classes="form-row"):
                    yield Label("Description", classes="form-label")
                    yield FieldInput(
                        editable.description if editable else "",
                        placeholder="one line: recall picks memories by this",
                        id="field-description",
                    )
                if self.is_new:
                    with Horizontal(classes="form-row"):
                        yield Label("File", classes="form-label")
                        yield FieldInput(
                            placeholder=file_placeholder(None),
                            id="field-file",
                        )
            yield FieldTextArea(
                document.text if self.raw and document else (editable.body if editable else ""),
                soft_wrap=True,
                # As in a web form's text box: Tab and Shift+Tab move between the fields, and
                # Esc reaches the screen (cancel) instead of only leaving the body.
                tab_behavior="focus",
                id="field-body",
            )
            yield Static(classes="editor-findings")
        yield KeyHints()

    def on_mount(self) -> None:
        for widget in self.query("Input, TextArea"):
            if isinstance(widget, (Input, TextArea)):
                widget.cursor_blink = self.cursor_blink
        self._apply_raw()
        self._initial = self.draft()
        first = self.query_one("#field-body" if self.raw else "#field-name")
        first.focus()
        self._run_validation(self.draft())

    def _apply_raw(self) -> None:
        self.set_class(self.raw, "-raw")
        self.query_one(".editor-form").display = not self.raw
        body = self.query_one("#field-body", TextArea)
        body.border_title = body_title(self.raw, self.form_unreadable)
        body.border_subtitle = "" if self.raw else "tab / shift+tab: next / previous field"
        self.refresh_bindings()  # the raw toggle's footer hint says where it goes now

    @property
    def form_unreadable(self) -> bool:
        """Whether the file's frontmatter cannot be read, so it is edited only as text."""
        return bool(self.editable and self.editable.raw)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A file whose frontmatter cannot be read has no form to go back to: not offered.
        return not (action == "toggle_raw" and self.raw and self.form_unreadable)

    def key_label(self, binding: Binding) -> str | None:
        """The footer's label for a key, where it depends on the mode (see `KeyHints`)."""
        if binding.action == "toggle_raw" and self.raw:
            return "Form"  # the way back, not "Raw text" again
        return None

    # --- the draft ---------------------------------------------------------------------

    def draft(self) -> Draft:
        """The fields as they are now."""
        selected = self.query_one("#field-type", Select).value
        team_box = self.query("#field-team")
        file_box = self.query("#field-file")
        return Draft(
            memory_type=selected if isinstance(selected, str) else None,
            name=self.query_one("#field-name", Input).value.strip(),
            description=self.query_one("#field-description", Input).value.strip(),
            body=self.query_one("#field-body", TextArea).text,
            file=file_box.first(Input).value.strip() if file_box else "",
            team=bool(team_box.first(Checkbox).value) if team_box else False,
            raw=self.raw,
        )

    def draft_text(self, draft: Draft) -> str:
        """The file text the draft would save."""
        if draft.raw:
            return draft.body
        if self.document is not None:
            return self.engine.memories.edit_text(
                self.document,
                name=draft.name,
                description=draft.description,
                memory_type=draft.memory_type,
                body=draft.body,
            )
        return self.engine.memories.compose(
            draft.memory_type or "", draft.name, draft.description, draft.body
        )

    @property
    def is_dirty(self) -> bool:
        """Whether a save would write something other than what the editor opened with.
        The form and the raw text are two views of one file: switching views is no change."""
        if self._initial is None:
            return False
        now = self.draft()
        if now == self._initial:
            return False
        if (now.file, now.team) != (self._initial.file, self._initial.team):
            return True
        try:
            return self.draft_text(now) != self.draft_text(self._initial)
        except WorkbenchError:
            return True  # cannot tell: ask rather than lose anything

    # --- live validation ---------------------------------------------------------------

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _field_changed(self) -> None:
        if self._initial is not None:
            self._run_validation(self.draft())

    @work(thread=True, exclusive=True, group="lint", exit_on_error=False)
    def _run_validation(self, draft: Draft) -> None:
        time.sleep(LINT_DELAY_S)  # debounce: a newer keystroke cancels this worker
        worker = get_current_worker()
        if worker.is_cancelled:
            return
        entry = self.document.entry if self.document else None
        form = None
        if not draft.raw:
            form = DraftForm(draft.memory_type, draft.name, draft.description, draft.file or None)
        check = self.engine.memories.check_draft(
            self.draft_text(draft),
            path=entry.path if entry else (draft.file or "new memory"),
            team=entry.scope == "team" if entry else draft.team,
            form=form,
            new=self.is_new,
        )
        if not worker.is_cancelled:
            self.post_message(self.Validated(check.findings, check.projection, check.default_file))

    @on(Validated)
    def _show_findings(self, message: Validated) -> None:
        self.findings = message.findings
        self.projection = message.projection
        if self.is_new:
            # Say which file the save will write, in the release's naming, as it is known.
            self.query_one("#field-file", Input).placeholder = file_placeholder(
                message.default_file
            )
        self._render_findings()

    @property
    def shows_problems(self) -> bool:
        """Whether the findings are on show: a blank new memory is not wrong yet, so it says
        what to fill in until something is typed (or a save is tried)."""
        return not self.is_new or self._save_tried or self.is_dirty

    def _render_findings(self) -> None:
        shown = self.shows_problems
        rules = {f.rule for f in self.findings} if shown else set()
        for field_name in ("name", "description", "type"):
            invalid = any(FIELD_RULES.get(rule) == field_name for rule in rules)
            self.query_one(f"#field-{field_name}").set_class(invalid, "-invalid")
        if not shown:
            hint = "Choose a type, then give a name, a one-line description and the body."
            self.query_one(".editor-findings", Static).update(
                Content.styled(hint, "$foreground-muted")
            )
            return
        lines = [finding_line(f) for f in self.findings]
        if self.projection:
            lines.append(Content.styled(f"Index: {self.projection}", "$foreground-muted"))
        if not lines:
            lines.append(Content.styled("✓ No problems found.", "$index-loaded"))
        self.query_one(".editor-findings", Static).update(Content("\n").join(lines))

    # --- actions -----------------------------------------------------------------------

    def action_toggle_raw(self) -> None:
        """Switch between the form and the whole file as text."""
        draft = self.draft()
        body = self.query_one("#field-body", TextArea)
        if self.raw:
            self.raw = False
            # Text typed in raw mode is kept: the body below its frontmatter goes back to the form.
            form = self.engine.memories.form_of(draft.body)
            if form is not None:
                self.query_one("#field-name", Input).value = form.name
                self.query_one("#field-description", Input).value = form.description
                self.query_one("#field-type", Select).value = (
                    form.type if form.type in MEMORY_TYPES else Select.NULL
                )
                body.load_text(form.body)
        else:
            text = self.draft_text(draft)
            self.raw = True
            body.load_text(text)
        self._apply_raw()
        if self.raw:
            body.focus()  # the field that had the focus is hidden with the form
        self._run_validation(self.draft())

    def action_next_field(self) -> None:
        self.focus_next()

    def action_previous_field(self) -> None:
        self.focus_previous()

    def action_save(self) -> None:
        """Save the draft in a worker."""
        if not self._save_tried:
            self._save_tried = True
            self._render_findings()
        self._run_save(self.draft(), self.document.fingerprint if self.document else None)

    def action_cancel(self) -> None:
        """Leave, asking first if there are unsaved changes."""
        if not self.is_dirty:
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(discard_changes_modal(), answered)

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def _run_save(self, draft: Draft, fingerprint: str | None) -> None:
        store = self.engine.memories
        try:
            if self.document is None:
                result = store.save(
                    type=draft.memory_type or "",
                    name=draft.name,
                    description=draft.description,
                    body=draft.body,
                    file=draft.file or None,
                    team=draft.team,
                )
                notes = (
                    (result.projection.message,)
                    if result.projection and result.projection.message
                    else ()
                )
                summary = f"saved {result.path}" + (
                    " and its index line" if result.index_updated else ""
                )
            else:
                result = store.update(self.document.entry.path, self.draft_text(draft), fingerprint)
                notes = ()
                if result.unchanged:
                    self.post_message(self.Saved(unchanged_outcome(result.path)))
                    return
                summary = f"saved {result.path}"
        except ConflictError as exc:
            self.post_message(self.SaveRefused(str(exc), conflict=True))
            return
        except WorkbenchError as exc:
            self.post_message(self.SaveRefused(str(exc)))
            return
        except OSError as exc:
            self.post_message(self.SaveRefused(f"could not write: {exc.strerror or exc}"))
            return
        self.post_message(self.Saved(ChangeOutcome(summary, select=result.path, notes=notes)))

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        self.dismiss(message.outcome)

    @on(SaveRefused)
    def _refused(self, message: SaveRefused) -> None:
        if not message.conflict or self.document is None:
            self.notify(message.error, title="Not saved", severity="error")
            if self.document is None and not self.draft().memory_type:
                # The one field a keyboard user is not in when typing starts: go to it.
                self.query_one("#field-type", Select).focus()
            return

        def chosen(choice: ConflictChoice | None) -> None:
            if choice == "reload":
                self._run_reload()
            elif choice == "overwrite":
                self._run_overwrite(self.draft())

        self.app.push_screen(ConflictModal(self.document.entry.path, message.error), chosen)

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def _run_overwrite(self, draft: Draft) -> None:
        # The user saw the conflict and chose to replace the file: save over what is there now.
        assert self.document is not None
        try:
            current = self.engine.memories.read(self.document.entry.path).fingerprint
        except WorkbenchError:
            current = None  # deleted meanwhile: writing recreates it
        self._run_save_now(draft, current)

    def _run_save_now(self, draft: Draft, fingerprint: str | None) -> None:
        assert self.document is not None
        try:
            result = self.engine.memories.update(
                self.document.entry.path, self.draft_text(draft), fingerprint
            )
        except WorkbenchError as exc:
            self.post_message(self.SaveRefused(str(exc)))
            return
        if result.unchanged:  # the version on disk was already this text
            outcome = unchanged_outcome(result.path)
        else:
            summary = f"saved {result.path} over the version on disk"
            outcome = ChangeOutcome(summary, select=result.path)
        self.post_message(self.Saved(outcome))

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def _run_reload(self) -> None:
        assert self.document is not None
        try:
            document = self.engine.memories.read(self.document.entry.path)
        except WorkbenchError as exc:
            self.post_message(self.SaveRefused(str(exc)))
            return
        self.post_message(self.Reloaded(document))

    @on(Reloaded)
    def _reloaded(self, message: Reloaded) -> None:
        self.document = message.document
        self.editable = self.engine.memories.editable(message.document)
        self.raw = self.editable.raw
        editable = self.editable
        self.query_one("#field-name", Input).value = editable.name
        self.query_one("#field-description", Input).value = editable.description
        self.query_one("#field-type", Select).value = (
            editable.type if editable.type in MEMORY_TYPES else Select.NULL
        )
        self.query_one("#field-body", TextArea).load_text(
            message.document.text if self.raw else editable.body
        )
        self._apply_raw()
        self._initial = self.draft()
        self.notify("Reloaded the file from disk.")


def body_title(raw: bool, form_unreadable: bool) -> str:
    """The text box's title: what part of the file it holds."""
    if not raw:
        return "Body (markdown)"
    if form_unreadable:
        return "Whole file as text (its frontmatter cannot be read)"
    return "Whole file as text (frontmatter and body)"


def unchanged_outcome(path: str) -> ChangeOutcome:
    """A save that found nothing to write: said so, and nothing to undo."""
    return ChangeOutcome(f"no changes to save: {path} was left as it was", undo_hint=False)


def file_placeholder(default_file: str | None) -> str:
    """The File field's hint: the file a save writes when the field is left empty."""
    if default_file is None:
        return "optional; by default it is made from the name"
    return f"optional; by default {default_file}"
