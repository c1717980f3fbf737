"""Where Claude Code keeps a project's memory, transcripts and session notes.

A faithful port of Claude Code's path rules (spec 01 §1): `sanitizePath` with its djb2
suffix, canonical git roots shared by worktrees, memory-folder resolution in Claude Code's
order with untrusted settings refused, and every `validateMemoryPath` rule.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine.envflags import is_defined_falsy, is_truthy
from workbench.engine.records import Record
from workbench.engine.userfiles import (
    JSON_MAX_DEPTH,
    NOTES_LIMIT,
    SETTINGS_LIMIT,
    describe,
    json_too_deep,
    read_bytes,
    read_text,
)

if TYPE_CHECKING:
    from datetime import date

    from workbench.engine.profiles import BehaviourProfile

MAX_SANITIZED_LENGTH = 200
MEMORY_ENTRYPOINT = "MEMORY.md"
SEP = "/"

# The sources whose `autoMemoryDirectory` Claude Code 2.1.88 trusts, first match wins (the
# release in use decides: `profile.settings.memory_dir_sources`).
TRUSTED_SETTING_SOURCES = ("policySettings", "flagSettings", "localSettings", "userSettings")
# Merged settings: later entries override earlier ones.
MERGE_ORDER = ("userSettings", "projectSettings", "localSettings", "flagSettings", "policySettings")


def nfc(text: str) -> str:
    """Unicode NFC, as Claude Code applies to every path it builds."""
    return unicodedata.normalize("NFC", text)


# --- sanitizePath -------------------------------------------------------------------------


def djb2_hash(text: str) -> int:
    """Claude Code's `djb2Hash` over UTF-16 code units, as a signed 32-bit integer."""
    value = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        unit = units[i] | (units[i + 1] << 8)
        value = ((value << 5) - value + unit) & 0xFFFFFFFF
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def to_base36(number: int) -> str:
    """`Number.prototype.toString(36)` for a non-negative integer."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    out = []
    while number:
        number, rem = divmod(number, 36)
        out.append(digits[rem])
    return "".join(reversed(out))


def simple_hash(text: str) -> str:
    """`simpleHash`: `Math.abs(djb2Hash(text)).toString(36)`."""
    return to_base36(abs(djb2_hash(text)))


def sanitize_path(name: str) -> str:
    """`sanitizePath`: every UTF-16 unit outside `[a-zA-Z0-9]` becomes `-`; long names hashed."""
    out = []
    for char in name:
        if char.isascii() and char.isalnum():
            out.append(char)
        else:
            # Astral characters are two UTF-16 code units, so they become two dashes.
            out.append("--" if ord(char) > 0xFFFF else "-")
    sanitized = "".join(out)
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{simple_hash(name)}"


def find_sanitized_dir(parent: Path, name: str, *, must_contain: str | None = None) -> Path:
    """The existing folder for `name` under `parent`, tolerating another hash suffix.

    Claude Code's CLI hashes long names with Bun's wyhash, which Python cannot reproduce, so
    for names over 200 characters a folder starting with the same 200-character prefix counts.
    """
    exact = parent / sanitize_path(name)
    if exact.exists() or len(sanitize_path(name)) <= MAX_SANITIZED_LENGTH:
        return exact
    prefix = sanitize_path(name)[:MAX_SANITIZED_LENGTH] + "-"
    try:
        candidates = sorted(p for p in parent.iterdir() if p.name.startswith(prefix))
    except OSError:
        return exact
    for candidate in candidates:
        if must_contain is None or (candidate / must_contain).exists():
            return candidate
    return exact


# --- git roots ------------------------------------------------------------------------------


def find_git_root(start: str | os.PathLike[str], *, normalize: bool = True) -> str | None:
    """The nearest folder at or above `start` holding `.git` (a folder or a file), NFC unless
    `normalize` is off (2.1.332 keys an NFD folder on its raw name)."""
    current = os.path.abspath(start)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker) or os.path.isfile(marker):
            return nfc(current) if normalize else current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def resolve_canonical_root(root: str, *, normalize: bool = True) -> str:
    """Map a worktree to the main repository so all worktrees share one memory folder.

    Both of Claude Code's security checks apply: the worktree's git dir must sit in the
    common dir's `worktrees/`, and its `gitdir` back-pointer must name this very worktree.
    """
    try:
        try:
            text = read_text(Path(root, ".git"), NOTES_LIMIT, "a .git file")
        except (IsADirectoryError, PermissionError, FileNotFoundError, NotADirectoryError):
            return root
        if not text.startswith("gitdir:"):
            return root
        worktree_git_dir = os.path.normpath(os.path.join(root, text[len("gitdir:") :].strip()))
        try:
            common_raw = read_text(
                Path(worktree_git_dir, "commondir"), NOTES_LIMIT, "a git file"
            ).strip()
        except OSError:
            return root  # a submodule: its own memory folder
        common_dir = os.path.normpath(os.path.join(worktree_git_dir, common_raw))
        if os.path.dirname(worktree_git_dir) != os.path.join(common_dir, "worktrees"):
            return root
        back_pointer = read_text(
            Path(worktree_git_dir, "gitdir"), NOTES_LIMIT, "a git file"
        ).strip()
        if os.path.realpath(back_pointer) != os.path.join(os.path.realpath(root), ".git"):
            return root
        keep = nfc if normalize else str
        if os.path.basename(common_dir) != ".git":
            return keep(common_dir)  # a worktree of a bare repository
        return keep(os.path.dirname(common_dir))
    except Exception:
        return root


def find_canonical_git_root(start: str | os.PathLike[str], *, normalize: bool = True) -> str | None:
    """`findCanonicalGitRoot`: the git root with worktrees mapped to their main repo."""
    root = find_git_root(start, normalize=normalize)
    return None if root is None else resolve_canonical_root(root, normalize=normalize)


# --- validateMemoryPath ---------------------------------------------------------------------


def js_normalize(path: str) -> str:
    """Node's `path.posix.normalize`: like normpath, but `''` → `.`, `//x` → `/x`, and a
    trailing slash is kept."""
    if path == "":
        return "."
    trailing = path.endswith("/")
    normalized = posixpath.normpath(path)
    if normalized.startswith("//"):
        normalized = "/" + normalized.lstrip("/")
    if trailing and not normalized.endswith("/"):
        normalized += "/"
    return normalized


def validate_memory_path(raw: str | None, *, expand_tilde: bool, home: str) -> str | None:
    """`validateMemoryPath`: a normalised folder ending in one `/`, or None when refused."""
    reason = memory_path_rejection(raw, expand_tilde=expand_tilde, home=home)
    if reason is not None:
        return None
    assert raw is not None
    candidate = _expand(raw, expand_tilde, home)
    normalized = js_normalize(candidate).rstrip("/\\")
    return nfc(normalized + SEP)


def _expand(raw: str, expand_tilde: bool, home: str) -> str:
    if expand_tilde and (raw.startswith("~/") or raw.startswith("~\\")):
        return posixpath.join(home, raw[2:])
    return raw


def memory_path_rejection(raw: str | None, *, expand_tilde: bool, home: str) -> str | None:
    """Why `validateMemoryPath` would refuse `raw`, or None when it is accepted."""
    if not raw:
        return "empty value"
    if expand_tilde and (raw.startswith("~/") or raw.startswith("~\\")):
        rest = raw[2:]
        if js_normalize(rest or ".").rstrip("/") in (".", ".."):
            return "points at the home folder itself (or above it)"
    candidate = _expand(raw, expand_tilde, home)
    normalized = js_normalize(candidate).rstrip("/\\")
    if not posixpath.isabs(normalized):
        return "not an absolute path" + (" (~ is not expanded here)" if raw.startswith("~") else "")
    if len(normalized) < 3:
        return "too short (a filesystem root)"
    if re.fullmatch(r"[A-Za-z]:", normalized):
        return "a drive root"
    if normalized.startswith("\\\\") or normalized.startswith("//"):
        return "a UNC network path"
    if "\0" in normalized:
        return "contains a NUL byte"
    return None


# --- settings -------------------------------------------------------------------------------


def policy_settings_path() -> Path:
    """Where managed (policy) settings live on this platform."""
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform.startswith("win"):
        return Path("C:/Program Files/ClaudeCode/managed-settings.json")
    return Path("/etc/claude-code/managed-settings.json")


class SettingsSources(Record):
    """Claude Code settings by source, plus files that could not be read."""

    by_source: Mapping[str, Mapping[str, object]]
    errors: tuple[tuple[str, str], ...] = ()

    def value(self, source: str, key: str) -> object | None:
        return self.by_source.get(source, {}).get(key)

    def merged(self, key: str) -> object | None:
        """The value after Claude Code's merge (policy beats flag beats local …)."""
        for source in reversed(MERGE_ORDER):
            value = self.value(source, key)
            if value is not None:
                return value
        return None


