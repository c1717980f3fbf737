"""What Claude Code does to an instruction file's text before sending it, and the `@path`
imports it follows.

Frontmatter is cut off (a rule's `paths` list makes it conditional), block HTML comments are
removed, and `@path` references in the text are imports, except inside code blocks, code
spans, HTML and the alt text of images. The lexer is CommonMark (markdown-it), close to the
markdown lexer Claude Code runs.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# `---`, then anything up to the first `---` (not necessarily at a line start), as Claude
# Code's frontmatter pattern reads it.
_FRONTMATTER = re.compile(r"^---\s*\n([\s\S]*?)---\s*\n?")
# A value the YAML retry quotes: characters YAML reads as syntax.
_YAML_SPECIAL = re.compile(r"[{}[\]*&#!|>%@`]|: ")
_KEY_VALUE = re.compile(r"^([a-zA-Z_-]+):\s+(.+)$")
_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")
_SYMBOLS_ONLY = re.compile(r"^[#%^&*()]+")
_PLAIN_START = re.compile(r"^[a-zA-Z0-9._-]")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")

TEXT_EXTENSIONS = frozenset(
    ".md .txt .text .json .yaml .yml .toml .xml .csv .html .htm .css .scss .sass .less .js .ts "
    ".tsx .jsx .mjs .cjs .mts .cts .py .pyi .pyw .rb .erb .rake .go .rs .java .kt .kts .scala "
    ".c .cpp .cc .cxx .h .hpp .hxx .cs .swift .sh .bash .zsh .fish .ps1 .bat .cmd .env .ini "
    ".cfg .conf .config .properties .sql .graphql .gql .proto .vue .svelte .astro .ejs .hbs "
    ".pug .jade .php .pl .pm .lua .r .dart .ex .exs .erl .hrl .clj .cljs .cljc .edn .hs .lhs "
    ".elm .ml .mli .f .f90 .f95 .for .cmake .make .makefile .gradle .sbt .rst .adoc "
    ".asciidoc .org .tex .latex .lock .log .diff .patch".split()
)
"""Extensions an import may have (a file without one is read too); others are skipped."""


@dataclass(frozen=True)
class Frontmatter:
    """A file's frontmatter as Claude Code reads it."""

    content: str
    """The text after the frontmatter block (all of it when there is none)."""
    globs: tuple[str, ...] = ()
    """The rule's `paths` patterns (empty: the file is unconditional)."""
    raw_paths: Any = None
    """`paths` as written, when there is one."""
    error: str | None = None
    """The frontmatter is not YAML even after quoting its values (it then counts as empty)."""
    repaired: bool = False
    """The frontmatter only parsed once its special-character values were quoted."""


def _load_yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def _quote_values(text: str) -> str:
    """Claude Code's retry: `key: value` lines whose value has YAML syntax get quoted."""
    out = []
    for line in text.split("\n"):
        match = _KEY_VALUE.match(line)
        if match:
            key, value = match.group(1), match.group(2)
            quoted = (value.startswith('"') and value.endswith('"')) or (
                value.startswith("'") and value.endswith("'")
            )
            if not quoted and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


def read_frontmatter(text: str) -> Frontmatter:
    """Split off the frontmatter and read a rule's `paths` from it."""
    match = _FRONTMATTER.match(text)
    if not match:
        return Frontmatter(text)
    body = text[match.end() :]
    raw = match.group(1) or ""
    data: Any = None
    error = None
    repaired = False
    try:
        data = _load_yaml(raw)
    except Exception:  # noqa: BLE001 - any YAML failure leads to the same retry
        try:
            data = _load_yaml(_quote_values(raw))
            repaired = True
        except Exception as exc:  # noqa: BLE001
            error = f"not YAML ({exc.__class__.__name__})"
    if not isinstance(data, dict):
        data = {}
    paths = data.get("paths")
    if not paths:
        return Frontmatter(body, (), paths, error, repaired)
    globs = [g[:-3] if g.endswith("/**") else g for g in split_paths(paths)]
    globs = [g for g in globs if g]
    if not globs or all(g == "**" for g in globs):
        return Frontmatter(body, (), paths, error, repaired)
    return Frontmatter(body, tuple(globs), paths, error, repaired)


def split_paths(value: Any) -> list[str]:
    """`paths` as a list of globs: lists flattened, commas outside braces split, `{a,b}`
    expanded."""
    if isinstance(value, list):
        return [glob for item in value for glob in split_paths(item)]
    if not isinstance(value, str):
        return []
    parts: list[str] = []
    current = ""
    depth = 0
    for char in value:
        if char == "{":
            depth += 1
            current += char
        elif char == "}":
            depth -= 1
            current += char
        elif char == "," and depth == 0:
            if current.strip():
                parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return [expanded for part in parts if part for expanded in _expand_braces(part)]


