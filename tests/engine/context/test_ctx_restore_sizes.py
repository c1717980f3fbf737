"""Restored files are sized as Claude Code re-reads them (spec 04 §9.12 step 3): the whole
file as it is now, or, when it is not on this machine, the fullest text the transcript holds,
never a last read of ten lines; and each figure says where it came from."""

from __future__ import annotations

from pathlib import Path

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.compaction.restore import (
    FileRestorationPlan,
    RestoredFile,
    plan_file_restoration,
    read_file_state,
)
from workbench.engine.context.tokens import rough_token_count_for_file_type

GONE = "/nowhere/src/billing.py"
"""A path that is not on this machine: the transcript is all there is."""
LINES = [f"def rule_{i}(amount):  # rounding rule {i}\n" for i in range(200)]
WHOLE = "".join(LINES)


def read(b: SessionBuilder, path: str, text: str, offset: int | None = None, limit=None) -> None:
    """A Read as Claude Code records it: the numbered lines, and the range in the result."""
    lines = text.splitlines(keepends=True)
    start = offset or 1
    shown = lines[start - 1 : start - 1 + limit] if limit else lines[start - 1 :]
    tool_input: dict = {"file_path": path}
    if offset is not None:
        tool_input |= {"offset": offset, "limit": limit}
    numbered = "".join(f"{start + i:>6}→{line}" for i, line in enumerate(shown))
    file = {
        "filePath": path,
        "content": "".join(shown),
        "numLines": len(shown),
        "startLine": start,
        "totalLines": len(lines),
    }
    b.tool_call("Read", tool_input, numbered, tool_use_result={"type": "text", "file": file})


def edit(b: SessionBuilder, path: str, original: str, old: str, new: str, **extra) -> None:
    b.tool_call(
        "Edit",
        {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
        f"The file {path} has been updated.",
        tool_use_result={
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        },
        **extra,
    )


def plan_of(b: SessionBuilder, **options) -> FileRestorationPlan:
    return plan_file_restoration(read_file_state(b.entries), **options)


def only(b: SessionBuilder, **options) -> RestoredFile:
    [restored] = plan_of(b, **options).restored
    return restored


def tokens_of(text: str) -> int:
    return rough_token_count_for_file_type(text, ".py")


def session(**options) -> SessionBuilder:
    b = SessionBuilder(seed=12, **options)
    b.prompt("tidy the billing rules")
    return b


def test_a_partial_last_read_is_sized_from_the_earlier_full_read():
    b = session()
    read(b, GONE, WHOLE)
    read(b, GONE, WHOLE, offset=22, limit=10)
    restored = only(b)
    assert (restored.size_source, restored.source) == ("full-read", "transcript")
    assert restored.file_tokens == tokens_of(WHOLE)
    assert restored.how_attached == (
        f"in full (≈{restored.tokens:,} tokens, sized from its last full read)"
    )


def test_an_edit_sizes_the_file_as_it_left_it():
    b = session()
    read(b, GONE, WHOLE)
    after = WHOLE.replace(LINES[5], LINES[5] + "    return round(amount, 2)\n" * 40, 1)
    edit(b, GONE, WHOLE, LINES[5], LINES[5] + "    return round(amount, 2)\n" * 40)
    read(b, GONE, after, offset=10, limit=8)
    restored = only(b)
    assert restored.size_source == "edit"
    assert restored.file_tokens == tokens_of(after) > tokens_of(WHOLE)
    assert restored.size_note == "sized from its last edit"


def test_a_write_and_a_multi_edit_give_the_whole_file():
    b = session()
    b.tool_call(
        "Write",
        {"file_path": GONE, "content": WHOLE},
        f"File created successfully at: {GONE}",
        tool_use_result={"type": "create", "filePath": GONE, "content": WHOLE},
    )
    read(b, GONE, WHOLE, offset=1, limit=3)
    assert (only(b).size_source, only(b).file_tokens) == ("edit", tokens_of(WHOLE))
    first = LINES[0].replace("amount", "amount_in_cents")
    b.tool_call(
        "MultiEdit",
        {
            "file_path": GONE,
            "edits": [
                {"old_string": "amount", "new_string": "amount_in_cents", "replace_all": True},
                {"old_string": first, "new_string": ""},
            ],
        },
        "Applied 2 edits.",
        tool_use_result={"filePath": GONE, "originalFile": WHOLE, "structuredPatch": []},
    )
    read(b, GONE, WHOLE, offset=1, limit=3)
    expected = WHOLE.replace("amount", "amount_in_cents").replace(first, "", 1)
    assert (only(b).size_source, only(b).file_tokens) == ("edit", tokens_of(expected))


def test_a_failed_edit_or_a_partial_read_never_replaces_a_whole_text():
    b = session()
    read(b, GONE, WHOLE)
    edit(b, GONE, WHOLE, "no such text", "x" * 9_000, is_error=True)
    read(b, GONE, WHOLE, offset=1, limit=199)  # all but one line: still a partial read
    restored = only(b)
    assert (restored.size_source, restored.file_tokens) == ("full-read", tokens_of(WHOLE))


def test_only_partial_reads_take_the_largest_and_claim_no_full_file():
    b = session()
    read(b, GONE, WHOLE, offset=100, limit=60)
    read(b, GONE, WHOLE, offset=22, limit=10)
    restored = only(b)
    assert restored.size_source == "partial-read"
    assert restored.file_tokens == tokens_of("".join(LINES[99:159]))
    assert restored.how_attached == (
        f"(≈{restored.tokens:,} tokens, sized from a partial read; the whole file is larger)"
    )
    assert "in full" not in restored.how_attached


def test_the_file_on_disk_wins_and_a_relative_path_follows_the_session_cwd(tmp_path: Path):
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    now = WHOLE + "# added after the session\n" * 30
    (project / "src" / "billing.py").write_text(now, encoding="utf-8")
    b = session(cwd=str(project))
    read(b, "src/billing.py", WHOLE)
    read(b, "src/billing.py", WHOLE, offset=22, limit=10)
    restored = only(b)  # no project root given: the session's cwd places the file
    assert (restored.size_source, restored.source) == ("disk", "disk")
    assert restored.file_tokens == tokens_of(now)
    assert restored.size_note == ""
    assert restored.how_attached == f"in full ({restored.tokens:,} tokens)"
    assert only(b, read_disk=False).size_source == "full-read"


def test_the_json_names_the_size_source():
    b = session()
    read(b, GONE, WHOLE, offset=5, limit=5)
    [entry] = plan_of(b).to_json()["files"]
    assert entry["size_source"] == "partial-read" and entry["source"] == "transcript"
