"""What full compaction re-attaches afterwards (spec 04 §9.12): the most recently read
files and the skills invoked in the session, each within its token budget."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.engine.context.tokens import (
    as_dict,
    content_blocks,
    js_json,
    message_content,
    rough_token_count,
    rough_token_count_for_file_type,
)
from workbench.engine.jsutil import js_len, js_slice
from workbench.engine.userfiles import NOTES_LIMIT, read_text

POST_COMPACT_MAX_FILES_TO_RESTORE = 5
POST_COMPACT_TOKEN_BUDGET = 50_000
POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000
POST_COMPACT_MAX_TOKENS_PER_SKILL = 5_000
POST_COMPACT_SKILLS_TOKEN_BUDGET = 25_000
# Our marker for a skill cut to its budget.
SKILL_TRUNCATED_MARKER = (
    "\n\n[… skill text shortened for compaction; read the skill file for the rest …]"
)
# Files larger than this are never read back from disk by the preview.
_MAX_DISK_READ = 8 * 1024 * 1024
_LINE_NUMBER = re.compile(r"^ *\d+→", re.MULTILINE)


@dataclass(frozen=True)
class FileRead:
    """One file in the session's read state, rebuilt from a Read tool call."""

    path: str
    timestamp: str | None
    tool_use_id: str
    uuid: str | None
    content: str | None
    """The fullest text of the file the transcript holds (None when not recorded): the
    file as last read in full or as an edit left it, else the largest partial read."""
    content_from: str | None = None
    """Where `content` came from: `full-read`, `edit` (an Edit's or Write's result) or
    `partial-read` (only part of the file was ever seen)."""
    cwd: str | None = None
    """The session's working directory when the file was read (relative paths resolve
    against it)."""


def _results_by_id(raws: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Mapping, Mapping]]:
    found: dict[str, tuple[Mapping, Mapping]] = {}
    for raw in raws:
        if raw.get("type") != "user":
            continue
        for block in content_blocks(raw, "tool_result"):
            tool_id = block.get("tool_use_id")
            if isinstance(tool_id, str):
                found[tool_id] = (raw, block)
    return found


def _result_text(raw: Mapping[str, Any], block: Mapping[str, Any]) -> str | None:
    structured = raw.get("toolUseResult")
    if isinstance(structured, Mapping):
        file = structured.get("file")
        if isinstance(file, Mapping) and isinstance(file.get("content"), str):
            return file["content"]
    content = _joined_texts(block.get("content"))
    if not isinstance(content, str):
        return None
    return _LINE_NUMBER.sub("", content)


def _read_was_whole(raw: Mapping[str, Any], tool_input: Mapping[str, Any]) -> bool:
    """Whether a Read returned the whole file: its recorded line range covers every line,
    or (with no range recorded) it was called without an offset or a limit."""
    structured = raw.get("toolUseResult")
    file = structured.get("file") if isinstance(structured, Mapping) else None
    if isinstance(file, Mapping):
        start, lines, total = file.get("startLine"), file.get("numLines"), file.get("totalLines")
        if isinstance(start, int) and isinstance(lines, int) and isinstance(total, int):
            return start <= 1 and lines >= total
    return tool_input.get("limit") is None and tool_input.get("offset") in (None, 0, 1)


def _text_after_edit(name: str, tool_input: Mapping[str, Any], structured: Any) -> str | None:
    """The whole file as an Edit, MultiEdit or Write left it, from the result Claude Code
    recorded (`originalFile` with the edit applied, or the written `content`)."""
    result = structured if isinstance(structured, Mapping) else {}
    if name == "Write":
        content = result.get("content", tool_input.get("content"))
        return content if isinstance(content, str) else None
    original = result.get("originalFile")
    if not isinstance(original, str):
        return None
    if name == "Edit":
        edits: Any = [
            {
                "old_string": result.get("oldString", tool_input.get("old_string")),
                "new_string": result.get("newString", tool_input.get("new_string")),
                "replace_all": result.get("replaceAll", tool_input.get("replace_all")),
            }
        ]
    else:
        edits = tool_input.get("edits")
    text = original
    for edit in edits if isinstance(edits, list) else ():
        if not isinstance(edit, Mapping):
            continue
        old, new = edit.get("old_string"), edit.get("new_string")
        if isinstance(old, str) and isinstance(new, str) and old:
            # An edit whose text is not found verbatim (Claude Code matches curly quotes
            # too) leaves the estimate at the file before it: close enough for a size.
            text = text.replace(old, new, -1 if edit.get("replace_all") is True else 1)
    return text


