"""The threshold ladder: effective window, warning, error, auto-compact and blocking (spec 04
§9.2, §9.5), with every environment override Claude Code honours."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.engine.context.models import (
    context_window_for_model,
    max_output_tokens_for_model,
)
from workbench.engine.context.views import NO_THRESHOLD  # public: the Gauge pane names it
from workbench.engine.envflags import is_truthy, positive_int
from workbench.engine.jsutil import js_round
from workbench.engine.profiles import BehaviourProfile, newest_profile
from workbench.engine.profiles.rules import CompactWindowRules
from workbench.engine.records import Record, as_dict, replace
from workbench.engine.userfiles import SETTINGS_LIMIT, JsonInputError, load_json, read_bytes

MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000
AUTOCOMPACT_BUFFER_TOKENS = 13_000
WARNING_THRESHOLD_BUFFER_TOKENS = 20_000
ERROR_THRESHOLD_BUFFER_TOKENS = 20_000
MANUAL_COMPACT_BUFFER_TOKENS = 3_000
MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3

# Patterns, compiled (and cached by `re`) on first use: only a set variable is parsed, and
# compiling at import was a millisecond of every status line.
_JS_FLOAT = r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"


def parse_js_float(raw: str | None) -> float | None:
    """`parseFloat`: the longest numeric prefix, or None (NaN) when there is none."""
    if raw is None:
        return None
    text = raw.strip()
    if text.lstrip("+-").startswith("Infinity"):
        return -math.inf if text.startswith("-") else math.inf
    match = re.match(_JS_FLOAT, text)
    return float(match.group(1)) if match else None


class GlobalConfig(Record):
    """The parts of Claude Code's global config file that affect the gauge."""

    path: str | None
    auto_compact_enabled: bool = True
    sonnet_1m_experiment: bool = False
    error: str | None = None


def global_config_path(env: Mapping[str, str], config_home: str) -> Path:
    """`getGlobalClaudeFile`: a legacy `<config>/.config.json`, else `.claude.json` in
    `CLAUDE_CONFIG_DIR` or the home folder."""
    legacy = Path(config_home) / ".config.json"
    if legacy.exists():
        return legacy
    base = env.get("CLAUDE_CONFIG_DIR") or env.get("HOME") or os.path.expanduser("~")
    return Path(base) / ".claude.json"


def load_global_config(env: Mapping[str, str], config_home: str) -> GlobalConfig:
    """Read `autoCompactEnabled` and the 1M experiment flag; any problem means defaults."""
    path = global_config_path(env, config_home)
    try:
        data = load_json(read_bytes(path, SETTINGS_LIMIT, "a config file"), str(path))
    except FileNotFoundError:
        return GlobalConfig(path=None)
    except (OSError, ValueError, JsonInputError) as exc:
        return GlobalConfig(path=str(path), error=f"{exc.__class__.__name__}: unreadable")
    if not isinstance(data, dict):
        return GlobalConfig(path=str(path), error="not a JSON object")
    enabled = data.get("autoCompactEnabled")
    cache = data.get("clientDataCache")
    experiment = isinstance(cache, dict) and cache.get("coral_reef_sonnet") == "true"
    return GlobalConfig(
        path=str(path),
        auto_compact_enabled=enabled if isinstance(enabled, bool) else True,
        sonnet_1m_experiment=experiment,
    )


class EnvOverride(Record):
    """One environment variable that changed (or tried to change) the ladder."""

    name: str
    value: str
    applied: bool
    effect: str


