"""Server-side checks on entry keys and repo names.

Keys get the same rules a client applies before writing a pulled entry (spec 03 §1.6): valid
Unicode and parts a file name can hold, then `sanitizePathKey`, then the "resolves inside the
team folder" test, done here on a virtual root since the server has no team folder of its own.
"""

from __future__ import annotations

import posixpath
import re

from workbench.engine.errors import PathTraversalError
from workbench.engine.team.pathsafety import sanitize_path_key
from workbench.engine.team.sync.keys import NAME_MAX_BYTES, unicode_problem

REPO_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
MAX_KEY_LENGTH = 1024
_VIRTUAL_ROOT = "/team/"


def key_rejection(key: object) -> str | None:
    """Why the server refuses `key` as an entry name, or None when it is acceptable."""
    if not isinstance(key, str) or not key:
        return "an entry key must be a non-empty string"
    if len(key) > MAX_KEY_LENGTH:
        return f"an entry key is limited to {MAX_KEY_LENGTH} characters"
    # No client could write such a key to disk: refuse it here rather than store it for all.
    problem = unicode_problem(key)
    if problem is not None:
        return f"the key {problem.removeprefix('it ')}"
    if any(len(part.encode("utf-8")) > NAME_MAX_BYTES for part in key.split("/")):
        return f"a part of the key is longer than {NAME_MAX_BYTES} bytes"
    try:
        sanitize_path_key(key)
    except PathTraversalError as exc:
        return str(exc)
    resolved = posixpath.normpath(posixpath.join(_VIRTUAL_ROOT, key))
    if not resolved.startswith(_VIRTUAL_ROOT):
        return "the key resolves outside the team folder"
    if key.endswith("/"):
        return "the key names a folder, not a file"
    return None


def repo_is_valid(repo: str) -> bool:
    """`owner/name` with GitHub's allowed characters and no `.`/`..` parts."""
    if not REPO_RE.match(repo):
        return False
    return all(part not in (".", "..") for part in repo.split("/"))
