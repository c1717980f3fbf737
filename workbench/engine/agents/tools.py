"""The agents' local tools, with Claude Code's names and input shapes (spec 02 §4).

`Read{file_path, offset?, limit?}`, `Write{file_path, content}`,
`Edit{file_path, old_string, new_string, replace_all?}`, `Bash{command}`,
`Grep{pattern, path?, ...}` and `Glob{pattern, path?}` run here, not in Claude Code.

Writes never reach the disk while an agent runs: Write and Edit change a `Workspace`, an
overlay that later Reads, Edits and Greps see. When the run ends, the caller turns the staged
files into review-queue proposals or applies them through history (atomic and undoable), so a
run that fails half way leaves nothing half-written.

Bash really runs the command (in the project folder, with a small environment), but only
after the read-only judge has accepted it, here as well as in the permission check; its time,
output and memory are bounded while it runs (see `bounded_run`). Read and Grep open regular
files only, without ever blocking on a pipe or a device, and are bounded in bytes and time.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.engine.agents.bash_readonly import judge_command
from workbench.engine.agents.bounded_run import run_bounded
from workbench.engine.agents.permissions import (
    CanUseTool,
    PermissionDecision,
    bash_refusal,
    create_auto_mem_can_use_tool,
    create_notes_can_use_tool,
)
from workbench.engine.userfiles import pseudo_filesystems

__all__ = [
    "AgentTools",
    "CanUseTool",
    "PermissionDecision",
    "StagedFile",
    "Workspace",
    "create_auto_mem_can_use_tool",
    "create_notes_can_use_tool",
    "tool_definitions",
]

READ_DEFAULT_LINES = 2000
READ_MAX_LINE_CHARS = 2000
READ_MAX_BYTES = 2 * 1024 * 1024
READ_TIMEOUT_S = 10.0
BASH_TIMEOUT_S = 10.0
BASH_MAX_OUTPUT_CHARS = 30_000
BASH_MAX_OUTPUT_BYTES = 4 * BASH_MAX_OUTPUT_CHARS
"""Read from a command at most this much (enough for the character cap in any UTF-8)."""
BASH_MEMORY_BYTES = 2 * 1024**3
"""The address-space ceiling of the shell and everything it runs."""
GREP_TIMEOUT_S = 20.0
GLOB_TIMEOUT_S = 10.0
GLOB_MAX_VISITED = 200_000
GREP_MAX_FILES = 200
GREP_MAX_LINES = 400
GREP_MAX_FILE_BYTES = 5 * 1024 * 1024
GLOB_MAX_RESULTS = 100
SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn"})
BASH_PATH = "/usr/local/bin:/usr/bin:/bin"
# git settings a repository's own config cannot undo: no hooks, no fsmonitor program, and no
# repository found without a `.git` (a bare one an agent could have written as plain files).
_GIT_OVERRIDES = (
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
)
_FILE_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


class ToolInputError(Exception):
    """The model sent input the tool cannot use; the message goes back as an error result."""


@dataclass
class StagedFile:
    """One file as an agent left it: its content when the run started, and now."""

    path: str
    original: bytes | None
    """The bytes on disk when first touched; None when the file did not exist."""
    content: str

    @property
    def changed(self) -> bool:
        return self.original is None or self.original != self.content.encode("utf-8")


@dataclass
class Workspace:
    """A file view shared by one agent run: disk underneath, staged writes on top."""

    project_root: str
    staged: dict[str, StagedFile] = field(default_factory=dict)
    read_roots: tuple[str, ...] = ()
    """Folders besides the project that Read, Grep and Glob may look in (memory, transcripts)."""

    def check_readable(self, path: str) -> None:
        """Refuse a path outside the project and the read roots once links are resolved, so
        neither a name like /proc/self/environ nor a link to one can be read."""
        real = os.path.realpath(path)
        for root in (self.project_root, *self.read_roots):
            real_root = os.path.realpath(root)
            if real == real_root or real.startswith(real_root.rstrip("/") + "/"):
                return
        raise ToolInputError(
            f"{path} is outside the folders this agent may read (the project, its memory and "
            "its transcripts); it was not read"
        )

    def resolve(self, file_path: str) -> str:
        """An absolute, normalised path; relative paths are taken from the project root."""
        joined = (
            file_path if os.path.isabs(file_path) else os.path.join(self.project_root, file_path)
        )
        return os.path.normpath(joined)

    def exists(self, path: str) -> bool:
        return path in self.staged or is_regular_file(path)

    def read_text(self, path: str, *, deadline: float | None = None) -> str:
        """The current text of `path` (staged first); raises ToolInputError when unreadable."""
        if path in self.staged:
            return self.staged[path].content
        self.check_readable(path)
        data = read_regular_file(path, READ_MAX_BYTES, deadline=deadline)
        if len(data) > READ_MAX_BYTES:
            raise ToolInputError(f"{path} is larger than {READ_MAX_BYTES} bytes; read less of it")
        return _decode(data)

    def stage(self, path: str, content: str) -> StagedFile:
        """Record new content for `path` without touching the disk."""
        current = self.staged.get(path)
        if current is None:
            original: bytes | None = None
            if os.path.exists(path) and not os.path.isdir(path):
                original = read_regular_file(path, READ_MAX_BYTES)
            current = StagedFile(path=path, original=original, content=content)
            self.staged[path] = current
        else:
            current.content = content
        return current

    def changed_files(self) -> list[StagedFile]:
        """Staged files whose content differs from what was on disk, in the order touched."""
        return [f for f in self.staged.values() if f.changed]


def read_regular_file(path: str, max_bytes: int, *, deadline: float | None = None) -> bytes:
    """At most `max_bytes + 1` bytes of a regular file; anything else is a ToolInputError.

    Pipes, devices and sockets are refused before they are opened (opening one can block or
    have effects) and again after: the file is opened without blocking and checked with
    fstat, so one swapped in between cannot hang the read either. Reading stops at the
    deadline (READ_TIMEOUT_S from now unless given).
    """
    if deadline is None:
        deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        _require_regular(path, os.stat(path))
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ToolInputError(f"No file exists at {path}.") from None
    except OSError as exc:
        raise ToolInputError(f"{path} could not be read ({exc.strerror}).") from None
    try:
        _require_regular(path, os.fstat(fd))
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            if time.monotonic() > deadline:
                raise ToolInputError(f"reading {path} took too long; it was stopped")
            try:
                data = os.read(fd, min(1024 * 1024, max_bytes + 1 - size))
            except OSError as exc:
                raise ToolInputError(f"{path} could not be read ({exc.strerror}).") from None
            if not data:
                break
            chunks.append(data)
            size += len(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _require_regular(path: str, info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode):
        if info.st_dev in pseudo_filesystems():
            raise ToolInputError(f"{path} is a kernel pseudo-file (/proc or /sys); not read")
        return
    if stat.S_ISDIR(info.st_mode):
        raise ToolInputError(f"{path} is a folder, not a file; use Glob or Bash ls to list it")
    kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "not a regular file")
    raise ToolInputError(f"{path} is {kind}; only regular files can be read or written")


def is_regular_file(path: str) -> bool:
    """True for a regular file (after links); never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


