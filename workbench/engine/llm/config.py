"""Model-layer settings read from the environment the engine was opened with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.engine.envflags import positive_int

DEFAULT_SONNET_MODEL = "claude-sonnet-4-6"
DEFAULT_BASE_URL = "https://api.anthropic.com"
# Claude Code waits up to 10 minutes per request; the workbench is interactive, so it waits
# less by default. API_TIMEOUT_MS (Claude Code's own variable) overrides both.
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 2


def default_sonnet_model(env: Mapping[str, str]) -> str:
    """`getDefaultSonnetModel()` for the first-party API: the env override, else Sonnet 4.6."""
    return (env.get("ANTHROPIC_DEFAULT_SONNET_MODEL") or "").strip() or DEFAULT_SONNET_MODEL


@dataclass(frozen=True)
class LLMConfig:
    """How to reach the Messages API: key, endpoint, model, timeout and retries."""

    api_key: str | None
    base_url: str
    model: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMConfig:
        """Read `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, the Sonnet override, the timeout
        (`API_TIMEOUT_MS`) and retries (`CLAUDE_CODE_MAX_RETRIES`, 0 allowed)."""
        timeout_ms = positive_int(env, "API_TIMEOUT_MS")
        retries_raw = (env.get("CLAUDE_CODE_MAX_RETRIES") or "").strip()
        retries = int(retries_raw) if retries_raw.isdigit() else DEFAULT_MAX_RETRIES
        return cls(
            api_key=(env.get("ANTHROPIC_API_KEY") or "").strip() or None,
            base_url=(env.get("ANTHROPIC_BASE_URL") or "").strip().rstrip("/") or DEFAULT_BASE_URL,
            model=default_sonnet_model(env),
            timeout_s=timeout_ms / 1000 if timeout_ms else DEFAULT_TIMEOUT_S,
            max_retries=retries,
        )

    @property
    def has_key(self) -> bool:
        """True when a call can be made (the `auto` engine then uses the API)."""
        return bool(self.api_key)

    def describe(self) -> dict[str, object]:
        """The settings without the key itself, for status lines and dry runs."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "api_key_set": self.has_key,
        }
