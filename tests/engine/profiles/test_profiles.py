"""Behaviour profiles: which rules a release gets, and the rules of spec 08's table."""

from __future__ import annotations

import pytest

from workbench.engine.context.thresholds import (
    NO_THRESHOLD,
    compute_thresholds,
    should_auto_compact,
    token_warning_state,
)
from workbench.engine.profiles import BehaviourProfile, build, newest_profile, profile_for
from workbench.engine.profiles.timeline import TIMELINE, Change, Timeline
from workbench.engine.records import field_names

CURRENT = profile_for("2.1.332")
LEGACY = profile_for("2.1.88")


# --- choosing the rules ---------------------------------------------------------------------------


def test_every_rule_belongs_to_one_family_and_every_family_is_built():
    profile_fields = set(field_names(BehaviourProfile))
    families = profile_fields - {"version", "behaviours", "uncertain", "values"}
    assert len(build.FAMILIES) == len(families)
    used = [rule for rules, _ in build.FAMILIES.values() for rule in rules]
    assert sorted(used) == sorted(TIMELINE)
    assert all(TIMELINE[r].family == f for f, (rules, _) in build.FAMILIES.items() for r in rules)


def test_changes_are_in_release_order():
    for name, rule in TIMELINE.items():
        points = [tuple(map(int, v.split("."))) for c in rule.changes for v in c[:2]]
        assert points == sorted(points), name


@pytest.mark.parametrize(
    ("version", "name", "uncertain"),
    [
        ("2.0.13", "2.1.88", False),
        ("2.1.39", "2.1.88", False),
        ("2.1.88", "2.1.88", False),
        ("2.1.332", "2.1.332", False),
        ("2.1.200", "mixed", True),  # dream and observability: not bisected
        ("2.2.0", "2.1.332", False),
    ],
)
def test_releases_get_the_rules_of_their_side_of_each_change(version, name, uncertain):
    profile = profile_for(version)
    assert profile.name == name
    assert bool(profile.uncertain) is uncertain
    if uncertain:
        assert any("not known yet" in note for note in profile.notes())


@pytest.mark.parametrize(
    ("rule", "before", "at", "value"),
    [
        ("k-suffix", "2.1.88", "2.1.89", True),
        ("window-floor", "2.1.88", "2.1.89", 100_000),
        ("first-response", "2.1.152", "2.1.153", False),
        ("no-threshold-models", "2.1.152", "2.1.153", True),
        ("reactive-compaction", "2.1.152", "2.1.153", True),
        ("partial-compaction", "2.1.152", "2.1.153", True),
        ("memory-file-format", "2.1.138", "2.1.139", True),
        ("estimate-padding", "2.1.139", "2.1.140", True),
        ("memory-prompt-shape", "2.1.153", "2.1.154", True),
        ("project-auto-memory-directory", "2.1.156", "2.1.157", True),
        ("nfd-project-folder", "2.1.159", "2.1.160", True),
        ("project-dir-name", "2.1.233", "2.1.234", True),
        ("truncation-warning-detail", "2.1.267", "2.1.268", True),
        ("index-cleaning", "2.1.283", "2.1.284", True),
    ],
)
def test_each_rule_changes_in_the_release_the_bisection_found(rule, before, at, value):
    values = dict(profile_for(before).values)
    assert values[rule] == TIMELINE[rule].initial != value
    assert dict(profile_for(at).values)[rule] == value
    assert rule not in profile_for(at).uncertain


def test_rules_with_several_changes_follow_each(monkeypatch):
    seen = [dict(profile_for(v).values)["blocking-override"] for v in ("2.1.121", "2.1.122")]
    seen += [dict(profile_for(v).values)["blocking-override"] for v in ("2.1.153", "2.1.163")]
    assert seen == ["blocks", "compacts", "ignored", "compacts"]
    defaults = [profile_for(v).models.default_model for v in ("2.1.128", "2.1.154", "2.1.280")]
    assert defaults == ["claude-sonnet-4-6", "claude-opus-4-8", "claude-opus-5-5"]


def test_a_moved_change_is_all_it_takes(monkeypatch):
    # What the oracle's bisection does: move one change; only that rule follows.
    rule = TIMELINE["k-suffix"]
    moved = Timeline(rule.family, rule.what, rule.initial, (Change("2.1.250", "2.1.251", True),))
    monkeypatch.setitem(TIMELINE, "k-suffix", moved)
    profile_for.cache_clear()
    try:
        mid = profile_for("2.1.200")
        assert mid.compact_window.suffixes is False and mid.compact_window.floor == 100_000
        assert dict(mid.behaviours)["compact-window"].startswith("as of")
        assert profile_for("2.1.251").compact_window is CURRENT.compact_window
    finally:
        profile_for.cache_clear()


def test_newer_than_observed_says_so():
    assert newest_profile().version == "2.1.332"
    assert any("newer than the newest" in note for note in profile_for("2.9.0").notes())


def test_bad_versions_are_refused():
    with pytest.raises(ValueError):
        profile_for("latest")