def _joined_texts(content: Any) -> Any:
    """A block list as its non-empty texts, one per line; any other content as it is."""
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text")) for b in content if isinstance(b, Mapping) and b.get("text")
        )
    return content


_EDIT_TOOLS = ("Edit", "MultiEdit", "Write")


def read_file_state(messages: Sequence[Any]) -> dict[str, FileRead]:
    """The files read with the Read tool, latest read per path, in reading order, each with
    the fullest text the transcript holds for it (spec 04 §9.12 re-reads the whole file, so
    a last read of ten lines must not size it)."""
    raws = [as_dict(m) for m in messages]
    results = _results_by_id(raws)
    state: dict[str, FileRead] = {}
    # path → (text, where from): the latest whole text wins; a partial read only stands in
    # for a file never seen whole, and then the largest one does.
    known: dict[str, tuple[str, str]] = {}
    for raw in raws:
        if raw.get("type") != "assistant":
            continue
        for block in content_blocks(raw, "tool_use"):
            name = block.get("name")
            if name != "Read" and name not in _EDIT_TOOLS:
                continue
            tool_input = block.get("input")
            if not isinstance(tool_input, Mapping):
                continue
            path = tool_input.get("file_path")
            tool_id = block.get("id")
            if not isinstance(path, str) or not isinstance(tool_id, str):
                continue
            result = results.get(tool_id)
            if result is None:
                continue  # a call that never completed left nothing in the state
            result_raw, result_block = result
            if result_block.get("is_error") is True:
                continue
            if name != "Read":
                after = _text_after_edit(name, tool_input, result_raw.get("toolUseResult"))
                if after is not None:
                    known[path] = (after, "edit")
                continue
            text = _result_text(result_raw, result_block)
            if text is not None:
                if _read_was_whole(result_raw, tool_input):
                    known[path] = (text, "full-read")
                else:
                    previous = known.get(path)
                    if previous is None or (
                        previous[1] == "partial-read" and len(previous[0]) < len(text)
                    ):
                        known[path] = (text, "partial-read")
            stamp = result_raw.get("timestamp")
            state.pop(path, None)  # re-insert so dict order is reading order
            uuid = result_raw.get("uuid")
            cwd = raw.get("cwd")
            state[path] = FileRead(
                path=path,
                timestamp=stamp if isinstance(stamp, str) else None,
                tool_use_id=tool_id,
                uuid=uuid if isinstance(uuid, str) else None,
                content=text,
                cwd=cwd if isinstance(cwd, str) else None,
            )
    for path, read in state.items():
        if path in known:
            text, origin = known[path]
            state[path] = replace(read, content=text, content_from=origin)
    return state


def files_read_in(messages: Sequence[Any]) -> set[str]:
    """Paths a Read call in `messages` touched (those stay visible after compaction)."""
    paths: set[str] = set()
    for message in messages:
        raw = as_dict(message)
        if raw.get("type") != "assistant":
            continue
        for block in content_blocks(raw, "tool_use"):
            tool_input = block.get("input")
            if block.get("name") == "Read" and isinstance(tool_input, Mapping):
                path = tool_input.get("file_path")
                if isinstance(path, str):
                    paths.add(path)
    return paths


SIZE_SOURCE_WORDS = {
    "disk": "",
    "full-read": "sized from its last full read",
    "edit": "sized from its last edit",
    "partial-read": "sized from a partial read; the whole file is larger",
    "none": "",
}
"""How each `size_source` qualifies a restored file's figure, in the words both the
Compaction pane and `context` use (the file on disk is the usual case and says nothing)."""


@dataclass(frozen=True)
class RestoredFile:
    """One candidate for post-compact restoration and what happens to it."""

    path: str
    tokens: int
    """Rough size of the attachment message as Claude Code budgets it."""
    file_tokens: int
    kind: str
    """`file` (contents attached) or `reference` (too big: only the path is named)."""
    included: bool
    reason: str
    source: str
    """`disk`, `transcript` (file gone or elsewhere: the recorded read is used) or `none`."""
    read_at: str | None
    size_source: str = "none"
    """What the figure was sized from: `disk` (the file now, what Claude Code re-reads),
    `full-read`, `edit` (the text an Edit or Write left), `partial-read` (only part of the
    file was seen, so the figure is low) or `none`."""

    @property
    def size_note(self) -> str:
        """How far to trust the figure, in words ("" when it is the file on disk)."""
        return SIZE_SOURCE_WORDS.get(self.size_source, "")

    @property
    def how_attached(self) -> str:
        """ "in full (2,310 tokens)", "as a reference (…)", or with the figure's caveat when it
        was not sized from the file on disk (a partial read's figure claims no "in full")."""
        if self.kind != "file":
            return f"as a reference ({self.tokens:,} tokens)"
        if not self.size_note:
            return f"in full ({self.tokens:,} tokens)"
        if self.size_source == "partial-read":
            return f"(≈{self.tokens:,} tokens, {self.size_note})"
        return f"in full (≈{self.tokens:,} tokens, {self.size_note})"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "tokens": self.tokens,
            "file_tokens": self.file_tokens,
            "kind": self.kind,
            "included": self.included,
            "reason": self.reason,
            "source": self.source,
            "size_source": self.size_source,
            "read_at": self.read_at,
        }


