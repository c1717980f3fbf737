"""Conditional rules: their `paths` globs, matched the way Claude Code matches them.

Claude Code tests a file against a rule's globs with gitignore semantics (a pattern without
a slash matches a name at any depth, `**` spans folders), relative to the folder that holds
the rule's `.claude` folder (the working folder for user and managed rules). Files outside
that folder never match.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

WALK_LIMIT = 50_000
"""At most this many files are listed per folder when asking whether a glob matches anything."""
WALK_SECONDS = 3.0
SKIPPED_FOLDERS = frozenset({".git"})


@lru_cache(maxsize=256)
def _spec(globs: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(globs)


def relative_to(path: str, base: str) -> str | None:
    """`path` relative to `base` (posix), or None when it is outside it."""
    rel = posixpath.relpath(path, base)
    if rel == "." or rel.startswith("../") or rel == ".." or posixpath.isabs(rel):
        return None
    return rel


def glob_matches(globs: Sequence[str], path: str, base: str) -> bool:
    """Whether a rule with these globs applies to the file at `path` (absolute)."""
    rel = relative_to(path, base)
    if rel is None or not globs:
        return False
    try:
        return bool(_spec(tuple(globs)).match_file(rel))
    except (ValueError, TypeError):
        return False  # a pattern pathspec cannot read matches nothing


@dataclass(frozen=True)
class FileListing:
    """The files under one folder, as far as the walk went."""

    base: str
    files: tuple[str, ...]
    """Paths relative to `base`, posix."""
    complete: bool
    """False: the walk stopped at its limit (more files may match)."""
    dirs_with: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Relative folder → the instruction files in it (CLAUDE.md, .claude/CLAUDE.md,
    CLAUDE.local.md, .claude/rules), for the folders below the base."""


_NESTED_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


def list_files(base: str, *, limit: int = WALK_LIMIT, seconds: float = WALK_SECONDS) -> FileListing:
    """Every file under `base` (`.git` skipped, links not followed), up to `limit` files."""
    files: list[str] = []
    nested: dict[str, list[str]] = {}
    deadline = time.monotonic() + seconds
    complete = True
    for folder, dirnames, filenames in os.walk(base, onerror=lambda _e: None):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_FOLDERS)
        rel_folder = posixpath.relpath(folder, base).replace(os.sep, "/")
        prefix = "" if rel_folder == "." else rel_folder + "/"
        for name in sorted(filenames):
            files.append(prefix + name)
            if name == "CLAUDE.md" and posixpath.basename(rel_folder) == ".claude":
                owner = posixpath.dirname(rel_folder)
                if owner:
                    nested.setdefault(owner, []).append(".claude/CLAUDE.md")
            elif rel_folder != "." and name in _NESTED_NAMES:
                nested.setdefault(rel_folder, []).append(name)
            elif name.endswith(".md") and "/.claude/rules" in "/" + rel_folder:
                owner = ("/" + rel_folder).split("/.claude/rules")[0].lstrip("/")
                if owner:
                    nested.setdefault(owner, []).append(".claude/rules")
        if len(files) >= limit or time.monotonic() > deadline:
            complete = False
            break
    return FileListing(
        base,
        tuple(files[:limit]),
        complete,
        {k: tuple(dict.fromkeys(v)) for k, v in nested.items()},
    )


def matching_files(globs: Sequence[str], listing: FileListing, base: str) -> list[str]:
    """The listed files (relative to `listing.base`) the globs match, relative to `base`."""
    if not globs:
        return []
    spec = _spec(tuple(globs))
    out = []
    for rel in listing.files:
        absolute = posixpath.join(listing.base, rel)
        inner = relative_to(absolute, base)
        if inner is not None and spec.match_file(inner):
            out.append(inner)
    return out
