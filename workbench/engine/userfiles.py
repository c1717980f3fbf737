"""Reading files that users, teammates or Claude Code control: regular files only, bounded.

Every memory file, index, settings file, baseline, transcript and status-line payload goes
through here. A named pipe, a device, a socket or a `/proc` file is refused before anything
waits on it (the file is opened with O_NONBLOCK and checked with fstat), a symlink loop is a
plain message, and each kind of file has a size limit that fits it. Transcripts are the
exception on size: they are legitimately huge, so they are streamed and only each line is
bounded. JSON is checked for depth before it is parsed, since both parsers recurse.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import stat
from collections.abc import Iterator
from typing import IO, Any

from workbench.engine.errors import UnreadableFileError, UserInputError
from workbench.engine.jsutil import format_file_size

MIB = 1024 * 1024

# Size limits, one per kind of file. Each is far beyond any real file of its kind and well
# below what would hurt a laptop.
MEMORY_FILE_LIMIT = 8 * MIB
"""A memory file opened whole (show, edit); lint and recall read only the start."""
INDEX_LIMIT = 64 * MIB
"""MEMORY.md (Claude Code loads 25,000 characters of it; a million-line index still fits)."""
SETTINGS_LIMIT = 4 * MIB
"""A Claude Code settings or config JSON file."""
BASELINE_LIMIT = 32 * MIB
"""A secret-scan baseline (fingerprint lists)."""
SCANNED_FILE_LIMIT = 128 * MIB
"""A file scanned or redacted for secrets."""
NOTES_LIMIT = 4 * MIB
"""Session notes, templates, summaries and other small text files Claude Code writes."""
STATUSLINE_LIMIT = 1 * MIB
"""The status-line payload Claude Code pipes in on stdin."""
TRANSCRIPT_LINE_LIMIT = 64 * MIB
"""One JSONL line of a transcript; longer lines are skipped like broken ones."""
JSON_MAX_DEPTH = 100
"""Nesting deeper than this is refused before parsing (real files nest under 10 deep)."""

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# Errors callers already handle by type (missing file, no permission): passed through as is.
_PASSED_THROUGH = (FileNotFoundError, NotADirectoryError, PermissionError)


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a regular file; not read"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file; not read"
    if stat.S_ISCHR(mode):
        return "a character device, not a regular file; not read"
    if stat.S_ISBLK(mode):
        return "a block device, not a regular file; not read"
    return "not a regular file; not read"


_pseudo_devices: frozenset[int] | None = None


def pseudo_filesystems() -> frozenset[int]:
    """Device numbers of /proc and /sys, whose "regular" files can block or never end."""
    global _pseudo_devices
    if _pseudo_devices is None:
        found = set()
        for root in ("/proc", "/sys"):
            try:
                found.add(os.stat(root).st_dev)
            except OSError:
                continue
        _pseudo_devices = frozenset(found)
    return _pseudo_devices


def refusal(info: os.stat_result) -> str | None:
    """Why a file with this stat is not read, or None for a regular file."""
    if not stat.S_ISREG(info.st_mode):
        return _kind_of(info.st_mode)
    if info.st_dev in pseudo_filesystems():
        return "a kernel pseudo-file (/proc or /sys), not a regular file; not read"
    return None


def _check(path: str, info: os.stat_result) -> None:
    reason = refusal(info)
    if reason is not None:
        raise UnreadableFileError(path, reason, errno.EINVAL)


def _from_os_error(path: str, exc: OSError) -> UnreadableFileError:
    if exc.errno == errno.ELOOP:
        return UnreadableFileError(path, "a symbolic link that loops back on itself", exc.errno)
    if exc.errno == errno.ENXIO:
        return UnreadableFileError(path, "a socket or device, not a regular file; not read")
    reason = exc.strerror or exc.__class__.__name__
    return UnreadableFileError(path, f"cannot be read ({reason})", exc.errno or 0)


def too_large(path: str, size: int, limit: int, what: str) -> UnreadableFileError:
    """The error for a file over its kind's limit."""
    return UnreadableFileError(
        path,
        f"{format_file_size(size)}, over the {format_file_size(limit)} limit for {what}; not read",
        errno.EFBIG,
    )


def describe(path: str | os.PathLike[str], exc: OSError) -> str:
    """A one-line reason for any error opening `path` (for findings and soft errors)."""
    if isinstance(exc, UnreadableFileError):
        return exc.reason
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return _from_os_error(os.fspath(path), exc).reason


def open_regular(
    path: str | os.PathLike[str], known: os.stat_result | None = None
) -> tuple[int, os.stat_result]:
    """A file descriptor for `path` and its fstat, if and only if it is a regular file.

    `known` is a stat the caller already has (a folder walk's); without it the path is
    stat'ed first, so devices and pipes are refused before they are even opened. Missing
    files and permission errors raise the usual built-in errors; everything else raises
    `UnreadableFileError`. O_NONBLOCK stays set: it changes nothing for regular files.
    """
    name = os.fspath(path)
    if known is None:
        try:
            known = os.stat(name)
        except _PASSED_THROUGH:
            raise
        except OSError as exc:
            raise _from_os_error(name, exc) from None
    _check(name, known)
    try:
        fd = os.open(name, _OPEN_FLAGS)
    except _PASSED_THROUGH:
        raise
    except OSError as exc:
        raise _from_os_error(name, exc) from None
    try:
        info = os.fstat(fd)
        _check(name, info)  # it may have been swapped for a pipe since the stat
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_fd(fd: int, limit: int, first: int = 65536) -> bytes:
    """Up to `limit` bytes from `fd` (callers pass their limit + 1 to detect overflow)."""
    data = os.read(fd, min(limit, first))
    if len(data) < min(limit, first):
        return data
    chunks = [data]
    total = len(data)
    while total < limit:
        more = os.read(fd, min(limit - total, 1 << 20))
        if not more:
            break
        chunks.append(more)
        total += len(more)
    return b"".join(chunks)


