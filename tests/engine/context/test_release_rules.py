"""The compaction rules that changed between releases, at the releases bisection found:
the blocking override's history, the first-reply rule, the 4/3 padding of newer models, the
windows of newer and unknown models, and how newer transcripts' attachments are estimated."""

from __future__ import annotations

import pytest

from workbench.engine.context.replay import replay_rows
from workbench.engine.context.thresholds import compute_thresholds
from workbench.engine.context.tokens import rough_tokens_for_message
from workbench.engine.profiles import profile_for
from workbench.engine.profiles.detect import ResolvedVersion

BLOCK_AT = {"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "100000"}


@pytest.mark.parametrize(
    ("version", "autocompact", "blocking"),
    [
        ("2.1.121", 167_000, 100_000),  # blocks at the override
        ("2.1.122", 100_000, 100_000),  # compacts there instead
        ("2.1.153", 167_000, 177_000),  # ignored while auto-compact is on
        ("2.1.163", 100_000, 100_000),  # compacts there again
        ("2.1.332", 100_000, 100_000),
    ],
)
def test_the_blocking_override_with_auto_compact_on(version, autocompact, blocking):
    t = compute_thresholds("claude-sonnet-4-6", env=BLOCK_AT, profile=profile_for(version))
    assert (t.autocompact, t.thresholds_json()["blocking"]) == (autocompact, blocking)


def test_the_blocking_override_with_auto_compact_off_blocks_in_every_release():
    env = {**BLOCK_AT, "DISABLE_AUTO_COMPACT": "1"}
    for version in ("2.1.88", "2.1.122", "2.1.153", "2.1.332"):
        t = compute_thresholds("claude-sonnet-4-6", env=env, profile=profile_for(version))
        assert not t.auto_compact_enabled and t.blocking == 100_000, version


@pytest.mark.parametrize(
    ("version", "opus_5_5", "unknown"),
    [
        ("2.1.88", 167_000, 167_000),  # neither known: the 200k default
        ("2.1.200", None, None),  # neither compacted by threshold
        ("2.1.250", 167_000, 167_000),  # opus-5-5 listed with 200k; unknown models too
        ("2.1.300", 967_000, 167_000),  # opus-5-5 on 1M from 2.1.285
        ("2.1.332", 967_000, 967_000),  # unknown models on 1M from 2.1.323
    ],
)
def test_windows_of_newer_and_unknown_models(version, opus_5_5, unknown):
    profile = profile_for(version)
    got = [
        compute_thresholds(m, env={}, profile=profile).thresholds_json()["autocompact"]
        for m in ("claude-opus-5-5", "claude-oracle-probe-9")
    ]
    assert got == [opus_5_5, unknown]


def test_newer_models_ask_for_their_output_limit():
    profile = profile_for("2.1.332")
    limits = {
        m: compute_thresholds(m, env={}, profile=profile).max_output_tokens
        for m in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-4-7")
    }
    assert limits == {
        "claude-opus-5-5": 128_000,
        "claude-sonnet-5-5": 128_000,
        "claude-haiku-5-5": 128_000,
        "claude-opus-4-7": 64_000,
    }
    assert profile_for("2.1.332").models.resolve_alias("haiku") == "claude-haiku-5-5"
    assert profile_for("2.1.292").models.resolve_alias("haiku") == "claude-haiku-4-5-20251001"


# --- replay ------------------------------------------------------------------------------------


def _session(model: str, usages: list[int], tool_result: str = "x" * 120) -> list[dict]:
    """A prompt, then one assistant call per usage, each followed by a small tool result."""
    rows: list[dict] = [
        {"type": "user", "uuid": "u0", "message": {"role": "user", "content": "go"}},
    ]
    for i, used in enumerate(usages):
        rows.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "tool_use", "id": f"t{i}", "name": "X", "input": {}}],
                    "usage": {"input_tokens": used, "output_tokens": 0},
                },
            }
        )
        rows.append(
            {
                "type": "user",
                "uuid": f"r{i}",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{i}", "content": tool_result}
                    ],
                },
            }
        )
    return rows


def _replay(rows: list[dict], version: str, model: str):
    profile = profile_for(version)
    claude = ResolvedVersion(version, "flag", profile)
    return replay_rows(
        enumerate(rows),
        thresholds_for=lambda m: compute_thresholds(m or model, env={}, profile=profile),
        default_model=model,
        claude=claude,
    )


def test_no_auto_compaction_follows_a_sessions_first_reply_from_2_1_153():
    rows = _session("claude-sonnet-4-6", [170_000, 170_001])
    old = _replay(rows, "2.1.152", "claude-sonnet-4-6")
    new = _replay(rows, "2.1.153", "claude-sonnet-4-6")
    assert old.turns[1].above_autocompact and old.unrecorded_fires
    assert not new.turns[1].above_autocompact and not new.unrecorded_fires
    later = _replay(_session("claude-sonnet-4-6", [1_000, 170_000, 170_001]), "2.1.153", "x")
    assert later.turns[2].above_autocompact


def test_newer_models_are_checked_with_the_estimate_padded_by_four_thirds():
    # 30 tokens of tool result after the last usage: 40 once padded.
    rows = _session("claude-opus-5-5", [1_000, 966_965, 967_001])
    padded = _replay(rows, "2.1.332", "claude-opus-5-5")
    assert padded.turns[2].estimated_before == 966_995  # what preTokens would record
    [fire] = padded.unrecorded_fires
    assert fire.turn == 2  # 966,965 + 40 reaches 967,000
    assert padded.thresholds.estimate_padding
    sonnet = _session("claude-sonnet-4-6", [1_000, 166_965, 167_001])
    assert not _replay(sonnet, "2.1.332", "claude-sonnet-4-6").unrecorded_fires
    assert not profile_for("2.1.139").models.lookup("claude-opus-5-5").row.estimate_padding
    assert profile_for("2.1.140").models.lookup("claude-opus-5-5").row.estimate_padding


def test_a_rendered_attachment_is_estimated_from_the_text_it_became():
    record = {
        "type": "attachment",
        "attachment": {"type": "total_tokens_reminder", "text": "t" * 50},
        "rendered": [{"content": "r" * 88}],
        "renderedRole": "system",
    }
    assert rough_tokens_for_message(record) == 22
    del record["rendered"]
    assert rough_tokens_for_message(record) > 22  # the attachment's JSON, without it
    snapshot = {"type": "attachment", "attachment": {"type": "prompt_snapshot"}, "rendered": []}
    assert rough_tokens_for_message(snapshot) == 0


@pytest.mark.parametrize(
    ("version", "autocompact"),
    [
        ("2.1.128", 167_000),  # not yet a model of its own: 2.1.88's opus-4 row
        ("2.1.130", 967_000),
        ("2.1.145", 167_000),
        ("2.1.200", None),
        ("2.1.217", 167_000),
        ("2.1.332", 967_000),
    ],
)
def test_a_newer_model_named_with_model_follows_the_bisected_windows(version, autocompact):
    t = compute_thresholds("claude-opus-4-7", env={}, profile=profile_for(version))
    assert t.thresholds_json()["autocompact"] == autocompact
