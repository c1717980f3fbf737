"""Atomic file writes: temp file in the same folder, fsync, rename.

The temp name starts with a dot and ends in `.wbtmp`, so no memory scan (which keeps `.md`
files) can mistake a half-written file for a memory, and a crash leaves either the old file or
the new one, never a torn mix.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

TEMP_SUFFIX = ".wbtmp"


def temp_path_for(target: Path) -> Path:
    """A fresh temp path beside `target` that scans ignore."""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def through_link(target: Path) -> Path:
    """The file a symlink at `target` points to, else `target`: a memory write goes through
    the link, as Claude Code's own writes do, rather than replace the link with a copy (a
    memory folder linked into a dotfiles repository stays linked). A link loop raises."""
    if not target.is_symlink():
        return target
    real = Path(os.path.realpath(target))
    if real.is_symlink():  # realpath stops where a loop closes
        raise OSError(errno.ELOOP, "a symlink loop", str(target))
    return real


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `target` with `data` atomically; parent folders are created as needed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
    fd = os.open(tmp, flags, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)


def atomic_write_text(target: Path, text: str, *, mode: int | None = None) -> None:
    """Replace `target` with UTF-8 `text` atomically (newlines written as given)."""
    atomic_write_bytes(target, text.encode("utf-8"), mode=mode)


def _fsync_dir(folder: Path) -> None:
    # The rename is only durable once the directory entry itself reaches the disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
