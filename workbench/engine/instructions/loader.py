"""The walk Claude Code makes over instruction files, step for step.

At session start: the managed CLAUDE.md and its rules, the user's CLAUDE.md and rules (in the
config home, so `CLAUDE_CONFIG_DIR` counts), then every folder from the filesystem root down
to the working folder (its CLAUDE.md, .claude/CLAUDE.md, .claude/rules, CLAUDE.local.md),
then auto memory. Each file is followed by its `@path` imports, depth first. A path is read
once; a rule with `paths` globs waits for a matching file to be read. When a file is read,
the rules its path matches and the instruction files of the folders between the working
folder and it are attached.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.engine.context.tokens import rough_token_count_for_file_type
from workbench.engine.instructions.globs import glob_matches
from workbench.engine.instructions.markdown import (
    find_imports,
    is_text_import,
    read_frontmatter,
    strip_comments,
)
from workbench.engine.instructions.models import Finding, InstructionFile
from workbench.engine.instructions.reading import read_instruction_file
from workbench.engine.profiles.instruction_rules import InstructionRules

LARGE_FILE_CHARS = 40_000
"""Claude Code flags instruction files longer than this as large (it still loads them)."""


def is_under(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it (lexically, as Claude Code compares them)."""
    rel = posixpath.relpath(posixpath.normpath(path), posixpath.normpath(folder))
    return rel == "." or not (rel == ".." or rel.startswith("../"))


@dataclass
class PendingRule:
    """A conditional rule met during a walk (it was not sent)."""

    path: str
    kind: str
    globs: tuple[str, ...]
    base: str
    tokens: int


