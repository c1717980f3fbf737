"""The one facade that both front ends (CLI and TUI) call.

Each area of the engine is a service object created on first use, so opening an Engine costs
only path resolution: nothing heavy is imported until a pane or command needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from workbench.engine.claude_paths import Locations, resolve_locations

if TYPE_CHECKING:
    from workbench.engine.agents.service import AgentService
    from workbench.engine.context.service import ContextService
    from workbench.engine.history import History
    from workbench.engine.instructions.service import InstructionsService
    from workbench.engine.memories.store import MemoryStore
    from workbench.engine.profiles import BehaviourProfile
    from workbench.engine.profiles.detect import ResolvedVersion, VersionResolver
    from workbench.engine.recall.service import RecallService
    from workbench.engine.team.service import TeamService


class Engine:
    """Everything the workbench knows about one project's memory."""

    def __init__(
        self,
        locations: Locations,
        *,
        env: Mapping[str, str] | None = None,
        versions: VersionResolver | None = None,
    ) -> None:
        self.locations = locations
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        if versions is None:
            from workbench.engine.profiles.detect import VersionResolver, version_request

            versions = VersionResolver(version_request(None, self.env), self.env)
        self.versions = versions
        """Which Claude Code the answers follow (`--claude-version`, transcripts, the CLI)."""
        self._open_args: dict[str, object] = {}

    @classmethod
    def open(
        cls,
        project: str | os.PathLike[str] = ".",
        *,
        config_home: str | None = None,
        memory_dir: str | None = None,
        settings_file: str | None = None,
        policy_settings: str | None = None,
        env: Mapping[str, str] | None = None,
        claude_version: str | None = None,
        config_claude_version: str | None = None,
        ask_claude: bool = True,
        cache_dir: str | os.PathLike[str] | Callable[[], Path | None] | None = None,
    ) -> Engine:
        """Resolve a project's paths the way Claude Code would and open the engine on them.

        `claude_version` is the `--claude-version` flag (else `WORKBENCH_CLAUDE_VERSION`, else
        `config_claude_version`, else auto). `ask_claude=False` never runs `claude --version`
        now (the app asks later, in a worker); `cache_dir` (or a function giving it, called
        only when a `claude` executable is found) keeps its answer between runs.
        """
        from workbench.engine.profiles.detect import VersionResolver, version_request

        env = dict(os.environ if env is None else env)
        if config_home:
            env["CLAUDE_CONFIG_DIR"] = config_home
        request = version_request(claude_version, env, config_claude_version)
        cache = cache_dir if callable(cache_dir) or cache_dir is None else Path(cache_dir)
        versions = VersionResolver(request, env, cache, ask_cli=ask_claude)
        args: dict[str, object] = {
            "project": project,
            "memory_dir_override": memory_dir,
            "flag_settings": settings_file,
            "policy_settings": policy_settings,
        }
        profile = versions.default().profile
        engine = cls(_locations(args, env, profile), env=env, versions=versions)
        engine._open_args = args
        return engine

    # --- which Claude Code -------------------------------------------------------------

    @property
    def claude(self) -> ResolvedVersion:
        """The release answers about no transcript in particular follow."""
        return self.versions.default()

    @property
    def profile(self) -> BehaviourProfile:
        """The rules of that release."""
        return self.claude.profile

    def claude_for(self, transcript: str | os.PathLike[str] | Path | None) -> ResolvedVersion:
        """The release answers about `transcript` follow (under auto: the one that wrote it)."""
        return self.versions.for_transcript(transcript)

    def locations_for(self, profile: BehaviourProfile) -> Locations:
        """Where the memory would be under another release's path rules (same options)."""
        if not self._open_args:
            return self.locations
        return _locations(self._open_args, self.env, profile)

    @property
    def working_dir(self) -> str:
        """The folder the engine was opened on (Claude Code's working folder), else the
        project root."""
        project = self._open_args.get("project")
        if not isinstance(project, (str, os.PathLike)):
            return self.locations.project_root
        return os.path.realpath(os.fspath(project))

    # --- what a user hands a front end: a pipe, a theme file, an OS error --------------------
    # Static: the CLI reads a hook's or the status line's payload before it opens an engine.

    @staticmethod
    def read_json_input(
        stream: IO[bytes] | IO[str] | None, what: str, *, missing: str | None = None
    ) -> Any:
        """The JSON payload on a pipe (a hook's, the status line's): refused past 1 MiB and
        checked for depth before it is parsed. Blank input, or no stream at all (no stdin, a
        terminal), gives None, or a `UserInputError` saying `missing` when one is given."""
        from workbench.engine.errors import UserInputError
        from workbench.engine.userfiles import STATUSLINE_LIMIT, load_json, read_stream

        raw = b"" if stream is None else read_stream(stream, STATUSLINE_LIMIT, what)
        if not raw.strip():
            if missing is not None:
                raise UserInputError(missing)
            return None
        return load_json(raw, what)

    @staticmethod
    def read_memory_input(stream: IO[bytes] | IO[str], what: str) -> bytes:
        """A memory's text on a pipe, refused past the memory-file limit (8 MiB)."""
        from workbench.engine.userfiles import MEMORY_FILE_LIMIT, read_stream

        return read_stream(stream, MEMORY_FILE_LIMIT, what)

    @staticmethod
    def read_user_text(path: str | os.PathLike[str], what: str) -> str:
        """A small text file the user names (a theme): a regular file only, at most 4 MiB,
        invalid UTF-8 replaced. Refusals raise `errors.UnreadableFileError`."""
        from workbench.engine.userfiles import NOTES_LIMIT, read_text

        return read_text(path, NOTES_LIMIT, what)

    @staticmethod
    def describe_os_error(path: str | os.PathLike[str], exc: OSError) -> str:
        """A one-line reason for an error opening `path` (`a symbolic link that loops…`)."""
        from workbench.engine.userfiles import describe

        return describe(path, exc)

    @cached_property
    def memories(self) -> MemoryStore:
        """Memory files, the MEMORY.md index, lints and safe edits."""
        from workbench.engine.memories.store import MemoryStore

        return MemoryStore(self)  # its history opens when a change is first made

    def memory_listing_json(self, scope: str = "all") -> bytes:
        """`memories.listing_json(scope)`, answered without loading the memory store (its
        parser and linter) when the output kept from the last listing still holds: what a
        `ls --json` of a large unchanged folder costs is then the folder walk."""
        import time

        from workbench.engine.memories import finished_listing
        from workbench.engine.memories.listing_cache import listing_cache_for

        if "memories" in self.__dict__ or scope not in ("all", "private", "team", "log"):
            return self.memories.listing_json(scope)  # its clock, and its scope errors
        locations = self.locations
        found = finished_listing.look_up(
            listing_cache_for(self),
            scope,
            str(Path(locations.memory_dir)),
            (str(locations.entrypoint), str(locations.team_entrypoint)),
            time.time() * 1000,
        )
        return (
            found.output if found.output is not None else self.memories.listing_json(scope, found)
        )

    @cached_property
    def history(self) -> History:
        """Every change the workbench made, with undo."""
        from workbench.engine.history import History

        return History(self)

    @cached_property
    def context(self) -> ContextService:
        """Transcripts, token counts, the threshold gauge and compaction previews."""
        from workbench.engine.context.service import ContextService

        return ContextService(self)

    @cached_property
    def recall(self) -> RecallService:
        """Recall simulation: the model selector and the offline ranker."""
        from workbench.engine.recall.service import RecallService

        return RecallService(self)

    @cached_property
    def agents(self) -> AgentService:
        """The memory prompt, extraction, session-memory updates, daily logs and dream."""
        from workbench.engine.agents.service import AgentService

        return AgentService(self, self.history)

    @cached_property
    def instructions(self) -> InstructionsService:
        """The CLAUDE.md files, rules and imports Claude Code loads, with their lint."""
        from workbench.engine.instructions.service import InstructionsService

        return InstructionsService(self)

    @cached_property
    def team(self) -> TeamService:
        """Secret scanning and team-memory sync."""
        from workbench.engine.team.service import TeamService

        return TeamService(self, self.history)


def _locations(
    args: Mapping[str, object], env: Mapping[str, str], profile: BehaviourProfile
) -> Locations:
    return resolve_locations(
        args["project"],  # type: ignore[arg-type]
        env=env,
        memory_dir_override=args["memory_dir_override"],  # type: ignore[arg-type]
        flag_settings=args["flag_settings"],  # type: ignore[arg-type]
        policy_settings=args["policy_settings"],  # type: ignore[arg-type]
        profile=profile,
    )
