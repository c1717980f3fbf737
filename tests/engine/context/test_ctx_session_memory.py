"""Session memory, read side (spec 02 §5)."""

from __future__ import annotations

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.session_memory import (
    DEFAULT_TEMPLATE,
    MAX_SECTION_LENGTH,
    SECTION_HEADERS,
    TriggerConfig,
    analyze_section_sizes,
    evaluate_trigger,
    is_session_memory_empty,
    load_custom_prompt,
    load_custom_template,
    oversized_sections,
    read_session_memory,
    section_sizes,
    substitute_variables,
)


def test_template_has_the_ten_sections_and_starts_with_a_newline():
    assert DEFAULT_TEMPLATE.startswith("\n# Session Title\n_")
    assert SECTION_HEADERS == (
        "# Session Title",
        "# Current State",
        "# Task specification",
        "# Files and Functions",
        "# Workflow",
        "# Errors & Corrections",
        "# Codebase and System Documentation",
        "# Learnings",
        "# Key results",
        "# Worklog",
    )
    lines = DEFAULT_TEMPLATE.split("\n")
    for header in SECTION_HEADERS:
        following = lines[lines.index(header) + 1]
        assert following.startswith("_") and following.endswith("_")


def test_empty_check_trims_both_sides():
    assert is_session_memory_empty(DEFAULT_TEMPLATE.strip() + "\n\n  ")
    assert not is_session_memory_empty(DEFAULT_TEMPLATE + "\nsomething")
    assert is_session_memory_empty("custom", template="  custom\n")


def test_substitute_variables_single_pass_no_backreferences():
    text = "Notes at {{notesPath}}:\n{{currentNotes}}\n{{unknown}} {{ spaced }}"
    values = {"notesPath": "/x/summary.md", "currentNotes": "uses {{notesPath}} and \\1 and $&"}
    out = substitute_variables(text, values)
    assert out == (
        "Notes at /x/summary.md:\nuses {{notesPath}} and \\1 and $&\n{{unknown}} {{ spaced }}"
    )


def test_substitute_variables_ascii_word_names_only():
    assert substitute_variables("{{café}}", {"café": "x"}) == "{{café}}"


def test_analyze_section_sizes_matches_the_reference_rules():
    content = (
        "preamble line\n"
        "# A\n" + "a" * 400 + "\n"  # 100 tokens
        "# Empty\n"  # followed directly by a header: no body lines, left out
        "# B\n\n   " + "b" * 40 + "   \n\n"  # trimmed: 10 tokens
        "# A\n" + "c" * 8  # a repeated header keeps its first position, last value
    )
    assert analyze_section_sizes(content) == {"# A": 2, "# B": 10}
    assert list(analyze_section_sizes(content)) == ["# A", "# B"]


def test_oversized_sections_sorted_largest_first():
    content = "# Small\nx\n# Big\n" + "y" * 12_000 + "\n# Bigger\n" + "z" * 20_000 + "\n"
    assert oversized_sections(content) == [("# Bigger", 5000), ("# Big", 3000)]


def test_section_sizes_for_the_ui_include_empty_sections():
    sections = section_sizes(DEFAULT_TEMPLATE)
    assert [s.header for s in sections] == list(SECTION_HEADERS)
    assert all(s.is_template_only and not s.over_limit for s in sections)
    big = DEFAULT_TEMPLATE.replace("# Worklog\n", "# Worklog\n" + "w" * 8_004 + "\n")
    worklog = section_sizes(big)[-1]
    assert worklog.tokens > MAX_SECTION_LENGTH and worklog.over_limit


def test_custom_template_and_prompt_fall_back_on_errors(tmp_path):
    home = tmp_path / "claude"
    assert load_custom_template(str(home)).source == "default"
    folder = home / "session-memory" / "config"
    folder.mkdir(parents=True)
    (folder / "template.md").write_text("# Mine\n_desc_\n", encoding="utf-8")
    loaded = load_custom_template(str(home))
    assert loaded.source == "custom" and loaded.text == "# Mine\n_desc_\n"
    (folder / "prompt.md").write_bytes(b"\xff\xfe bad utf-8")
    prompt = load_custom_prompt(str(home))
    assert prompt.source == "default" and prompt.error
    (folder / "prompt.md").unlink()
    (folder / "prompt.md").mkdir()  # a folder where a file should be
    assert load_custom_prompt(str(home)).source == "default"


def test_read_session_memory_report(tmp_path):
    notes = tmp_path / "summary.md"
    report = read_session_memory(str(notes), str(tmp_path))
    assert not report.exists and report.is_empty and report.sections == ()
    notes.write_text(DEFAULT_TEMPLATE, encoding="utf-8")
    assert read_session_memory(str(notes), str(tmp_path)).is_empty
    notes.write_text(DEFAULT_TEMPLATE + "\n" + "x" * 50_000, encoding="utf-8")
    report = read_session_memory(str(notes), str(tmp_path))
    assert not report.is_empty and report.over_total and report.total_tokens > 12_000
    data = report.to_json()
    assert {"path", "exists", "is_empty", "template_source", "sections", "total_tokens"} <= set(
        data
    )
    assert data["over_total"] is True


def test_custom_template_changes_the_empty_check(tmp_path):
    folder = tmp_path / "session-memory" / "config"
    folder.mkdir(parents=True)
    (folder / "template.md").write_text("# Mine\n", encoding="utf-8")
    notes = tmp_path / "summary.md"
    notes.write_text("\n# Mine\n\n", encoding="utf-8")
    report = read_session_memory(str(notes), str(tmp_path))
    assert report.is_empty and report.template_source == "custom"


# --- the update trigger ---------------------------------------------------------------------


def _long_session() -> SessionBuilder:
    b = SessionBuilder(seed=11, system_prompt_tokens=2_000)
    b.prompt("Investigate the slow report endpoint")
    for i in range(12):
        b.tool_call("Read", {"file_path": f"/repo/app/report_{i}.py"}, "code line\n" * 400)
    b.reply("The N+1 query in report_7.py is the cause.")
    for i in range(4):
        b.tool_call("Bash", {"command": f"pytest tests/test_{i}.py"}, "ok\n" * 800)
    b.reply("Fixed and tested.")
    return b


def test_trigger_needs_init_tokens_then_token_and_tool_thresholds():
    b = _long_session()
    report = evaluate_trigger(b.entries)
    assert report.initialized and report.points
    first = report.points[0]
    assert first.tokens >= 10_000
    for earlier, later in zip(report.points, report.points[1:], strict=False):
        assert later.tokens - earlier.tokens >= 5_000
    for point in report.points:
        assert point.tool_calls_since_last >= 3 or not point.last_turn_has_tools


def test_trigger_never_fires_below_the_init_threshold():
    b = SessionBuilder(seed=2, system_prompt_tokens=1_000)
    b.prompt("hi")
    b.reply("hello")
    assert evaluate_trigger(b.entries).points == ()
    assert not evaluate_trigger(b.entries).initialized


def test_trigger_config_changes_the_outcome():
    b = _long_session()
    strict = TriggerConfig(minimum_tokens_between_update=10**9)
    assert evaluate_trigger(b.entries, strict).points == ()


def test_last_summarized_only_moves_after_a_turn_without_tools():
    b = _long_session()
    report = evaluate_trigger(b.entries)
    tool_free = [p for p in report.points if not p.last_turn_has_tools]
    assert report.last_summarized_uuid == (tool_free[-1].uuid if tool_free else None)