class Thresholds(Record):
    """Every rung of the ladder for one model and environment, under one release's rules."""

    model: str
    context_window: int
    context_window_source: str
    max_output_tokens: int
    max_output_source: str
    reserved: int
    """Tokens kept free for the summary: `min(max output, 20,000)`."""
    effective_window: int
    auto_compact_enabled: bool
    """Auto-compaction fires when the count reaches `autocompact` (the switch is on and the
    release compacts this model by threshold)."""
    auto_compact_disabled_by: str | None
    autocompact: int
    warning: int
    error: int
    blocking: int
    overrides: tuple[EnvOverride, ...] = ()
    claude_version: str = ""
    """The release whose rules these are."""
    threshold_compaction: bool = True
    """The release compacts this model by threshold at all (False for claude-sonnet-4-5 and a
    few others in 2.1.332, unless CLAUDE_CODE_AUTO_COMPACT_WINDOW is set)."""
    reactive_compaction: bool = False
    """When the API refuses a prompt as too long, the release compacts and retries."""
    blocking_enabled: bool = True
    """The release refuses prompts on the client side at `blocking`."""
    model_listed: bool = True
    """The model is in the release's table (False: its rule for unknown models applies)."""
    model_known_from: str = "source"
    """`source`, `observed` or `assumed` (carried over from 2.1.88 without observation)."""
    notes: tuple[str, ...] = ()
    """What the user should know about these numbers (unknown models, no threshold, …)."""
    estimate_padding: bool = False
    """The release's check pads the estimate after the last usage by 4/3 for this model."""

    @property
    def warning_base(self) -> int:
        """What percentLeft counts down to: auto-compact when enabled, else the window."""
        return self.autocompact if self.auto_compact_enabled else self.effective_window

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "context_window": self.context_window,
            "context_window_source": self.context_window_source,
            "max_output_tokens": self.max_output_tokens,
            "max_output_source": self.max_output_source,
            "reserved": self.reserved,
            "effective_window": self.effective_window,
            "auto_compact_enabled": self.auto_compact_enabled,
            "auto_compact_disabled_by": self.auto_compact_disabled_by,
            "thresholds": self.thresholds_json(),
            "threshold_compaction": self.threshold_compaction,
            "reactive_compaction": self.reactive_compaction,
            "blocking_enabled": self.blocking_enabled,
            "model_listed": self.model_listed,
            "model_known_from": self.model_known_from,
            "estimate_padding": self.estimate_padding,
            "notes": list(self.notes),
            "overrides": [as_dict(o) for o in self.overrides],
        }

    def thresholds_json(self) -> dict[str, int | None]:
        """The rungs; `autocompact` and `blocking` are null where the release has none."""
        return {
            "warning": self.warning,
            "error": self.error,
            "autocompact": self.autocompact if self.threshold_compaction else None,
            "blocking": self.blocking if self.blocking_enabled else None,
        }


def auto_compact_disabled_by(env: Mapping[str, str], config: GlobalConfig | None) -> str | None:
    """`isAutoCompactEnabled` inverted: the switch that turned it off, or None."""
    for name in ("DISABLE_COMPACT", "DISABLE_AUTO_COMPACT"):
        if is_truthy(env.get(name)):
            return name
    if config is not None and not config.auto_compact_enabled:
        return "autoCompactEnabled=false"
    return None


_SUFFIXED = r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$"
_SUFFIX_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def parse_compact_window(raw: str | None, rules: CompactWindowRules) -> tuple[int | None, str]:
    """The window cap `CLAUDE_CODE_AUTO_COMPACT_WINDOW=raw` sets, and a note on how it was
    read: `parseInt` (2.1.88: `150k` is 150) or with k/m suffixes and a floor (2.1.332)."""
    if raw is None:
        return None, ""
    if not rules.suffixes:
        value = positive_int({"value": raw}, "value")
        if value is None:
            return None, "invalid, ignored"
        return value, "" if raw.strip() == str(value) else f"parseInt reads {raw!r} as {value:,}"
    match = re.match(_SUFFIXED, raw)
    if not match:
        return None, "invalid, ignored"
    value = int(float(match.group(1)) * _SUFFIX_SCALE[match.group(2).lower()])
    if value <= 0:
        return None, "invalid, ignored"
    if rules.floor is not None and value < rules.floor:
        return rules.floor, f"{value:,} is below the {rules.floor:,} floor, so it counts as that"
    return value, "" if raw.strip() == str(value) else f"read as {value:,}"


