"""Model facts Claude Code uses for context sizing: windows and output limits (spec 04 §9.3).

The tables themselves belong to a release and live in its behaviour profile
(`workbench.engine.profiles`); the functions here apply one. Without `rules` they apply the
newest profile's table, as the workbench does when nothing says which Claude Code is in use.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.engine.envflags import is_truthy, positive_int
from workbench.engine.profiles import newest_profile
from workbench.engine.profiles.rules import ModelFacts, ModelRules
from workbench.engine.records import Record

MODEL_CONTEXT_WINDOW_DEFAULT = 200_000
ONE_MILLION_CONTEXT = 1_000_000
CONTEXT_1M_BETA = "context-1m-2025-08-07"
MAX_OUTPUT_TOKENS_DEFAULT = 32_000
MAX_OUTPUT_TOKENS_UPPER_LIMIT = 64_000
CAPPED_DEFAULT_MAX_TOKENS = 8_000
ESCALATED_MAX_TOKENS = 64_000
SYNTHETIC_MODEL = "<synthetic>"


def _rules(rules: ModelRules | None) -> ModelRules:
    return rules if rules is not None else newest_profile().models


def resolve_alias(model: str, rules: ModelRules | None = None) -> str:
    """Expand `sonnet`, `opus`, `haiku` (and their `[1m]` forms) to full model ids."""
    return _rules(rules).resolve_alias(model)


def canonical_model_name(model: str, rules: ModelRules | None = None) -> str:
    """The first known family name contained in `model`, else the model string lower-cased."""
    return _rules(rules).canonical_name(model)


def has_1m_suffix(model: str, rules: ModelRules | None = None) -> bool:
    """True when the model string asks for the 1M window with a `[1m]` suffix."""
    return "[1m]" in resolve_alias(model, rules).lower()


def model_supports_1m(model: str, rules: ModelRules | None = None) -> bool:
    """`modelSupports1M`: Sonnet 4.x and Opus 4.6 accept the 1M-context beta."""
    canonical = canonical_model_name(model, rules)
    return "claude-sonnet-4" in canonical or "opus-4-6" in canonical


class ContextWindow(Record):
    """A model's context window and the rule that decided it."""

    tokens: int
    source: str
    """`1m-suffix`, `1m-beta`, `1m-experiment`, `model` (the model's own window, larger than
    the default) or `default`."""


def context_window_for_model(
    model: str,
    *,
    env: Mapping[str, str],
    betas: tuple[str, ...] = (),
    sonnet_1m_experiment: bool = False,
    rules: ModelRules | None = None,
) -> ContextWindow:
    """`getContextWindowForModel` for public builds (the ant-only steps do not apply)."""
    table = _rules(rules)
    disabled_1m = is_truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT"))
    if has_1m_suffix(model, table) and not disabled_1m:
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-suffix")
    if CONTEXT_1M_BETA in betas and model_supports_1m(model, table):
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-beta")
    if sonnet_1m_experiment and canonical_model_name(model, table) == "claude-sonnet-4-6":
        return ContextWindow(ONE_MILLION_CONTEXT, "1m-experiment")
    window = table.lookup(model).row.window
    if window != MODEL_CONTEXT_WINDOW_DEFAULT:
        return ContextWindow(window, "model")
    return ContextWindow(window, "default")


class OutputLimits(Record):
    """`getModelMaxOutputTokens`: the default and the upper limit for one model."""

    default: int
    upper_limit: int


def model_output_limits(model: str, rules: ModelRules | None = None) -> OutputLimits:
    """Default and upper output-token limits by substring of the canonical name."""
    row = _rules(rules).lookup(model).row
    return OutputLimits(row.default_output, row.upper_output)


def model_facts(model: str, rules: ModelRules | None = None) -> ModelFacts:
    """The row of the release's table that applies to `model`."""
    return _rules(rules).lookup(model)


class MaxOutput(Record):
    """`getMaxOutputTokensForModel`: the value used and where it came from."""

    tokens: int
    source: str
    """`model-default`, `slot-cap` or `env` (CLAUDE_CODE_MAX_OUTPUT_TOKENS)."""


def max_output_tokens_for_model(
    model: str,
    *,
    env: Mapping[str, str],
    slot_cap: bool = False,
    rules: ModelRules | None = None,
) -> MaxOutput:
    """The output budget: model default (or the 8,000 slot cap), then the env override capped
    at the model's upper limit; an invalid override falls back to the default."""
    limits = model_output_limits(model, rules)
    if slot_cap:
        default = MaxOutput(min(limits.default, CAPPED_DEFAULT_MAX_TOKENS), "slot-cap")
    else:
        default = MaxOutput(limits.default, "model-default")
    override = positive_int(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    if override is None:
        return default
    return MaxOutput(min(override, limits.upper_limit), "env")