def load_settings(
    config_home: str,
    project_root: str,
    *,
    flag_settings: str | os.PathLike[str] | None = None,
    policy_settings: str | os.PathLike[str] | None = None,
) -> SettingsSources:
    """Read the five settings files Claude Code merges; unreadable ones are reported."""
    files = {
        "userSettings": Path(config_home) / "settings.json",
        "projectSettings": Path(project_root) / ".claude" / "settings.json",
        "localSettings": Path(project_root) / ".claude" / "settings.local.json",
        "policySettings": Path(policy_settings) if policy_settings else policy_settings_path(),
    }
    if flag_settings:
        files["flagSettings"] = Path(flag_settings)
    by_source: dict[str, Mapping[str, object]] = {}
    errors: list[tuple[str, str]] = []
    for source, path in files.items():
        try:
            raw = read_bytes(path, SETTINGS_LIMIT, "a settings file").decode("utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:  # a pipe, a device, a link loop, too big: never waited on
            errors.append((source, f"{path}: {describe(path, exc)}"))
            continue
        except UnicodeDecodeError as exc:
            errors.append((source, f"{path}: {exc.__class__.__name__}"))
            continue
        if json_too_deep(raw):  # json.loads recurses: refuse before it runs out of stack
            errors.append((source, f"{path}: nests deeper than {JSON_MAX_DEPTH} levels"))
            continue
        try:
            data = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            errors.append((source, f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})"))
            continue
        if isinstance(data, dict):
            by_source[source] = data
        else:
            errors.append((source, f"{path}: not a JSON object"))
    return SettingsSources(by_source=by_source, errors=tuple(errors))


# --- resolution -----------------------------------------------------------------------------


class RejectedOverride(Record):
    """A memory-folder override that was refused, and why."""

    source: str
    value: str
    reason: str


class Locations(Record):
    """Every path the workbench reads or writes for one project, resolved once."""

    config_home: str
    project_root: str
    canonical_root: str
    sanitized_project: str
    memory_dir: str
    """The auto-memory folder, always ending in exactly one `/`."""
    memory_dir_source: str
    transcripts_dir: str
    auto_memory_enabled: bool
    has_env_override: bool
    home: str
    rejected: tuple[RejectedOverride, ...] = ()
    settings_errors: tuple[tuple[str, str], ...] = ()
    project_dir_name: str = ""
    """The folder name under `projects/` (the sanitised root, or CLAUDE_CODE_PROJECT_DIR_NAME)."""
    project_dir_name_source: str = "sanitized"
    """`sanitized` or `env`."""
    notes: tuple[str, ...] = ()
    """What the user should know about these paths under the release in use."""

    @property
    def memory_root(self) -> Path:
        return Path(self.memory_dir)

    @property
    def entrypoint(self) -> str:
        return self.memory_dir + MEMORY_ENTRYPOINT

    @property
    def team_dir(self) -> str:
        return nfc(self.memory_dir + "team" + SEP)

    @property
    def team_entrypoint(self) -> str:
        return self.team_dir + MEMORY_ENTRYPOINT

    @property
    def logs_dir(self) -> str:
        return self.memory_dir + "logs" + SEP

    @property
    def consolidate_lock(self) -> str:
        return self.memory_dir + ".consolidate-lock"

    def daily_log_path(self, day: date) -> str:
        """`<memory>/logs/YYYY/MM/YYYY-MM-DD.md` for a local date."""
        return f"{self.logs_dir}{day:%Y}/{day:%m}/{day:%Y-%m-%d}.md"

    def transcript_path(self, session_id: str) -> str:
        return f"{self.transcripts_dir}/{session_id}.jsonl"

    def session_memory_path(self, session_id: str) -> str:
        """`<projects>/<sanitized cwd>/<session>/session-memory/summary.md`."""
        return f"{self.transcripts_dir}/{session_id}/session-memory/summary.md"

    def session_memory_config_dir(self) -> str:
        return f"{self.config_home}/session-memory/config"

    def is_auto_mem_path(self, path: str) -> bool:
        """`isAutoMemPath`: a plain prefix test on the normalised path."""
        return js_normalize(path).startswith(self.memory_dir)

    def is_team_path(self, path: str) -> bool:
        """`isTeamMemPath`: the resolved path starts with the team folder (no symlink check)."""
        return os.path.abspath(path).startswith(self.team_dir)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """A memory path relative to the memory folder, with `/` separators."""
        rel = os.path.relpath(os.fspath(path), self.memory_dir)
        return rel.replace(os.sep, "/")

    def write_carve_out(self, path: str) -> bool:
        """Whether Claude Code would auto-allow a write here (never for the env override)."""
        return not self.has_env_override and self.is_auto_mem_path(path)


def config_home(env: Mapping[str, str]) -> str:
    """`CLAUDE_CONFIG_DIR`, else `~/.claude`, NFC-normalised."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return nfc(configured)
    return nfc(os.path.join(_home(env), ".claude"))


def memory_base_dir(env: Mapping[str, str]) -> str:
    """`CLAUDE_CODE_REMOTE_MEMORY_DIR`, else the config home."""
    return env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR") or config_home(env)


def project_root_for(cwd: str | os.PathLike[str], *, normalize: bool = True) -> str:
    """`realpath(cwd)` NFC-normalised (unless `normalize` is off), falling back to the raw
    path."""
    keep = nfc if normalize else str
    try:
        return keep(os.path.realpath(cwd, strict=True))
    except OSError:
        return keep(os.path.abspath(cwd))


def auto_memory_enabled(env: Mapping[str, str], settings: SettingsSources) -> bool:
    """`isAutoMemoryEnabled`: env switches, bare and remote modes, then the setting."""
    disable = env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_truthy(disable):
        return False
    if is_defined_falsy(disable):
        return True
    if is_truthy(env.get("CLAUDE_CODE_SIMPLE")):
        return False
    if is_truthy(env.get("CLAUDE_CODE_REMOTE")) and not env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR"):
        return False
    setting = settings.merged("autoMemoryEnabled")
    if isinstance(setting, bool):
        return setting
    return True


def resolve_locations(
    cwd: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    config_home_override: str | None = None,
    memory_dir_override: str | None = None,
    flag_settings: str | os.PathLike[str] | None = None,
    policy_settings: str | os.PathLike[str] | None = None,
    profile: BehaviourProfile | None = None,
) -> Locations:
    """Resolve the memory folder exactly as Claude Code's `getAutoMemPath` does, under the
    path rules of `profile`'s release (the newest profile when none is given)."""
    if profile is None:
        from workbench.engine.profiles import newest_profile

        profile = newest_profile()
    env = dict(os.environ if env is None else env)
    if config_home_override:
        env["CLAUDE_CONFIG_DIR"] = config_home_override
    home = _home(env)
    conf_home = config_home(env)
    normalize = profile.unicode.nfc_project_root
    raw_root = project_root_for(cwd, normalize=False)
    project_root = nfc(raw_root) if normalize else raw_root
    canonical = find_canonical_git_root(project_root, normalize=normalize) or project_root
    # WORKBENCH_POLICY_SETTINGS points tests (and curious users) at another managed file.
    policy = policy_settings or env.get("WORKBENCH_POLICY_SETTINGS")
    settings = load_settings(
        conf_home, project_root, flag_settings=flag_settings, policy_settings=policy
    )
    rejected: list[RejectedOverride] = []
    notes: list[str] = []
    if raw_root != nfc(raw_root) and not profile.unicode.runs_in_non_nfc_folder:
        notes.append(
            f"the project path is not in NFC (it is decomposed, NFD): Claude Code "
            f"{profile.version} exits in such a folder without doing anything"
        )

    memory_dir: str | None = None
    source = "default"
    has_env_override = False
    if memory_dir_override:
        memory_dir = nfc(os.path.abspath(memory_dir_override).rstrip("/") + SEP)
        source = "flag"

    env_value = env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    if env_value is not None:
        why = memory_path_rejection(env_value, expand_tilde=False, home=home)
        if why is None:
            has_env_override = True
            if memory_dir is None:
                memory_dir = validate_memory_path(env_value, expand_tilde=False, home=home)
                source = "env"
        else:
            rejected.append(RejectedOverride("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", env_value, why))

    trusted = profile.settings.memory_dir_sources
    project_value = settings.value("projectSettings", "autoMemoryDirectory")
    if project_value is not None and "projectSettings" not in trusted:
        rejected.append(
            RejectedOverride(
                "projectSettings",
                str(project_value),
                f"Claude Code {profile.version} ignores autoMemoryDirectory in the project's "
                "committed .claude/settings.json: a cloned repository must not choose where "
                "memories are written",
            )
        )
    elif project_value is not None:
        notes.append(
            f"Claude Code {profile.version} honours autoMemoryDirectory from this project's "
            ".claude/settings.json once you trust the workspace"
        )

    for setting_source in trusted:
        value = settings.value(setting_source, "autoMemoryDirectory")
        if value is None:
            continue
        # The first defined value decides; if it is invalid Claude Code uses the default.
        text = value if isinstance(value, str) else ""
        why = memory_path_rejection(text, expand_tilde=True, home=home)
        if why is not None:
            rejected.append(RejectedOverride(setting_source, str(value), why))
        elif memory_dir is None:
            memory_dir = validate_memory_path(text, expand_tilde=True, home=home)
            source = setting_source
        break

    sanitized = sanitize_path(canonical)
    dir_name, dir_source = _project_dir_name(env, profile, rejected)
    projects = Path(memory_base_dir(env)) / "projects"
    if memory_dir is None:
        if dir_name is not None:
            folder = projects / dir_name
        else:
            folder = find_sanitized_dir(projects, canonical, must_contain="memory")
        memory_dir = nfc(os.path.join(str(folder), "memory") + SEP)

    if dir_name is not None:
        transcripts = Path(conf_home) / "projects" / dir_name
    else:
        transcripts = find_sanitized_dir(Path(conf_home) / "projects", project_root)
    return Locations(
        config_home=conf_home,
        project_root=project_root,
        canonical_root=canonical,
        sanitized_project=sanitized,
        memory_dir=memory_dir,
        memory_dir_source=source,
        transcripts_dir=str(transcripts),
        auto_memory_enabled=auto_memory_enabled(env, settings),
        has_env_override=has_env_override,
        home=home,
        rejected=tuple(rejected),
        settings_errors=settings.errors,
        project_dir_name=dir_name or sanitized,
        project_dir_name_source=dir_source,
        notes=tuple(notes),
    )


def _project_dir_name(
    env: Mapping[str, str], profile: BehaviourProfile, rejected: list[RejectedOverride]
) -> tuple[str | None, str]:
    """CLAUDE_CODE_PROJECT_DIR_NAME when the release reads it and the value is valid."""
    name_env = profile.project_dir.name_env
    value = env.get(name_env) if name_env else None
    if not value or name_env is None:  # unset or empty: the sanitised path
        return None, "sanitized"
    if re.fullmatch(profile.project_dir.name_pattern, value):
        return value, "env"
    rejected.append(
        RejectedOverride(
            name_env,
            value,
            "not 1 to 64 letters, digits, '-' or '_', so the sanitised path is used",
        )
    )
    return None, "sanitized"


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")
