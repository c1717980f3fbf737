"""MEMORY.md: the exact truncation Claude Code applies and the load report built on it.

Claude Code keeps at most 200 lines and 25,000 UTF-16 units of the trimmed index (after its
frontmatter and block HTML comments are removed). The line gate runs first; the length gate
then cuts at the last newline at or before unit 25,000. Both flags are measured on the
original trimmed text (spec 01 §2.4). A CRLF file's `\r` counts toward the limit in every
release; from 2.1.284 the kept text is cleaned after the cut (`index_chars.py`: CR to LF,
invisible characters such as a trailing U+001F removed) and trimmed again (spec 08):
`IndexLoadRules`.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple
from urllib.parse import unquote

from workbench.engine.jsutil import format_file_size, js_last_index_of, js_len, js_slice
from workbench.engine.memories.frontmatter import FRONTMATTER_RE
from workbench.engine.profiles.rules import IndexLoadRules
from workbench.engine.records import Record
from workbench.engine.wording import plural

MAX_ENTRYPOINT_LINES = 200
MAX_ENTRYPOINT_LENGTH = 25_000
INDEX_LINE_GUIDE = 150
"""The length Claude Code asks index entries to stay under."""
INDEX_LINE_LIMIT = 200
"""Past this an index line is flagged as too long (the truncation warning's own advice)."""
MAX_ITEMISED_LINES = 10_000
"""Lines of an index the load report examines one by one (50 times what loads); the rest
of a runaway index is counted, so reports stay fast and small however big the file is."""

# JS String.prototype.trim removes WhiteSpace and LineTerminator code points only.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LINK_RE = re.compile(r"\[(?P<title>[^\]]*)\]\((?P<target><[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_HOOK_SEPARATORS = re.compile(r"^\s*(?:—|–|--|-|:)\s*")
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")
# 2.1.88's reading, used when no release's rules are given: `\r` kept, U+001F kept.
PLAIN_RULES = IndexLoadRules(cleans_text=False, warning_quotes_cut=False)
WARNING_QUOTE_CHARS = 40
"""How much of the first cut line our warning quotes (Claude Code's length was not measured)."""
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def js_trim(text: str) -> str:
    """`String.prototype.trim` (Python's strip uses a different whitespace set)."""
    return text.strip(_JS_WHITESPACE)


class Truncation(Record):
    """What `truncateEntrypointContent` keeps of an index."""

    trimmed: str
    content: str
    """The kept text, before any warning."""
    line_count: int
    length: int
    line_truncated: bool
    length_truncated: bool
    kept_lines: int
    """Lines of the trimmed text that survive whole."""
    reason: str | None
    """Claude Code's reason phrase (`234 lines (limit: 200)`, …) when truncated."""
    loaded: str = ""
    """What reaches the model before any warning: `content`, with CRLF folded to LF where
    the release does that."""
    rules: IndexLoadRules = PLAIN_RULES

    @property
    def truncated(self) -> bool:
        return self.line_truncated or self.length_truncated

    @property
    def first_cut_line(self) -> str | None:
        """The first line that does not load whole (`\r` dropped), or None."""
        if not self.truncated:
            return None
        lines = self.trimmed.split("\n")
        if self.kept_lines >= len(lines):
            return None
        return lines[self.kept_lines].rstrip("\r")


def truncate_entrypoint(raw: str, rules: IndexLoadRules | None = None) -> Truncation:
    """Port of `truncateEntrypointContent` on already-stripped index text (`\r` kept: it
    counts toward the 25,000 limit), under a release's `rules` (2.1.88's when None)."""
    rules = rules or PLAIN_RULES
    trimmed = js_trim(raw)
    lines = trimmed.split("\n")
    line_count = len(lines)
    length = js_len(trimmed)
    line_truncated = line_count > MAX_ENTRYPOINT_LINES
    length_truncated = length > MAX_ENTRYPOINT_LENGTH
    if not line_truncated and not length_truncated:
        return Truncation(
            trimmed,
            trimmed,
            line_count,
            length,
            False,
            False,
            line_count,
            None,
            loaded=_loaded(trimmed, rules),
            rules=rules,
        )

    content = "\n".join(lines[:MAX_ENTRYPOINT_LINES]) if line_truncated else trimmed
    if js_len(content) > MAX_ENTRYPOINT_LENGTH:
        cut_at = js_last_index_of(content, "\n", MAX_ENTRYPOINT_LENGTH)
        content = js_slice(content, 0, cut_at if cut_at > 0 else MAX_ENTRYPOINT_LENGTH)

    kept_lines = content.count("\n") + 1
    if kept_lines and content and not trimmed.startswith(content + "\n") and content != trimmed:
        # The length gate's fallback cut a line in half; that line does not load whole.
        kept_lines -= 1
    if length_truncated and not line_truncated:
        reason = f"{format_file_size(length)} (limit: {format_file_size(MAX_ENTRYPOINT_LENGTH)}) — index entries are too long"
    elif line_truncated and not length_truncated:
        reason = f"{line_count} lines (limit: {MAX_ENTRYPOINT_LINES})"
    else:
        reason = f"{line_count} lines and {format_file_size(length)}"
    return Truncation(
        trimmed,
        content,
        line_count,
        length,
        line_truncated,
        length_truncated,
        kept_lines,
        reason,
        loaded=_loaded(content, rules),
        rules=rules,
    )


def _loaded(content: str, rules: IndexLoadRules) -> str:
    """What reaches the model of the kept text: newer releases clean it after the cut
    (CR and line separators to LF, invisible characters out) and trim it again."""
    if not rules.cleans_text:
        return content
    from workbench.engine.memories.index_chars import clean_loaded_text

    return js_trim(clean_loaded_text(content))


def truncation_warning(truncation: Truncation) -> str | None:
    """Our own warning for a truncated index, carrying the facts Claude Code's warning
    carries in the release in use (2.1.332's also says where the cut falls)."""
    if not truncation.truncated:
        return None
    dropped = truncation.line_count - truncation.kept_lines
    text = (
        f"MEMORY.md is too big to load whole: {truncation.reason}. Claude Code loads only "
        f"the first {truncation.kept_lines} lines; {plural(dropped, 'line')} after the cut never "
        "reach "
        "the model."
    )
    first_cut = truncation.first_cut_line
    if truncation.rules.warning_quotes_cut and first_cut is not None:
        if truncation.kept_lines == 0:
            text += (
                f" Everything after the first {MAX_ENTRYPOINT_LENGTH:,} characters of line 1 "
                "is cut off."
            )
        else:
            quote = first_cut[:WARNING_QUOTE_CHARS] + ("…" if len(first_cut) > 40 else "")
            text += f" The cut falls at line {truncation.kept_lines + 1}, which starts “{quote}”."
    return (
        text + " Keep each index entry to a single short line (about 150 characters) and move "
        "the detail into topic files."
    )


def strip_for_loading(text: str) -> str:
    """The index text Claude Code truncates: BOM, frontmatter and block HTML comments removed
    (line endings as written: a `\r` counts toward the limit)."""
    text = text.removeprefix("\ufeff")
    match = FRONTMATTER_RE.match(text)
    if match:
        text = text[match.end() :]
    return strip_block_html_comments(text)


def strip_block_html_comments(text: str) -> str:
    """Remove `<!-- … -->` comments that start a line outside fenced code blocks."""
    if "<!--" not in text:
        return text
    out: list[str] = []
    in_fence = False
    pending = ""
    for line in text.split("\n"):
        if pending:
            pending += "\n" + line
            if "-->" in line:
                rest = _HTML_COMMENT.sub("", pending, count=1)
                pending = ""
                if rest.strip():
                    out.append(rest)
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and line.lstrip().startswith("<!--"):
            if "-->" in line:
                rest = _HTML_COMMENT.sub("", line)
                if rest.strip():
                    out.append(rest)
            else:
                pending = line
            continue
        out.append(line)
    if pending:
        out.append(pending)  # an unclosed comment is left as text, as markdown would
    return "\n".join(out)


class ParsedIndexLine(NamedTuple):
    """The parts of one `- [Title](file.md) — hook` line (a tuple: built once per line of
    indexes that may hold a million)."""

    title: str | None
    target: str | None
    hook: str | None


_NO_LINK = ParsedIndexLine(None, None, None)
_URL_OR_ANCHOR = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:|#")


def parse_index_line(text: str) -> ParsedIndexLine:
    """Split an index line into title, link target and hook (None where absent)."""
    if "](" not in text:
        return _NO_LINK  # every link has one; skipping the regex keeps huge indexes cheap
    match = _LINK_RE.search(text)
    if not match:
        return _NO_LINK
    target = match.group("target").strip("<>")
    rest = text[match.end() :]
    hook_text = _HOOK_SEPARATORS.sub("", rest, count=1).strip() if rest else ""
    return ParsedIndexLine(match.group("title").strip(), target or None, hook_text or None)


def link_target_path(target: str) -> str | None:
    """The local file a link points at (anchor and query dropped), or None for URLs."""
    if _URL_OR_ANCHOR.match(target):
        return None
    path = target
    if "#" in path:
        path = path.split("#", 1)[0]
    if "?" in path:
        path = path.split("?", 1)[0]
    if "%" in path:
        path = unquote(path)
    return path.removeprefix("./") or None


def linked_paths(text: str, prefix: str = "", max_lines: int | None = None) -> set[str]:
    """The memory paths an index's lines link to, relative to the memory folder (`prefix`:
    `team/` for the team index); only the first `max_lines` lines when given."""
    lines = text.split("\n", max_lines)[:max_lines] if max_lines else text.split("\n")
    linked = set()
    for line in lines:
        if "](" not in line:
            continue  # no link: skip the regex (most lines of a huge index)
        parsed = parse_index_line(line)
        target = link_target_path(parsed.target) if parsed.target else None
        if target:
            linked.add(os.path.normpath(prefix + target).replace(os.sep, "/"))
    return linked


def format_index_line(
    title: str, target: str, hook: str | None, limit: int = INDEX_LINE_GUIDE
) -> str:
    """`- [Title](file.md) — hook`, with the hook shortened to keep the line near `limit`."""
    title = " ".join(title.split()).replace("]", ")").replace("[", "(")
    base = f"- [{title}]({target})"
    if not hook:
        return base
    hook = " ".join(hook.split())
    line = f"{base} — {hook}"
    if js_len(line) <= limit:
        return line
    room = limit - js_len(base) - 4  # " — " plus the ellipsis
    if room < 10:
        return base
    shortened = hook[:room].rstrip()
    while js_len(shortened) > room:
        shortened = shortened[:-1]
    cut = shortened.rfind(" ")
    if cut > room * 0.6:
        shortened = shortened[:cut]
    return f"{base} — {shortened.rstrip(' ,;:.')}…"
