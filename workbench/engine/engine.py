"""The one facade that both front ends (CLI and TUI) call.

Each area of the engine is a service object created on first use, so opening an Engine costs
only path resolution: nothing heavy is imported until a pane or command needs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from workbench.engine.claude_paths import Locations, resolve_locations

if TYPE_CHECKING:
    from workbench.engine.agents.service import AgentService
    from workbench.engine.context.service import ContextService
    from workbench.engine.history import History
    from workbench.engine.recall.service import RecallService
    from workbench.engine.store import MemoryStore
    from workbench.engine.team.service import TeamService


class Engine:
    """Everything the workbench knows about one project's memory."""

    def __init__(self, locations: Locations, *, env: Mapping[str, str] | None = None) -> None:
        self.locations = locations
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)

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
    ) -> Engine:
        """Resolve a project's paths the way Claude Code would and open the engine on them."""
        env = dict(os.environ if env is None else env)
        if config_home:
            env["CLAUDE_CONFIG_DIR"] = config_home
        locations = resolve_locations(
            project,
            env=env,
            memory_dir_override=memory_dir,
            flag_settings=settings_file,
            policy_settings=policy_settings,
        )
        return cls(locations, env=env)

    @cached_property
    def memories(self) -> MemoryStore:
        """Memory files, the MEMORY.md index, lints and safe edits."""
        from workbench.engine.store import MemoryStore

        return MemoryStore(self)

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

        return AgentService(self)

    @cached_property
    def team(self) -> TeamService:
        """Secret scanning and team-memory sync."""
        from workbench.engine.team.service import TeamService

        return TeamService(self)
