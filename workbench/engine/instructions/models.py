"""What the instructions report holds: files in load order, rules that wait, and findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion

KINDS = ("managed", "user", "project", "local", "auto-memory", "team-memory")
"""Where a file comes from, in Claude Code's terms (an import takes its parent's kind)."""
KIND_NAMES = {
    "managed": "managed policy",
    "user": "user (all projects)",
    "project": "project (checked in)",
    "local": "local (not checked in)",
    "auto-memory": "auto memory",
    "team-memory": "team memory",
}


@dataclass(frozen=True)
class InstructionFile:
    """One file Claude Code sends, with what it sends of it."""

    path: str
    kind: str
    origin: str
    """`claude-md` (a CLAUDE.md or CLAUDE.local.md), `rule`, `import` or `memory`."""
    content: str
    """The text sent: frontmatter and block comments removed, trimmed."""
    tokens: int
    """Claude Code's rough estimate of that text (characters ÷ 4, ÷ 2 for JSON)."""
    depth: int = 0
    """Import hops from the file that started the chain (0: not an import)."""
    parent: str | None = None
    """The file that imports this one."""
    described_as: str = ""
    """The kind whose description Claude Code sends with the file (2.1.88 describes managed
    files as user files)."""
    globs: tuple[str, ...] = ()
    """For a conditional rule loaded because a file matched."""
    trigger: str | None = None
    """For a file loaded when a file was read: that file."""

    @property
    def chars(self) -> int:
        return len(self.content)

    def to_json(self, *, content: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "origin": self.origin,
            "described_as": self.described_as or self.kind,
            "depth": self.depth,
            "parent": self.parent,
            "tokens": self.tokens,
            "chars": self.chars,
        }
        if self.globs:
            data["globs"] = list(self.globs)
        if self.trigger:
            data["trigger"] = self.trigger
        if content:
            data["content"] = self.content
        return data


@dataclass(frozen=True)
class ConditionalRule:
    """A rule with `paths` globs: it loads only once Claude Code reads a file they match."""

    path: str
    kind: str
    globs: tuple[str, ...]
    base: str
    """The folder the globs are relative to."""
    matches: int
    """Files under `base` the globs match now (as far as the listing went)."""
    examples: tuple[str, ...]
    complete: bool
    """The listing of `base` was complete (False: more files might match)."""
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "globs": list(self.globs),
            "base": self.base,
            "matches": self.matches,
            "examples": list(self.examples),
            "listing_complete": self.complete,
            "tokens": self.tokens,
        }


@dataclass(frozen=True)
class NestedFolder:
    """A folder below the working folder with its own instruction files: they load when
    Claude Code reads a file inside it."""

    folder: str
    files: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"folder": self.folder, "files": list(self.files)}


@dataclass(frozen=True)
class Finding:
    """One way a file fails to load (or loads differently from what its author may think)."""

    code: str
    severity: str
    """`error` (something written to load does not), `warning`, or `info`."""
    path: str
    message: str
    parent: str | None = None
    """For an import: the file that has the `@` line."""
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "parent": self.parent,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True)
class InstructionsReport:
    """Everything Claude Code would load as instructions for one working folder."""

    working_dir: str
    project_root: str
    config_home: str
    managed_dir: str
    files: tuple[InstructionFile, ...]
    """At session start, in the order Claude Code sends them."""
    conditional: tuple[ConditionalRule, ...]
    nested: tuple[NestedFolder, ...]
    findings: tuple[Finding, ...]
    on_read: tuple[InstructionFile, ...] = ()
    """What reading the files asked about would attach, in order."""
    read_paths: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    claude: ResolvedVersion | None = None
    home: str = ""
    """The home folder (`~` in displayed paths)."""

    @property
    def total_tokens(self) -> int:
        return sum(f.tokens for f in self.files)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    def tokens_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.files:
            out[f.kind] = out.get(f.kind, 0) + f.tokens
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            **(self.claude.to_json() if self.claude else {}),
            "working_dir": self.working_dir,
            "project_root": self.project_root,
            "config_home": self.config_home,
            "managed_dir": self.managed_dir,
            "home": self.home,
            "total_tokens": self.total_tokens,
            "tokens_by_kind": self.tokens_by_kind(),
            "files": [f.to_json() for f in self.files],
            "conditional": [r.to_json() for r in self.conditional],
            "nested": [n.to_json() for n in self.nested],
            "read_paths": list(self.read_paths),
            "on_read": [f.to_json() for f in self.on_read],
            "findings": [f.to_json() for f in self.findings],
            "notes": list(self.notes),
        }
