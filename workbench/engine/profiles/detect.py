"""Which Claude Code the user has: `--claude-version`, the transcript, `claude --version`.

The request comes from the `--claude-version` flag, else `WORKBENCH_CLAUDE_VERSION`, else the
`claude_version` config key, else `auto`. `auto` takes the `version` field of the transcript in
question, else asks the `claude` executable on PATH (once per installed binary: the answer is
cached in the workbench's home, and the call is bounded by a short timeout), else uses the
newest profile. Every answer says where it came from.
"""

from __future__ import annotations

import _thread  # threading.Lock itself, without importing threading (the status line)
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from workbench.engine.errors import UserInputError
from workbench.engine.profiles import BehaviourProfile, profile_for
from workbench.engine.profiles.timeline import NEWEST_RELEASE
from workbench.engine.profiles.versions import find_version, parse_version
from workbench.engine.records import Record
from workbench.engine.userfiles import NOTES_LIMIT, load_json, read_bytes

VERSION_ENV = "WORKBENCH_CLAUDE_VERSION"
COMMAND_ENV = "WORKBENCH_CLAUDE_COMMAND"
"""The executable `auto` asks for its version (default `claude` on PATH; empty: never ask)."""
CLI_TIMEOUT_S = 2.0
CACHE_FILE = "claude-version.json"
TAIL_BYTES = (16 * 1024, 256 * 1024)
"""How much of a transcript's end is searched for its `version` field (the last line
usually has it; a bigger window only when it does not)."""

SOURCES = ("flag", "env", "config", "input", "transcript", "claude-cli", "newest")


class VersionRequest(Record):
    """What the user asked for: `auto` or a release, and where the request came from."""

    value: str
    source: str
    """`flag`, `env`, `config` or `default`."""

    @property
    def is_auto(self) -> bool:
        return self.value == "auto"


def check_version_value(value: str, where: str) -> str:
    """`auto` or an X.Y.Z release, normalised; anything else is a usage error."""
    text = value.strip()
    if text.lower() == "auto":
        return "auto"
    parsed = parse_version(text)
    if parsed is None:
        raise UserInputError(
            f"{where}: {value!r} is not a Claude Code version (use auto or X.Y.Z, e.g. 2.1.332)"
        )
    return ".".join(str(p) for p in parsed)


def version_request(
    flag: str | None, env: Mapping[str, str], config_value: str | None = None
) -> VersionRequest:
    """The request in force: the flag, the environment, the config file, else `auto`."""
    if flag:
        return VersionRequest(check_version_value(flag, "--claude-version"), "flag")
    if env.get(VERSION_ENV):
        return VersionRequest(check_version_value(env[VERSION_ENV], VERSION_ENV), "env")
    if config_value:
        return VersionRequest(check_version_value(config_value, "claude_version"), "config")
    return VersionRequest("auto", "default")


class ResolvedVersion(Record):
    """The release whose rules an answer follows, and how it was chosen."""

    version: str
    source: str
    """`flag`, `env`, `config`, `input` (sent by the running Claude Code), `transcript`,
    `claude-cli` or `newest`."""
    profile: BehaviourProfile
    detail: str | None = None
    """The transcript or executable the version was read from."""

    def to_json(self) -> dict[str, Any]:
        """The keys every JSON answer that depends on the release carries."""
        return {
            "claude_version": self.version,
            "claude_version_source": self.source,
            "claude_profile": self.profile.name,
            "claude_version_notes": self.profile.notes(),
        }

    def describe(self) -> str:
        """`Claude Code 2.1.332 (newest profile)`, for status lines and headers."""
        how = {
            "flag": "--claude-version",
            "env": VERSION_ENV,
            "config": "config",
            "transcript": "from the transcript",
            "input": "sent by Claude Code",
            "claude-cli": "claude --version",
            "newest": "newest profile",
        }.get(self.source, self.source)
        return f"Claude Code {self.version} ({how})"

    def short(self) -> str:
        """`Claude Code 2.1.332 (newest)`: the status line's form."""
        how = {
            "transcript": "transcript",
            "input": "running",
            "claude-cli": "installed",
            "newest": "newest",
        }.get(self.source, "chosen")
        return f"Claude Code {self.version} ({how})"


def transcript_version(path: str | os.PathLike[str]) -> str | None:
    """The `version` of the last record that has one (the release that wrote last), looked
    for in the file's end, then its start."""
    from workbench.engine.userfiles import open_stream

    try:
        with open_stream(path) as handle:  # regular files only: a FIFO must not block here
            size = os.fstat(handle.fileno()).st_size
            for window in TAIL_BYTES:
                start = max(0, size - window)
                handle.seek(start)
                found = _last_version(handle.read(window), partial_first=start > 0)
                if found is not None or start == 0:
                    return found
            handle.seek(0)
            return _last_version(handle.read(TAIL_BYTES[-1]), partial_first=False)
    except OSError:
        return None


def _last_version(data: bytes, *, partial_first: bool) -> str | None:
    from workbench.engine.context.jsonl import parse_line

    lines = data.split(b"\n")
    if partial_first:
        lines = lines[1:]  # the first line was cut by the seek
    for line in reversed(lines):
        if b'"version"' not in line:
            continue
        raw = parse_line(line)
        value = raw.get("version") if raw is not None else None
        if isinstance(value, str) and parse_version(value) is not None:
            return value.strip()
    return None