# --- tool definitions sent to the model ----------------------------------------------------------


def _tool(
    name: str, description: str, properties: dict[str, Any], *required: str
) -> dict[str, Any]:
    """One tool definition: a closed object schema over `properties`."""
    return {
        "name": name,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        },
    }


def tool_definitions(names: tuple[str, ...] = ("Read", "Grep", "Glob", "Bash", "Edit", "Write")):
    """The `tools` array for the request, in Claude Code's input shapes."""
    every = {
        "Read": _tool(
            "Read",
            "Read a text file. Returns its lines numbered from 1. Use offset (first line, "
            "1-based) and limit (number of lines) for long files.",
            {
                "file_path": {"type": "string", "description": "absolute path to read"},
                "offset": {"type": "integer", "description": "first line to read (1-based)"},
                "limit": {"type": "integer", "description": "how many lines to read"},
            },
            "file_path",
        ),
        "Write": _tool(
            "Write",
            "Create a file, or replace a file's whole content.",
            {
                "file_path": {"type": "string", "description": "absolute path to write"},
                "content": {"type": "string", "description": "the complete new content"},
            },
            "file_path",
            "content",
        ),
        "Edit": _tool(
            "Edit",
            "Replace exact text in a file. old_string must occur exactly once unless "
            "replace_all is true. An empty old_string creates a file that does not exist.",
            {
                "file_path": {"type": "string", "description": "absolute path to edit"},
                "old_string": {"type": "string", "description": "the text to replace"},
                "new_string": {"type": "string", "description": "the replacement text"},
                "replace_all": {
                    "type": "boolean",
                    "description": "replace every occurrence (default false)",
                    "default": False,
                },
            },
            "file_path",
            "old_string",
            "new_string",
        ),
        "Bash": _tool(
            "Bash",
            "Run a shell command that only reads (ls, cat, grep, find, wc, head, tail, git "
            "log, ...). Commands that could change anything are refused.",
            {"command": {"type": "string", "description": "the command line"}},
            "command",
        ),
        "Grep": _tool(
            "Grep",
            "Search file contents with a regular expression. By default lists the files "
            "that match; output_mode 'content' shows matching lines, 'count' counts them.",
            {
                "pattern": {"type": "string", "description": "regular expression"},
                "path": {"type": "string", "description": "file or folder to search"},
                "glob": {"type": "string", "description": "only files matching this glob"},
                "output_mode": {
                    "type": "string",
                    "enum": ["files_with_matches", "content", "count"],
                },
                "-i": {"type": "boolean", "description": "ignore case"},
                "head_limit": {"type": "integer", "description": "keep the first N results"},
            },
            "pattern",
        ),
        "Glob": _tool(
            "Glob",
            "List files matching a glob pattern such as '**/*.md', newest first.",
            {
                "pattern": {"type": "string", "description": "glob pattern"},
                "path": {"type": "string", "description": "folder to search from"},
            },
            "pattern",
        ),
    }
    return [every[name] for name in names]


