"""The memory folder's walk: every memory file below it with its stat.

Apart from the scanner, so that a listing whose output is kept from the last run (see
`finished_listing`) loads only this, not the frontmatter parser and the linter.
"""

from __future__ import annotations

import os
from stat import S_ISREG

from workbench.engine.userfiles import describe, pseudo_filesystems, refusal

ENTRYPOINT_NAME = "MEMORY.md"


def iter_memory_paths(
    memory_dir: str | os.PathLike[str], problems: list[tuple[str, str]] | None = None
) -> list[tuple[str, os.stat_result]]:
    """Every `.md` file below `memory_dir` except `MEMORY.md`, with its stat, in walk order.

    Only regular files (or links to them) are listed: a pipe, socket or device named `*.md`
    would hang or flood a reader. Those, and links that loop or dangle, go to `problems` as
    (path, reason) when a list is given, so lint can name them.
    """
    root = os.fspath(memory_dir)
    pseudo = pseudo_filesystems()
    found: list[tuple[str, os.stat_result]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        # Through the folder's descriptor: each stat then resolves one name, not the whole
        # path again (a tenth of a 10,000-file walk). The memory folder may be a link; a
        # subfolder swapped for one after it was seen is not followed.
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        try:
            fd = os.open(folder, flags if folder is root else flags | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            _walk_folder(fd, os.path.join(folder, ""), pseudo, found, stack, problems)
        finally:
            os.close(fd)
    return found


def _walk_folder(
    fd: int,
    prefix: str,
    pseudo: frozenset[int],
    found: list[tuple[str, os.stat_result]],
    stack: list[str],
    problems: list[tuple[str, str]] | None,
) -> None:
    try:
        entries = list(os.scandir(fd))
    except OSError:
        return
    subdirs = []
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(prefix + name)
                continue
            if not name.endswith(".md") or name == ENTRYPOINT_NAME:
                continue
            info = entry.stat()
        except OSError as exc:
            if problems is not None and name.endswith(".md"):
                problems.append((prefix + name, describe(prefix + name, exc)))
            continue
        if S_ISREG(info.st_mode) and info.st_dev not in pseudo:
            found.append((prefix + name, info))
        elif problems is not None:
            problems.append((prefix + name, refusal(info) or "not a regular file"))
    stack.extend(reversed(subdirs))
