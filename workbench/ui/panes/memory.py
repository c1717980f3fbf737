"""The memory viewer: frontmatter, lint findings and the body, rendered or as source."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Markdown, Static

from workbench.engine.jsutil import format_file_size
from workbench.engine.memory_models import LintFinding, MemoryDocument
from workbench.ui.formatting import (
    SEVERITY_MARKS,
    SEVERITY_ORDER,
    TYPE_BADGES,
    age_days,
    age_long,
)
from workbench.ui.panes.base import Pane

# Rendering a huge body as markdown would stall the screen; the source view shows the rest.
MAX_RENDERED_CHARS = 100_000
SCOPE_LABELS = {"private": "private", "team": "team", "log": "daily log"}


def badge(memory_type: str | None) -> Content:
    """A coloured one-letter type badge."""
    key = memory_type or "untyped"
    return Content.styled(
        f" {TYPE_BADGES.get(memory_type, TYPE_BADGES[None])} ", f"bold $memory-{key} reverse"
    )


def finding_line(finding: LintFinding, *, with_path: bool = False) -> Content:
    """One lint finding: mark, rule id, message, line number."""
    where = f" (line {finding.line})" if finding.line else ""
    path = f"{finding.path}: " if with_path else ""
    return Content.assemble(
        (f"{SEVERITY_MARKS[finding.severity]} ", f"$lint-{finding.severity}"),
        (finding.rule, f"bold $lint-{finding.severity}"),
        "  ",
        path,
        finding.message,
        (where, "$foreground-muted"),
    )


def frontmatter_value(value: Any) -> str:
    """A frontmatter value on one line."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


class MemoryPane(Pane):
    """Shows one memory file."""

    pane_id = "memory"
    title = "Memory"
    focus_target = ".memory-scroll"
    empty_title = "No memory selected"
    empty_message = "Pick a memory in the tree on the left (↑/↓, Enter), or press n to write one."

    document: reactive[MemoryDocument | None] = reactive(None, init=False)
    """The memory on show."""
    show_source: reactive[bool] = reactive(False, init=False)
    """Show the raw file instead of the rendered markdown."""

    def __init__(self, *, now_ms: Callable[[], float] | None = None, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="memory-scroll"):
            yield Static(classes="memory-header")
            yield Static(classes="memory-frontmatter")
            yield Static(classes="memory-lints")
            yield Markdown(classes="memory-body")
            yield Static(classes="memory-source")

    def on_mount(self) -> None:
        self.has_content = self.document is not None
        if self.document is not None:
            self._render_document(self.document)

    def watch_document(self, document: MemoryDocument | None) -> None:
        if document is None:
            self.has_content = False
            return
        self._render_document(document)
        self.has_content = True
        self.query_one(".memory-scroll", VerticalScroll).scroll_home(animate=False)

    def watch_show_source(self, show_source: bool) -> None:
        self.set_class(show_source, "-source")
        if self.document is not None:
            self._render_body(self.document)

    def show_error(self, path: str, error: str) -> None:
        """Say why a memory could not be shown."""
        self.set_reactive(MemoryPane.document, None)
        self.set_empty(f"Cannot show {path}", error)

    # --- rendering ---------------------------------------------------------------------

    def _render_document(self, document: MemoryDocument) -> None:
        entry = document.entry
        days = age_days(entry.mtime_ms, self._now_ms())
        header = Content.assemble(
            badge(entry.type),
            " ",
            (entry.name, "bold"),
            ("  " + entry.path, "$foreground-muted"),
            "\n",
            (
                " · ".join(
                    [
                        entry.type or "no type",
                        SCOPE_LABELS.get(entry.scope, entry.scope),
                        f"changed {age_long(days)}",
                        f"~{entry.tokens:,} tokens",
                        format_file_size(entry.size_bytes),
                        "in MEMORY.md" if entry.indexed else "not in MEMORY.md",
                    ]
                ),
                "$foreground-muted",
            ),
        )
        if entry.description:
            header = header + Content.assemble("\n", (entry.description, "italic"))
        self.query_one(".memory-header", Static).update(header)
        self.query_one(".memory-frontmatter", Static).update(self._frontmatter_content(document))
        lints = sorted(entry.lints, key=lambda f: (SEVERITY_ORDER[f.severity], f.line or 0))
        lint_widget = self.query_one(".memory-lints", Static)
        lint_widget.update(Content("\n").join(finding_line(f) for f in lints))
        lint_widget.display = bool(lints)
        self._render_body(document)

    def _frontmatter_content(self, document: MemoryDocument) -> Content:
        if document.binary:
            return Content.styled(
                "Binary file: Claude Code would read it as garbage.", "$lint-error"
            )
        rows: list[Content] = []
        if document.frontmatter_error:
            rows.append(
                Content.styled(
                    f"Frontmatter unreadable: {document.frontmatter_error}", "$lint-error"
                )
            )
        elif not document.visible_to_claude:
            rows.append(
                Content.styled(
                    "Claude Code does not see this frontmatter (it must close within 30 lines).",
                    "$lint-warning",
                )
            )
        width = max((len(str(k)) for k in document.frontmatter), default=0)
        for key, value in document.frontmatter.items():
            rows.append(
                Content.assemble(
                    (f"{str(key).ljust(width)}  ", "$text-secondary"), frontmatter_value(value)
                )
            )
        if not rows:
            rows.append(Content.styled("No frontmatter.", "$foreground-muted"))
        return Content("\n").join(rows)

    def _render_body(self, document: MemoryDocument) -> None:
        markdown = self.query_one(".memory-body", Markdown)
        source = self.query_one(".memory-source", Static)
        if self.show_source or document.binary or len(document.body) > MAX_RENDERED_CHARS:
            from textual.highlight import highlight  # pygments: only when source is shown

            text = document.text if not document.binary else "(binary content not shown)"
            source.update(highlight(text[: MAX_RENDERED_CHARS * 2], language="markdown"))
            source.display = True
            markdown.display = False
        else:
            markdown.update(document.body)
            markdown.display = True
            source.display = False