_BRACES = re.compile(r"^([^{]*)\{([^}]+)\}(.*)$")


def _expand_braces(pattern: str) -> list[str]:
    match = _BRACES.match(pattern)
    if not match:
        return [pattern]
    head, options, tail = match.group(1), match.group(2), match.group(3)
    out: list[str] = []
    for option in options.split(","):
        out.extend(_expand_braces(head + option.strip() + tail))
    return out


# --- comments and imports ---------------------------------------------------------------------


def strip_comments(text: str) -> str:
    """Block HTML comments removed, as for MEMORY.md (one rule for both)."""
    from workbench.engine.memories.index import strip_block_html_comments

    return strip_block_html_comments(text)


@lru_cache(maxsize=1)
def _lexer() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@dataclass(frozen=True)
class ImportRef:
    """One `@path` reference in a file's text."""

    written: str
    """As written after the `@` (anchor included)."""
    path: str
    """Resolved: relative to the importing file's folder, `~` as the home folder."""
    line: int | None
    """1-based line of the text it was found in (None when not known)."""


@dataclass(frozen=True)
class IgnoredRef:
    """An `@path` Claude Code does not follow, and where it is (code or HTML)."""

    written: str
    line: int | None
    where: str


def find_imports(text: str, file_path: str, home: str) -> tuple[list[ImportRef], list[IgnoredRef]]:
    """The imports of a file's text (after its frontmatter), in order, each path once; and
    the `@path` look-alikes inside code or HTML, which are not followed."""
    if "@" not in text:
        return [], []
    found: dict[str, ImportRef] = {}
    ignored: list[IgnoredRef] = []
    base = posixpath.dirname(file_path)

    def scan(chunk: str, line: int | None) -> None:
        for match in _IMPORT.finditer(chunk):
            written = match.group(1)
            target = _accept(written)
            if target is None:
                continue
            path = resolve_import(target, base, home)
            if path not in found:
                found[path] = ImportRef(written, path, line)

    def note(chunk: str, line: int | None, where: str) -> None:
        for match in _IMPORT.finditer(chunk):
            if _accept(match.group(1)) is not None:
                ignored.append(IgnoredRef(match.group(1), line, where))

    for token in _lexer().parse(text):
        line = token.map[0] + 1 if token.map else None
        kind = token.type
        if kind in ("fence", "code_block"):
            note(token.content, line, "a code block")
        elif kind == "html_block":
            _html(token.content, line, scan, note)
        elif kind == "inline":
            for child in token.children or ():
                if child.type == "text":
                    scan(child.content, line)
                elif child.type == "code_inline":
                    note(child.content, line, "a code span")
                elif child.type == "html_inline":
                    _html(child.content, line, scan, note)
                elif child.type in ("softbreak", "hardbreak") and line is not None:
                    line += 1
    return list(found.values()), ignored


def _html(raw: str, line: int | None, scan: Any, note: Any) -> None:
    stripped = raw.lstrip()
    if stripped.startswith("<!--") and "-->" in stripped:
        rest = _COMMENT.sub("", raw)
        if rest.strip():
            scan(rest, line)
        for comment in _COMMENT.findall(raw):
            note(comment, line, "an HTML comment")
    else:
        note(raw, line, "HTML")


def _accept(written: str) -> str | None:
    """The path an `@` reference names, or None when Claude Code would not take it for one."""
    hash_at = written.find("#")
    path = written[:hash_at] if hash_at != -1 else written
    if not path:
        return None
    path = path.replace("\\ ", " ")
    if not path:
        return None
    if path.startswith(("./", "~/")) or (path.startswith("/") and path != "/"):
        return path
    if path.startswith("@") or _SYMBOLS_ONLY.match(path) or not _PLAIN_START.match(path):
        return None
    return path


def resolve_import(path: str, base: str, home: str) -> str:
    """Claude Code's path expansion: trimmed, `~` for the home folder, else relative to
    `base`; normalised and NFC."""
    text = path.strip()
    if not text:
        resolved = posixpath.normpath(base)
    elif text == "~":
        resolved = posixpath.normpath(home)
    elif text.startswith("~/"):
        resolved = posixpath.normpath(posixpath.join(home, text[2:]))
    elif text.startswith("/"):
        resolved = posixpath.normpath(text)
        if resolved.startswith("//"):
            resolved = "/" + resolved.lstrip("/")
    else:
        resolved = posixpath.normpath(posixpath.join(base, text))
    return unicodedata.normalize("NFC", resolved)


def is_text_import(path: str) -> bool:
    """Whether Claude Code reads an import with this name (a known text extension, or none)."""
    extension = os.path.splitext(path)[1].lower()
    return not extension or extension in TEXT_EXTENSIONS