class VersionResolver:
    """Answers "which Claude Code?" for one engine, remembering what it found."""

    def __init__(
        self,
        request: VersionRequest,
        env: Mapping[str, str],
        cache_dir: Path | Callable[[], Path | None] | None = None,
        *,
        ask_cli: bool = True,
    ) -> None:
        self.request = request
        self.env = env
        self._cache_dir = cache_dir
        self.ask_cli = ask_cli
        """False: never run `claude --version` until `refresh` (the app asks in a worker)."""
        self._default: ResolvedVersion | None = None
        self._lock = _thread.allocate_lock()

    def _explicit(self) -> ResolvedVersion | None:
        if self.request.is_auto:
            return None
        version = self.request.value
        return ResolvedVersion(version, self.request.source, profile_for(version))

    def default(self) -> ResolvedVersion:
        """The release for answers about no transcript in particular (worked out once).

        Without `ask_cli` it never runs `claude`: it takes a cached answer or the newest
        profile (the app starts that way and asks in a worker later, see `refresh`).
        """
        with self._lock:
            if self._default is None:
                self._default = self._explicit() or self._auto(ask_cli=self.ask_cli)
            return self._default

    def refresh(self) -> ResolvedVersion:
        """Ask again, running `claude --version` if needed (for a worker); the new answer is
        what `default` returns from now on."""
        resolved = self._explicit() or self._auto(ask_cli=True)
        with self._lock:
            self._default = resolved
        return resolved

    def for_reported(
        self, version: str | None, transcript: str | os.PathLike[str] | None
    ) -> ResolvedVersion:
        """The release for input the running Claude Code sent with its own `version` (the
        status line's): that release under auto, else as `for_transcript`."""
        explicit = self._explicit()
        if explicit is not None:
            return explicit
        parsed = parse_version(version)
        if parsed is not None:
            plain = ".".join(str(p) for p in parsed)
            return ResolvedVersion(plain, "input", profile_for(plain))
        return self.for_transcript(transcript)

    def for_transcript(self, path: str | os.PathLike[str] | None) -> ResolvedVersion:
        """The release for answers about one transcript: the one that wrote it, under auto."""
        explicit = self._explicit()
        if explicit is not None:
            return explicit
        if path is not None:
            found = transcript_version(path)
            if found is not None:
                return ResolvedVersion(
                    ".".join(str(p) for p in parse_version(found) or ()),
                    "transcript",
                    profile_for(found),
                    detail=str(path),
                )
        return self.default()

    # --- auto -----------------------------------------------------------------------------

    def _auto(self, *, ask_cli: bool) -> ResolvedVersion:
        executable = self._executable()
        if executable is not None:
            version = self._cached(executable)
            if version is _MISSING and ask_cli:
                version = _ask(executable, self.env)
                self._store(executable, version)
            if isinstance(version, str):
                return ResolvedVersion(
                    version, "claude-cli", profile_for(version), detail=executable
                )
        return ResolvedVersion(NEWEST_RELEASE, "newest", profile_for(NEWEST_RELEASE))

    def _executable(self) -> str | None:
        command = self.env.get(COMMAND_ENV, "claude")
        if not command:
            return None
        found = _which(command, self.env.get("PATH", os.defpath))
        return os.path.realpath(found) if found else None

    @property
    def cache_dir(self) -> Path | None:
        """Where the answer of `claude --version` is kept (worked out when first needed)."""
        if callable(self._cache_dir):
            self._cache_dir = self._cache_dir()
        return self._cache_dir

    def _cache_key(self, executable: str) -> dict[str, Any] | None:
        try:
            stat = os.stat(executable)
        except OSError:
            return None
        return {"path": executable, "mtime_ns": stat.st_mtime_ns, "size": stat.st_size}

    def _cached(self, executable: str) -> object:
        key = self._cache_key(executable)
        if self.cache_dir is None or key is None:
            return _MISSING
        try:
            path = self.cache_dir / CACHE_FILE
            data = load_json(read_bytes(path, NOTES_LIMIT, "a version cache"), str(path))
        except (OSError, ValueError, UserInputError):
            return _MISSING
        if not isinstance(data, dict) or data.get("key") != key:
            return _MISSING
        version = data.get("version")
        return version if version is None or parse_version(version) else _MISSING

    def _store(self, executable: str, version: str | None) -> None:
        key = self._cache_key(executable)
        if self.cache_dir is None or key is None:
            return
        try:
            from workbench.engine.atomic import atomic_write_bytes

            self.cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            payload = json.dumps({"key": key, "version": version}).encode("utf-8")
            atomic_write_bytes(self.cache_dir / CACHE_FILE, payload)
        except OSError:
            pass  # a read-only home only costs asking again next time


_MISSING: Any = object()


def _which(command: str, path: str) -> str | None:
    """`shutil.which`, without importing shutil (and its compression modules) on POSIX,
    where the status line and hooks look `claude` up on every call."""
    if os.name != "posix":
        import shutil

        return shutil.which(command, path=path)
    if os.path.dirname(command):
        return command if _is_executable(command) else None
    if not path:
        return None
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder, command)
        if _is_executable(candidate):
            return candidate
    return None


def _is_executable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.X_OK) and not os.path.isdir(path)


def _ask(executable: str, env: Mapping[str, str]) -> str | None:
    """`claude --version`, bounded by a short timeout; None when it gives no version."""
    import subprocess  # only when the answer is not cached: ~8 ms of every start otherwise

    try:
        out = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    found = find_version(out.stdout) or find_version(out.stderr)
    if found is None or parse_version(found) is None:
        return None
    return found