def compute_thresholds(
    model: str,
    *,
    env: Mapping[str, str],
    config: GlobalConfig | None = None,
    betas: tuple[str, ...] = (),
    slot_cap: bool = False,
    profile: BehaviourProfile | None = None,
) -> Thresholds:
    """The ladder for `model` under `env`, as the profile's release computes it (the newest
    profile when none is given)."""
    profile = profile or newest_profile()
    rules = profile.models
    facts = rules.lookup(model)
    overrides: list[EnvOverride] = []
    out = max_output_tokens_for_model(model, env=env, slot_cap=slot_cap, rules=rules)
    raw_out = env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    if raw_out is not None:
        overrides.append(
            EnvOverride(
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
                raw_out,
                out.source == "env",
                f"max output {out.tokens:,}" if out.source == "env" else "invalid, ignored",
            )
        )
    reserved = min(out.tokens, MAX_OUTPUT_TOKENS_FOR_SUMMARY)

    window = context_window_for_model(
        model,
        env=env,
        betas=betas,
        sonnet_1m_experiment=bool(config and config.sonnet_1m_experiment),
        rules=rules,
    )
    if env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT") is not None:
        overrides.append(
            EnvOverride(
                "CLAUDE_CODE_DISABLE_1M_CONTEXT",
                env["CLAUDE_CODE_DISABLE_1M_CONTEXT"],
                is_truthy(env["CLAUDE_CODE_DISABLE_1M_CONTEXT"]),
                "1M window switched off"
                if is_truthy(env["CLAUDE_CODE_DISABLE_1M_CONTEXT"])
                else "",
            )
        )
    window_tokens = window.tokens
    raw_cap = env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    cap, how = parse_compact_window(raw_cap, profile.compact_window)
    if raw_cap is not None:
        effect = how if cap is None else f"window capped at {min(window_tokens, cap):,}"
        if cap is not None and how:
            effect += f" ({how})"
        overrides.append(
            EnvOverride("CLAUDE_CODE_AUTO_COMPACT_WINDOW", raw_cap, cap is not None, effect)
        )
    if cap is not None:
        window_tokens = min(window_tokens, cap)
    effective = window_tokens - reserved
    by_threshold = facts.row.threshold_compaction or (
        cap is not None and rules.window_override_enables_threshold
    )

    autocompact = effective - AUTOCOMPACT_BUFFER_TOKENS
    raw_pct = env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    if raw_pct is not None:
        pct = parse_js_float(raw_pct)
        valid = pct is not None and 0 < pct <= 100
        if valid:
            assert pct is not None
            # The override can only bring auto-compaction earlier, never later.
            autocompact = min(math.floor(effective * (pct / 100)), autocompact)
        if not by_threshold:
            effect = "no effect: this model is not compacted by threshold"
        elif valid:
            effect = f"auto-compact at {autocompact:,}"
        else:
            effect = "not in (0, 100], ignored"
        overrides.append(
            EnvOverride("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", raw_pct, valid and by_threshold, effect)
        )

    disabled_by = auto_compact_disabled_by(env, config)
    for name in ("DISABLE_COMPACT", "DISABLE_AUTO_COMPACT"):
        if env.get(name) is not None:
            overrides.append(
                EnvOverride(
                    name,
                    env[name],
                    is_truthy(env[name]),
                    "auto-compact off" if is_truthy(env[name]) else "not truthy, ignored",
                )
            )
    switch_on = disabled_by is None
    enabled = switch_on and by_threshold
    if switch_on and not by_threshold:
        disabled_by = NO_THRESHOLD
    base = autocompact if enabled else effective

    blocking = positive_int(env, "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE")
    effect = f"blocking at {blocking:,}" if blocking else "invalid, ignored"
    mode = profile.auto_compact.blocking_override
    if blocking is not None and enabled and mode == "ignored":
        # 2.1.153–2.1.162: with auto-compact on the override neither blocks nor compacts.
        blocking, effect = None, "no effect while auto-compact is on in this release"
    elif blocking is not None and enabled and mode == "compacts":
        # From 2.1.122 (but for 2.1.153–2.1.162) it compacts there instead of blocking.
        if blocking < autocompact:
            autocompact = blocking
            base = autocompact
            effect = f"auto-compact at {blocking:,} (it compacts there instead of blocking)"
        else:
            effect = f"blocking at {blocking:,}"
    if env.get("CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE") is not None:
        overrides.append(
            EnvOverride(
                "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE",
                env["CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE"],
                blocking is not None,
                effect,
            )
        )
    # With auto-compact on but no threshold, 2.1.332 does not block on the client side (an
    # explicit CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE was not tried there; it is assumed to hold).
    blocking_enabled = (
        not switch_on or by_threshold or rules.blocking_without_threshold or blocking is not None
    )
    notes = _notes(
        model,
        profile,
        facts.row.note,
        listed=facts.listed,
        known_from=facts.row.known_from,
        by_threshold=by_threshold,
        switch_on=switch_on,
        autocompact=autocompact,
        blocking_enabled=blocking_enabled,
    )
    return Thresholds(
        model=model,
        context_window=window_tokens,
        context_window_source="env-cap"
        if cap is not None and cap < window.tokens
        else window.source,
        max_output_tokens=out.tokens,
        max_output_source=out.source,
        reserved=reserved,
        effective_window=effective,
        auto_compact_enabled=enabled,
        auto_compact_disabled_by=disabled_by,
        autocompact=autocompact,
        warning=base - WARNING_THRESHOLD_BUFFER_TOKENS,
        error=base - ERROR_THRESHOLD_BUFFER_TOKENS,
        blocking=blocking if blocking is not None else effective - MANUAL_COMPACT_BUFFER_TOKENS,
        overrides=tuple(overrides),
        claude_version=profile.version,
        threshold_compaction=by_threshold,
        reactive_compaction=profile.reactive.compacts_on_prompt_too_long,
        blocking_enabled=blocking_enabled,
        model_listed=facts.listed,
        model_known_from=facts.row.known_from,
        notes=tuple(notes),
        estimate_padding=facts.row.estimate_padding,
    )


