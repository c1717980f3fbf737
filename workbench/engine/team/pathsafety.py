"""Keeping team-memory writes inside the team folder (spec 03 §1.6), against a hostile server.

Two passes, as in Claude Code: string checks first (no NUL, no encoded or full-width
traversal, no backslash, no absolute key, and the resolved path must start with the team
folder *including* its trailing separator, so `team-evil/` never passes for `team/`), then a
symlink pass that resolves the deepest existing ancestor and requires the real location to be
inside the real team folder. Every refusal raises `PathTraversalError`.

Paths follow Node's `path.join` / `path.resolve` (POSIX): join then normalise, `..` resolved
lexically, trailing separators dropped.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import unicodedata

from workbench.engine.errors import PathTraversalError

SEP = "/"
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# realpath errors that only mean "this part does not exist (as a folder) yet": keep walking up.
_WALK_ON = (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG)


def js_decode_uri_component(text: str) -> str:
    """JavaScript's `decodeURIComponent`; raises ValueError where it throws `URIError`."""
    if "%" not in text:
        return text
    if _BAD_PERCENT.search(text):
        raise ValueError("malformed percent escape")

    def decode(run: re.Match[str]) -> str:
        # Strict UTF-8 rejects exactly what URIError rejects: bad leads, truncated sequences,
        # overlong forms and surrogates.
        return bytes.fromhex(run.group().replace("%", "")).decode("utf-8")

    try:
        return _PERCENT_RUN.sub(decode, text)
    except UnicodeDecodeError as exc:
        raise ValueError("percent escapes are not valid UTF-8") from exc


def node_resolve(path: str) -> str:
    """Node's `path.resolve` for one POSIX path: absolute, normalised, no trailing slash."""
    if not path.startswith(SEP):
        path = os.getcwd() + SEP + path
    resolved = posixpath.normpath(path)
    if resolved.startswith("//"):
        resolved = SEP + resolved.lstrip(SEP)  # POSIX keeps "//x"; Node does not
    return resolved


def node_join(base: str, *parts: str) -> str:
    """Node's `path.join`: concatenate with `/`, then normalise (an absolute part does not reset)."""
    joined = SEP.join(p for p in (base, *parts) if p)
    if not joined:
        return "."
    normalized = posixpath.normpath(joined)
    if normalized.startswith("//"):
        normalized = SEP + normalized.lstrip(SEP)
    if joined.endswith(SEP) and normalized != SEP:
        normalized += SEP
    return normalized


def _team_prefix(team_dir: str) -> str:
    """The team folder with exactly one trailing separator (as `getTeamMemPath` returns it)."""
    return team_dir.rstrip(SEP) + SEP


def sanitize_path_key(key: str) -> str:
    """`sanitizePathKey`: refuse a server-supplied key that could smuggle a traversal."""
    if "\0" in key:
        raise PathTraversalError(f"refused key {key!r}: it contains a NUL byte")
    try:
        decoded = js_decode_uri_component(key)
    except ValueError:
        decoded = key  # not valid percent-encoding, so it cannot encode a traversal either
    if decoded != key and (".." in decoded or SEP in decoded):
        raise PathTraversalError(f"refused key {key!r}: it hides a traversal in percent escapes")
    normalized = unicodedata.normalize("NFKC", key)
    if normalized != key and any(bad in normalized for bad in ("..", SEP, "\\", "\0")):
        raise PathTraversalError(
            f"refused key {key!r}: look-alike characters normalise to a traversal"
        )
    if "\\" in key:
        raise PathTraversalError(f"refused key {key!r}: backslashes are not allowed")
    if key.startswith(SEP):
        raise PathTraversalError(f"refused key {key!r}: absolute paths are not allowed")
    return key


def realpath_deepest_existing(path: str) -> str:
    """`realpathDeepestExisting`: resolve symlinks in the deepest ancestor that exists.

    The missing tail is joined back on. A dangling symlink, a symlink loop, or an error that
    makes containment impossible to check (permissions, I/O) is refused.
    """
    tail: list[str] = []
    current = path
    while True:
        parent = posixpath.dirname(current)
        if parent == current:
            return path  # reached the root without resolving anything: the caller refuses it
        try:
            real = os.path.realpath(current, strict=True)
        except OSError as exc:
            code = exc.errno
            if code == errno.ENOENT:
                _refuse_dangling_symlink(current)
            elif code == errno.ELOOP:
                raise PathTraversalError(f"refused path {current!r}: symlink loop") from None
            elif code not in _WALK_ON:
                raise PathTraversalError(
                    f"refused path {current!r}: cannot verify it stays inside the team folder "
                    f"({errno.errorcode.get(code or 0, code)})"
                ) from None
            tail.append(posixpath.basename(current))
            current = parent
            continue
        return posixpath.join(real, *reversed(tail)) if tail else real


def _refuse_dangling_symlink(current: str) -> None:
    """After ENOENT: a symlink whose target is missing would be followed by a write."""
    try:
        info = os.lstat(current)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return  # truly absent: keep walking up
        raise PathTraversalError(
            f"refused path {current!r}: cannot verify it stays inside the team folder "
            f"({errno.errorcode.get(exc.errno or 0, exc.errno)})"
        ) from None
    if stat.S_ISLNK(info.st_mode):
        raise PathTraversalError(f"refused path {current!r}: dangling symlink")
    # It exists and is no symlink: the ENOENT came from a dangling link further up.


def is_real_path_within_team_dir(real_candidate: str, team_dir: str) -> bool:
    """`isRealPathWithinTeamDir`: the resolved candidate lies in the real team folder.

    No team folder (or a file in its place) means no symlink inside it could exist: true.
    Any other failure to resolve the team folder fails closed: false.
    """
    try:
        real_team = os.path.realpath(team_dir.rstrip(SEP) or SEP, strict=True)
    except OSError as exc:
        return exc.errno in (errno.ENOENT, errno.ENOTDIR)
    return real_candidate == real_team or real_candidate.startswith(real_team.rstrip(SEP) + SEP)


def _check_inside(resolved: str, team_dir: str, shown: str) -> None:
    if not resolved.startswith(_team_prefix(team_dir)):
        raise PathTraversalError(f"refused {shown!r}: it resolves outside the team folder")
    if not is_real_path_within_team_dir(realpath_deepest_existing(resolved), team_dir):
        raise PathTraversalError(f"refused {shown!r}: a symlink leads outside the team folder")


def validate_team_mem_key(key: str, team_dir: str) -> str:
    """`validateTeamMemKey`: the absolute path a pulled key may be written to, or refuse."""
    sanitize_path_key(key)
    resolved = node_resolve(node_join(_team_prefix(team_dir), key))
    _check_inside(resolved, team_dir, key)
    return resolved


def validate_team_mem_write_path(file_path: str, team_dir: str) -> str:
    """`validateTeamMemWritePath`: the resolved path of a write into team memory, or refuse."""
    if "\0" in file_path:
        raise PathTraversalError(f"refused path {file_path!r}: it contains a NUL byte")
    resolved = node_resolve(file_path)
    _check_inside(resolved, team_dir, file_path)
    return resolved


def is_team_mem_path(file_path: str, team_dir: str) -> bool:
    """`isTeamMemPath`: the resolved path starts with the team folder (no symlink check)."""
    return node_resolve(file_path).startswith(_team_prefix(team_dir))