# --- handlers ------------------------------------------------------------------------------------

SecretCheck = Callable[[str, str], "str | None"]
"""`(path, new_text) -> refusal message | None`, run before staging a write."""


class AgentTools:
    """The six tool handlers over one workspace. Inputs are checked; failures raise
    `ToolInputError`, which the tool loop returns to the model as an error result."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        secret_check: SecretCheck | None = None,
        bash_timeout_s: float = BASH_TIMEOUT_S,
        grep_timeout_s: float = GREP_TIMEOUT_S,
        note_for_read: Callable[[str], str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.secret_check = secret_check
        self.bash_timeout_s = bash_timeout_s
        self.grep_timeout_s = grep_timeout_s
        self.note_for_read = note_for_read
        """Text to put before a Read result (for example a memory's freshness note)."""

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], str]]:
        """Name → handler, as the tool loop expects."""
        return {
            "Read": self._guard(self.read),
            "Write": self._guard(self.write),
            "Edit": self._guard(self.edit),
            "Bash": self._guard(self.bash),
            "Grep": self._guard(self.grep),
            "Glob": self._guard(self.glob),
        }

    @staticmethod
    def _guard(fn: Callable[[Mapping[str, Any]], str]) -> Callable[[dict[str, Any]], Any]:
        from workbench.engine.llm import ToolOutcome

        def run(tool_input: dict[str, Any]) -> Any:
            try:
                return fn(tool_input if isinstance(tool_input, Mapping) else {})
            except ToolInputError as exc:
                return ToolOutcome(str(exc), is_error=True)

        return run

    # Read ---------------------------------------------------------------------------------------

    def read(self, tool_input: Mapping[str, Any]) -> str:
        """`Read`: numbered lines of a text file (staged content first)."""
        path = self.workspace.resolve(_string(tool_input, "file_path"))
        offset = _optional_int(tool_input, "offset", minimum=1) or 1
        limit = _optional_int(tool_input, "limit", minimum=1) or READ_DEFAULT_LINES
        text = self.workspace.read_text(path)
        if text == "":
            return "(The file exists but is empty.)"
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if offset > len(lines):
            raise ToolInputError(f"offset {offset} is past the end ({len(lines)} lines)")
        chosen = lines[offset - 1 : offset - 1 + limit]
        numbered = []
        for number, line in enumerate(chosen, start=offset):
            if len(line) > READ_MAX_LINE_CHARS:
                line = line[:READ_MAX_LINE_CHARS] + " …[line truncated]"
            numbered.append(f"{number:>6}\t{line}")
        out = "\n".join(numbered)
        remaining = len(lines) - (offset - 1 + len(chosen))
        if remaining > 0:
            out += f"\n… {remaining} more lines; read on with offset {offset + len(chosen)}"
        note = self.note_for_read(path) if self.note_for_read else ""
        return note + out

    # Write / Edit -------------------------------------------------------------------------------

    def write(self, tool_input: Mapping[str, Any]) -> str:
        """`Write`: stage a file's complete new content."""
        path = self.workspace.resolve(_string(tool_input, "file_path"))
        content = _string(tool_input, "content", allow_empty=True)
        if os.path.isdir(path):
            raise ToolInputError(f"{path} is a folder; give a file path")
        existed = self.workspace.exists(path)
        self._check_secrets(path, content)
        self.workspace.stage(path, content)
        return f"Updated {path}." if existed else f"Created {path}."

    def edit(self, tool_input: Mapping[str, Any]) -> str:
        """`Edit`: replace exact text; refuses when the text is missing or ambiguous."""
        path = self.workspace.resolve(_string(tool_input, "file_path"))
        old = _string(tool_input, "old_string", allow_empty=True)
        new = _string(tool_input, "new_string", allow_empty=True)
        replace_all = tool_input.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise ToolInputError("replace_all must be true or false")
        if old == new:
            raise ToolInputError("old_string and new_string are the same; nothing would change")
        if not self.workspace.exists(path):
            if old != "":
                raise ToolInputError(f"No file exists at {path}, so old_string cannot be found.")
            self._check_secrets(path, new)
            self.workspace.stage(path, new)
            return f"Created {path}."
        text = self.workspace.read_text(path)
        if old == "":
            if text.strip():
                raise ToolInputError(
                    f"{path} already has content; an empty old_string only creates new files"
                )
            updated = new
        else:
            count = text.count(old)
            if count == 0:
                raise ToolInputError(
                    f"old_string was not found in {path}; read the file and copy the exact text "
                    "(including spaces and line breaks). Nothing was changed."
                )
            if count > 1 and not replace_all:
                raise ToolInputError(
                    f"old_string occurs {count} times in {path}; add surrounding text to make it "
                    "unique, or set replace_all. Nothing was changed."
                )
            updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        self._check_secrets(path, updated)
        self.workspace.stage(path, updated)
        return f"Edited {path}."

    def _check_secrets(self, path: str, text: str) -> None:
        if self.secret_check is not None:
            refusal = self.secret_check(path, text)
            if refusal:
                raise ToolInputError(refusal)

    # Bash ---------------------------------------------------------------------------------------

    def bash(self, tool_input: Mapping[str, Any]) -> str:
        """`Bash`: run a command the judge accepts as read-only, bounded in time and output."""
        command = _string(tool_input, "command")
        verdict = judge_command(command)
        if not verdict.read_only:
            raise ToolInputError(bash_refusal(verdict.reason))
        try:
            run = run_bounded(
                command,
                cwd=self.workspace.project_root,
                env=bash_environment(),
                timeout_s=self.bash_timeout_s,
                max_output_bytes=BASH_MAX_OUTPUT_BYTES,
                memory_bytes=BASH_MEMORY_BYTES,
            )
        except OSError as exc:
            raise ToolInputError(f"the shell could not be started ({exc.strerror})") from None
        text = _bounded(_decode(run.output), stopped=run.truncated)
        if run.timed_out:
            raise ToolInputError(
                f"The command was stopped after {self.bash_timeout_s:g} s.\n{text}".rstrip()
            )
        if run.returncode and not run.truncated:
            return f"{text}\n(exit code {run.returncode})".lstrip("\n")
        return text or "(no output)"

    # Grep / Glob --------------------------------------------------------------------------------

    def grep(self, tool_input: Mapping[str, Any]) -> str:
        """`Grep`: regular-expression search over files (staged content included), bounded
        in time: a pattern that backtracks for ever is stopped like a slow folder walk."""
        import regex  # the `re` syntax, plus a timeout on every search

        pattern = _string(tool_input, "pattern")
        flags = regex.IGNORECASE if tool_input.get("-i") is True else 0
        try:
            compiled = regex.compile(pattern, flags)
        except regex.error as exc:
            raise ToolInputError(f"the pattern is not a valid regular expression ({exc})") from None
        root = self.workspace.resolve(_optional_string(tool_input, "path") or ".")
        if root not in self.workspace.staged:
            self.workspace.check_readable(root)
        glob = _optional_string(tool_input, "glob")
        mode = tool_input.get("output_mode") or "files_with_matches"
        if mode not in ("files_with_matches", "content", "count"):
            raise ToolInputError("output_mode must be files_with_matches, content or count")
        head_limit = _optional_int(tool_input, "head_limit", minimum=1)
        deadline = time.monotonic() + self.grep_timeout_s

        def search(text: str) -> bool:
            try:
                left = max(0.001, deadline - time.monotonic())
                return compiled.search(text, timeout=left) is not None
            except TimeoutError:
                raise _grep_too_slow(self.grep_timeout_s) from None

        results: list[str] = []
        line_cap = head_limit or (GREP_MAX_LINES if mode == "content" else GREP_MAX_FILES)
        truncated = False
        for path in self._files_under(root, glob, deadline):
            try:
                text = self.workspace.read_text(path, deadline=deadline)
            except ToolInputError:
                if time.monotonic() > deadline:
                    raise _grep_too_slow(self.grep_timeout_s) from None
                continue
            if "\0" in text[:8192]:
                continue  # binary
            if mode == "files_with_matches":
                if search(text):
                    results.append(path)
            elif mode == "count":
                count = sum(1 for line in text.split("\n") if search(line))
                if count:
                    results.append(f"{path}:{count}")
            else:
                for number, line in enumerate(text.split("\n"), start=1):
                    if search(line):
                        results.append(f"{path}:{number}:{line[:READ_MAX_LINE_CHARS]}")
                        if len(results) >= line_cap:
                            break
            if len(results) >= line_cap:
                truncated = True
                break
        if not results:
            return "No matches found."
        body = "\n".join(results[:line_cap])
        return body + ("\n(results truncated)" if truncated else "")

    def glob(self, tool_input: Mapping[str, Any]) -> str:
        """`Glob`: files matching a pattern, newest first."""
        pattern = _string(tool_input, "pattern")
        root = Path(self.workspace.resolve(_optional_string(tool_input, "path") or "."))
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            raise ToolInputError("give a relative pattern and put the folder in path")
        self.workspace.check_readable(str(root))
        if not root.is_dir():
            raise ToolInputError(f"{root} is not a folder")
        deadline = time.monotonic() + GLOB_TIMEOUT_S
        matches: list[Path] = []
        try:
            for visited, candidate in enumerate(root.glob(pattern)):
                if visited >= GLOB_MAX_VISITED or time.monotonic() > deadline:
                    raise ToolInputError(
                        "the pattern matches too much to list in time; narrow the pattern "
                        "or the path"
                    )
                if is_regular_file(str(candidate)) and self._may_read(str(candidate)):
                    matches.append(candidate)
        except (ValueError, OSError) as exc:
            raise ToolInputError(f"the pattern could not be used ({exc})") from None
        found = {str(p): _mtime(p) for p in matches}
        for staged in self.workspace.staged:
            staged_path = Path(staged)
            if staged_path.is_relative_to(root) and staged_path.relative_to(root).match(pattern):
                found.setdefault(staged, float("inf"))
        if not found:
            return "No files found."
        ordered = sorted(found, key=lambda p: found[p], reverse=True)
        out = "\n".join(ordered[:GLOB_MAX_RESULTS])
        if len(ordered) > GLOB_MAX_RESULTS:
            out += f"\n({len(ordered) - GLOB_MAX_RESULTS} more not shown; narrow the pattern)"
        return out

    def _may_read(self, path: str) -> bool:
        try:
            self.workspace.check_readable(path)
        except ToolInputError:
            return False
        return True

    def _files_under(self, root: str, glob: str | None, deadline: float) -> Iterator[str]:
        seen: set[str] = set()
        if root in self.workspace.staged or is_regular_file(root):
            yield root
            return
        if not os.path.isdir(root):
            if os.path.lexists(root):
                read_regular_file(root, 0)  # raises, saying what it is (a pipe, a device, ...)
            raise ToolInputError(f"No file or folder exists at {root}.")
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS)
            for name in sorted(files):
                if time.monotonic() > deadline:
                    raise _grep_too_slow(self.grep_timeout_s)
                path = os.path.join(folder, name)
                if glob and not Path(path).match(glob) and not Path(name).match(glob):
                    continue
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode) or info.st_size > GREP_MAX_FILE_BYTES:
                    continue  # pipes, devices and sockets are never opened
                seen.add(path)
                yield path
        for staged in list(self.workspace.staged):
            if staged not in seen and staged.startswith(root.rstrip("/") + "/"):
                if not glob or Path(staged).match(glob):
                    yield staged