def _notes(
    model: str,
    profile: BehaviourProfile,
    row_note: str | None,
    *,
    listed: bool,
    known_from: str,
    by_threshold: bool,
    switch_on: bool,
    autocompact: int,
    blocking_enabled: bool,
) -> list[str]:
    """What a reader of these numbers should know, in our words."""
    version = profile.version
    notes: list[str] = []
    if not listed:
        unknown = f"{model} is not a model Claude Code {version} knows"
        notes.append(f"{unknown}: {row_note}" if row_note else unknown)
    elif known_from == "assumed":
        notes.append(f"{model} was {row_note}" if row_note else f"{model} was not observed")
    if switch_on and not by_threshold:
        text = f"Claude Code {version} does not auto-compact {model} by threshold"
        if profile.reactive.compacts_on_prompt_too_long:
            text += (
                ": when the API refuses a prompt as too long, it compacts then and retries "
                "(reactive compaction)"
            )
        if not blocking_enabled:
            text += "; it does not block prompts on the client side either"
        if profile.models.window_override_enables_threshold:
            text += "; setting CLAUDE_CODE_AUTO_COMPACT_WINDOW brings threshold compaction back"
        notes.append(text)
    elif not switch_on and not profile.reactive.compacts_on_prompt_too_long:
        notes.append(
            f"with auto-compact off, Claude Code {version} stops with an error when the API "
            "refuses a prompt as too long (it has no reactive compaction)"
        )
    if switch_on and by_threshold and autocompact <= 0:
        notes.append(
            f"the auto-compact threshold is {autocompact:,}: Claude Code compacts before the "
            "first call"
        )
    return notes


class TokenWarningState(Record):
    """`calculateTokenWarningState` for one token count, plus the label Claude Code shows."""

    used: int
    percent_left: int
    above_warning: bool
    above_error: bool
    above_autocompact: bool
    at_blocking: bool
    label: str | None
    """The text Claude Code's footer shows, or None when it shows nothing."""

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


def token_warning_state(
    used: int, thresholds: Thresholds, *, suppressed: bool = False
) -> TokenWarningState:
    """Where `used` sits on the ladder; `suppressed` models the quiet period after a compaction."""
    base = thresholds.warning_base
    percent_left = max(0, js_round((base - used) / base * 100)) if base > 0 else 0
    above_warning = used >= base - WARNING_THRESHOLD_BUFFER_TOKENS
    above_error = used >= base - ERROR_THRESHOLD_BUFFER_TOKENS
    above_autocompact = thresholds.auto_compact_enabled and used >= thresholds.autocompact
    label: str | None = None
    if above_warning and not suppressed and thresholds.threshold_compaction:
        # Claude Code's footer text, reproduced so the user sees what the CLI will show (for
        # a model it never compacts by threshold, what 2.1.332 shows was not observed).
        if thresholds.auto_compact_enabled:
            label = f"{percent_left}% until auto-compact"
        else:
            label = f"Context low ({percent_left}% remaining) · Run /compact to compact & continue"
    return TokenWarningState(
        used=used,
        percent_left=percent_left,
        above_warning=above_warning,
        above_error=above_error,
        above_autocompact=above_autocompact,
        at_blocking=thresholds.blocking_enabled and used >= thresholds.blocking,
        label=label,
    )


