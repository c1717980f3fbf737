"""Which GitHub repo a project's team memory belongs to, read from `.git/config`.

Claude Code syncs team memory only for projects whose remote is on github.com and names the
repo `owner/name`. We read the git files directly (no `git` binary needed): `.git` may be a
folder or a `gitdir:` file (worktrees, submodules), and worktrees keep their remotes in the
common dir named by `commondir`. The `origin` remote decides; when there is none, the first
github.com remote is used. `url.<base>.insteadOf` rewrites are applied as git would.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from workbench.engine.claude_paths import find_git_root
from workbench.engine.errors import UserInputError
from workbench.engine.userfiles import NOTES_LIMIT, read_text

GITHUB_HOST = "github.com"
REPO_SLUG_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
# scp-like syntax: [user@]host:path, where the host part has no slash.
_SCP_RE = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>.+)$")


def parse_github_repo(url: str) -> str | None:
    """`owner/name` when `url` points at a repo on github.com, else None."""
    url = url.strip()
    if not url:
        return None
    host: str | None
    path: str
    if "://" in url:
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError:
            return None
        if parts.scheme.lower() not in ("https", "http", "ssh", "git", "git+ssh", "ssh+git"):
            return None
        path = parts.path
    else:
        match = _SCP_RE.match(url)
        if not match:
            return None
        host, path = match.group("host"), match.group("path")
    if host is None or host.lower() != GITHUB_HOST:
        return None
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    path = path.rstrip("/")
    return path if valid_repo_slug(path) else None


def valid_repo_slug(slug: str) -> bool:
    """Whether `slug` has the `owner/name` form GitHub allows."""
    if not REPO_SLUG_RE.match(slug):
        return False
    return all(part not in (".", "..") for part in slug.split("/"))


# --- reading git config ---------------------------------------------------------------------


def git_dirs(project_root: str) -> tuple[Path, Path] | None:
    """(git dir, common dir) for the repository holding `project_root`, or None."""
    root = find_git_root(project_root)
    if root is None:
        return None
    marker = Path(root, ".git")
    if marker.is_dir():
        git_dir = marker
    else:
        try:
            text = read_text(marker, NOTES_LIMIT, "a .git file")
        except (OSError, UnicodeDecodeError):
            return None
        if not text.startswith("gitdir:"):
            return None
        git_dir = Path(os.path.normpath(os.path.join(root, text[len("gitdir:") :].strip())))
    common = git_dir
    try:
        raw = read_text(git_dir / "commondir", NOTES_LIMIT, "a git file").strip()
        if raw:
            common = Path(os.path.normpath(os.path.join(git_dir, raw)))
    except (OSError, UnicodeDecodeError):
        pass
    return git_dir, common


def parse_git_config(text: str) -> list[tuple[str, str, str]]:
    """Every `(section.subsection, key, value)` in a git config file, in file order.

    Section and key names are lower-cased (git treats them case-insensitively); subsection
    names keep their case. Quotes, escapes and comments are handled as git does.
    """
    out: list[tuple[str, str, str]] = []
    section = ""
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = _parse_section_header(line)
            if header is not None:
                section = header
                rest = line[line.index("]") + 1 :].strip()
                if not rest or rest[0] in "#;":
                    continue
                line = rest
            else:
                continue
        if not section:
            continue
        name, sep, value = line.partition("=")
        key = name.strip().lower()
        if not key:
            continue
        out.append((section, key, _parse_value(value) if sep else "true"))
    return out


def _parse_section_header(line: str) -> str | None:
    match = re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
    if not match:
        return None
    name = match.group(1).lower()
    if match.group(2) is not None:
        sub = re.sub(r"\\(.)", r"\1", match.group(2))
        return f"{name}.{sub}"
    # Legacy `[section.sub]` form: the sub-name is case-insensitive.
    return name


def _parse_value(raw: str) -> str:
    out: list[str] = []
    in_quotes = False
    i = 0
    raw = raw.strip()
    while i < len(raw):
        char = raw[i]
        if char == '"':
            in_quotes = not in_quotes
        elif char == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
            i += 1
        elif char in "#;" and not in_quotes:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip() if not in_quotes else "".join(out)


def _apply_insteadof(url: str, entries: list[tuple[str, str, str]]) -> str:
    # git picks the longest matching `insteadOf` prefix.
    best: tuple[int, str, str] | None = None
    for section, key, value in entries:
        if key != "insteadof" or not section.startswith("url."):
            continue
        base = section[len("url.") :]
        if value and url.startswith(value) and (best is None or len(value) > best[0]):
            best = (len(value), value, base)
    if best is None:
        return url
    return best[2] + url[best[0] :]


def remote_urls(project_root: str) -> list[tuple[str, str]]:
    """(remote name, url) pairs from the project's git config, `insteadOf` applied."""
    dirs = git_dirs(project_root)
    if dirs is None:
        return []
    git_dir, common = dirs
    entries: list[tuple[str, str, str]] = []
    for folder in dict.fromkeys((common, git_dir)):
        try:
            entries += parse_git_config(read_text(folder / "config", NOTES_LIMIT, "a git config"))
        except (OSError, UnicodeDecodeError):
            continue
        try:  # per-worktree config (extensions.worktreeConfig)
            entries += parse_git_config(
                read_text(folder / "config.worktree", NOTES_LIMIT, "a git config")
            )
        except (OSError, UnicodeDecodeError):
            pass
    urls: list[tuple[str, str]] = []
    for section, key, value in entries:
        if section.startswith("remote.") and key == "url":
            urls.append((section[len("remote.") :], _apply_insteadof(value, entries)))
    return urls


def detect_github_repo(project_root: str) -> str | None:
    """The project's github.com `owner/name`: `origin` first, else the first github remote."""
    urls = remote_urls(project_root)
    for name, url in urls:
        if name == "origin":
            slug = parse_github_repo(url)
            if slug:
                return slug
    for _, url in urls:
        slug = parse_github_repo(url)
        if slug:
            return slug
    return None


def resolve_repo(project_root: str, override: str | None) -> str:
    """`--repo` when given (validated), else the project's github.com remote."""
    if override:
        slug = override.strip()
        if slug.endswith(".git"):
            slug = slug[: -len(".git")]
        if not valid_repo_slug(slug):
            raise UserInputError(f"--repo must look like OWNER/NAME, got {override!r}")
        return slug
    detected = detect_github_repo(project_root)
    if detected is None:
        raise UserInputError(
            "no github.com remote found for this project; team sync needs one "
            "(or pass --repo OWNER/NAME)"
        )
    return detected
