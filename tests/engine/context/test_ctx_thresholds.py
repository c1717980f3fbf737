"""The threshold ladder, model limits and every environment override (spec 04 §9.2–9.5)."""

from __future__ import annotations

import json

import pytest

from workbench.engine.context.models import (
    canonical_model_name,
    context_window_for_model,
    max_output_tokens_for_model,
    model_output_limits,
)
from workbench.engine.context.thresholds import (
    AutoCompactTracking,
    GlobalConfig,
    auto_compact_if_needed,
    compute_thresholds,
    load_global_config,
    parse_js_float,
    should_auto_compact,
    token_warning_state,
)
from workbench.engine.profiles import profile_for

SONNET = "claude-sonnet-4-6"
OPUS = "claude-opus-4-6"
LEGACY = profile_for("2.1.88")
"""Spec 04's rules: what this file pins down (2.1.332's are in test_profiles.py)."""


# --- the worked examples of §9.2 ------------------------------------------------------------


def test_sonnet_46_defaults_match_the_worked_example():
    t = compute_thresholds(SONNET, env={})
    assert (t.context_window, t.reserved, t.effective_window) == (200_000, 20_000, 180_000)
    assert (t.autocompact, t.warning, t.error, t.blocking) == (167_000, 147_000, 147_000, 177_000)
    assert t.max_output_tokens == 32_000 and t.auto_compact_enabled


def test_slot_cap_lowers_reserved_and_raises_the_window():
    t = compute_thresholds(SONNET, env={}, slot_cap=True)
    assert (t.max_output_tokens, t.reserved, t.effective_window, t.autocompact) == (
        8_000,
        8_000,
        192_000,
        179_000,
    )


def test_opus_46_with_1m_suffix():
    t = compute_thresholds(OPUS + "[1m]", env={})
    assert (t.context_window, t.reserved, t.effective_window, t.autocompact) == (
        1_000_000,
        20_000,
        980_000,
        967_000,
    )
    assert t.context_window_source == "1m-suffix"


# --- models ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "canonical"),
    [
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
        ("sonnet", "claude-sonnet-4-6"),
        ("my-custom-model", "my-custom-model"),
    ],
)
def test_canonical_names(model: str, canonical: str):
    assert canonical_model_name(model, LEGACY.models) == canonical


@pytest.mark.parametrize(
    ("model", "default", "upper"),
    [
        ("claude-opus-4-6", 64_000, 128_000),
        ("claude-sonnet-4-6", 32_000, 128_000),
        ("claude-opus-4-5-20251101", 32_000, 64_000),
        ("claude-sonnet-4-5-20250929", 32_000, 64_000),
        ("claude-haiku-4-5-20251001", 32_000, 64_000),
        ("claude-opus-4-1-20250805", 32_000, 32_000),
        ("claude-opus-4-20250514", 32_000, 32_000),
        ("claude-3-opus-20240229", 4_096, 4_096),
        ("claude-3-5-sonnet-20241022", 8_192, 8_192),
        ("claude-3-5-haiku-20241022", 8_192, 8_192),
        ("claude-3-7-sonnet-20250219", 32_000, 64_000),
        ("something-else", 32_000, 64_000),
    ],
)
def test_output_limits_table(model: str, default: int, upper: int):
    limits = model_output_limits(model)
    assert (limits.default, limits.upper_limit) == (default, upper)


def test_1m_beta_only_for_models_that_support_it():
    betas = ("context-1m-2025-08-07",)
    assert context_window_for_model(SONNET, env={}, betas=betas).tokens == 1_000_000
    assert context_window_for_model("claude-sonnet-4-5", env={}, betas=betas).tokens == 1_000_000
    assert context_window_for_model(OPUS, env={}, betas=betas).tokens == 1_000_000
    assert context_window_for_model("claude-opus-4-5", env={}, betas=betas).tokens == 200_000
    assert context_window_for_model("claude-haiku-4-5", env={}, betas=betas).tokens == 200_000


def test_1m_suffix_forces_1m_on_any_model_unless_disabled():
    assert context_window_for_model("claude-haiku-4-5[1m]", env={}).tokens == 1_000_000
    env = {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}
    assert context_window_for_model(SONNET + "[1M]", env=env).tokens == 200_000