# --- shouldAutoCompact and the circuit breaker ----------------------------------------------


class AutoCompactTracking(Record):
    """The per-session state `autoCompactIfNeeded` threads through the query loop."""

    compacted: bool = False
    turn_counter: int = 0
    consecutive_failures: int = 0

    @property
    def circuit_open(self) -> bool:
        """After three failures in a row auto-compaction is skipped for the session."""
        return self.consecutive_failures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES

    def after_success(self) -> AutoCompactTracking:
        return AutoCompactTracking(compacted=True, turn_counter=0, consecutive_failures=0)

    def after_failure(self) -> AutoCompactTracking:
        return replace(self, consecutive_failures=self.consecutive_failures + 1)

    def after_turn(self) -> AutoCompactTracking:
        return replace(self, turn_counter=self.turn_counter + 1)


class AutoCompactDecision(Record):
    """Whether auto-compaction would run now, and the reason in our words."""

    fire: bool
    reason: str
    tokens: int
    threshold: int
    guards: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "fire": self.fire,
            "reason": self.reason,
            "tokens": self.tokens,
            "threshold": self.threshold,
            "guards": list(self.guards),
        }


def should_auto_compact(
    tokens: int,
    thresholds: Thresholds,
    *,
    query_source: str = "repl_main_thread",
    reactive_only: bool = False,
    context_collapse: bool = False,
    snip_tokens_freed: int = 0,
) -> AutoCompactDecision:
    """`shouldAutoCompact`: the recursion, mode and switch guards, then the threshold test."""
    guards: list[str] = []
    if query_source in ("session_memory", "compact"):
        guards.append(f"query source {query_source} never auto-compacts (recursion guard)")
    if query_source == "marble_origami":
        guards.append("the context-collapse agent never auto-compacts")
    if thresholds.auto_compact_disabled_by == NO_THRESHOLD:
        guards.append(
            f"Claude Code {thresholds.claude_version} does not compact {thresholds.model} by "
            "threshold"
            + (
                " (it compacts when the API refuses the prompt)"
                if thresholds.reactive_compaction
                else ""
            )
        )
    elif not thresholds.auto_compact_enabled:
        guards.append(f"auto-compact is off ({thresholds.auto_compact_disabled_by})")
    if reactive_only:
        guards.append("reactive-only mode compacts on the API's error instead")
    if context_collapse:
        guards.append("context collapse manages the window instead")
    counted = tokens - snip_tokens_freed
    if guards:
        return AutoCompactDecision(False, guards[0], counted, thresholds.autocompact, tuple(guards))
    if counted >= thresholds.autocompact:
        reason = (
            f"{counted:,} tokens reach the auto-compact threshold of {thresholds.autocompact:,}"
        )
        return AutoCompactDecision(True, reason, counted, thresholds.autocompact)
    reason = f"{thresholds.autocompact - counted:,} tokens below the auto-compact threshold"
    return AutoCompactDecision(False, reason, counted, thresholds.autocompact)


def auto_compact_if_needed(
    tokens: int,
    thresholds: Thresholds,
    tracking: AutoCompactTracking,
    *,
    env: Mapping[str, str],
    **guards: Any,
) -> AutoCompactDecision:
    """`autoCompactIfNeeded`'s gate: DISABLE_COMPACT, the circuit breaker, then the guards."""
    if is_truthy(env.get("DISABLE_COMPACT")):
        return AutoCompactDecision(
            False, "DISABLE_COMPACT is set", tokens, thresholds.autocompact, ("DISABLE_COMPACT",)
        )
    if tracking.circuit_open:
        reason = (
            f"{tracking.consecutive_failures} auto-compactions failed in a row; "
            "Claude Code stops trying for the rest of the session"
        )
        return AutoCompactDecision(False, reason, tokens, thresholds.autocompact, ("circuit",))
    return should_auto_compact(tokens, thresholds, **guards)
