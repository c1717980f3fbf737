"""Compaction dry runs (spec 04 §9.6–9.13)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.compaction.full import (
    PTL_RETRY_MARKER,
    group_messages_by_api_round,
    plan_full_compaction,
    prompt_too_long_gap,
    strip_images_from_messages,
    truncate_head_for_ptl_retry,
)
from workbench.engine.context.compaction.microcompact import (
    CLEARED_PLACEHOLDER,
    TimeBasedConfig,
    plan_time_based_microcompact,
)
from workbench.engine.context.compaction.preview import (
    build_compact_preview,
    build_post_compact_messages,
)
from workbench.engine.context.compaction.prompt import (
    SUMMARY_SECTIONS,
    compact_prompt,
    format_compact_summary,
)
from workbench.engine.context.compaction.restore import (
    SKILL_TRUNCATED_MARKER,
    InvokedSkill,
    plan_file_restoration,
    plan_skill_restoration,
    read_file_state,
    truncate_skill,
)
from workbench.engine.context.compaction.session_compact import (
    SECTION_TRUNCATED_MARKER,
    SMCompactConfig,
    adjust_index_to_preserve_api_invariants,
    calculate_messages_to_keep_index,
    has_text_blocks,
    plan_session_memory_compaction,
    sm_compact_enabled,
    truncate_session_memory_for_compact,
)
from workbench.engine.context.compaction.survival import check_survival
from workbench.engine.context.session_memory import DEFAULT_TEMPLATE
from workbench.engine.context.thresholds import compute_thresholds
from workbench.engine.context.tokens import estimate_message_tokens, rough_token_count
from workbench.engine.context.transcript import Transcript


def user(content, uuid=None, **extra):
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}, **extra}


def asst(blocks, mid, uuid=None):
    return {"type": "assistant", "uuid": uuid, "message": {"id": mid, "content": blocks}}


def text(n: int, ch: str = "x") -> dict:
    return {"type": "text", "text": ch * n}


def tool_use(tool_id: str, name: str = "Read", **inp) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inp or {"file_path": "/f"}}


def tool_result(tool_id: str, content="ok") -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


# --- hasTextBlocks / adjustIndexToPreserveAPIInvariants ---------------------------------------


def test_has_text_blocks():
    assert has_text_blocks(asst([text(1)], "m"))
    assert not has_text_blocks(asst([tool_use("t")], "m"))
    assert has_text_blocks(user("hi"))
    assert not has_text_blocks(user(""))
    assert has_text_blocks(user([text(3)]))
    assert not has_text_blocks(user([tool_result("t")]))
    assert not has_text_blocks({"type": "system", "content": "x"})


def test_adjust_rule_a_pulls_in_the_tool_use_for_a_kept_result():
    messages = [
        user("start"),
        asst([tool_use("t1")], "m1"),  # 1
        user([tool_result("t1")]),  # 2
        asst([text(5)], "m2"),  # 3
    ]
    assert adjust_index_to_preserve_api_invariants(messages, 2) == 1


def test_adjust_rule_a_finds_every_missing_tool_use():
    messages = [
        asst([tool_use("a")], "m1"),  # 0
        asst([tool_use("b")], "m2"),  # 1
        user([tool_result("x")]),  # 2 (its tool use is nowhere)
        user([tool_result("a"), tool_result("b")]),  # 3
    ]
    assert adjust_index_to_preserve_api_invariants(messages, 3) == 0


def test_adjust_rule_b_keeps_split_records_of_one_response_together():
    messages = [
        user("q"),
        asst([{"type": "thinking", "thinking": "hmm"}], "m1"),  # 1
        asst([text(4)], "m1"),  # 2
        asst([tool_use("t1")], "m1"),  # 3
        user([tool_result("t1")]),  # 4
    ]
    # Starting at 3 keeps the tool use; rule (b) then reaches back to the thinking record.
    assert adjust_index_to_preserve_api_invariants(messages, 3) == 1
    # Starting at the result: rule (a) moves to 3, rule (b) to 1.
    assert adjust_index_to_preserve_api_invariants(messages, 4) == 1


def test_adjust_rule_b_works_on_the_range_rule_a_produced():
    messages = [
        asst([text(1)], "m0"),  # 0
        asst([tool_use("t")], "m1"),  # 1
        asst([text(1)], "m0"),  # 2: m0 enters the kept range only through rule (a)
        user([tool_result("t")]),  # 3
    ]
    assert adjust_index_to_preserve_api_invariants(messages, 3) == 0
    # Without the tool result, rule (a) does nothing and m0 at index 0 stays out.
    assert adjust_index_to_preserve_api_invariants(messages[:3] + [user("x")], 3) == 3


def test_adjust_leaves_edges_alone():
    messages = [user("a"), user("b")]
    assert adjust_index_to_preserve_api_invariants(messages, 0) == 0
    assert adjust_index_to_preserve_api_invariants(messages, 2) == 2


# --- calculateMessagesToKeepIndex -----------------------------------------------------------


def _text_messages(count: int, chars: int) -> list[dict]:
    return [user([text(chars)], uuid=f"u{i}") for i in range(count)]


def test_keep_index_enough_after_last_summarized():
    # Each message: 3000 chars → 750 → padded ceil(1000) tokens.
    messages = _text_messages(30, 3000)
    assert estimate_message_tokens([messages[0]]) == 1000
    config = SMCompactConfig()
    # 12 messages after index 17 hold 12,000 tokens and 12 text messages: keep them all.
    assert calculate_messages_to_keep_index(messages, 17, config) == 18


def test_keep_index_walks_back_to_meet_the_minimums():
    messages = _text_messages(30, 3000)
    # Resumed session: nothing kept at first; walk back until 10,000 tokens and 5 texts.
    assert calculate_messages_to_keep_index(messages, len(messages) - 1) == 20


def test_keep_index_needs_five_text_messages_too():
    big = [user([text(60_000)], uuid="big")]  # 20,000 tokens in one message
    small = [user([tool_result(f"t{i}", "r" * 40)], uuid=f"r{i}") for i in range(3)]
    messages = _text_messages(6, 40) + big + small
    index = calculate_messages_to_keep_index(messages, len(messages) - 1)
    kept = messages[index:]
    assert sum(1 for m in kept if has_text_blocks(m)) >= 5


def test_keep_index_stops_at_max_tokens():
    messages = _text_messages(10, 90_000)  # 30,000 tokens each
    assert calculate_messages_to_keep_index(messages, len(messages) - 1) == 8  # 60,000 ≥ 40,000


def test_keep_index_floor_is_after_the_last_boundary():
    messages = (
        _text_messages(10, 3000)
        + [{"type": "system", "subtype": "compact_boundary", "uuid": "b"}]
        + _text_messages(3, 40)
    )
    assert calculate_messages_to_keep_index(messages, len(messages) - 1) == 11


def test_keep_index_respects_config():
    messages = _text_messages(30, 3000)
    config = SMCompactConfig(min_tokens=2_000, min_text_block_messages=1, max_tokens=40_000)
    assert calculate_messages_to_keep_index(messages, len(messages) - 1, config) == 28


# --- truncateSessionMemoryForCompact ---------------------------------------------------------


def test_truncate_session_memory_keeps_whole_lines_within_8000_chars():
    long_body = "\n".join("y" * 99 for _ in range(100))  # 100 lines of 100 chars with newline
    content = "intro\n# Small\nshort\n# Long\n" + long_body + "\n# After\nend"
    result = truncate_session_memory_for_compact(content)
    assert result.was_truncated and result.truncated_sections == ("# Long",)
    lines = result.text.split("\n")
    assert lines[0] == "intro" and lines[1] == "# Small"
    long_start = lines.index("# Long")
    kept = lines[long_start + 1 : lines.index(SECTION_TRUNCATED_MARKER.lstrip("\n"))]
    # 80 × (99 + 1) = 8,000 ≤ 8,000; the 81st would exceed it. The marker brings a blank line.
    assert len([line for line in kept if line]) == 80 and kept[-1] == ""
    assert "# After" in lines and lines[-1] == "end"


def test_truncate_session_memory_untouched_when_within_budget():
    result = truncate_session_memory_for_compact(DEFAULT_TEMPLATE)
    assert not result.was_truncated and result.text == DEFAULT_TEMPLATE


# --- the session-memory plan ----------------------------------------------------------------


def _notes() -> str:
    return DEFAULT_TEMPLATE.replace(
        "# Current State\n", "# Current State\nFixing the retry loop in pay.py\n"
    )


def test_sm_plan_unavailable_without_notes_or_with_empty_template():
    messages = _text_messages(5, 40)
    assert plan_session_memory_compaction(messages, None).falls_back_to_full
    plan = plan_session_memory_compaction(messages, DEFAULT_TEMPLATE)
    assert not plan.available and "template" in plan.reason


def test_sm_plan_last_summarized_not_found_falls_back():
    plan = plan_session_memory_compaction(
        _text_messages(5, 40), _notes(), last_summarized_uuid="nope"
    )
    assert plan.falls_back_to_full and not plan.available


def test_sm_plan_keeps_recent_messages_and_checks_the_threshold():
    messages = _text_messages(30, 3000)
    plan = plan_session_memory_compaction(messages, _notes(), threshold=167_000)
    assert plan.available and plan.keep_start_index == 20 and plan.kept_messages == 10
    assert plan.kept_tokens == 10_000 and plan.post_compact_tokens == 10_000
    assert plan.keep_start_uuid == "u20"
    low = plan_session_memory_compaction(messages, _notes(), threshold=9_000)
    assert low.falls_back_to_full and not low.available


def test_sm_plan_with_last_summarized():
    messages = _text_messages(30, 3000)
    plan = plan_session_memory_compaction(messages, _notes(), last_summarized_uuid="u14")
    assert plan.keep_start_index == 15 and plan.kept_messages == 15


def test_sm_enable_switches():
    assert sm_compact_enabled({"ENABLE_CLAUDE_CODE_SM_COMPACT": "1"}, gates_on=False)[0]
    assert not sm_compact_enabled({"DISABLE_CLAUDE_CODE_SM_COMPACT": "1"})[0]
    assert not sm_compact_enabled({}, gates_on=False)[0]


# --- full compaction ------------------------------------------------------------------------


def test_strip_images_top_level_and_inside_tool_results():
    image = {"type": "image", "source": {"type": "base64", "data": "A" * 100}}
    doc = {"type": "document", "source": {}}
    messages = [
        user([text(3), image]),
        user([tool_result("t", [image, text(2)])]),
        asst([text(2)], "m"),
        user([doc]),
        user("plain"),
    ]
    stripped = strip_images_from_messages(messages)
    assert (stripped.images, stripped.documents) == (2, 1)
    assert stripped.messages[0]["message"]["content"][1] == {"type": "text", "text": "[image]"}
    assert stripped.messages[1]["message"]["content"][0]["content"][0]["text"] == "[image]"
    assert stripped.messages[3]["message"]["content"][0]["text"] == "[document]"
    assert stripped.messages[4] == messages[4]
    assert messages[0]["message"]["content"][1]["type"] == "image"  # originals untouched


def test_group_by_api_round():
    messages = [
        user("q"),
        asst([text(1)], "m1"),
        asst([tool_use("t")], "m1"),
        user([tool_result("t")]),
        asst([text(1)], "m2"),
        user("next"),
        asst([text(1)], "m3"),
    ]
    groups = group_messages_by_api_round(messages)
    assert [len(g) for g in groups] == [1, 3, 2, 1]


@pytest.mark.parametrize(
    ("message", "gap"),
    [
        ("Prompt is too long: 210000 tokens > 200000 maximum", 10_000),
        ("prompt is too long (205,000)", None),
        ("Prompt is too long: 199000 tokens > 200000", None),  # no positive gap
        ("Something else: 210000 tokens > 200000", None),
    ],
)
def test_prompt_too_long_gap(message: str, gap: int | None):
    assert prompt_too_long_gap(message) == gap


def _rounds(n: int, chars: int = 4000) -> list[dict]:
    out = [user("start")]
    for i in range(n):
        out.append(asst([text(chars)], f"m{i}"))
        out.append(user([text(40)]))
    return out


def test_ptl_truncation_with_a_gap_drops_enough_rounds():
    messages = _rounds(10)  # round 0 = preamble (tiny); each later round ≈ 1,010 tokens
    cut = truncate_head_for_ptl_retry(messages, 2_500)
    assert cut is not None
    assert cut.dropped_groups == 4 and cut.dropped_tokens >= 2_500
    assert cut.marker_prepended
    assert cut.messages[0]["message"]["content"] == PTL_RETRY_MARKER


def test_ptl_truncation_without_a_gap_drops_a_fifth():
    cut = truncate_head_for_ptl_retry(_rounds(9), None)  # 10 groups
    assert cut is not None and cut.dropped_groups == 2


def test_ptl_truncation_never_drops_everything_and_needs_two_groups():
    cut = truncate_head_for_ptl_retry(_rounds(3), 10**9)
    assert cut is not None and cut.dropped_groups == 3  # len(groups) - 1
    assert truncate_head_for_ptl_retry([user("only")], 10) is None


def test_ptl_truncation_drops_an_existing_marker_first():
    first = truncate_head_for_ptl_retry(_rounds(5), 1_500)
    assert first is not None
    again = truncate_head_for_ptl_retry(first.messages, None)
    assert again is not None
    assert again.groups == first.groups - first.dropped_groups


def test_full_plan_request_size_and_max_output():
    messages = [user([text(4000), {"type": "image", "source": {}}]), asst([text(400)], "m")]
    plan = plan_full_compaction(messages, model_max_output=64_000, include_request=True)
    prompt_tokens = rough_token_count(compact_prompt())
    assert plan.images_stripped == 1
    assert plan.request_tokens == 1000 + 2 + 100 + prompt_tokens  # "[image]" → 2 tokens
    assert plan.max_output_tokens == 20_000
    assert plan.request and plan.request["messages"][-1]["role"] == "user"
    assert plan_full_compaction(messages, model_max_output=8_192).max_output_tokens == 8_192


def test_compact_prompt_names_the_nine_sections_in_our_words():
    prompt = compact_prompt("Focus on the tests")
    for name in SUMMARY_SECTIONS:
        assert name in prompt
    assert prompt.index("Additional Instructions:\nFocus on the tests") > 0
    assert "<analysis>" in prompt and "<summary>" in prompt
    assert "CRITICAL: Respond with TEXT ONLY" not in prompt


def test_format_compact_summary():
    raw = "<analysis>thinking</analysis>\n\n\n<summary>\n  1. Intent\n\n\n\n2. More  \n</summary>"
    assert format_compact_summary(raw) == "Summary:\n1. Intent\n\n2. More"


# --- microcompaction ------------------------------------------------------------------------


def _tool_session(n: int) -> tuple[list[dict], datetime]:
    b = SessionBuilder(seed=4)
    b.prompt("go")
    for i in range(n):
        b.tool_call(
            "Read" if i % 2 else "Bash", {"command": f"c{i}", "file_path": f"/f{i}"}, "r" * 400
        )
    b.tool_call("Task", {"prompt": "x"}, "t" * 400)  # not compactable
    b.reply("done")
    return b.entries, b.clock


def test_time_based_microcompact_keeps_the_last_five():
    entries, last = _tool_session(8)
    plan = plan_time_based_microcompact(
        entries, now=last + timedelta(minutes=90), config=TimeBasedConfig(enabled=True)
    )
    assert plan.compactable_tool_uses == 8 and len(plan.kept_tool_use_ids) == 5
    assert plan.tool_results_cleared == 3 and plan.tokens_saved == 300
    assert plan.triggers_now


def test_time_based_microcompact_conditions():
    entries, last = _tool_session(8)
    off = plan_time_based_microcompact(entries, now=last + timedelta(hours=2))
    assert not off.triggers_now and off.tool_results_cleared == 3  # preview still shows it
    on = TimeBasedConfig(enabled=True)
    soon = plan_time_based_microcompact(entries, now=last + timedelta(minutes=10), config=on)
    assert not soon.triggers_now and soon.gap_minutes is not None
    sub = plan_time_based_microcompact(
        entries, now=last + timedelta(hours=2), config=on, query_source="agent:sub"
    )
    assert not sub.triggers_now
    keep_zero = TimeBasedConfig(enabled=True, keep_recent=0)  # max(1, keepRecent)
    assert (
        len(plan_time_based_microcompact(entries, now=last, config=keep_zero).kept_tool_use_ids)
        == 1
    )


def test_time_based_microcompact_skips_already_cleared():
    entries, last = _tool_session(7)
    first_result = next(
        e for e in entries if e["type"] == "user" and isinstance(e["message"]["content"], list)
    )
    first_result["message"]["content"][0]["content"] = CLEARED_PLACEHOLDER
    plan = plan_time_based_microcompact(entries, now=last, config=TimeBasedConfig(enabled=True))
    assert plan.already_cleared == 1 and plan.tool_results_cleared == 1


# --- restoration ----------------------------------------------------------------------------


def _reads(tmp_path, count: int, size: int = 400) -> list[dict]:
    b = SessionBuilder(seed=6)
    b.prompt("read things")
    for i in range(count):
        path = tmp_path / f"file{i}.py"
        path.write_text("x" * size, encoding="utf-8")
        b.tool_call("Read", {"file_path": str(path)}, f"     1→{'x' * size}")
    return b.entries


def test_file_restoration_picks_five_newest_within_budget(tmp_path):
    entries = _reads(tmp_path, 7)
    state = read_file_state(entries)
    assert len(state) == 7
    plan = plan_file_restoration(state)
    restored = [f.path for f in plan.restored]
    assert restored == [str(tmp_path / f"file{i}.py") for i in (6, 5, 4, 3, 2)]
    assert all(f.source == "disk" and f.kind == "file" for f in plan.restored)
    assert len(plan.skipped) == 2


def test_file_restoration_exclusions(tmp_path):
    entries = _reads(tmp_path, 3)
    state = read_file_state(entries)
    kept = [e for e in entries if e["type"] == "assistant"][-1:]  # the last Read stays visible
    plan = plan_file_restoration(
        state, kept_messages=kept, excluded_paths=[str(tmp_path / "file0.py")]
    )
    assert [f.path for f in plan.restored] == [str(tmp_path / "file1.py")]
    reasons = dict(plan.skipped)
    assert "memory file" in reasons[str(tmp_path / "file0.py")]
    assert "visible" in reasons[str(tmp_path / "file2.py")]


def test_file_restoration_big_files_become_references_and_budget_applies(tmp_path):
    entries = _reads(tmp_path, 5, size=60_000)  # 15,000 tokens each → references
    plan = plan_file_restoration(read_file_state(entries))
    assert all(f.kind == "reference" and f.included for f in plan.files)
    entries = _reads(tmp_path, 5, size=19_000)  # 4,750 tokens each; JSON pushes each past 4,750
    plan = plan_file_restoration(read_file_state(entries))
    assert all(f.kind == "file" for f in plan.files)
    assert plan.total_tokens <= 50_000


def test_file_restoration_falls_back_to_the_transcript_when_the_file_is_gone(tmp_path):
    entries = _reads(tmp_path, 1)
    (tmp_path / "file0.py").unlink()
    [restored] = plan_file_restoration(read_file_state(entries)).restored
    assert restored.source == "transcript"


def test_skill_restoration_truncates_and_budgets():
    long = "s" * 30_000  # 7,500 tokens
    text_, truncated = truncate_skill(long)
    assert truncated and text_.endswith(SKILL_TRUNCATED_MARKER)
    assert len(text_) == 20_000
    skills = [
        InvokedSkill(f"k{i}", None, f"2026-01-0{i + 1}T00:00:00.000Z", long) for i in range(6)
    ]
    plan = plan_skill_restoration(skills)
    assert [s.name for s in plan if s.included] == ["k5", "k4", "k3", "k2", "k1"]
    assert not plan[-1].included


# --- survival -------------------------------------------------------------------------------


def test_survival_lists_facts_and_what_a_summary_lost():
    messages = [
        user("Please fix `retry_budget` in src/payments/client.py; it fails after 3,500 ms."),
        asst([text(0)], "m1"),
        asst([tool_use("t1", "Bash", command="pytest tests/test_client.py -k retry")], "m1"),
        asst([text(0)], "m2"),
        asst([{"type": "text", "text": "PaymentClient.retry() now caps at 42 attempts."}], "m3"),
    ]
    report = check_survival(messages, "Fixed src/payments/client.py; cap is 42 attempts.")
    values = {k: [i.value for i in getattr(report, k)] for k in ("paths", "commands", "numbers")}
    assert "src/payments/client.py" in values["paths"]
    assert values["commands"] == ["pytest tests/test_client.py -k retry"]
    assert "3,500" in values["numbers"] and "42" in values["numbers"]
    identifiers = [i.value for i in report.identifiers]
    assert "retry_budget" in identifiers and "PaymentClient" in identifiers
    lost = report.lost()
    assert "3,500" in lost["numbers"] and "42" not in lost["numbers"]
    assert "pytest tests/test_client.py -k retry" in lost["commands"]
    assert "src/payments/client.py" not in lost["paths"]


def test_survival_without_summary_marks_nothing():
    report = check_survival([user("see /etc/hosts and 8080")])
    assert all(i.kept is None for i in report.paths + report.numbers)
    assert "lost" not in report.to_json()


# --- buildPostCompactMessages and the whole preview -------------------------------------------


def test_post_compact_order():
    assert build_post_compact_messages("B", ["S"], ["K1", "K2"], ["A"], ["H"]) == [
        "B",
        "S",
        "K1",
        "K2",
        "A",
        "H",
    ]


def test_preview_on_a_generated_session(tmp_path):
    b = SessionBuilder(seed=8, system_prompt_tokens=20_000)
    b.prompt("Make the importer idempotent")
    for i in range(40):
        b.tool_call("Read", {"file_path": f"/repo/importer/step_{i}.py"}, "line\n" * 3900)
        b.reply(f"Step {i} reviewed.")
    messages = Transcript.from_dicts(b.entries).current_messages()
    thresholds = compute_thresholds("claude-sonnet-4-6", env={})
    preview = build_compact_preview(
        messages,
        thresholds=thresholds,
        env={},
        notes=_notes(),
        notes_path="/n/summary.md",
        now=b.clock + timedelta(minutes=5),
        read_disk=False,
    )
    data = preview.to_json()
    for key in (
        "pre_tokens",
        "threshold",
        "would_autocompact",
        "session_memory",
        "full",
        "microcompact",
        "restored_files",
        "survival",
    ):
        assert key in data
    for key in (
        "available",
        "reason",
        "keep_start_uuid",
        "kept_messages",
        "kept_tokens",
        "post_compact_tokens",
        "falls_back_to_full",
        "truncated_sections",
    ):
        assert key in data["session_memory"]
    assert {"summarized_messages", "request_tokens", "images_stripped"} <= set(data["full"])
    assert {"tool_results_cleared", "tokens_saved"} <= set(data["microcompact"])
    assert {"paths", "commands", "numbers"} <= set(data["survival"])
    assert preview.chosen == "session_memory"
    assert [p.part for p in preview.layout] == [
        "boundary",
        "summary",
        "kept",
        "attachments",
        "hook_results",
    ]
    assert len(data["restored_files"]) == 5
    assert preview.pre_tokens > thresholds.autocompact and preview.would_autocompact
    assert math.isfinite(preview.full.request_tokens)


def test_preview_on_the_spotter_session(shared_transcripts):
    path = next((shared_transcripts / "spotter").glob("*.jsonl"))
    t = Transcript.load(path)
    before = t.messages[: t.last_boundary_index]
    thresholds = compute_thresholds("claude-opus-4-6", env={})
    preview = build_compact_preview(
        before,
        thresholds=thresholds,
        env={},
        now=datetime(2026, 2, 12, 21, 0, tzinfo=UTC),
        read_disk=False,
        summary=t.messages[t.last_boundary_index + 1].content,
        summary_source="recorded summary",
    )
    assert preview.would_autocompact and preview.chosen == "full"
    assert preview.pre_tokens == 169_066
    assert preview.survival.summary_given and preview.survival.paths
