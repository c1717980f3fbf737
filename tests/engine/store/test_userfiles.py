"""Bounded, regular-only reading of user files (engine/userfiles.py)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from hostile import deep_json, link_to_dev_zero, make_fifo, make_loop, make_socket
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.errors import UserInputError
from workbench.engine.userfiles import (
    JsonInputError,
    UnreadableFileError,
    iter_lines,
    json_too_deep,
    load_json,
    open_stream,
    read_bytes,
    read_start,
    read_stream,
)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (make_fifo, "named pipe (FIFO)"),
        (make_socket, "a socket"),
        (link_to_dev_zero, "character device"),
        (make_loop, "loops back on itself"),
        (lambda p: (p.mkdir(), p)[1], "a folder"),
    ],
    ids=["fifo", "socket", "dev-zero", "loop", "folder"],
)
def test_only_regular_files_are_read(tmp_path: Path, make, reason: str):
    target = make(tmp_path / "x.md")
    for read in (
        lambda: read_bytes(target, 1024, "a memory file"),
        lambda: read_start(target, 1024),
        lambda: open_stream(target),
    ):
        with pytest.raises(UnreadableFileError) as caught:
            read()
        message = str(caught.value)
        assert message == f"{target}: {caught.value.reason}" and reason in message
        assert "\n" not in message
        # Both a user error (one line, exit 2) and an OSError (callers that drop files).
        assert isinstance(caught.value, UserInputError) and isinstance(caught.value, OSError)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_proc_files_are_refused():
    with pytest.raises(UnreadableFileError, match="pseudo-file"):
        read_bytes("/proc/self/environ", 1 << 20, "a settings file")


def test_missing_files_keep_their_usual_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "nope.md", 10, "a memory file")
    with pytest.raises(NotADirectoryError):
        (tmp_path / "file").write_text("x")
        read_bytes(tmp_path / "file" / "below.md", 10, "a memory file")


def test_size_limits_are_exact(tmp_path: Path):
    target = tmp_path / "m.md"
    target.write_bytes(b"x" * 1000)
    assert read_bytes(target, 1000, "a memory file") == b"x" * 1000
    with pytest.raises(UnreadableFileError, match=r"1000 bytes, over the 999 bytes limit"):
        read_bytes(target, 999, "a memory file")
    assert read_start(target, 10)[0] == b"x" * 10


def test_stream_limits(tmp_path: Path):
    assert read_stream(io.BytesIO(b"abc"), 3, "the input") == b"abc"
    assert read_stream(io.StringIO("é"), 3, "the input") == "é".encode()
    with pytest.raises(UserInputError, match="the input is over the 3 bytes limit"):
        read_stream(io.BytesIO(b"abcd"), 3, "the input")


class _Chunky(io.RawIOBase):
    """A stream that hands out at most `step` bytes per read, to hit every boundary."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.at = data, step, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def, override]
        chunk = self.data[self.at : self.at + min(self.step, len(buffer))]
        buffer[: len(chunk)] = chunk
        self.at += len(chunk)
        return len(chunk)


_lines = st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=12).map(
    lambda parts: b"".join(b"x" * n + (b"\n" if nl else b"") for n, nl in parts)
)


@settings(max_examples=400)
@given(data=_lines, step=st.integers(1, 9), max_line=st.integers(1, 30))
def test_iter_lines_matches_file_lines_with_long_ones_blanked(data: bytes, step, max_line):
    expected = [
        line if len(line.rstrip(b"\n")) <= max_line else (b"\n" if line.endswith(b"\n") else b"")
        for line in io.BytesIO(data)
    ]
    stream = io.BufferedReader(_Chunky(data, step), buffer_size=step)
    assert list(iter_lines(stream, max_line)) == expected


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_json_values = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(alphabet='[]{}"\\ab', max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=40,
)


@settings(max_examples=400)
@given(value=_json_values, limit=st.integers(0, 8))
def test_depth_check_counts_real_nesting_only(value: object, limit: int):
    text = json.dumps(value)  # strings full of brackets, quotes and backslashes
    assert json_too_deep(text, limit) == (_depth(value) > limit)


def test_deep_json_is_one_line_error_before_parsing():
    with pytest.raises(JsonInputError, match="nests deeper than 100 levels"):
        load_json(deep_json(100_000), "the settings file")
    with pytest.raises(JsonInputError, match="is not JSON"):
        load_json(b"{oops", "the settings file")
    assert load_json(deep_json(100), "x") == json.loads(deep_json(100))