def _grep_too_slow(seconds: float) -> ToolInputError:
    return ToolInputError(
        f"the search took longer than {seconds:g} s and was stopped; use a simpler "
        "pattern or a narrower path"
    )


def bash_environment() -> dict[str, str]:
    """The small environment commands run in: no editor, pager, browser or prompt, and git
    settings a repository's own config cannot override (`_GIT_OVERRIDES`)."""
    env = {
        "PATH": BASH_PATH,
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "EDITOR": "false",
        "VISUAL": "false",
        "GIT_EDITOR": "false",
        "BROWSER": "false",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
        "GIT_CONFIG_COUNT": str(len(_GIT_OVERRIDES)),
    }
    for number, (key, value) in enumerate(_GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _bounded(text: str, *, stopped: bool = False) -> str:
    if stopped:
        return (
            text[:BASH_MAX_OUTPUT_CHARS].rstrip("\n")
            + f"\n… output cut at {BASH_MAX_OUTPUT_CHARS:,} characters: the command wrote more, "
            "so it was stopped"
        )
    if len(text) <= BASH_MAX_OUTPUT_CHARS:
        return text.rstrip("\n")
    cut = len(text) - BASH_MAX_OUTPUT_CHARS
    return text[:BASH_MAX_OUTPUT_CHARS] + f"\n… output cut ({cut} more characters)"


def _string(tool_input: Mapping[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = tool_input.get(key)
    if not isinstance(value, str):
        raise ToolInputError(f"{key} is required and must be a string")
    if not allow_empty and not value:
        raise ToolInputError(f"{key} must not be empty")
    if "\0" in value:
        raise ToolInputError(f"{key} contains a NUL byte")
    return value


def _optional_string(tool_input: Mapping[str, Any], key: str) -> str | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or "\0" in value:
        raise ToolInputError(f"{key} must be a string")
    return value or None


def _optional_int(tool_input: Mapping[str, Any], key: str, *, minimum: int) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolInputError(f"{key} must be a whole number of at least {minimum}")
    return value
