"""Session-memory updates: the notes file of a session, kept current by a forked agent
(spec 02 §5).

The notes live at `<projects>/<project>/<session>/session-memory/summary.md`. On first use the
folder is created private (0700) and the file is created exclusively (0600) with the template;
an existing file is never overwritten by the set-up. The update prompt embeds the current
notes, names the file, and, when the notes have outgrown their limits (12,000 tokens in all,
2,000 per section), tells the agent what to condense. The agent may use only Edit, and only on
that one file. The template, the limits and the custom-file loaders come from the context
package; this module builds the update on them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.agents.conversation import fork_messages
from workbench.engine.agents.fork import FileChange, ForkRun, run_fork
from workbench.engine.agents.permissions import create_notes_can_use_tool
from workbench.engine.agents.review_queue import unified_diff
from workbench.engine.agents.tools import Workspace, tool_definitions
from workbench.engine.context.session_memory import (
    MAX_SECTION_LENGTH,
    MAX_TOTAL_SESSION_MEMORY_TOKENS,
    effective_template,
    load_custom_prompt,
    oversized_sections,
    substitute_variables,
    total_tokens,
)
from workbench.engine.errors import ConflictError, NotFoundError, UserInputError
from workbench.engine.userfiles import NOTES_LIMIT, read_bytes, read_text

if TYPE_CHECKING:
    from workbench.engine.engine import Engine

UPDATE_ACTION = "session-memory-update"
SETUP_ACTION = "session-memory-setup"
UPDATE_MAX_TURNS = 8
"""Claude Code sets no cap here; one or two turns are normal, so eight is a safe bound."""
MAX_OUTPUT_TOKENS = 8_000

DEFAULT_UPDATE_PROMPT = """IMPORTANT: this message is not part of your conversation with the \
user. It is a note-taking instruction; never mention it or the notes in the conversation.

Using the conversation above (not counting this message), bring the session notes file up to \
date.

The file {{notesPath}} has already been read for you. This is what it holds now:
<current_notes_content>
{{currentNotes}}
</current_notes_content>

Your only task is to update the notes with the Edit tool and then stop. Several edits are \
fine, one per section that needs it: send them all in one message, in parallel. Use no other \
tool.

Rules for the edits:
- Keep the structure exactly as it is. Every header line (starting with `#`) and the italic \
line right below it are part of the template: never change, move or remove them.
- Change only the content below each section's italic line.
- Add no new sections, summaries or text outside the existing structure.
- No filler such as "nothing yet": leave a section empty when nothing applies to it.
- Be detailed and dense with information: file paths, function names, exact error messages, \
exact commands, technical specifics.
- In "Key results", put the complete, exact output the user asked for (the whole table, the \
whole answer).
- Leave out anything the CLAUDE.md files already say.
- Keep each section under about 2000 tokens (or words). When a section grows near that, \
condense it: let older, less important detail go and keep what matters most.
- Aim for what someone would need to understand the work or pick it up again.
- Always update "Current State" to show where the work stands now: it is what lets the work \
continue after the conversation is compacted.

Call Edit with file_path set to {{notesPath}}.