@dataclass
class Walk:
    """One pass of Claude Code's loader: a processed-path set, findings, what was met."""

    cwd: str
    home: str
    rules: InstructionRules
    external_approved: bool = False
    record_findings: bool = True
    processed: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)
    pending: list[PendingRule] = field(default_factory=list)
    trigger: str | None = None
    _stack: list[str] = field(default_factory=list)

    def note(self, code: str, severity: str, path: str, message: str, **kw: object) -> None:
        if self.record_findings:
            self.findings.append(Finding(code, severity, path, message, **kw))  # type: ignore[arg-type]

    def described(self, kind: str) -> str:
        if kind == "managed" and self.rules.managed_described_as == "user":
            return "user"
        return kind

    # --- one file and its imports -----------------------------------------------------------

    def file(
        self,
        path: str,
        kind: str,
        origin: str,
        *,
        external_ok: bool,
        depth: int = 0,
        parent: str | None = None,
        line: int | None = None,
    ) -> list[InstructionFile]:
        """`processMemoryFile`: the file, then its imports depth first."""
        key = posixpath.normpath(path)
        if key in self.processed:
            if parent is not None:
                if key in self._stack:
                    self.note(
                        "import-circular",
                        "warning",
                        path,
                        f"circular import: {posixpath.basename(path)} is already being loaded "
                        "higher up this chain, so this import adds nothing",
                        parent=parent,
                        line=line,
                    )
                else:
                    self.note(
                        "import-duplicate",
                        "info",
                        path,
                        "already loaded earlier; a file is sent once",
                        parent=parent,
                        line=line,
                    )
            return []
        if depth >= self.rules.import_depth_limit:
            self.note(
                "import-too-deep",
                "error",
                path,
                f"import {depth} hops deep: Claude Code stops following imports after "
                f"{self.rules.import_depth_limit - 1}, so this file never loads",
                parent=parent,
                line=line,
            )
            return []
        self.processed.add(key)
        resolved = os.path.realpath(path)
        if resolved != key:
            self.processed.add(posixpath.normpath(resolved))
        read = read_instruction_file(path)
        if read.text is None:
            if read.missing:
                if parent is not None:
                    self.note(
                        "import-missing",
                        "error",
                        path,
                        "imported, but there is no file at this path",
                        parent=parent,
                        line=line,
                    )
            else:
                self.note("unreadable", "error", path, f"not loaded: {read.problem}", parent=parent)
            return []
        if parent is not None and not is_text_import(path):
            self.note(
                "import-not-text",
                "warning",
                path,
                f"not loaded: Claude Code imports only text files, not "
                f"{os.path.splitext(path)[1] or 'this kind of'} files",
                parent=parent,
                line=line,
            )
            return []
        front = read_frontmatter(read.text)
        if front.error and origin == "rule":
            self.note(
                "bad-frontmatter",
                "warning",
                path,
                f"the frontmatter is {front.error}: its `paths` are ignored and the rule "
                "loads for every session",
            )
        elif front.repaired and front.globs and origin == "rule":
            self.note(
                "odd-frontmatter",
                "info",
                path,
                "`paths` is not valid YAML as written; Claude Code reads it as the quoted "
                f"string {front.globs[0]!r}",
            )
        imports, ignored = find_imports(front.content, path, self.home)
        text = strip_comments(front.content).strip()
        if not text:
            self.note(
                "empty-file",
                "warning" if parent is None else "error",
                path,
                "empty once frontmatter and comments are removed: not sent"
                + (", and its imports are not followed" if imports else ""),
                parent=parent,
                line=line,
            )
            return []
        if len(text) > LARGE_FILE_CHARS and self.record_findings:
            self.note(
                "large-file",
                "warning",
                path,
                f"{len(text):,} characters: over Claude Code's {LARGE_FILE_CHARS:,}-character "
                "mark for large instruction files (it is still sent whole)",
            )
        for skipped in ignored:
            self.note(
                "import-in-code",
                "info",
                path,
                f"@{skipped.written} is inside {skipped.where}: not followed",
                line=skipped.line,
            )
        tokens = rough_token_count_for_file_type(text, os.path.splitext(path)[1])
        record = InstructionFile(
            path=path,
            kind=kind,
            origin="import" if parent is not None else origin,
            content=text,
            tokens=tokens,
            depth=depth,
            parent=parent,
            described_as=self.described(kind),
            globs=front.globs,
            trigger=self.trigger,
        )
        out = [record]
        self._stack.append(key)
        try:
            for ref in imports:
                if not is_under(ref.path, self.cwd) and not external_ok:
                    self.note(
                        "import-outside",
                        "warning",
                        ref.path,
                        "outside the working folder: Claude Code loads it only once external "
                        "imports are approved for this project",
                        parent=path,
                        line=ref.line,
                    )
                    continue
                out.extend(
                    self.file(
                        ref.path,
                        kind,
                        origin,
                        external_ok=external_ok,
                        depth=depth + 1,
                        parent=path,
                        line=ref.line,
                    )
                )
        finally:
            self._stack.pop()
        return out

    # --- rules folders ----------------------------------------------------------------------

    def rules_folder(
        self,
        folder: str,
        kind: str,
        *,
        external_ok: bool,
        conditional: bool,
        base: str,
        visited: set[str] | None = None,
        keep: Callable[[InstructionFile], bool] | None = None,
    ) -> list[InstructionFile]:
        """`processMdRules`: every `.md` below the folder; unconditional rules (and imports)
        when `conditional` is False, else the conditional ones `keep` accepts."""
        visited = set() if visited is None else visited
        if folder in visited:
            return []
        visited.add(folder)
        resolved = os.path.realpath(folder)
        visited.add(resolved)
        try:
            entries = list(os.scandir(resolved))
        except OSError:
            return []
        if self.rules.rules_order == "name":
            entries.sort(key=lambda e: e.name)
        out: list[InstructionFile] = []
        for entry in entries:
            path = posixpath.join(folder, entry.name)
            target = os.path.realpath(path)
            try:
                is_dir = os.path.isdir(target)
                is_file = os.path.isfile(target)
            except OSError:
                continue
            if is_dir:
                out.extend(
                    self.rules_folder(
                        target,
                        kind,
                        external_ok=external_ok,
                        conditional=conditional,
                        base=base,
                        visited=visited,
                        keep=keep,
                    )
                )
            elif is_file and entry.name.endswith(".md"):
                loaded = self.file(target, kind, "rule", external_ok=external_ok)
                for item in loaded:
                    if item.globs and not conditional and item.parent is None:
                        self.pending.append(
                            PendingRule(item.path, kind, item.globs, base, item.tokens)
                        )
                if conditional:
                    out.extend(i for i in loaded if i.globs and (keep is None or keep(i)))
                else:
                    out.extend(i for i in loaded if not i.globs)
            elif is_file and not conditional:
                self.note(
                    "rule-not-markdown",
                    "info",
                    path,
                    "only .md files in a rules folder are loaded",
                )
        return out

    def matching_rules(
        self, target: str, folder: str, kind: str, *, base: str, external_ok: bool
    ) -> list[InstructionFile]:
        """`processConditionedMdRules`: the conditional rules of `folder` whose globs match
        `target`."""

        def keep(item: InstructionFile) -> bool:
            return glob_matches(item.globs, target, base)

        return self.rules_folder(
            folder, kind, external_ok=external_ok, conditional=True, base=base, keep=keep
        )


def folders_down_to(cwd: str) -> list[str]:
    """The working folder and each folder above it, filesystem root excluded, top first."""
    out: list[str] = []
    current = posixpath.normpath(cwd)
    while current != posixpath.dirname(current):
        out.append(current)
        current = posixpath.dirname(current)
    return list(reversed(out))
