"""Surfacing reads only the start of a memory, however big the file (issue 10): the kept
text and the file's line and byte counts are what a whole read would give."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from workbench.engine.recall.surfacing import read_for_surfacing


def test_a_huge_memory_is_surfaced_from_its_start(tmp_path: Path):
    huge = tmp_path / "huge.md"
    line = b"a line of a long memory that goes on and on\n"
    with open(huge, "wb") as handle:
        handle.write(line * 2000)
        handle.write(b"one enormous last line without an end " * 1000)
        handle.truncate(200 * 1024 * 1024)  # sparse: the rest reads as NUL bytes
    tracemalloc.start()
    read = read_for_surfacing(str(huge))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # not the 200 MB a whole read would hold
    assert read.truncated == "bytes" and read.kept_lines == 93
    assert read.total_bytes == 200 * 1024 * 1024 and read.total_lines == 2001
    small = read_for_surfacing(str(huge), huge.read_bytes()[: 1 << 20])
    assert read.content == small.content
    # Files under the read size take the plain path and read as they always did.
    for text in (b"", b"one line", b"two\nlines\n", b"\xef\xbb\xbf---\r\nx: y\r\n---\r\nbody\r\n"):
        path = tmp_path / "m.md"
        path.write_bytes(text)
        assert read_for_surfacing(str(path)) == read_for_surfacing(str(path), text)