def test_sonnet_1m_experiment_from_global_config():
    window = context_window_for_model(SONNET, env={}, sonnet_1m_experiment=True)
    assert window.tokens == 1_000_000


# --- env overrides --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected", "source"),
    [
        ("16000", 16_000, "env"),
        ("200000", 128_000, "env"),  # capped at the upper limit
        ("12abc", 12, "env"),  # parseInt reads the leading digits
        ("0", 32_000, "model-default"),
        ("-5", 32_000, "model-default"),
        ("lots", 32_000, "model-default"),
    ],
)
def test_max_output_env(raw: str, expected: int, source: str):
    out = max_output_tokens_for_model(SONNET, env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": raw})
    assert (out.tokens, out.source) == (expected, source)


def test_max_output_env_below_20k_shrinks_reserved():
    t = compute_thresholds(SONNET, env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "10000"})
    assert (t.reserved, t.effective_window, t.autocompact) == (10_000, 190_000, 177_000)
    assert t.overrides[0].name == "CLAUDE_CODE_MAX_OUTPUT_TOKENS" and t.overrides[0].applied


def test_auto_compact_window_caps_the_window():
    t = compute_thresholds(SONNET, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"})
    assert (t.context_window, t.effective_window, t.autocompact, t.blocking) == (
        100_000,
        80_000,
        67_000,
        77_000,
    )
    bigger = compute_thresholds(SONNET, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "500000"})
    assert bigger.context_window == 200_000  # min(window, cap)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("50", 90_000),  # floor(180000 * 0.5)
        ("50.5", 90_900),
        ("95", 167_000),  # can only lower it: min(171000, 167000)
        ("100", 167_000),
        ("0", 167_000),  # out of range, ignored
        ("150", 167_000),
        ("abc", 167_000),
        ("33.3333", 59_999),  # floor of 59999.94
    ],
)
def test_autocompact_pct_override(raw: str, expected: int):
    t = compute_thresholds(SONNET, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": raw})
    assert t.autocompact == expected


def test_pct_override_moves_the_warning_with_it():
    t = compute_thresholds(SONNET, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    assert t.warning == 70_000 and t.error == 70_000


def test_blocking_override():
    t = compute_thresholds(SONNET, env={"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "150000"})
    assert t.blocking == 150_000
    bad = compute_thresholds(SONNET, env={"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "none"})
    assert bad.blocking == 177_000


@pytest.mark.parametrize("name", ["DISABLE_COMPACT", "DISABLE_AUTO_COMPACT"])
def test_disable_switches_turn_auto_compact_off(name: str):
    t = compute_thresholds(SONNET, env={name: "true"})
    assert not t.auto_compact_enabled and t.auto_compact_disabled_by == name
    # Without auto-compact the warning counts down to the effective window.
    assert t.warning == 160_000
    state = token_warning_state(170_000, t)
    assert not state.above_autocompact and state.above_warning
    assert state.label == "Context low (6% remaining) · Run /compact to compact & continue"


def test_disable_switch_with_falsy_value_is_ignored():
    assert compute_thresholds(SONNET, env={"DISABLE_AUTO_COMPACT": "0"}).auto_compact_enabled


def test_global_config_can_turn_auto_compact_off(tmp_path):
    (tmp_path / ".claude.json").write_text(json.dumps({"autoCompactEnabled": False}))
    config = load_global_config({"CLAUDE_CONFIG_DIR": str(tmp_path)}, str(tmp_path))
    assert config.auto_compact_enabled is False
    t = compute_thresholds(SONNET, env={}, config=config)
    assert t.auto_compact_disabled_by == "autoCompactEnabled=false"


def test_unreadable_global_config_means_defaults(tmp_path):
    (tmp_path / ".claude.json").write_text("{not json")
    config = load_global_config({"CLAUDE_CONFIG_DIR": str(tmp_path)}, str(tmp_path))
    assert config.auto_compact_enabled and config.error


def test_parse_js_float():
    assert parse_js_float(" 12.5xyz") == 12.5
    assert parse_js_float(".5") == 0.5
    assert parse_js_float("1e2") == 100
    assert parse_js_float("x1") is None
    assert parse_js_float(None) is None


# --- calculateTokenWarningState -------------------------------------------------------------


@pytest.mark.parametrize(
    ("used", "percent_left", "warning", "auto", "blocking"),
    [
        (0, 100, False, False, False),
        (146_999, 12, False, False, False),
        (147_000, 12, True, False, False),
        (157_000, 6, True, False, False),
        (158_650, 5, True, False, False),  # 8350/167000 = 5.0 → 5
        (158_566, 5, True, False, False),  # 5.05 → 5
        (158_483, 5, True, False, False),  # 5.1 → 5
        (158_734, 5, True, False, False),  # 4.95 → 5 (JS rounds half up)
        (166_999, 0, True, False, False),
        (167_000, 0, True, True, False),
        (177_000, 0, True, True, True),
        (250_000, 0, True, True, True),  # never negative
    ],
)
def test_warning_state(used: int, percent_left: int, warning: bool, auto: bool, blocking: bool):
    state = token_warning_state(used, compute_thresholds(SONNET, env={}))
    assert state.percent_left == percent_left
    assert state.above_warning is warning and state.above_error is warning
    assert state.above_autocompact is auto and state.at_blocking is blocking


def test_percent_left_rounds_half_up():
    # (167000 - 158650) / 167000 * 100 is exactly 5.0; 83.5 cases need a threshold of 200.
    t = compute_thresholds(SONNET, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "33200"}, profile=LEGACY)
    assert t.autocompact == 200
    assert token_warning_state(199, t).percent_left == 1  # 0.5 → 1, Python would give 0


def test_label_only_above_warning_and_not_when_suppressed():
    t = compute_thresholds(SONNET, env={})
    assert token_warning_state(100_000, t).label is None
    assert token_warning_state(150_000, t).label == "10% until auto-compact"
    assert token_warning_state(150_000, t, suppressed=True).label is None


# --- shouldAutoCompact and the circuit breaker ----------------------------------------------


def test_should_auto_compact_guards():
    t = compute_thresholds(SONNET, env={})
    assert should_auto_compact(170_000, t).fire
    assert not should_auto_compact(160_000, t).fire
    assert not should_auto_compact(170_000, t, query_source="compact").fire
    assert not should_auto_compact(170_000, t, query_source="session_memory").fire
    assert not should_auto_compact(170_000, t, query_source="marble_origami").fire
    assert not should_auto_compact(170_000, t, reactive_only=True).fire
    assert not should_auto_compact(170_000, t, context_collapse=True).fire
    assert not should_auto_compact(170_000, t, snip_tokens_freed=5_000).fire
    off = compute_thresholds(SONNET, env={"DISABLE_AUTO_COMPACT": "1"})
    assert not should_auto_compact(170_000, off).fire


def test_circuit_breaker_opens_after_three_failures_and_success_resets():
    t = compute_thresholds(SONNET, env={})
    tracking = AutoCompactTracking()
    for _ in range(2):
        tracking = tracking.after_failure()
        assert auto_compact_if_needed(170_000, t, tracking, env={}).fire
    tracking = tracking.after_failure()
    assert tracking.circuit_open
    decision = auto_compact_if_needed(170_000, t, tracking, env={})
    assert not decision.fire and decision.guards == ("circuit",)
    tracking = tracking.after_success()
    assert tracking.consecutive_failures == 0 and tracking.compacted
    assert auto_compact_if_needed(170_000, t, tracking, env={}).fire


def test_disable_compact_stops_auto_compact_if_needed_first():
    t = compute_thresholds(SONNET, env={})
    decision = auto_compact_if_needed(
        170_000, t, AutoCompactTracking(), env={"DISABLE_COMPACT": "yes"}
    )
    assert not decision.fire and "DISABLE_COMPACT" in decision.reason


def test_thresholds_json_is_complete():
    data = compute_thresholds(SONNET, env={}, config=GlobalConfig(path=None)).to_json()
    assert data["thresholds"] == {
        "warning": 147_000,
        "error": 147_000,
        "autocompact": 167_000,
        "blocking": 177_000,
    }
    json.dumps(data)