@dataclass(frozen=True)
class FileRestorationPlan:
    """`createPostCompactFileAttachments` as a dry run."""

    files: tuple[RestoredFile, ...]
    skipped: tuple[tuple[str, str], ...]
    """(path, why) for candidates left out before the top five were chosen."""

    @property
    def restored(self) -> list[RestoredFile]:
        return [f for f in self.files if f.included]

    @property
    def total_tokens(self) -> int:
        return sum(f.tokens for f in self.restored)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": [f.to_json() for f in self.files],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "total_tokens": self.total_tokens,
        }


def _read_disk(path: str, base: str | None) -> str | None:
    target = Path(path)
    if not target.is_absolute() and base:
        target = Path(base) / target
    try:  # a regular file only: a path named in a transcript may be a pipe or a device
        return read_text(target, _MAX_DISK_READ, "a file to restore", universal_newlines=True)
    except OSError:
        return None


def _attachment_message(path: str, content: str | None) -> dict[str, Any]:
    if content is None:
        attachment: dict[str, Any] = {"type": "compact_file_reference", "filename": path}
    else:
        lines = content.count("\n") + 1
        attachment = {
            "type": "file",
            "filename": path,
            "content": {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": content,
                    "numLines": lines,
                    "startLine": 1,
                    "totalLines": lines,
                },
            },
        }
    return {
        "type": "attachment",
        "attachment": attachment,
        "uuid": "00000000-0000-4000-8000-000000000000",
        "timestamp": "2026-01-01T00:00:00.000Z",
    }


def plan_file_restoration(
    read_state: Mapping[str, FileRead],
    *,
    kept_messages: Sequence[Any] = (),
    excluded_paths: Collection[str] = (),
    plan_dir: str | None = None,
    project_root: str | None = None,
    read_disk: bool = True,
) -> FileRestorationPlan:
    """Pick the five most recently read files that will not stay visible, size each, and
    keep them while the running total fits 50,000 tokens."""
    visible = files_read_in(kept_messages)
    excluded = {os.path.normpath(p) for p in excluded_paths}
    skipped: list[tuple[str, str]] = []
    candidates: list[FileRead] = []
    for read in read_state.values():
        normalized = os.path.normpath(read.path)
        if plan_dir and normalized.startswith(os.path.normpath(plan_dir) + os.sep):
            skipped.append((read.path, "the plan file is attached separately"))
        elif normalized in excluded:
            skipped.append((read.path, "a CLAUDE.md-type memory file is loaded anyway"))
        elif read.path in visible:
            skipped.append((read.path, "still visible in the kept messages"))
        else:
            candidates.append(read)
    # Newest first; ties keep reading order, later reads first.
    ordered = sorted(
        enumerate(candidates), key=lambda pair: (pair[1].timestamp or "", pair[0]), reverse=True
    )
    chosen = [read for _, read in ordered[:POST_COMPACT_MAX_FILES_TO_RESTORE]]
    for _, read in ordered[POST_COMPACT_MAX_FILES_TO_RESTORE:]:
        skipped.append((read.path, "older than the five most recent reads"))
    files: list[RestoredFile] = []
    used = 0
    for read in chosen:
        # Claude Code re-reads the file as it is now; when it is not here, the fullest
        # text the transcript holds stands in, and says what it was.
        content = _read_disk(read.path, read.cwd or project_root) if read_disk else None
        source = size_source = "disk" if content is not None else "none"
        if content is None and read.content is not None:
            content, source = read.content, "transcript"
            size_source = read.content_from or "partial-read"
        if content is None:
            files.append(
                RestoredFile(
                    read.path, 0, 0, "file", False, "cannot be read", source, read.timestamp
                )
            )
            continue
        extension = Path(read.path).suffix
        file_tokens = rough_token_count_for_file_type(content, extension)
        kind = "file" if file_tokens <= POST_COMPACT_MAX_TOKENS_PER_FILE else "reference"
        message = _attachment_message(read.path, content if kind == "file" else None)
        tokens = rough_token_count(js_json(message))
        fits = used + tokens <= POST_COMPACT_TOKEN_BUDGET
        if fits:
            used += tokens
            reason = (
                "attached in full"
                if kind == "file"
                else f"over {POST_COMPACT_MAX_TOKENS_PER_FILE:,} tokens: only the path is named"
            )
        else:
            reason = f"does not fit the {POST_COMPACT_TOKEN_BUDGET:,}-token budget"
        files.append(
            RestoredFile(
                read.path,
                tokens,
                file_tokens,
                kind,
                fits,
                reason,
                source,
                read.timestamp,
                size_source,
            )
        )
    return FileRestorationPlan(tuple(files), tuple(skipped))


