"""The memory store's writes: save, update, delete, rename and the bulk index fixes, and what
the editor asks before a write (a new file's text, the form, the draft check, the headroom a
save would leave in the index).

Every write is atomic and recorded in the local history; edits of existing files refuse to
overwrite a file that changed on disk since it was read; team writes are checked for secrets
first. A save is Claude Code's two-step save: the file, then its one-line index entry.

`MemoryStore` (store.py) inherits these from `MemoryWriting` and keeps the reads they build
on (paths, analyses, the index and its load report): apart so that each side reads alone,
what the workbench shows there and what it changes here. The index lines themselves are
made by the pure text edits of index_edits.py.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    RefusedWriteError,
    UserInputError,
    WorkbenchError,
)
from workbench.engine.memories.file_format import edit_memory_text, kebab_name, new_frontmatter
from workbench.engine.memories.frontmatter import MEMORY_TYPES, normalize_text
from workbench.engine.memories.index_edits import (
    IndexFixPlan,
    index_line_for,
    link_problem,
    with_index_line,
    with_link_moved,
    with_orphans,
    with_short_lines,
    without_dangling,
    without_links,
)
from workbench.engine.memories.lint import FileFacts, lint_file
from workbench.engine.memories.models import (
    IndexProjection,
    LintFinding,
    RemoveResult,
    RenameResult,
    SaveResult,
)
from workbench.engine.records import replace as with_changes
from workbench.engine.userfiles import MEMORY_FILE_LIMIT, read_bytes, read_start

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import TypeVar

    from workbench.engine.claude_paths import Locations
    from workbench.engine.engine import Engine
    from workbench.engine.history import History
    from workbench.engine.memories.analysis import Analysis
    from workbench.engine.memories.models import (
        DraftCheck,
        DraftForm,
        EditableMemory,
        IndexReport,
        MemoryDocument,
    )
    from workbench.engine.profiles.rules import MemoryFileRules

    # Here: a TypeVar bound by name compiles that name when the module loads (1.5 ms).
    _M = TypeVar("_M", bound="Callable[..., Any]")


def fingerprint(data: bytes) -> str:
    """The fingerprint `MemoryStore.read` gives a file and a write checks it against."""
    import hashlib  # here: loading OpenSSL is 4 ms the index report (SessionStart) never needs

    return hashlib.sha256(data).hexdigest()


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return slug[:60].rstrip("_") or "memory"


def _one_change(method: _M) -> _M:
    """Run a store method as one change: under the folder's lock, recorded or rolled back
    as a whole (its reads, checks and writes cannot interleave with another process)."""

    @functools.wraps(method)
    def wrapper(self: MemoryWriting, *args: Any, **kwargs: Any) -> Any:
        try:
            with self.history.transaction():
                return method(self, *args, **kwargs)
        finally:
            self._forget_index()

    return wrapper  # type: ignore[return-value]


def _projection(before: IndexReport, after: IndexReport) -> IndexProjection:
    """What a save does to the index, from its load reports before and after."""
    loaded_before = {e.text for e in before.entries if e.loaded}
    newly_dropped = sum(1 for e in after.entries if not e.loaded and e.text in loaded_before)
    dropped_total = sum(1 for e in after.entries if not e.loaded)
    message = None
    if after.line_truncated or after.length_truncated:
        parts = []
        if after.line_truncated:
            parts.append(f"{after.line_count}/{after.max_lines} lines")
        if after.length_truncated:
            parts.append(f"{after.length:,}/{after.max_length:,} characters")
        message = (
            f"this save puts the index at {' and '.join(parts)}; "
            f"{dropped_total} entr{'y' if dropped_total == 1 else 'ies'} will not load"
        )
    return IndexProjection(
        line_count_before=before.line_count,
        line_count_after=after.line_count,
        length_before=before.length,
        length_after=after.length,
        headroom_before=before.headroom,
        headroom_after=after.headroom,
        newly_dropped=newly_dropped,
        message=message,
    )


def _same_bytes(path: Path, content: bytes) -> bool:
    """True when `path` is a regular file holding exactly `content` (never waits on a pipe)."""
    try:
        return read_start(path, len(content) + 1)[0] == content
    except OSError:
        return False


class MemoryWriting:
    """The write verbs of `MemoryStore`, over its reads."""

    if TYPE_CHECKING:
        # Provided by MemoryStore (store.py).
        engine: Engine
        locations: Locations
        root: Path
        formats: MemoryFileRules

        @property
        def history(self) -> History: ...
        def resolve(self, path: str | os.PathLike[str]) -> Path: ...
        def relative(self, path: str | os.PathLike[str]) -> str: ...
        def index(self, team: bool = False, *, text: str | None = None) -> IndexReport: ...
        def index_path(self, team: bool = False) -> Path: ...
        def _index_folder(self, team: bool) -> Path: ...
        def _read_index(self, team: bool) -> tuple[bytes | None, str]: ...
        def _read_index_to_edit(self, team: bool) -> tuple[bytes | None, str]: ...
        def _writing_index(self) -> AbstractContextManager[None]: ...
        def _forget_index(self) -> None: ...
        def _analyse(self, path: str, stat: os.stat_result) -> Analysis: ...

    # --- writing -----------------------------------------------------------------------

    def _check_team_secrets(self, target: Path, content: str) -> None:
        if not self.locations.is_team_path(str(target)):
            return
        from workbench.engine.team.secrets import scan_for_secrets, team_write_refusal_message

        labels = [match.label for match in scan_for_secrets(content)]
        if labels:
            raise RefusedWriteError(team_write_refusal_message(labels))

    def _first_file_name(self, memory_type: str, name: str) -> str:
        """The file a new memory is named for before any suffix: the release's naming,
        `type_name.md` (2.1.88's examples) or the kebab-case name (2.1.332)."""
        if self.formats.kebab_names:
            stem = kebab_name(name)
            # `memory.md` (a name of no Latin letters or digits, or "Memory") differs from
            # the index only by case: on macOS's and Windows' disks it would overwrite it.
            return "memory-note.md" if stem == "memory" else f"{stem}.md"
        return f"{memory_type}_{_slug(name)}.md"

    def file_name_problem(self, file: str) -> str | None:
        """Why a memory cannot be saved or renamed to `file` (relative to the memory folder)
        although it ends in .md, in one line, or None: the index line could not link to it
        (a space, brackets, parentheses, …), or it is MEMORY.md in other letter cases."""
        problem = link_problem(file.replace(os.sep, "/"))
        return None if problem is None else f"{file!r} {problem}"

    def _new_file_name(
        self, memory_type: str, name: str, team: bool, content: bytes | None = None
    ) -> tuple[str, bool]:
        """A free `TYPE_NAME[_N].md`, or one that already holds exactly `content` (True)."""
        folder = self._index_folder(team)
        kebab = self.formats.kebab_names
        candidate = self._first_file_name(memory_type, name)
        stem = candidate.removesuffix(".md")
        counter = 2
        while True:
            path = folder / candidate
            if not path.exists():
                return candidate, False
            if content is not None and _same_bytes(path, content):
                return candidate, True
            candidate = f"{stem}-{counter}.md" if kebab else f"{stem}_{counter}.md"
            counter += 1

    def compose(self, memory_type: str, name: str, description: str, body: str) -> str:
        """A new memory file's full text in the release's format: frontmatter, a blank line,
        the body (2.1.332 nests the type under `metadata` and names it in kebab case)."""
        # The closing fence's `---\s*` swallows any whitespace the body starts with, so it is
        # dropped here: what is written is exactly what Claude Code (and `read`) will see.
        body = normalize_text(body).lstrip().rstrip("\n")
        if self.formats.kebab_names:
            name = kebab_name(name)
        head = new_frontmatter(name, description, memory_type, self.formats.writes_type_at)
        return head + "\n" + body + "\n"

    @staticmethod
    def editable(document: MemoryDocument) -> EditableMemory:
        """The editor's form fields and body for `document`, or its whole text (`raw`) when
        the form cannot represent it (broken or unclosed frontmatter, binary)."""
        from workbench.engine.memories.editable import editable_from

        return editable_from(document)

    @staticmethod
    def form_of(text: str) -> EditableMemory | None:
        """The form fields and body of a whole file's text, or None without frontmatter."""
        from workbench.engine.memories.editable import form_of

        return form_of(text)

    def edit_text(
        self,
        document: MemoryDocument,
        *,
        name: str,
        description: str,
        memory_type: str | None,
        body: str,
    ) -> str:
        """The text of `document` after a form edit, in the file's own format (a nested type
        stays nested, other keys are kept; unchanged fields leave the block as it was)."""
        return edit_memory_text(
            document.text,
            name=name,
            description=description,
            memory_type=memory_type,
            body=body,
            new_style=self.formats.writes_type_at,
        )

    def _validate_new(self, memory_type: str, name: str, description: str) -> None:
        if not memory_type.strip():
            raise UserInputError(f"a memory needs a type: one of {', '.join(MEMORY_TYPES)}")
        if memory_type not in MEMORY_TYPES:
            raise UserInputError(
                f"type must be one of {', '.join(MEMORY_TYPES)} (got {memory_type!r})"
            )
        if not name.strip():
            raise UserInputError("a memory needs a name")
        if not description.strip():
            raise UserInputError("a memory needs a one-line description: recall decides by it")
        for field_name, value in (("name", name), ("description", description)):
            if "\n" in value or "\r" in value:
                raise UserInputError(
                    f"the {field_name} must be one line (it goes into the index and the manifest)"
                )
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise UserInputError(
                    f"the {field_name} holds bytes that are not text (not valid UTF-8)"
                ) from None

    def _target_for(self, file: str | None, memory_type: str, name: str, team: bool) -> Path:
        folder = self._index_folder(team)
        if file:
            if not file.endswith(".md"):
                raise UserInputError(f"memory files end in .md (got {file!r})")
            if Path(file).name == "MEMORY.md":
                raise UserInputError("MEMORY.md is the index; write memories to their own files")
            target = self.resolve(folder / file)
            if team and not self.locations.is_team_path(str(target)):
                raise UserInputError(f"{file} would land outside the team folder")
            problem = self.file_name_problem(self.relative(target))
            if problem:
                raise UserInputError(problem)
            return target
        return folder / self._new_file_name(memory_type, name, team)[0]

    def _index_line_for(self, target: Path, name: str, hook: str | None, team: bool) -> str:
        return index_line_for(target, name, hook, self._index_folder(team))

    def _with_index_line(self, text: str, target: Path, line: str, team: bool) -> str:
        """The index text with `line` replacing any line linking to `target`, else appended."""
        return with_index_line(text, target, line, self._index_folder(team))

    def check_draft(
        self,
        text: str,
        *,
        path: str,
        team: bool,
        form: DraftForm | None = None,
        new: bool = False,
    ) -> DraftCheck:
        """Lint a memory being edited as it would be saved (`text`, the whole file): its
        findings (never `memory-stale`, it is being written now), what the form still lacks,
        and for a new memory the index headroom after the save."""
        from workbench.engine.memories.models import DraftCheck

        facts = FileFacts(
            path=path,
            text=text,
            size_bytes=len(text.encode("utf-8")),
            age_days=0,
            team=team,
            reads_type_at=self.formats.reads_type_at,
            claude_version=self.engine.profile.version,
        )
        findings = [f for f in lint_file(facts) if f.rule != "memory-stale"]
        if form is not None:
            if form.memory_type is None:
                # The form composes an empty type; say what to do rather than quote ''.
                findings = [f for f in findings if not f.rule.startswith("type-")]
                message = "choose a type: " + ", ".join(MEMORY_TYPES)
                findings.insert(0, LintFinding(path, "type-missing", "error", message))
            if not form.name:
                findings.insert(
                    0, LintFinding(path, "name-missing", "error", "a memory needs a name")
                )
        projection = None
        default_file = None
        # Named for the name alone (kebab case), or for type and name (`type_name.md`).
        named = form is not None and (form.memory_type or self.formats.kebab_names)
        if new and form is not None and named and form.name.strip() and not form.file:
            default_file = self._new_file_name(form.memory_type or "", form.name, team)[0]
        if new and form is not None and form.memory_type and form.name:
            try:
                # The default file was found above: the preview need not look for it again.
                result = self.preview_save(
                    form.memory_type,
                    form.name,
                    form.description,
                    file=form.file or default_file,
                    team=team,
                )
                projection = result.message or (
                    f"the index goes to {result.line_count_after}/200 lines, "
                    f"{result.length_after:,}/25,000 characters"
                )
            except WorkbenchError as exc:
                projection = str(exc)
        return DraftCheck(tuple(findings), projection, default_file)

    def preview_save(
        self,
        memory_type: str,
        name: str,
        description: str,
        *,
        file: str | None = None,
        team: bool = False,
        hook: str | None = None,
    ) -> IndexProjection:
        """What a save would do to the index's headroom, before anything is written."""
        target = self._target_for(file, memory_type, name, team)
        _, text = self._read_index_to_edit(team)
        after = self._with_index_line(
            text, target, self._index_line_for(target, name, hook or description, team), team
        )
        return _projection(self.index(team, text=text), self.index(team, text=after))

    def save(
        self,
        *,
        type: str,  # noqa: A002 - mirrors the frontmatter key and the CLI flag
        name: str,
        description: str,
        body: str,
        file: str | None = None,
        team: bool = False,
        index: bool = True,
        hook: str | None = None,
        replace: bool = False,
    ) -> SaveResult:
        """Claude Code's two-step save: write the memory file, then its index line.

        Both steps and their history are one unit, made under the folder's lock. Without
        `file`, a name already taken gets `_2`, `_3`, … (said in `notes`); a file that
        already holds exactly this memory is reused, so a retried save adds nothing. With
        `replace`, the file (`file`, else the one the name maps to) is overwritten instead
        and its index line replaced.
        """
        self._validate_new(type, name, description)
        if "\0" in body:
            raise UserInputError("the body holds a NUL character: memory files are text")
        content = self.compose(type, name, description, body)
        data = content.encode("utf-8")
        notes: list[str] = []
        if not normalize_text(body).strip():
            notes.append("the body was empty: the memory holds only its name, description and type")
        history = self.history
        # Everything that can be refused without looking at racing state, before the lock.
        first = self._first_file_name(type, name)
        explicit = None
        if file:
            explicit = self._target_for(file, type, name, team)
        elif replace:
            # Replacing: the file the name maps to, overwritten rather than given a suffix.
            explicit = self._index_folder(team) / first
        self._check_team_secrets(explicit or self._index_folder(team) / first, content)
        with self._writing_index(), history.transaction():
            identical = False
            if explicit is not None:
                target = explicit
                if target.exists() and not replace:
                    raise UserInputError(
                        f"{self.relative(target)} already exists (pass --replace to overwrite it)"
                    )
                identical = _holds(target, data)  # replaced by itself: nothing to write
            else:
                chosen, identical = self._new_file_name(type, name, team, data)
                target = self._index_folder(team) / chosen
                if identical:
                    notes.append(f"{self.relative(target)} already holds exactly this memory")
                elif chosen != first:
                    taken = self.relative(self._index_folder(team) / first)
                    notes.append(
                        f"{taken} already exists, so this memory was saved as "
                        f"{self.relative(target)}"
                    )
            group = history.new_group()
            ids = []
            if not identical:
                ids.append(history.write(target, data, "save", group=group).id)
            index_line = None
            projection = None
            if index:
                index_line = self._index_line_for(target, name, hook or description, team)
                _, text = self._read_index_to_edit(team)
                updated = self._with_index_line(text, target, index_line, team)
                projection = _projection(
                    self.index(team, text=text), self.index(team, text=updated)
                )
                if updated != text:
                    ids.append(
                        history.write(
                            self.index_path(team),
                            updated.encode("utf-8"),
                            "index-edit",
                            note=f"entry for {self.relative(target)}",
                            group=group,
                        ).id
                    )
        report = self.index(team)
        return SaveResult(
            path=self.relative(target),
            abs_path=str(target),
            index_line=index_line,
            index_updated=index_line is not None,
            headroom=report.headroom,
            projection=projection,
            history_ids=tuple(ids),
            fingerprint=fingerprint(data),
            notes=tuple(notes),
            unchanged=identical and len(ids) == 0,
        )

    def update(
        self, path: str | os.PathLike[str], text: str, expected_fingerprint: str | None
    ) -> SaveResult:
        """Replace a memory file's text, refusing if it changed on disk since it was read."""
        target = self.resolve(path)
        if target.name == "MEMORY.md":
            return self.write_index(
                text,
                team=self.locations.is_team_path(str(target)),
                expected_fingerprint=expected_fingerprint,
            )
        self._check_team_secrets(target, text)
        team = self.locations.is_team_path(str(target))
        with self.history.locked():
            self._check_fresh(target, expected_fingerprint)
            return self._write_whole(target, text, "save", team=team, index_updated=False)

    def write_index(
        self, text: str, *, team: bool = False, expected_fingerprint: str | None = None
    ) -> SaveResult:
        """Replace MEMORY.md (or team/MEMORY.md) as a whole, with the same conflict check."""
        target = self.index_path(team)
        if team:
            self._check_team_secrets(target, text)
        with self.history.locked():
            self._check_fresh(target, expected_fingerprint)
            return self._write_whole(target, text, "index-edit", team=team, index_updated=True)

    def _write_whole(
        self, target: Path, text: str, action: str, *, team: bool, index_updated: bool
    ) -> SaveResult:
        """Write `text` over `target` as one history entry; report the index headroom after.

        A file that already holds exactly `text` is left alone: rewriting it would only move
        its mtime, which is the memory's age to Claude Code (the manifest is newest first,
        and old memories get a staleness caveat), and add an undo step that undoes nothing."""
        data = text.encode("utf-8")
        unchanged = _holds(target, data)
        history_ids: tuple[str, ...] = ()
        if not unchanged:
            with self._writing_index():
                history_ids = (self.history.write(target, data, action).id,)
        report = self.index(team)
        return SaveResult(
            path=self.relative(target),
            abs_path=str(target),
            index_line=None,
            index_updated=index_updated and not unchanged,
            headroom=report.headroom,
            history_ids=history_ids,
            fingerprint=fingerprint(data),
            unchanged=unchanged,
        )

    def _check_fresh(self, target: Path, expected: str | None) -> None:
        if expected is None:
            return
        try:
            current = fingerprint(read_bytes(target, MEMORY_FILE_LIMIT, "a memory file"))
        except FileNotFoundError:
            current = None
        if current != expected:
            state = "was deleted" if current is None else "changed on disk"
            raise ConflictError(
                f"{self.relative(target)} {state} since it was opened; the save was refused so "
                "nothing is overwritten (reload it, or keep your copy elsewhere)"
            )

    def _remove_index_links(
        self, targets: set[Path], team: bool, group: str, action: str
    ) -> tuple[int, list[str]]:
        data, text = self._read_index_to_edit(team)
        if data is None:
            return 0, []
        kept, removed = without_links(text, targets, self._index_folder(team))
        if not removed:
            return 0, []
        entry = self.history.write(self.index_path(team), kept.encode("utf-8"), action, group=group)
        return removed, [entry.id]

    @_one_change
    def remove(self, path: str | os.PathLike[str]) -> RemoveResult:
        """Delete a memory file and every index line that links to it."""
        target = self.resolve(path)
        if target.name == "MEMORY.md":
            raise UserInputError("refusing to delete an index; edit it instead")
        if not target.is_file():
            raise NotFoundError(f"no memory file {self.relative(target)}")
        history = self.history
        group = history.new_group()
        ids = [history.delete(target, "delete", group=group).id]
        team = self.locations.is_team_path(str(target))
        removed, index_ids = self._remove_index_links({target}, team, group, "index-edit")
        return RemoveResult(self.relative(target), removed, tuple(ids + index_ids))

    @_one_change
    def rename(
        self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]
    ) -> RenameResult:
        """Move a memory file within its scope and re-point index links to it."""
        source = self.resolve(path)
        dest = self.resolve(
            new_path
            if os.path.isabs(os.fspath(new_path)) or "/" in os.fspath(new_path)
            else source.parent / os.fspath(new_path)
        )
        if not source.is_file():
            raise NotFoundError(f"no memory file {self.relative(source)}")
        if not dest.name.endswith(".md") or dest.name == "MEMORY.md":
            raise UserInputError("the new name must be a .md file other than MEMORY.md")
        problem = self.file_name_problem(self.relative(dest))
        if problem:
            raise UserInputError(problem)
        if dest.exists():
            raise UserInputError(f"{self.relative(dest)} already exists")
        team = self.locations.is_team_path(str(source))
        if team != self.locations.is_team_path(str(dest)):
            raise UserInputError(
                "renaming cannot move a memory between private and team; save it anew"
            )
        history = self.history
        group = history.new_group()
        data = read_bytes(source, MEMORY_FILE_LIMIT, "a memory file")
        ids = [
            history.write(
                dest, data, "rename", note=f"from {self.relative(source)}", group=group
            ).id
        ]
        ids.append(
            history.delete(source, "rename", note=f"to {self.relative(dest)}", group=group).id
        )
        index_data, text = self._read_index_to_edit(team)
        updated_links = 0
        if index_data is not None:
            moved, updated_links = with_link_moved(text, source, dest, self._index_folder(team))
            if updated_links:
                ids.append(
                    history.write(
                        self.index_path(team), moved.encode("utf-8"), "index-edit", group=group
                    ).id
                )
        return RenameResult(self.relative(source), self.relative(dest), updated_links, tuple(ids))

    # --- index fixes -------------------------------------------------------------------
    # Each fix is planned first (the index text before and after, nothing written) so a front
    # end can show the change and ask; applying a plan refuses if the index moved meanwhile.

    def plan_index_fix(self, kind: str, team: bool = False) -> IndexFixPlan:
        """What one fix (`dangling`, `orphans` or `long-lines`) would write, without writing."""
        data, text = self._read_index_to_edit(team)
        folder = self._index_folder(team)
        if kind == "dangling":
            after, count = without_dangling(text, self.index(team, text=text), folder)
        elif kind == "orphans":
            after, count = with_orphans(text, self._orphans_named(text, team), folder)
        elif kind == "long-lines":
            after, count = with_short_lines(text)
        else:
            raise UserInputError(f"unknown index fix {kind!r}")
        if data is None and kind != "orphans":
            after, count = text, 0  # no index: nothing to remove or shorten (orphans create it)
        past = 0
        if kind == "orphans" and count:
            # The new lines go at the end, so the last ones are the first to fall off.
            report = self.index(team, text=after)
            past = min(count, report.line_count - report.loaded_lines)
        plan = IndexFixPlan(kind, team, str(self.index_path(team)), text, after, count)
        return with_changes(plan, past_the_cut=past) if past else plan

    @_one_change
    def apply_index_fix(self, plan: IndexFixPlan) -> int:
        """Write a planned fix; refused (ConflictError) if the index changed since the plan."""
        if not plan.count:
            return 0
        _, current = self._read_index_to_edit(plan.team)
        if current != plan.before:
            raise ConflictError(
                f"{'team/' if plan.team else ''}MEMORY.md changed since the preview; "
                "nothing was written (look at the change again)"
            )
        self.history.write(
            self.index_path(plan.team),
            plan.after.encode("utf-8"),
            "index-fix",
            note=plan.note,
        )
        return plan.count

    def fix_remove_dangling(self, team: bool = False) -> int:
        """Drop index lines whose link target does not exist; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("dangling", team))

    def fix_index_orphans(self, team: bool = False) -> int:
        """Add an index line for every memory file no line links to; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("orphans", team))

    def fix_shorten_long_lines(self, team: bool = False) -> int:
        """Shorten index lines over the limit to about 150 characters; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("long-lines", team))

    def _orphans_named(self, text: str, team: bool) -> list[tuple[Path, str, str | None]]:
        """The files no line of the index `text` links to, each with the name and hook of the
        line the `orphans` fix writes for it."""
        named = []
        for rel in self.index(team, text=text).orphans:
            target = self.root / rel
            analysis = self._analyse(str(target), target.stat())
            named.append((target, analysis.name or target.stem, analysis.description))
        return named


def _holds(target: Path, data: bytes) -> bool:
    """Whether the file at `target` holds exactly `data` (read only when the sizes match)."""
    try:
        if os.stat(target).st_size != len(data):
            return False
        return read_bytes(target, len(data), "a memory file") == data
    except (OSError, WorkbenchError):
        return False
