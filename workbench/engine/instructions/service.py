"""`engine.instructions`: the instruction files Claude Code loads for the engine's project."""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from workbench.engine import userfiles
from workbench.engine.instructions.globs import FileListing, list_files, matching_files
from workbench.engine.instructions.loader import PendingRule, Walk, folders_down_to, is_under
from workbench.engine.instructions.models import (
    ConditionalRule,
    Finding,
    InstructionFile,
    InstructionsReport,
    NestedFolder,
)

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.profiles import BehaviourProfile

MANAGED_DIR_ENV = "WORKBENCH_MANAGED_DIR"
"""Points the workbench at another managed-policy folder (tests; curious users)."""


def default_managed_dir() -> str:
    """Where Claude Code keeps managed-policy files on this platform."""
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode"
    if sys.platform.startswith("win"):
        return "C:\\Program Files\\ClaudeCode"
    return "/etc/claude-code"


class InstructionsService:
    """CLAUDE.md sources, rules and imports, as Claude Code would load them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def managed_dir(self) -> str:
        return self.engine.env.get(MANAGED_DIR_ENV) or default_managed_dir()

    @property
    def home(self) -> str:
        return self.engine.env.get("HOME") or os.path.expanduser("~")

    def report(
        self,
        *,
        working_dir: str | os.PathLike[str] | None = None,
        reading: Sequence[str] = (),
        profile: BehaviourProfile | None = None,
    ) -> InstructionsReport:
        """What loads at session start in `working_dir` (default: the folder the engine was
        opened on), and what reading each of `reading` would attach afterwards."""
        claude = self.engine.claude
        profile = profile or claude.profile
        loc = self.engine.locations
        cwd = os.path.realpath(working_dir or self.engine.working_dir)
        rules = profile.instructions
        approved = self._external_approved(cwd, loc.project_root)
        walk = Walk(cwd=cwd, home=self.home, rules=rules, external_approved=approved)
        files: list[InstructionFile] = []
        managed = self.managed_dir
        files += walk.file(
            posixpath.join(managed, "CLAUDE.md"), "managed", "claude-md", external_ok=approved
        )
        files += walk.rules_folder(
            posixpath.join(managed, ".claude", "rules"),
            "managed",
            external_ok=approved,
            conditional=False,
            base=cwd,
        )
        config_home = loc.config_home
        files += walk.file(
            posixpath.join(config_home, "CLAUDE.md"), "user", "claude-md", external_ok=True
        )
        files += walk.rules_folder(
            posixpath.join(config_home, "rules"),
            "user",
            external_ok=True,
            conditional=False,
            base=cwd,
        )
        for folder in folders_down_to(cwd):
            files += walk.file(
                posixpath.join(folder, "CLAUDE.md"), "project", "claude-md", external_ok=approved
            )
            files += walk.file(
                posixpath.join(folder, ".claude", "CLAUDE.md"),
                "project",
                "claude-md",
                external_ok=approved,
            )
            files += walk.rules_folder(
                posixpath.join(folder, ".claude", "rules"),
                "project",
                external_ok=approved,
                conditional=False,
                base=folder,
            )
            files += walk.file(
                posixpath.join(folder, "CLAUDE.local.md"),
                "local",
                "claude-md",
                external_ok=approved,
            )
        files += self._memory_files(walk)
        listing = list_files(cwd)
        conditional = tuple(self._conditional(walk.pending, listing))
        findings = list(walk.findings)
        findings += self._rule_findings(conditional, listing)
        findings += self._home_findings(config_home)
        nested = tuple(
            NestedFolder(posixpath.join(cwd, folder), names)
            for folder, names in sorted(listing.dirs_with.items())
        )
        on_read: list[InstructionFile] = []
        read_paths: list[str] = []
        if reading:
            sent = {posixpath.normpath(f.path) for f in files}
            for target in reading:
                absolute = posixpath.normpath(posixpath.join(cwd, os.path.expanduser(target)))
                read_paths.append(absolute)
                for item in self._on_read(absolute, cwd, rules, approved):
                    key = posixpath.normpath(item.path)
                    if key not in sent:
                        sent.add(key)
                        on_read.append(item)
        notes = list(rules.notes) if rules.rules_order == "directory" else []
        if not approved:
            notes.append(
                "external imports are not approved for this project: imports outside the "
                "working folder load only from user files"
            )
        return InstructionsReport(
            working_dir=cwd,
            project_root=loc.project_root,
            config_home=config_home,
            managed_dir=managed,
            files=tuple(files),
            conditional=conditional,
            nested=nested,
            findings=tuple(_dedupe(findings)),
            on_read=tuple(on_read),
            read_paths=tuple(read_paths),
            notes=tuple(notes),
            claude=claude,
            home=self.home,
        )

    # --- parts ------------------------------------------------------------------------------

    def _memory_files(self, walk: Walk) -> list[InstructionFile]:
        """MEMORY.md as loaded (cut at 200 lines / 25,000 units), after the instruction files."""
        from workbench.engine.context.tokens import rough_token_count

        loc = self.engine.locations
        if not loc.auto_memory_enabled:
            return []
        key = posixpath.normpath(loc.entrypoint)
        if key in walk.processed:
            return []
        try:
            report = self.engine.memories.index(False)
        except (OSError, ValueError):
            return []
        if not report.exists:
            return []
        text = (report.loaded_content + (report.warning or "")).strip()
        if not text:
            return []
        walk.processed.add(key)
        return [
            InstructionFile(
                path=loc.entrypoint,
                kind="auto-memory",
                origin="memory",
                content=text,
                tokens=rough_token_count(text),
                described_as="auto-memory",
            )
        ]

    def _external_approved(self, cwd: str, project_root: str) -> bool:
        """The project's `hasClaudeMdExternalIncludesApproved` in Claude Code's global config."""
        from workbench.engine.context.thresholds import global_config_path

        path = global_config_path(self.engine.env, self.engine.locations.config_home)
        try:
            data = userfiles.load_json(
                userfiles.read_bytes(path, userfiles.SETTINGS_LIMIT, "a config file"), str(path)
            )
        except (OSError, ValueError, userfiles.JsonInputError):
            return False
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return False
        for key in (cwd, project_root):
            entry = projects.get(key)
            if isinstance(entry, dict) and entry.get("hasClaudeMdExternalIncludesApproved"):
                return True
        return False

    def _conditional(
        self, pending: Iterable[PendingRule], listing: FileListing
    ) -> Iterable[ConditionalRule]:
        seen: set[str] = set()
        for rule in pending:
            if rule.path in seen:
                continue
            seen.add(rule.path)
            if is_under(rule.base, listing.base):
                base_listing = listing
            else:
                base_listing = list_files(rule.base)
            matched = matching_files(rule.globs, base_listing, rule.base)
            yield ConditionalRule(
                path=rule.path,
                kind=rule.kind,
                globs=rule.globs,
                base=rule.base,
                matches=len(matched),
                examples=tuple(matched[:3]),
                complete=base_listing.complete,
                tokens=rule.tokens,
            )

    def _rule_findings(
        self, rules: Sequence[ConditionalRule], listing: FileListing
    ) -> list[Finding]:
        out = []
        for rule in rules:
            if rule.matches:
                continue
            where = "the working folder" if rule.base == listing.base else rule.base
            more = "" if rule.complete else " (the listing stopped early: a later file may match)"
            out.append(
                Finding(
                    "glob-matches-nothing",
                    "warning",
                    rule.path,
                    f"paths {', '.join(rule.globs)} match no file under {where}: the rule "
                    f"loads only when such a file is read{more}",
                )
            )
        return out

    def _home_findings(self, config_home: str) -> list[Finding]:
        """A ~/.claude/CLAUDE.md that the configured config home hides."""
        default = posixpath.join(self.home, ".claude")
        if posixpath.normpath(config_home) == posixpath.normpath(default):
            return []
        stray = posixpath.join(default, "CLAUDE.md")
        if not os.path.isfile(stray):
            return []
        return [
            Finding(
                "user-file-hidden",
                "warning",
                stray,
                f"not loaded: CLAUDE_CONFIG_DIR points at {config_home}, so the user file is "
                f"{posixpath.join(config_home, 'CLAUDE.md')}",
            )
        ]

    def _on_read(
        self, target: str, cwd: str, rules: object, approved: bool
    ) -> list[InstructionFile]:
        """What Claude Code attaches when it reads `target`."""
        from workbench.engine.profiles.instruction_rules import InstructionRules

        assert isinstance(rules, InstructionRules)
        walk = Walk(
            cwd=cwd, home=self.home, rules=rules, external_approved=approved, trigger=target
        )
        walk.record_findings = False
        out: list[InstructionFile] = []
        if not rules.conditional_on_read:
            return out
        if is_under(target, cwd):
            managed = self.managed_dir
            out += walk.matching_rules(
                target,
                posixpath.join(managed, ".claude", "rules"),
                "managed",
                base=cwd,
                external_ok=approved,
            )
            out += walk.matching_rules(
                target,
                posixpath.join(self.engine.locations.config_home, "rules"),
                "user",
                base=cwd,
                external_ok=True,
            )
        for folder in folders_down_to(cwd):
            out += walk.matching_rules(
                target,
                posixpath.join(folder, ".claude", "rules"),
                "project",
                base=folder,
                external_ok=approved,
            )
        if is_under(target, cwd):
            below = posixpath.dirname(target)
            chain: list[str] = []
            while below != cwd and is_under(below, cwd):
                chain.append(below)
                below = posixpath.dirname(below)
            for folder in reversed(chain):
                for name, kind in (
                    ("CLAUDE.md", "project"),
                    (".claude/CLAUDE.md", "project"),
                    ("CLAUDE.local.md", "local"),
                ):
                    out += walk.file(
                        posixpath.join(folder, name), kind, "claude-md", external_ok=approved
                    )
                # Claude Code loads a folder's unconditional rules against a copy of the
                # processed set, so its conditional ones are still there to be matched.
                rules_dir = posixpath.join(folder, ".claude", "rules")
                processed = walk.processed
                walk.processed = set(processed)
                out += walk.rules_folder(
                    rules_dir, "project", external_ok=approved, conditional=False, base=folder
                )
                seen, walk.processed = walk.processed, processed
                out += walk.matching_rules(
                    target, rules_dir, "project", base=folder, external_ok=approved
                )
                walk.processed |= seen
        return out


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[str, str, str | None, str]] = set()
    out = []
    for finding in findings:
        key = (finding.code, finding.path, finding.parent, finding.message)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out