# --- skills ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InvokedSkill:
    """A skill the session invoked, with the text that would be re-attached."""

    name: str
    path: str | None
    invoked_at: str | None
    content: str | None


@dataclass(frozen=True)
class RestoredSkill:
    """One skill in the `invoked_skills` attachment, or why it is left out."""

    name: str
    path: str | None
    tokens: int
    truncated: bool
    included: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "included": self.included,
            "reason": self.reason,
        }


def invoked_skills(
    messages: Sequence[Any], *, skill_dirs: Sequence[str] = ()
) -> list[InvokedSkill]:
    """Skills called through the Skill tool; their text comes from the skill file when it
    exists, else from the meta message Claude Code injected after the call."""
    raws = [as_dict(m) for m in messages]
    found: dict[str, InvokedSkill] = {}
    for index, raw in enumerate(raws):
        if raw.get("type") != "assistant":
            continue
        for block in content_blocks(raw, "tool_use"):
            if block.get("name") != "Skill" or not isinstance(block.get("input"), Mapping):
                continue
            name = block["input"].get("skill") or block["input"].get("command")
            if not isinstance(name, str) or not name:
                continue
            path, text = _skill_file(name, skill_dirs)
            if text is None:
                text = _injected_skill_text(raws, index)
            stamp = raw.get("timestamp")
            found.pop(name, None)
            found[name] = InvokedSkill(name, path, stamp if isinstance(stamp, str) else None, text)
    return list(found.values())


def _skill_file(name: str, skill_dirs: Sequence[str]) -> tuple[str | None, str | None]:
    short = name.split(":")[-1]
    for folder in skill_dirs:
        candidate = Path(folder) / short / "SKILL.md"
        try:
            text = read_text(candidate, NOTES_LIMIT, "a skill file", universal_newlines=True)
            return str(candidate), text
        except OSError:
            continue
    return None, None


def _injected_skill_text(raws: Sequence[Mapping[str, Any]], index: int) -> str | None:
    for raw in raws[index + 1 : index + 8]:
        if raw.get("type") == "assistant":
            break
        if raw.get("type") == "user" and raw.get("isMeta") is True:
            content = _joined_texts(message_content(raw))
            if isinstance(content, str) and content.strip():
                return content
    return None


def truncate_skill(content: str) -> tuple[str, bool]:
    """Cut a skill to 5,000 tokens: the first 5,000 × 4 − len(marker) characters plus a marker."""
    if rough_token_count(content) <= POST_COMPACT_MAX_TOKENS_PER_SKILL:
        return content, False
    keep = POST_COMPACT_MAX_TOKENS_PER_SKILL * 4 - js_len(SKILL_TRUNCATED_MARKER)
    return js_slice(content, 0, keep) + SKILL_TRUNCATED_MARKER, True


def plan_skill_restoration(skills: Sequence[InvokedSkill]) -> list[RestoredSkill]:
    """`createSkillAttachmentIfNeeded`: newest first, each cut to 5,000 tokens, while the
    running total fits 25,000."""
    ordered = sorted(skills, key=lambda s: s.invoked_at or "", reverse=True)
    out: list[RestoredSkill] = []
    used = 0
    for skill in ordered:
        if skill.content is None:
            out.append(RestoredSkill(skill.name, skill.path, 0, False, False, "text not found"))
            continue
        text, truncated = truncate_skill(skill.content)
        tokens = rough_token_count(text)
        fits = used + tokens <= POST_COMPACT_SKILLS_TOKEN_BUDGET
        if fits:
            used += tokens
            reason = "shortened to its budget" if truncated else "attached in full"
        else:
            reason = f"does not fit the {POST_COMPACT_SKILLS_TOKEN_BUDGET:,}-token skill budget"
        out.append(RestoredSkill(skill.name, skill.path, tokens, truncated, fits, reason))
    return out