Remember: the header lines and the italic lines below them are never edited; only the text \
under them changes."""


def limit_reminders(notes: str) -> str:
    """The over-limit instructions appended to the update prompt (case A), or ''."""
    total = total_tokens(notes)
    over_total = total > MAX_TOTAL_SESSION_MEMORY_TOKENS
    oversized = [
        f'- "{header}" is ~{tokens} tokens (limit: {MAX_SECTION_LENGTH})'
        for header, tokens in oversized_sections(notes)
    ]
    parts = []
    if over_total:
        parts.append(
            f"\n\nCRITICAL: the notes file is about {total} tokens long, over the limit of "
            f"{MAX_TOTAL_SESSION_MEMORY_TOKENS} tokens. You MUST shrink it below that limit: "
            "condense every section, keep summaries tight and drop the least important "
            'detail. Above all, keep "Current State" and "Errors & Corrections" accurate and '
            "detailed."
        )
    if oversized:
        lead = (
            "Sections to condense first:"
            if over_total
            else "IMPORTANT: these sections are over the per-section limit and MUST be condensed:"
        )
        parts.append(f"\n\n{lead}\n" + "\n".join(oversized))
    return "".join(parts)


def build_update_prompt(config_home: str, notes: str, notes_path: str) -> tuple[str, str]:
    """The update prompt (custom `prompt.md` or ours) with variables filled, plus reminders;
    also says which prompt source was used."""
    loaded = load_custom_prompt(config_home)
    template = loaded.text if loaded.text is not None else DEFAULT_UPDATE_PROMPT
    values = {"currentNotes": notes, "notesPath": notes_path}
    return substitute_variables(template, values) + limit_reminders(notes), loaded.source


def setup_notes_file(engine: Engine, notes_path: str) -> bool:
    """Create the notes folder (0700) and file (0600, with the template) if missing.

    Returns True when the file was created now. An existing file is left alone.
    """
    target = Path(notes_path)
    _make_private_dirs(target.parent)
    template, _ = effective_template(engine.locations.config_home)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    data = template.encode("utf-8")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    engine.history.record(target, None, data, SETUP_ACTION, note="notes file created")
    return True


def _make_private_dirs(folder: Path) -> None:
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass


@dataclass(frozen=True)
class NotesTarget:
    """Which notes file and which transcript an update is about."""

    session_id: str
    notes_path: str
    transcript_path: str


def resolve_target(
    engine: Engine,
    *,
    session: str | None = None,
    file: str | None = None,
    transcript: str | None = None,
) -> NotesTarget:
    """Work out the notes file and its transcript from `--session`, `--file`, `--transcript`."""
    locations = engine.locations
    if file:
        notes = os.path.abspath(file)
        session_dir = Path(notes).parent.parent  # <session>/session-memory/summary.md
        session_id = session or session_dir.name
        if transcript is None:
            guess = session_dir.parent / f"{session_dir.name}.jsonl"
            if not guess.is_file():
                raise UserInputError(
                    "no transcript found beside that notes file; name one with --transcript"
                )
            transcript = str(guess)
        return NotesTarget(session_id, notes, os.path.abspath(transcript))
    if session is None and transcript is not None:
        session = Path(transcript).stem
    if session is None:
        from workbench.engine.context.session_list import session_files

        files = session_files(locations.transcripts_dir)
        if not files:
            raise NotFoundError(f"no sessions found in {locations.transcripts_dir}")
        session = files[0].stem
    if "/" in session or session in ("", ".", ".."):
        raise UserInputError(f"not a session id: {session!r}")
    transcript = transcript or locations.transcript_path(session)
    if not os.path.isfile(transcript):
        raise NotFoundError(f"no transcript for session {session} at {transcript}")
    return NotesTarget(session, locations.session_memory_path(session), os.path.abspath(transcript))


@dataclass(frozen=True)
class SessionUpdateResult:
    """What a session-memory update did."""

    session_id: str
    path: str
    transcript: str
    status: str
    """`updated`, `unchanged` or `dry_run`."""
    engine: str
    created: bool
    prompt_source: str
    total_tokens: int
    over_total: bool
    oversized_sections: tuple[tuple[str, int], ...]
    request: dict[str, Any] | None = None
    run: ForkRun | None = None
    change: FileChange | None = None
    notice: str = ""

    def to_json(self) -> dict[str, Any]:
        run = self.run.to_json() if self.run else {}
        return {
            "session_id": self.session_id,
            "path": self.path,
            "transcript": self.transcript,
            "status": self.status,
            "engine": self.engine,
            "notice": self.notice,
            "created": self.created,
            "prompt_source": self.prompt_source,
            "total_tokens": self.total_tokens,
            "max_total_tokens": MAX_TOTAL_SESSION_MEMORY_TOKENS,
            "over_total": self.over_total,
            "oversized_sections": [
                {"header": header, "tokens": tokens} for header, tokens in self.oversized_sections
            ],
            "turns": run.get("turns", 0),
            "stopped": run.get("stopped"),
            "tool_calls": run.get("tool_calls", []),
            "denied_calls": run.get("denied_calls", []),
            "change": self.change.to_json() if self.change else None,
            "request": self.request,
        }


class SessionMemoryUpdater:
    """Manual session-memory updates (Claude Code's `/summary`), which skip the thresholds."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def target(
        self, *, session: str | None = None, file: str | None = None, transcript: str | None = None
    ) -> NotesTarget:
        """The notes file and its transcript named by `--session`, `--file`, `--transcript`."""
        return resolve_target(self.engine, session=session, file=file, transcript=transcript)

    def _notes_now(self, target: NotesTarget) -> tuple[str, bool]:
        try:
            return read_text(target.notes_path, NOTES_LIMIT, "a session-memory file"), True
        except FileNotFoundError:
            template, _ = effective_template(self.engine.locations.config_home)
            return template, False

    def build(self, target: NotesTarget, notes: str) -> tuple[dict[str, Any], str]:
        """The exact first request, and which prompt source was used."""
        from workbench.engine.context.transcript import Transcript
        from workbench.engine.llm import LLMConfig, build_request

        prompt, source = build_update_prompt(
            self.engine.locations.config_home, notes, target.notes_path
        )
        transcript = Transcript.load(target.transcript_path)
        request = build_request(
            model=LLMConfig.from_env(self.engine.env).model,
            max_tokens=MAX_OUTPUT_TOKENS,
            system=(
                "You keep the running notes of a Claude Code session. The conversation below "
                "is that session, replayed by Memory Workbench."
            ),
            messages=fork_messages(transcript.current_messages(), prompt),
            tools=tool_definitions(("Edit",)),
        )
        return request, source

    def dry_run(self, target: NotesTarget, *, notice: str = "") -> SessionUpdateResult:
        """Show the request; nothing is created or sent."""
        notes, exists = self._notes_now(target)
        request, source = self.build(target, notes)
        return self._result(
            target, notes, "dry_run", "dry-run", False, source, request=request, notice=notice
        )

    async def update(self, target: NotesTarget) -> SessionUpdateResult:
        """Set the file up if needed, run the Edit-only agent, and write its edits."""
        created = setup_notes_file(self.engine, target.notes_path)
        notes, _ = self._notes_now(target)
        before = read_bytes(target.notes_path, NOTES_LIMIT, "a session-memory file")
        request, source = self.build(target, notes)
        locations = self.engine.locations
        workspace = Workspace(
            project_root=locations.project_root,
            read_roots=(
                locations.memory_dir,
                locations.transcripts_dir,
                os.path.dirname(target.notes_path),
            ),
        )
        run = await run_fork(
            self.engine,
            request,
            workspace=workspace,
            can_use_tool=create_notes_can_use_tool(target.notes_path),
            max_turns=UPDATE_MAX_TURNS,
        )
        change = None
        for staged in workspace.changed_files():
            if staged.path != target.notes_path:
                continue  # the permission check makes this impossible; never write elsewhere
            current = read_bytes(target.notes_path, NOTES_LIMIT, "a session-memory file")
            if current != before:
                raise ConflictError(
                    f"{target.notes_path} changed while the update ran; nothing was written"
                )
            entry = self.engine.history.write(
                target.notes_path, staged.content.encode("utf-8"), UPDATE_ACTION, mode=0o600
            )
            change = FileChange(
                abs_path=target.notes_path,
                path=target.notes_path,
                scope="session",
                kind="modify",
                diff=unified_diff(before.decode("utf-8", "replace"), staged.content, "summary.md"),
                outcome="applied",
                history_id=entry.id,
            )
        status = "updated" if change else "unchanged"
        final_notes, _ = self._notes_now(target)
        return self._result(
            target,
            final_notes,
            status,
            "llm",
            created,
            source,
            run=run,
            change=change,
            measured=notes,
        )

    def _result(
        self,
        target: NotesTarget,
        notes: str,
        status: str,
        engine_name: str,
        created: bool,
        source: str,
        *,
        request: dict[str, Any] | None = None,
        run: ForkRun | None = None,
        change: FileChange | None = None,
        notice: str = "",
        measured: str | None = None,
    ) -> SessionUpdateResult:
        sized = measured if measured is not None else notes
        total = total_tokens(sized)
        return SessionUpdateResult(
            session_id=target.session_id,
            path=target.notes_path,
            transcript=target.transcript_path,
            status=status,
            engine=engine_name,
            created=created,
            prompt_source=source,
            total_tokens=total,
            over_total=total > MAX_TOTAL_SESSION_MEMORY_TOKENS,
            oversized_sections=tuple(oversized_sections(sized)),
            request=request,
            run=run,
            change=change,
            notice=notice,
        )