# --- the model table of spec 08 -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "window", "threshold"),
    [
        ("claude-opus-5-5", 1_000_000, 967_000),
        ("claude-sonnet-5-5", 1_000_000, 967_000),
        ("claude-sonnet-4-6", 200_000, 167_000),
        ("claude-opus-4-6", 200_000, 167_000),
        ("claude-sonnet-4-5-20250929", 200_000, None),
        ("claude-haiku-4-5-20251001", 200_000, None),
        ("claude-opus-4-5-20251101", 200_000, None),
        ("claude-3-5-haiku-20241022", 200_000, None),
        ("claude-sonnet-4-5[1m]", 1_000_000, None),
    ],
)
def test_current_release_models(model, window, threshold):
    t = compute_thresholds(model, env={}, profile=CURRENT)
    assert t.context_window == window
    assert t.thresholds_json()["autocompact"] == threshold
    assert t.threshold_compaction is (threshold is not None)


@pytest.mark.parametrize(
    ("model", "threshold"),
    [
        ("claude-opus-5-5", 167_000),  # unknown to 2.1.88: the 200k default
        ("claude-sonnet-4-5-20250929", 167_000),
        ("claude-3-5-haiku-20241022", 178_808),
        ("claude-sonnet-4-5[1m]", 967_000),
    ],
)
def test_old_release_models(model, threshold):
    assert compute_thresholds(model, env={}, profile=LEGACY).autocompact == threshold


def test_default_models():
    assert CURRENT.models.default_model == "claude-opus-5-5"
    assert LEGACY.models.default_model == "claude-sonnet-4-6"


def test_window_override_brings_the_old_formula_back_on_a_threshold_free_model():
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"}
    t = compute_thresholds("claude-sonnet-4-5", env=env, profile=CURRENT)
    assert t.threshold_compaction and t.auto_compact_enabled
    assert (t.autocompact, t.blocking) == (117_000, 127_000)


def test_pct_and_output_overrides_alone_do_nothing_on_a_threshold_free_model():
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "10000"}
    t = compute_thresholds("claude-sonnet-4-5", env=env, profile=CURRENT)
    assert not t.threshold_compaction
    pct = next(o for o in t.overrides if o.name == "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    assert not pct.applied and "no effect" in pct.effect


@pytest.mark.parametrize(
    ("raw", "legacy_window", "current_window"),
    [
        ("150k", 150, 150_000),  # parseInt stops at the k
        ("150K", 150, 150_000),
        ("1m", 1, 200_000),  # min(window, 1,000,000)
        ("50000", 50_000, 100_000),  # the 100,000 floor
        ("50k", 50, 100_000),
        ("120000", 120_000, 120_000),
    ],
)
def test_compact_window_parsing(raw, legacy_window, current_window):
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": raw}
    old = compute_thresholds("claude-sonnet-4-6", env=env, profile=LEGACY)
    new = compute_thresholds("claude-sonnet-4-6", env=env, profile=CURRENT)
    assert (old.context_window, new.context_window) == (legacy_window, current_window)


def test_150k_under_2_1_88_compacts_before_the_first_call_and_says_so():
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150k"}
    old = compute_thresholds("claude-sonnet-4-6", env=env, profile=LEGACY)
    assert old.autocompact < 0 and should_auto_compact(0, old).fire
    assert any("before the first call" in note for note in old.notes)
    new = compute_thresholds("claude-sonnet-4-6", env=env, profile=CURRENT)
    assert new.autocompact == 117_000


@pytest.mark.parametrize("profile", [LEGACY, CURRENT])
def test_blocking_with_auto_compact_off_and_with_the_override(profile):
    off = compute_thresholds(
        "claude-sonnet-4-6", env={"DISABLE_AUTO_COMPACT": "1"}, profile=profile
    )
    assert off.blocking_enabled and off.blocking == 177_000
    assert token_warning_state(177_000, off).at_blocking
    env = {"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "100000"}
    assert compute_thresholds("claude-sonnet-4-6", env=env, profile=profile).blocking == 100_000


def test_no_client_side_blocking_without_a_threshold():
    t = compute_thresholds("claude-sonnet-4-5", env={}, profile=CURRENT)
    assert t.auto_compact_disabled_by == NO_THRESHOLD
    state = token_warning_state(1_500_000, t)
    assert not state.at_blocking and not state.above_autocompact and state.label is None
    decision = should_auto_compact(1_500_000, t)
    assert not decision.fire and "does not compact" in decision.reason


def test_unknown_models_are_named_not_guessed_silently():
    new = compute_thresholds("claude-mystery-9", env={}, profile=CURRENT)
    assert not new.model_listed and "not a model Claude Code 2.1.332 knows" in new.notes[0]
    # From 2.1.323 a model the release does not know gets the 1M window (observed).
    assert new.context_window == 1_000_000 and new.autocompact == 967_000
    old = compute_thresholds("claude-mystery-9", env={}, profile=LEGACY)
    assert not old.model_listed and "not a model Claude Code 2.1.88 knows" in old.notes[0]
    assert old.autocompact == 167_000
    assumed = compute_thresholds("claude-3-7-sonnet-20250219", env={}, profile=CURRENT)
    assert assumed.model_listed and assumed.model_known_from == "assumed" and assumed.notes


def test_reactive_compaction_only_in_the_newer_release():
    assert CURRENT.reactive.compacts_on_prompt_too_long
    assert not LEGACY.reactive.compacts_on_prompt_too_long
    off = compute_thresholds("claude-sonnet-4-6", env={"DISABLE_COMPACT": "1"}, profile=LEGACY)
    assert any("stops with an error" in note for note in off.notes)


def test_what_could_not_be_observed_is_said():
    for feature in ("recall", "extraction", "session memory"):
        note = CURRENT.unobserved(feature)
        assert note is not None and "could not be observed" in note
        assert LEGACY.unobserved(feature) is None
