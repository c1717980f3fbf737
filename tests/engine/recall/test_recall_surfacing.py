"""What gets injected: 200 lines / 4,096 bytes per file, 5 per turn, 60 KB per session."""

from __future__ import annotations

from pathlib import Path

from workbench.engine.jsutil import js_len
from workbench.engine.recall.surfacing import (
    MAX_MEMORY_BYTES,
    MAX_SESSION_BYTES,
    read_for_surfacing,
    surface,
)

NOW = 1_800_000_000_000.0


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def test_short_file_is_kept_whole(tmp_path: Path):
    path = _write(tmp_path, "a.md", "\ufeffline one\r\nline two\n")
    read = read_for_surfacing(path)
    assert read.content == "line one\nline two" and read.truncated is None
    assert read.kept_lines == read.total_lines == 2


def test_more_than_200_lines_is_cut_with_a_notice(tmp_path: Path):
    path = _write(tmp_path, "long.md", "".join(f"l{i}\n" for i in range(250)))
    read = read_for_surfacing(path)
    assert read.truncated == "lines" and read.kept_lines == 200 and read.total_lines == 250
    kept, notice = read.content.split("\n\n> ", 1)
    assert kept.split("\n")[-1] == "l199"
    assert "200 lines" in notice and path in notice and "Read tool" in notice


def test_exactly_200_lines_is_not_cut(tmp_path: Path):
    path = _write(tmp_path, "ok.md", "".join(f"l{i}\n" for i in range(200)))
    assert read_for_surfacing(path).truncated is None


def test_byte_limit_keeps_whole_lines_only(tmp_path: Path):
    line = "é" * 99  # 198 bytes of UTF-8, 99 characters
    path = _write(tmp_path, "wide.md", "\n".join([line] * 40))
    read = read_for_surfacing(path)
    assert read.truncated == "bytes"
    kept = read.content.split("\n\n> ", 1)[0].split("\n")
    assert all(k == line for k in kept)  # never half a line
    assert read.kept_bytes <= MAX_MEMORY_BYTES < read.kept_bytes + 199
    assert "4096-byte" in read.content


def test_exact_fit_at_the_byte_limit(tmp_path: Path):
    # 4096 bytes including the newline separators: 4 lines of 1023 bytes + 3 newlines = 4095
    text = "\n".join(["x" * 1023] * 3 + ["x" * 1024])
    path = _write(tmp_path, "fit.md", text)
    assert len(text.encode()) == MAX_MEMORY_BYTES
    assert read_for_surfacing(path).truncated is None
    path2 = _write(tmp_path, "over.md", text + "x")
    assert read_for_surfacing(path2).truncated == "bytes"


def test_surface_caps_per_turn_and_counts_js_length(tmp_path: Path):
    picks = []
    for i in range(7):
        p = _write(tmp_path, f"m{i}.md", f"memory {i} 😀\n")
        picks.append((f"m{i}.md", p, NOW - i * 86_400_000))
    view = surface(picks, now=NOW, session_bytes_before=100, query="two words")
    assert len(view.memories) == 5 and view.would_inject
    assert view.memories[0].length == js_len("memory 0 😀") == 11  # the emoji is 2 units
    assert view.turn_bytes == sum(m.length for m in view.memories)
    assert view.session_bytes_after == 100 + view.turn_bytes
    assert view.memories[0].header.startswith("Memory (saved today)")
    assert view.memories[3].header.startswith("This memory was saved 3 days ago")
    injected = view.memories[0].injected
    assert injected.startswith("<system-reminder>\nMemory (saved today): ")
    assert injected.endswith("memory 0 😀\n</system-reminder>")


def test_session_budget_and_single_word_prompts_stop_recall(tmp_path: Path):
    p = _write(tmp_path, "m.md", "x\n")
    picks = [("m.md", p, NOW)]
    spent = surface(picks, now=NOW, session_bytes_before=MAX_SESSION_BYTES, query="a b")
    assert not spent.would_inject and "61,440" in (spent.skipped_reason or "")
    assert spent.session_bytes_after == MAX_SESSION_BYTES
    under = surface(picks, now=NOW, session_bytes_before=MAX_SESSION_BYTES - 1, query="a b")
    assert under.would_inject
    one_word = surface(picks, now=NOW, query="deploy")
    assert not one_word.would_inject and "single-word" in (one_word.skipped_reason or "")
