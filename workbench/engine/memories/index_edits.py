"""How the store's writes change MEMORY.md's text: the line a save adds or replaces, the lines
a delete drops, the links a rename re-points, and the three bulk fixes (planned first as an
`IndexFixPlan`, which a front end shows before anything is written).

Apart from store.py because these are pure functions of the index text: they read and write
no file. The store reads the index, passes `folder` (the folder the index's links are
relative to: the memory folder, or team/ for the team index) and writes the result through
its history.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine.jsutil import js_len
from workbench.engine.memories.index import (
    INDEX_LINE_GUIDE,
    INDEX_LINE_LIMIT,
    format_index_line,
    link_target_path,
    parse_index_line,
)
from workbench.engine.records import Record
from workbench.engine.wording import plural_noun

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.engine.memories.models import IndexReport

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


class IndexFixPlan(Record):
    """One bulk fix of an index, planned: the text before and after (nothing written yet)."""

    kind: str
    """`dangling`, `orphans` or `long-lines`."""
    team: bool
    path: str
    """The index file."""
    before: str
    after: str
    count: int
    """Lines removed, added or shortened."""
    past_the_cut: int = 0
    """Of the lines an `orphans` fix adds, those past the cut: their memories stay unseen."""

    @property
    def note(self) -> str:
        """The history note for the change."""
        what = {"dangling": "removed", "orphans": "indexed", "long-lines": "shortened"}[self.kind]
        noun = {"dangling": "dangling line", "orphans": "orphan", "long-lines": "line"}[self.kind]
        return f"{what} {self.count} {plural_noun(self.count, noun)}"


_UNLINKABLE = frozenset(" []()<>#?%:\\")
"""Characters a file name cannot hold for its index line to link to it: the link parser
stops at a space or `)`, brackets and angle brackets delimit the link, `#` and `?` start an
anchor or a query, `%` starts an escape, `x:` reads as a URL and `\\` escapes in Markdown."""


def link_problem(link: str) -> str | None:
    """Why an index line cannot link to the file at `link` (relative to the index's folder,
    `/`-separated), or None when it can: the words after "it", e.g. "holds a space"."""
    name = link.rsplit("/", 1)[-1]
    if name.casefold() == "memory.md" and name != "MEMORY.md":
        # A different file on Linux, but the index itself on macOS's and Windows' disks.
        return "differs from MEMORY.md only by case: on a case-insensitive disk it is the index"
    bad = sorted({c for c in link if c in _UNLINKABLE or c.isspace() or _CONTROL.match(c)})
    if bad:
        said = [
            "a space"
            if c == " "
            else "white space"
            if c.isspace()
            else "control characters"
            if _CONTROL.match(c)
            else f"'{c}'"
            for c in bad
        ]
        return (
            f"holds {', '.join(dict.fromkeys(said))}, which MEMORY.md's link cannot carry "
            "(use letters, digits, '-', '_' and '.')"
        )
    parsed = parse_index_line(format_index_line("memory", link, None))
    back = link_target_path(parsed.target) if parsed.target else None
    if back is None or os.path.normpath(back) != os.path.normpath(link):
        return "cannot be linked from MEMORY.md (its link would not lead back to the file)"
    return None


def index_line_for(target: Path, name: str, hook: str | None, folder: Path) -> str:
    """The index line a save writes for the memory file `target`."""
    link = os.path.relpath(target, folder).replace(os.sep, "/")
    # Control characters are escaped in frontmatter, but MEMORY.md is read as plain text.
    title = _CONTROL.sub(" ", name)
    return format_index_line(title, link, _CONTROL.sub(" ", hook) if hook else hook)


def with_index_line(text: str, target: Path, line: str, folder: Path) -> str:
    """The index text with `line` replacing any line linking to `target`, else appended."""
    lines = text.split("\n") if text else []
    for i, existing in enumerate(lines):
        parsed = parse_index_line(existing)
        local = link_target_path(parsed.target) if parsed.target else None
        if local and Path(os.path.normpath(folder / local)) == target:
            lines[i] = line
            return "\n".join(lines)
    while lines and lines[-1] == "":
        lines.pop()
    lines.append(line)
    return "\n".join(lines) + "\n"


def without_links(text: str, targets: set[Path], folder: Path) -> tuple[str, int]:
    """The index text without the lines that link to one of `targets`, and how many."""
    kept, removed = [], 0
    for line in text.split("\n"):
        parsed = parse_index_line(line)
        local = link_target_path(parsed.target) if parsed.target else None
        if local and Path(os.path.normpath(folder / local)) in targets:
            removed += 1
            continue
        kept.append(line)
    return "\n".join(kept), removed


def with_link_moved(text: str, source: Path, dest: Path, folder: Path) -> tuple[str, int]:
    """The index text with every link to `source` pointing at `dest`, and how many."""
    new_link = os.path.relpath(dest, folder).replace(os.sep, "/")
    lines = text.split("\n")
    moved = 0
    for i, line in enumerate(lines):
        parsed = parse_index_line(line)
        local = link_target_path(parsed.target) if parsed.target else None
        if local and parsed.target and Path(os.path.normpath(folder / local)) == source:
            lines[i] = line.replace(f"]({parsed.target})", f"]({new_link})", 1)
            moved += 1
    return "\n".join(lines), moved


# --- the bulk fixes ------------------------------------------------------------------------


def without_dangling(text: str, report: IndexReport, folder: Path) -> tuple[str, int]:
    """The `dangling` fix: drop the lines whose link target does not exist (`report` is
    the load report of `text`)."""
    # A link whose target is missing is a local one, so it has a path.
    missing = {
        Path(os.path.normpath(folder / target))
        for e in report.entries
        if e.target_exists is False
        and e.target is not None
        and (target := link_target_path(e.target)) is not None
    }
    return without_links(text, missing, folder)


def with_orphans(
    text: str, orphans: Sequence[tuple[Path, str, str | None]], folder: Path
) -> tuple[str, int]:
    """The `orphans` fix: an index line for each orphan (its file, name and hook)."""
    for target, name, hook in orphans:
        text = with_index_line(text, target, index_line_for(target, name, hook, folder), folder)
    return text, len(orphans)


def with_short_lines(text: str) -> tuple[str, int]:
    """The `long-lines` fix: lines over the limit shortened to about 150 characters."""
    lines = text.split("\n")
    changed = 0
    for i, line in enumerate(lines):
        if js_len(line) <= INDEX_LINE_LIMIT:
            continue
        parsed = parse_index_line(line)
        if parsed.target:
            lines[i] = format_index_line(parsed.title or parsed.target, parsed.target, parsed.hook)
        else:
            lines[i] = line[: INDEX_LINE_GUIDE - 1].rstrip() + "…"
        changed += 1
    return "\n".join(lines), changed