def read_bytes(
    path: str | os.PathLike[str],
    limit: int,
    what: str,
    known: os.stat_result | None = None,
) -> bytes:
    """The whole of a regular file, refused when it is larger than `limit` bytes."""
    name = os.fspath(path)
    fd, info = open_regular(name, known)
    try:
        if info.st_size > limit:
            raise too_large(name, info.st_size, limit, what)
        data = read_fd(fd, limit + 1, max(info.st_size + 1, 8192))
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise too_large(name, len(data), limit, what)
    return data


def first_invalid_utf8_line(data: bytes) -> int | None:
    """The line (from 1) of the first byte that is not UTF-8, or None when all of it is."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1
    return None


UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks a UTF-16 file starts with."""


def utf16_text(data: bytes) -> str | None:
    """The text of a file that starts with a UTF-16 byte-order mark, else None. Read as
    UTF-8 (as Claude Code reads team files), its characters sit between NULs, where no
    secret rule can match them."""
    return data.decode("utf-16", errors="replace") if data[:2] in UTF16_MARKS else None


def read_text(
    path: str | os.PathLike[str], limit: int, what: str, *, universal_newlines: bool = False
) -> str:
    """`read_bytes` decoded as Node decodes UTF-8: invalid bytes become U+FFFD. With
    `universal_newlines`, CRLF and CR become LF, as `Path.read_text` gives them."""
    text = read_bytes(path, limit, what).decode("utf-8", errors="replace")
    if universal_newlines and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_start(
    path: str | os.PathLike[str], limit: int, known: os.stat_result | None = None
) -> tuple[bytes, os.stat_result]:
    """At most the first `limit` bytes of a regular file (never an error for its size)."""
    fd, info = open_regular(path, known)
    try:
        return read_fd(fd, limit, max(min(info.st_size, limit), 8192)), info
    finally:
        os.close(fd)


def open_stream(
    path: str | os.PathLike[str], buffering: int = -1, known: os.stat_result | None = None
) -> IO[bytes]:
    """A binary file object for streaming a regular file (transcripts)."""
    fd, _ = open_regular(path, known)
    try:
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_stream(stream: IO[bytes] | IO[str], limit: int, what: str) -> bytes:
    """All of a pipe or stdin, refused past `limit` bytes (never read beyond it). Pass
    `sys.stdin.buffer` where there is one; a text stream is read and encoded as UTF-8."""
    data: bytes | str | None = stream.read(limit + 1)
    if data is None:
        data = b""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogatepass")
    if len(data) > limit:
        raise UserInputError(f"{what} is over the {format_file_size(limit)} limit; not read")
    return data


def iter_lines(stream: IO[bytes], max_line: int = TRANSCRIPT_LINE_LIMIT) -> Iterator[bytes]:
    """The lines of a buffered stream, as iterating it gives them, holding at most
    `max_line` bytes of any one line: a longer line comes back as b"\n" (b"" at the very
    end), so line numbers stay right. Each read is the stream's own C readline."""
    readline = stream.readline
    limit = max_line + 1
    while line := readline(limit):
        if len(line) <= max_line or line[-1] == 10:  # nearly every line: one compare
            yield line
            continue
        while (rest := readline(1 << 20)) and rest[-1:] != b"\n":
            pass  # the rest of a runaway line: read past it, never held
        yield b"\n" if rest else b""


def line_pieces(stream: IO[bytes], max_line: int = TRANSCRIPT_LINE_LIMIT) -> Iterator[bytes]:
    """The lines of a buffered stream as a C-level iterator (no Python frame per line, for
    hot loops), each at most `max_line` + 1 bytes: a piece that long without a newline is
    the start of a runaway line, which the caller passes to `skip_rest_of_line`."""
    return iter(functools.partial(stream.readline, max_line + 1), b"")


def skip_rest_of_line(pieces: Iterator[bytes]) -> int:
    """Read past the rest of a runaway line; how many more pieces it took."""
    count = 0
    for piece in pieces:
        count += 1
        if piece[-1:] == b"\n":
            break
    return count


# --- JSON -----------------------------------------------------------------------------------

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_too_deep(data: bytes | str, max_depth: int = JSON_MAX_DEPTH) -> bool:
    """Whether JSON text nests arrays and objects deeper than `max_depth` (strings ignored)."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False
    depth = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub(b"", raw)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


class JsonInputError(UserInputError):
    """JSON that could not be parsed, with a one-line reason."""


def load_json(data: bytes | str, what: str, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """Parse JSON text from a file or pipe; any problem is a one-line `JsonInputError`."""
    if json_too_deep(data, max_depth):
        raise JsonInputError(f"{what} nests deeper than {max_depth} levels; not read")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"{what} is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"{what} is not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:  # a smaller stack than expected (a thread): still one line
        raise JsonInputError(f"{what} nests too deeply; not read") from None
