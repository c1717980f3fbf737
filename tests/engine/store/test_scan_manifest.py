"""Scanning the memory folder and the exact manifest line format."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.engine.memories.scan import (
    MAX_MEMORY_FILES,
    MemoryHeader,
    MemoryScanner,
    format_manifest,
    manifest_line,
)


def _write(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_scan_is_recursive_newest_first_and_skips_every_memory_md(tmp_path: Path):
    _write(tmp_path / "a.md", "---\ndescription: A\ntype: user\n---\n", 1_000)
    _write(tmp_path / "team" / "b.md", "---\ndescription: B\n---\n", 3_000)
    _write(tmp_path / "logs" / "2026" / "01" / "2026-01-01.md", "- x\n", 2_000)
    _write(tmp_path / "MEMORY.md", "- index\n", 9_000)
    _write(tmp_path / "team" / "MEMORY.md", "- index\n", 9_000)
    _write(tmp_path / "notes.txt", "not markdown", 9_000)
    _write(tmp_path / ".a.md.1234.wbtmp", "half written", 9_000)
    names = [h.filename for h in MemoryScanner(tmp_path).scan()]
    assert names == ["team/b.md", "logs/2026/01/2026-01-01.md", "a.md"]


def test_cap_of_200_applies_after_sorting_all_files(tmp_path: Path):
    for i in range(MAX_MEMORY_FILES + 20):
        _write(tmp_path / f"m{i:03d}.md", "x\n", 1_000_000 + i)
    headers = MemoryScanner(tmp_path).scan()
    assert len(headers) == MAX_MEMORY_FILES
    assert headers[0].filename == "m219.md" and headers[-1].filename == "m020.md"


def test_unreadable_files_are_dropped(tmp_path: Path):
    _write(tmp_path / "ok.md", "x\n", 1_000)
    os.symlink(tmp_path / "missing-target.md", tmp_path / "dangling.md")
    assert [h.filename for h in MemoryScanner(tmp_path).scan()] == ["ok.md"]


def test_manifest_line_formats():
    typed = MemoryHeader("a/b.md", "/m/a/b.md", 1772713496789.9, "desc", "feedback")
    assert manifest_line(typed) == "- [feedback] a/b.md (2026-03-05T12:24:56.789Z): desc"
    untyped = MemoryHeader("c.md", "/m/c.md", 0, None, None)
    assert manifest_line(untyped) == "- c.md (1970-01-01T00:00:00.000Z)"
    assert format_manifest([typed, untyped]).split("\n") == [
        manifest_line(typed),
        manifest_line(untyped),
    ]


def test_rescan_reads_only_the_changed_file(tmp_path: Path):
    for i in range(50):
        _write(tmp_path / f"m{i}.md", f"---\ndescription: d{i}\n---\n", 1_000 + i)
    scanner = MemoryScanner(tmp_path)
    scanner.scan_all()
    assert scanner.last_reads == 50
    scanner.scan_all()
    assert scanner.last_reads == 0
    _write(tmp_path / "m7.md", "---\ndescription: changed\n---\n", 5_000)
    headers = scanner.scan_all()
    assert scanner.last_reads == 1
    assert headers[0].filename == "m7.md" and headers[0].description == "changed"


def test_missing_folder_scans_empty(tmp_path: Path):
    assert MemoryScanner(tmp_path / "nope").scan() == []
