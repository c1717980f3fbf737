"""Model facts Claude Code uses for context sizing: windows and output limits (spec 04 §9.3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.engine.envflags import is_truthy, positive_int

MODEL_CONTEXT_WINDOW_DEFAULT = 200_000
ONE_MILLION_CONTEXT = 1_000_000
CONTEXT_1M_BETA = "context-1m-2025-08-07"
MAX_OUTPUT_TOKENS_DEFAULT = 32_000
MAX_OUTPUT_TOKENS_UPPER_LIMIT = 64_000
CAPPED_DEFAULT_MAX_TOKENS = 8_000
ESCALATED_MAX_TOKENS = 64_000
SYNTHETIC_MODEL = "<synthetic>"
DEFAULT_MODEL = "claude-sonnet-4-6"

# First substring match wins, so more specific names come before their prefixes.
CANONICAL_NAMES = (
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-opus-4",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
)

# Claude Code's short aliases, resolved to the first-party model they name today.
ALIASES = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-6",
    "haiku": "claude-haiku-4-5-20251001",
    "sonnet[1m]": "claude-sonnet-4-6[1m]",
    "opus[1m]": "claude-opus-4-6[1m]",
}

FIRST_PARTY_MODELS = (
    "claude-3-7-sonnet-20250219",
    "claude-3-5-sonnet-20241022",
    "claude-3-5-haiku-20241022",
    "claude-haiku-4-5-20251001",
    "claude-sonnet-4-20250514",
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-6",
    "claude-opus-4-20250514",
    "claude-opus-4-1-20250805",
    "claude-opus-4-5-20251101",
    "claude-opus-4-6",
)

# (substring of the canonical name, default, upper limit), checked in order.
_OUTPUT_LIMITS = (
    ("opus-4-6", 64_000, 128_000),
    ("sonnet-4-6", 32_000, 128_000),
    ("opus-4-5", 32_000, 64_000),
    ("sonnet-4", 32_000, 64_000),
    ("haiku-4", 32_000, 64_000),
    ("opus-4-1", 32_000, 32_000),
    ("opus-4", 32_000, 32_000),
    ("claude-3-opus", 4_096, 4_096),
    ("claude-3-sonnet", 8_192, 8_192),
    ("claude-3-haiku", 4_096, 4_096),
    ("3-5-sonnet", 8_192, 8_192),
    ("3-5-haiku", 8_192, 8_192),
    ("3-7-sonnet", 32_000, 64_000),
)


def resolve_alias(model: str) -> str:
    """Expand `sonnet`, `opus`, `haiku` (and their `[1m]` forms) to full model ids."""
    return ALIASES.get(model.strip().lower(), model.strip())


def canonical_model_name(model: str) -> str:
    """The first known family name contained in `model`, else the model string lower-cased."""
    lowered = resolve_alias(model).lower()
    for name in CANONICAL_NAMES:
        if name in lowered:
            return name
    return lowered


def has_1m_suffix(model: str) -> bool:
    """True when the model string asks for the 1M window with a `[1m]` suffix."""
    return "[1m]" in resolve_alias(model).lower()


def model_supports_1m(model: str) -> bool:
    """`modelSupports1M`: Sonnet 4.x and Opus 4.6 accept the 1M-context beta."""
    canonical = canonical_model_name(model)
    return "claude-sonnet-4" in canonical or "opus-4-6" in canonical


@dataclass(frozen=True)
class ContextWindow:
    """A model's context window and the rule that decided it."""

    tokens: int
    source: str
    """`1m-suffix`, `1m-beta`, `1m-experiment` or `default`."""


def context_window_for_model(
    model: str,
    *,
    env: Mapping[str, str],
    betas: tuple[str, ...] = (),
    sonnet_1m_experiment: bool = False,
) -> ContextWindow:
    """`getContextWindowForModel` for public builds (the ant-only steps do not apply)."""
    disabled_1m = is_truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT"))
    if has_1m_suffix(model) and not disabled_1m:
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-suffix")
    if CONTEXT_1M_BETA in betas and model_supports_1m(model):
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-beta")
    if sonnet_1m_experiment and canonical_model_name(model) == "claude-sonnet-4-6":
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-experiment")
    return ContextWindow(MODEL_CONTEXT_WINDOW_DEFAULT, "default")


@dataclass(frozen=True)
class OutputLimits:
    """`getModelMaxOutputTokens`: the default and the upper limit for one model."""

    default: int
    upper_limit: int


def model_output_limits(model: str) -> OutputLimits:
    """Default and upper output-token limits by substring of the canonical name."""
    canonical = canonical_model_name(model)
    for needle, default, upper in _OUTPUT_LIMITS:
        if needle in canonical:
            return OutputLimits(default, upper)
    return OutputLimits(MAX_OUTPUT_TOKENS_DEFAULT, MAX_OUTPUT_TOKENS_UPPER_LIMIT)


@dataclass(frozen=True)
class MaxOutput:
    """`getMaxOutputTokensForModel`: the value used and where it came from."""

    tokens: int
    source: str
    """`model-default`, `slot-cap` or `env` (CLAUDE_CODE_MAX_OUTPUT_TOKENS)."""


def max_output_tokens_for_model(
    model: str, *, env: Mapping[str, str], slot_cap: bool = False
) -> MaxOutput:
    """The output budget: model default (or the 8,000 slot cap), then the env override capped
    at the model's upper limit; an invalid override falls back to the default."""
    limits = model_output_limits(model)
    if slot_cap:
        default = MaxOutput(min(limits.default, CAPPED_DEFAULT_MAX_TOKENS), "slot-cap")
    else:
        default = MaxOutput(limits.default, "model-default")
    override = positive_int(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    if override is None:
        return default
    return MaxOutput(min(override, limits.upper_limit), "env")
