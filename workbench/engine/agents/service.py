"""`engine.agents`: the memory prompt, extraction, session-memory updates, logs and dream."""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from workbench.engine.agents.daily_log import LogEntry
    from workbench.engine.agents.dream import DreamAgent
    from workbench.engine.agents.extraction import ExtractionAgent
    from workbench.engine.agents.models import ReviewItem
    from workbench.engine.agents.prompt import MemoryPrompt, PromptMode
    from workbench.engine.agents.review_queue import ReviewQueue
    from workbench.engine.agents.session_update import SessionMemoryUpdater
    from workbench.engine.engine import Engine
    from workbench.engine.history import History


class AgentService:
    """The agents of one project; each part is built on first use."""

    def __init__(self, engine: Engine, history: History) -> None:
        self.engine = engine
        self.history = history
        """Where agent writes are recorded (passed in by the facade)."""

    def prompt(
        self,
        *,
        mode: PromptMode | Literal["auto"] = "auto",
        skip_index: bool = False,
        daily_log_active: bool = False,
    ) -> MemoryPrompt:
        """The memory instructions the main agent would receive."""
        from workbench.engine.agents.prompt import prompt_for_engine

        return prompt_for_engine(
            self.engine, mode=mode, skip_index=skip_index, daily_log_active=daily_log_active
        )

    def has_api_key(self) -> bool:
        """True when the agents can call the model (`ANTHROPIC_API_KEY` is set)."""
        from workbench.engine.llm import LLMConfig

        return LLMConfig.from_env(self.engine.env).has_key

    @cached_property
    def extraction(self) -> ExtractionAgent:
        """Plans and runs the extraction agent over a transcript."""
        from workbench.engine.agents.extraction import ExtractionAgent

        return ExtractionAgent(self.engine)

    @cached_property
    def session_memory(self) -> SessionMemoryUpdater:
        """Manual session-memory updates."""
        from workbench.engine.agents.session_update import SessionMemoryUpdater

        return SessionMemoryUpdater(self.engine)

    @cached_property
    def dream(self) -> DreamAgent:
        """Memory consolidation with its lock and gates."""
        from workbench.engine.agents.dream import DreamAgent

        return DreamAgent(self.engine)

    @cached_property
    def review(self) -> ReviewQueue:
        """Proposed writes waiting for a decision."""
        from workbench.engine.agents.review_queue import ReviewQueue

        return ReviewQueue(self.engine, history=self.history)

    def review_items(self) -> tuple[ReviewItem, ...]:
        """Every pending proposal, newest first, with its diff redacted and checked against
        the file as it is now (changed since it was proposed; refused for a secret)."""
        from workbench.engine.agents.review_queue import review_items

        def redact(text: str) -> tuple[str, int]:
            result = self.engine.team.redact_text(text)
            return result.text, result.count

        return review_items(self.review, redact)

    def log(self, text: str, *, now: datetime | None = None) -> LogEntry:
        """Append one bullet to today's daily log."""
        from workbench.engine.agents.daily_log import append_entry

        return append_entry(self.engine, text, now=now)
